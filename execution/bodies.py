"""Stored bodies as the API shows them: the JSON value of a JSON body, else its text (or base64).

The run API (``GET /api/runs/{id}/``) and the run's terminal event (``run.finished``, see
execution/eventschema.py) show a run's answer through :func:`response_view`, so the console reads
the same thing from either.
"""

from __future__ import annotations

import json
from typing import Any

from config.nesting import MAX_JSON_DEPTH, nesting_exceeds, too_deep_message


def body_value(text: str | None, content_type: str | None, encoding: str = "utf-8") -> Any:
    """A stored body for the API: the JSON value when it is JSON, else the text (or base64).

    JSON nested deeper than the limit stays text (see :func:`body_note`): parsing and rendering it
    would recurse past Python's limit, and a stored body must never make its run unreadable.
    """
    if text is None:
        return None
    if _is_json_type(content_type, encoding) and not nesting_exceeds(text):
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


def body_note(text: str | None, content_type: str | None, encoding: str = "utf-8") -> str | None:
    """Why :func:`body_value` shows a JSON body as text, or None when it does not."""
    if text is not None and _is_json_type(content_type, encoding) and nesting_exceeds(text):
        return too_deep_message("This body", MAX_JSON_DEPTH) + " It is shown as text."
    return None


def _is_json_type(content_type: str | None, encoding: str) -> bool:
    return encoding == "utf-8" and (content_type or "").split(";")[0].strip().lower().endswith("json")


def with_note(view: dict[str, Any], note: str | None) -> dict[str, Any]:
    return {**view, "note": note} if note is not None else view


def response_view(
    *,
    status_code: int | None,
    content_type: str | None,
    body: str | None,
    encoding: str,
    size: int | None,
    truncated: bool,
) -> dict[str, Any]:
    """A run's answer, from what the run stores of it (its ``response_*`` fields): ``status_code``,
    ``content_type``, ``body`` (:func:`body_value`), ``encoding``, ``size``, ``truncated`` and, for
    JSON shown as text, ``note``."""
    view = {
        "status_code": status_code,
        "content_type": content_type,
        "body": body_value(body, content_type, encoding),
        "encoding": encoding,
        "size": size,
        "truncated": truncated,
    }
    return with_note(view, body_note(body, content_type, encoding))
