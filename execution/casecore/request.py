"""Reading a test case's request: its body (``payload`` or ``raw``), content type and headers."""

from __future__ import annotations

import json
from typing import Any

from .fields import At
from .model import CaseRequest


def read_request(at: At, raw: Any) -> CaseRequest | None:
    """The request ``raw`` describes (absent: an empty JSON request), or None with its problems filed."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        at.add("request.not-mapping", "request is a mapping (payload or raw, content_type, headers)")
        return None
    before = at.count()
    at.unknown(raw, {"payload", "raw", "content_type", "headers"})
    body = _body(at, raw)
    content_type = raw.get("content_type", "application/json")
    if content_type is not None and (not isinstance(content_type, str) or not content_type):
        at.add("request.content-type", "content_type is a media type (or null for none)", "content_type")
    headers = _headers(at, raw.get("headers", {}) or {})
    if at.count() > before:
        return None
    if content_type and not any(name.lower() == "content-type" for name, _ in headers):
        headers.insert(0, ("Content-Type", content_type))
    return CaseRequest(body=body, content_type=content_type, headers=tuple(headers))


def _body(at: At, raw: dict[str, Any]) -> bytes:
    if "payload" in raw and "raw" in raw:
        at.add("request.body", "give payload (a JSON value) or raw (text sent as is), not both", "raw")
    if "payload" in raw:
        return json.dumps(raw["payload"], ensure_ascii=False, separators=(",", ":")).encode()
    if "raw" in raw:
        if isinstance(raw["raw"], str):
            return raw["raw"].encode()
        at.add("request.raw", "raw is text, sent as it is", "raw")
    return b""


def _header_problem(key: Any, value: Any) -> str | None:
    if (
        not key
        or any(c in key for c in " :\r\n\t")
        or not isinstance(value, str | int | float)
        or isinstance(value, bool)
    ):
        return f"header {key!r} needs a token name and a text value"
    if "\n" in str(value) or "\r" in str(value):
        return f"header {key!r} has a line break in its value"
    return None


def _headers(at: At, raw_headers: Any) -> list[tuple[str, str]]:
    if not isinstance(raw_headers, dict):
        at.add("request.headers", "headers is a mapping of header names to text", "headers")
        return []
    headers: list[tuple[str, str]] = []
    for key, value in raw_headers.items():
        problem = _header_problem(key, value)
        if problem is not None:
            at.add("request.header", problem, "headers", key)
        else:
            headers.append((key, str(value)))
    return headers
