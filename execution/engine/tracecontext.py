"""W3C Trace Context (``traceparent``) for step calls: which span each call is, and its header.

A run's trace has one id; every span in it has an id derived from the trace id, a salt (the
attempt, so a retried run's spans stay apart) and the call's ``call_id``. Derived, not drawn: the
engine sends the span id of a step call to the step's server in ``traceparent`` (so the server's
own spans nest under it) and records it in ``step.started``; whoever rebuilds the trace from the
stored events later finds the same ids, also for events stored before ids were recorded.

Pure: no clock, no random source, no I/O.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Final

__all__ = ["RUN_SPAN_KEY", "TraceContext", "parse_traceparent", "span_id_for", "traceparent"]

# What the run's own span is keyed by: no call id has this form (node calls are ``root`` or
# ``name#n``, step calls ``…/i``).
RUN_SPAN_KEY: Final = "(run)"
# version 00, sampled: https://www.w3.org/TR/trace-context/#traceparent-header
_VERSION: Final = "00"
_SAMPLED: Final = "01"
_TRACEPARENT: Final = re.compile(r"^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$")
_HEX32: Final = re.compile(r"^[0-9a-f]{32}$")


def span_id_for(trace_id: str, salt: str, key: str) -> str:
    """The span id (16 lower-case hex digits, never all zero) of ``key`` in a trace."""
    digest = hashlib.blake2b(f"{trace_id}|{salt}|{key}".encode(), digest_size=8).hexdigest()
    return digest if digest != "0" * 16 else "0" * 15 + "1"


def traceparent(trace_id: str, span_id: str) -> str:
    """The ``traceparent`` header value naming ``span_id`` as the parent of the callee's spans."""
    return f"{_VERSION}-{trace_id}-{span_id}-{_SAMPLED}"


def parse_traceparent(value: str) -> tuple[str, str] | None:
    """``(trace_id, parent_span_id)`` of a valid version-00 ``traceparent``, else None."""
    match = _TRACEPARENT.match(value.strip())
    if match is None or match.group(1) == "ff":
        return None
    trace_id, span_id = match.group(2), match.group(3)
    if trace_id == "0" * 32 or span_id == "0" * 16:
        return None
    return trace_id, span_id


@dataclass(frozen=True, slots=True)
class TraceContext:
    """The trace a run belongs to: ``trace_id`` (32 lower-case hex digits, not all zero) and the
    ``salt`` of its span ids (the attempt). Raises ValueError for a malformed trace id."""

    trace_id: str
    salt: str = ""

    def __post_init__(self) -> None:
        if not _HEX32.match(self.trace_id) or self.trace_id == "0" * 32:
            raise ValueError(f"trace id must be 32 lower-case hex digits, not all zero: {self.trace_id!r}")

    def span_id(self, call_id: str) -> str:
        return span_id_for(self.trace_id, self.salt, call_id)

    def header(self, call_id: str) -> tuple[str, str]:
        """``(span id, traceparent value)`` of the step call ``call_id``."""
        span = self.span_id(call_id)
        return span, traceparent(self.trace_id, span)
