"""Why a run went wrong, in one line: the first step that failed and its cause, as the engine's
trace recorded it (``step1 (root/0): Post "…": dial tcp: lookup …: no such host``), else the
router's own error. For the console report and the JUnit file of a failed or errored case."""

from __future__ import annotations

from typing import Any, Final

from execution.engine.runstate import GraphResult

__all__ = ["failure_cause"]

# The cause is one line of a report: a longer one (a step's error page as its body) is cut.
MAX_CAUSE: Final = 400


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_CAUSE else text[: MAX_CAUSE - 3] + "..."


def _body_text(view: Any) -> str:
    if isinstance(view, dict) and isinstance(view.get("body"), str) and view.get("encoding") == "utf-8":
        return str(view["body"])
    return ""


def failure_cause(result: GraphResult | None) -> str | None:
    """The first failing step (by trace order) with its error, or with its status and the start of
    its answer when it answered an error status; else the router's error; None when nothing failed."""
    if result is None:
        return None
    for event in result.trace:
        if event.type != "step.finished":
            continue
        data = event.data
        status = data.get("status")
        error = data.get("error")
        if not error and not (isinstance(status, int) and status >= 400):
            continue
        name = event.step_name or event.call_id
        where = f"{name} ({event.call_id})" if event.step_name else name
        if error:
            return _cut(f"{where}: {error}")
        body = _body_text(data.get("response"))
        return _cut(f"{where}: answered {status}" + (f": {body}" if body else ""))
    if result.error:
        return _cut(f"graph: {result.error}")
    return None
