"""Graph test cases as typed values: the ``kind: InferenceGraphTest`` document, parsed.

A test file holds one graph's cases; each case is one request and a list of expectations about what
the graph answered (and how it got there). The kinds of expectation:

- :class:`StatusExpectation`: the graph's final HTTP status.
- :class:`BodyExpectation`: the final body equals a JSON value, or contains it (``subset``), with
  ignore paths for volatile fields.
- :class:`PathExpectation`: a GJSON path on the final body or on one step's response, compared
  with an operator (:data:`OPERATORS`).
- :class:`RouteExpectation`: which step a Switch or Splitter node routed to (or that it matched
  nothing).
- :class:`StepExpectation`: a step answered status N, or was skipped, not reached, or failed
  without a status.
- :class:`LatencyExpectation`: the whole graph answered within N milliseconds.

Everything here is frozen; ``document`` fields keep what the author wrote, so an export is
lossless.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, Literal

__all__ = [
    "API_VERSION",
    "KIND",
    "OPERATORS",
    "STEP_STATES",
    "BodyExpectation",
    "CaseDocumentError",
    "CaseIssue",
    "CaseRequest",
    "Expectation",
    "LatencyExpectation",
    "ParsedCase",
    "ParsedSuite",
    "PathExpectation",
    "RouteExpectation",
    "StatusExpectation",
    "StepExpectation",
]

API_VERSION: Final = "tests.inferencegraph.studio/v1alpha1"
KIND: Final = "InferenceGraphTest"

Operator = Literal["equals", "not_equals", "exists", "missing", "matches", "gt", "lt", "approx", "contains"]
OPERATORS: Final[tuple[Operator, ...]] = (
    "equals",
    "not_equals",
    "exists",
    "missing",
    "matches",
    "gt",
    "lt",
    "approx",
    "contains",
)
StepState = Literal["skipped", "not-reached", "error"]
STEP_STATES: Final[tuple[StepState, ...]] = ("skipped", "not-reached", "error")


@dataclass(frozen=True, slots=True)
class CaseIssue:
    """One problem in a test document, pinned as precisely as it is known.

    ``case`` and ``expectation`` are 0-based indices; ``field`` the key at fault; ``path`` the
    whole location (``cases[2].expectations[0].matches``); ``line``/``column`` 1-based positions
    in the source text when there was one.
    """

    code: str
    message: str
    case: int | None = None
    case_name: str | None = None
    expectation: int | None = None
    field: str | None = None
    path: str | None = None
    line: int | None = None
    column: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible, without the fields that are ``None``."""
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        for key in ("case", "case_name", "expectation", "field", "path", "line", "column"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


class CaseDocumentError(ValueError):
    """A test document could not be read; ``issues`` holds every problem found (all at once)."""

    def __init__(self, issues: list[CaseIssue]) -> None:
        self.issues = list(issues)
        super().__init__("; ".join(issue.message for issue in self.issues) or "invalid test document")


@dataclass(frozen=True, slots=True)
class StatusExpectation:
    """The graph's final HTTP status is ``status``."""

    kind: ClassVar[str] = "status"
    status: int


@dataclass(frozen=True, slots=True)
class BodyExpectation:
    """The final body equals ``value`` (``exact``) or contains it (``subset``), once the fields
    selected by ``ignore`` (parsed ignore paths, see :mod:`.jsondiff`) are left out of both."""

    kind: ClassVar[str] = "body"
    value: Any
    match: Literal["exact", "subset"] = "exact"
    ignore: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PathExpectation:
    """GJSON ``path`` on the final body, or on the response of ``step`` (``node/step``), compared
    with ``operator`` to ``expected``. ``tolerance`` is for ``approx`` only (None: relative 1e-6)."""

    kind: ClassVar[str] = "path"
    path: str
    operator: Operator
    expected: Any = None
    step: str | None = None
    tolerance: float | None = None


@dataclass(frozen=True, slots=True)
class RouteExpectation:
    """Switch or Splitter ``node`` routed to step ``took`` (a step name, or its index); ``None``:
    it matched nothing. Every decision of the node in the run must agree."""

    kind: ClassVar[str] = "route"
    node: str
    took: str | int | None


@dataclass(frozen=True, slots=True)
class StepExpectation:
    """Step ``step`` (``node/step``: a step name or index) answered HTTP ``status``, or is in one
    of the :data:`STEP_STATES`. Every call of the step in the run must agree."""

    kind: ClassVar[str] = "step"
    step: str
    status: int | StepState


@dataclass(frozen=True, slots=True)
class LatencyExpectation:
    """The whole graph answered within ``within_ms`` milliseconds."""

    kind: ClassVar[str] = "latency"
    within_ms: float


Expectation = (
    StatusExpectation
    | BodyExpectation
    | PathExpectation
    | RouteExpectation
    | StepExpectation
    | LatencyExpectation
)


def _no_headers() -> tuple[tuple[str, str], ...]:
    return ()


@dataclass(frozen=True, slots=True)
class CaseRequest:
    """What the case sends: ``body`` bytes (the encoded ``payload``, or ``raw`` text as given),
    its content type and the client's headers (``Content-Type`` among them)."""

    body: bytes = b""
    content_type: str | None = "application/json"
    headers: tuple[tuple[str, str], ...] = field(default_factory=_no_headers)


def _empty_document() -> Mapping[str, Any]:
    return {}


@dataclass(frozen=True, slots=True)
class ParsedCase:
    """One saved request with its expectations. ``document`` is the case as written."""

    name: str
    request: CaseRequest
    expectations: tuple[Expectation, ...]
    description: str = ""
    seed: int | None = None
    environment: str | None = None
    document: Mapping[str, Any] = field(default_factory=_empty_document, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class ParsedSuite:
    """A test file: the graph it is for and its cases (names unique)."""

    graph: str
    cases: tuple[ParsedCase, ...]
    document: Mapping[str, Any] = field(default_factory=_empty_document, compare=False, repr=False)
