"""Trace events: how the engine tells the outside world what happened, as it happens.

The engine stores nothing. It calls ``on_event(event)`` synchronously, in order, from the event
loop running the graph; the Celery side persists the events, the console streams them, the
commands print them. Every ``data`` mapping holds only JSON types.

Event types (``TraceEvent.type``) and their ``data``:

``node.started``   a node begins: ``router_type``, ``input`` (a :func:`body_view`), ``depth``.
``node.finished``  a node ends: ``status`` (None on error), ``outcome`` (``ok``, ``http-error``,
                   ``error``, ``cancelled``, ``timeout``), ``error`` (the cause), ``duration_ms``,
                   ``output`` (a body view, absent on error).
``step.started``   a step call begins. For a URL step: ``kind`` = ``"http"``, ``method``, ``url``,
                   ``headers`` (the ``[name, value]`` pairs sent, secrets redacted), ``request``
                   (body view), ``timeout_s``; ``condition`` when a matched Sequence condition let it
                   run. For a ``nodeName`` step: ``kind`` = ``"node"``, ``request``.
``step.finished``  ``status`` (None when there is no HTTP status), ``response`` (body view),
                   ``content_type`` (the step's own header, for display), ``duration_ms``,
                   ``outcome`` (``ok`` 2xx, ``http-error`` other status, ``error`` transport or
                   routing error, or the run stopped by a limit, ``cancelled``, ``timeout`` graph
                   deadline), ``error`` (the cause).
``step.skipped``   a Sequence step that did not run: ``reason`` (``condition-unmet``,
                   ``invalid-response``, ``after-unmet-condition``, ``after-hard-failure``,
                   ``after-error``), and for ``condition-unmet`` the ``condition`` evaluated.
``route.decided``  a routing decision on a node (``call_id`` is the node's):
                   Switch: ``router``, ``valid_json``, ``conditions`` (``index``, ``name``,
                   ``condition``, ``matches``, ``raw``, ``reason``), ``chosen`` (index or None);
                   Splitter: ``router``, ``draw``, ``weights``, ``cumulative``, ``chosen``;
                   Sequence: ``router``, ``decision`` (``stop``), ``reason``, ``step_index``,
                   ``condition``, ``evaluated`` (the previous response, a body view), ``matches``,
                   ``skipped`` (indices);
                   Ensemble: ``router``, ``decision`` (``hard-failure`` or ``error``),
                   ``step_index``, ``step_name``, ``status`` / ``error``, ``abandoned`` (indices).
``run.finished``   the whole request: ``status_code`` (the HTTP status; None when cancelled),
                   ``content_type``, ``response`` (body view),
                   ``error``, ``duration_ms``, ``deadline_s``, ``outcome`` (``ok``, ``http-error``,
                   ``error``, ``timeout``, ``cancelled``), ``warnings``.

``call_id`` is short and unique within a run, whatever the depth: a node invocation is ``root``
or ``<node>#<n>`` (``n`` counts the run's nested node invocations from 1: ``inner#1``), a step call
is ``<node invocation's call_id>/<index>`` (``root/0``, ``inner#1/0``). The structure is in the
links: ``parent_call_id`` of a step is the ``nodeName`` step that led into its node (None at the
root); of a node event, the step that invoked the node. So what a run reports grows linearly with
its calls, however deeply they nest.

A body view is ``{"body": str, "encoding": "utf-8"|"base64", "size": int, "truncated": bool}``
with at most ``body_cap`` bytes of the body.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from typing import Any, Final, NamedTuple

from execution.eventschema import RUN_EVENTS

__all__ = ["EVENT_TYPES", "EventCallback", "TraceEvent", "body_view"]

# The names come from the one declaration of every run event (execution/eventschema.py), which
# also declares each event's fields; the docstring above is the engine's side of it.
EVENT_TYPES: Final = RUN_EVENTS.trace_names()


class TraceEvent(NamedTuple):
    """One thing that happened during a run. ``seq`` increases by one per event within a run.

    Immutable, and a named tuple rather than a frozen dataclass: a run makes two to four of them
    per step, and a frozen dataclass's ``__init__`` (an ``object.__setattr__`` per field) takes
    eight times as long as a named tuple's.
    """

    type: str
    seq: int
    call_id: str
    parent_call_id: str | None
    node: str | None
    step_index: int | None
    step_name: str | None
    target: str | None
    timestamp: float
    data: Mapping[str, Any]

    def as_dict(self) -> dict[str, Any]:
        """A JSON-compatible dict with every field."""
        return {
            "type": self.type,
            "seq": self.seq,
            "call_id": self.call_id,
            "parent_call_id": self.parent_call_id,
            "node": self.node,
            "step_index": self.step_index,
            "step_name": self.step_name,
            "target": self.target,
            "timestamp": self.timestamp,
            "data": dict(self.data),
        }


EventCallback = Callable[[TraceEvent], None]


def body_view(body: bytes, cap: int) -> dict[str, Any]:
    """At most ``cap`` bytes of ``body`` as JSON-compatible data, with its real size.

    Text is kept as text (a UTF-8 character cut by the cap is dropped whole); anything that is not
    UTF-8, and text holding a NUL character, is base64-encoded: a step's answer is data and is kept
    whole, but PostgreSQL's text and jsonb columns, where views are stored, cannot hold U+0000.
    """
    truncated = len(body) > cap
    head = body[:cap] if truncated else body
    text: str | None = None
    for trim in range(0 if b"\x00" in head else 4 if truncated else 1):
        try:
            text = head[: len(head) - trim].decode("utf-8")
            break
        except UnicodeDecodeError:
            continue
    if text is not None:
        return {"body": text, "encoding": "utf-8", "size": len(body), "truncated": truncated}
    return {
        "body": base64.b64encode(head).decode("ascii"),
        "encoding": "base64",
        "size": len(body),
        "truncated": truncated,
    }
