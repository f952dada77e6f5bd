"""Checking a case's expectations against what the graph did.

The input is an :class:`Observed` run: final status and body, duration, and the trace events as
JSON-compatible mappings (``TraceEvent.as_dict()`` or a stored run's events: the same shape). GJSON
paths are evaluated by the engine's own :func:`~execution.engine.conditions.evaluate_condition`, the
function Switch conditions use, so a path means in a test what it means in a route.

Nothing here raises for a bad run or a stale expectation: an expectation that names a node or step
the tested version does not have fails, saying so.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from execution.engine import GraphResult, evaluate_condition, is_valid_json
from graphs.language.model import Manifest, Node, Step

from .expectations import compile_pattern
from .jsondiff import DiffEntry, drop_paths, json_diff, json_equal, json_subset, parse_ignore_path
from .limits import CASE_BUDGET_SETTING, DEFAULT_LIMITS, Budget, BudgetExceeded, Limits
from .model import (
    BodyExpectation,
    Expectation,
    LatencyExpectation,
    ParsedCase,
    PathExpectation,
    RouteExpectation,
    StatusExpectation,
    StepExpectation,
)

__all__ = [
    "CaseResult",
    "ExpectationResult",
    "Observed",
    "evaluate_case",
    "evaluate_expectation",
    "observed_from_result",
    "reference_problems",
    "resolve_step",
]

# pytest.approx's default relative tolerance, for an ``approx`` without ``tolerance``.
_DEFAULT_REL_TOLERANCE: Final = 1e-6


@dataclass(frozen=True, slots=True)
class Observed:
    """What one run of a graph produced, as far as expectations can see."""

    status: int
    body: bytes
    duration_ms: float | None
    events: tuple[Mapping[str, Any], ...] = ()


def observed_from_result(result: GraphResult) -> Observed:
    """The observable part of an engine result (its trace must have been kept)."""
    events = tuple(event.as_dict() for event in result.trace)
    duration = next(
        (e["data"].get("duration_ms") for e in reversed(events) if e["type"] == "run.finished"), None
    )
    return Observed(status=result.status, body=result.body, duration_ms=duration, events=events)


@dataclass(frozen=True, slots=True)
class ExpectationResult:
    """One expectation's verdict. ``expected``/``actual`` are JSON-compatible; ``diff`` is the
    structural difference where both sides are JSON documents (else empty)."""

    index: int
    kind: str
    passed: bool
    message: str
    expected: Any = None
    actual: Any = None
    diff: tuple[DiffEntry, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "kind": self.kind,
            "passed": self.passed,
            "message": self.message,
            "expected": self.expected,
            "actual": self.actual,
            "diff": [entry.as_dict() for entry in self.diff],
        }


@dataclass(frozen=True, slots=True)
class CaseResult:
    """A case's verdict: ``passed``, ``failed`` (an expectation did not hold) or ``error`` (the
    case could not be run; ``error`` says why). ``result`` is the engine's answer when it ran."""

    name: str
    outcome: str
    expectations: tuple[ExpectationResult, ...] = ()
    status: int | None = None
    duration_ms: float | None = None
    error: str | None = None
    result: GraphResult | None = field(default=None, compare=False, repr=False)
    # The first failing step and its cause (or the router's error), for the report of a case that
    # did not pass: ``step1 (root/0): Post "…": dial tcp: lookup …: no such host``.
    cause: str | None = field(default=None, compare=False)

    @property
    def failures(self) -> tuple[ExpectationResult, ...]:
        return tuple(e for e in self.expectations if not e.passed)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "outcome": self.outcome,
            "status": self.status,
            "duration_ms": self.duration_ms,
            "error": self.error,
            "expectations": [e.as_dict() for e in self.expectations],
        }


def evaluate_case(
    case: ParsedCase,
    observed: Observed,
    manifest: Manifest,
    *,
    limits: Limits = DEFAULT_LIMITS,
    budget: Budget | None = None,
) -> CaseResult:
    """Every expectation of ``case`` against ``observed``, a run of ``manifest``. Pure.

    Judging stops once ``budget`` (default: ``limits.case_seconds`` of this thread's CPU time) is
    spent: the case is then an ``error`` whose reason names the bound, with the verdicts reached."""
    if budget is None:
        budget = Budget(limits.case_seconds, CASE_BUDGET_SETTING)
    results: list[ExpectationResult] = []
    try:
        for i, expectation in enumerate(case.expectations):
            budget.check()
            results.append(
                evaluate_expectation(i, expectation, observed, manifest, limits=limits, budget=budget)
            )
    except BudgetExceeded as exc:
        return CaseResult(
            name=case.name,
            outcome="error",
            expectations=tuple(results),
            status=observed.status,
            duration_ms=observed.duration_ms,
            error=exc.reason,
        )
    return CaseResult(
        name=case.name,
        outcome="passed" if all(r.passed for r in results) else "failed",
        expectations=tuple(results),
        status=observed.status,
        duration_ms=observed.duration_ms,
    )


# --- references to nodes and steps ----------------------------------------------------------------


def _steps_named(node: Node) -> str:
    return ", ".join(step.label for step in node.steps) or "none"


def resolve_step(manifest: Manifest, ref: str) -> tuple[Node, Step] | str:
    """The node and step ``node/step`` names (the step by name, else by index), or why not."""
    nodes = manifest.spec.nodes
    node_name, _, step_name = ref.rpartition("/")
    if node_name not in nodes:
        # A node or step name may itself hold "/": try every other split before giving up.
        for i, char in enumerate(ref):
            if char == "/" and ref[:i] in nodes:
                node_name, step_name = ref[:i], ref[i + 1 :]
                break
        else:
            return f"this version of the graph has no node {node_name!r}"
    node = nodes[node_name]
    step = _find_step(node, step_name)
    if step is None:
        return f"node {node_name!r} has no step {step_name!r} (its steps: {_steps_named(node)})"
    return node, step


def _find_step(node: Node, name: str | int) -> Step | None:
    if isinstance(name, str):
        for step in node.steps:
            if step.name == name:
                return step
        if not name.isdigit():
            return None
        name = int(name)
    return node.steps[name] if 0 <= name < len(node.steps) else None


def _route_target(manifest: Manifest, expectation: RouteExpectation) -> tuple[Node, Step | None] | str:
    node = manifest.spec.nodes.get(expectation.node)
    if node is None:
        return f"this version of the graph has no node {expectation.node!r}"
    if node.router_type not in ("Switch", "Splitter"):
        return f"node {node.name!r} is a {node.router_type}; route expectations are for Switch and Splitter nodes"
    if expectation.took is None:
        return node, None
    step = _find_step(node, expectation.took)
    if step is None:
        return f"node {node.name!r} has no step {expectation.took!r} (its steps: {_steps_named(node)})"
    return node, step


def reference_problems(expectation: Expectation, manifest: Manifest) -> str | None:
    """Why ``expectation`` cannot apply to ``manifest`` (an unknown node or step, a route on a
    node that does not route), or None when every name it uses exists."""
    if isinstance(expectation, RouteExpectation):
        target = _route_target(manifest, expectation)
        return target if isinstance(target, str) else None
    ref = expectation.step if isinstance(expectation, PathExpectation | StepExpectation) else None
    if ref is not None:
        found = resolve_step(manifest, ref)
        return found if isinstance(found, str) else None
    return None


# --- evaluation -----------------------------------------------------------------------------------


def evaluate_expectation(
    index: int,
    expectation: Expectation,
    observed: Observed,
    manifest: Manifest,
    *,
    limits: Limits = DEFAULT_LIMITS,
    budget: Budget | None = None,
) -> ExpectationResult:
    """One expectation's verdict; never raises for what the run or the version holds, only
    :class:`~.limits.BudgetExceeded` when ``budget`` runs out while a step's calls are read."""
    problem = reference_problems(expectation, manifest)
    if problem is not None:
        return ExpectationResult(index, expectation.kind, False, problem)
    if isinstance(expectation, StatusExpectation):
        ok = observed.status == expectation.status
        message = f"status {observed.status}" + ("" if ok else f", expected {expectation.status}")
        return ExpectationResult(index, "status", ok, message, expectation.status, observed.status)
    if isinstance(expectation, BodyExpectation):
        return _body(index, expectation, observed)
    if isinstance(expectation, PathExpectation):
        return _path(index, expectation, observed, manifest, limits, budget)
    if isinstance(expectation, RouteExpectation):
        return _route(index, expectation, observed, manifest)
    if isinstance(expectation, StepExpectation):
        return _step(index, expectation, observed, manifest)
    return _latency(index, expectation, observed)


def _decoded(body: bytes) -> Any:
    """The body as JSON data when it is valid JSON, else as text."""
    if is_valid_json(body):
        return json.loads(body)
    return body.decode("utf-8", errors="replace")


def _body(index: int, expectation: BodyExpectation, observed: Observed) -> ExpectationResult:
    paths = tuple(parse_ignore_path(p) for p in expectation.ignore)
    actual = drop_paths(_decoded(observed.body), paths)
    expected = drop_paths(expectation.value, paths)
    subset = expectation.match == "subset"
    diff = tuple(json_diff(expected, actual, subset=subset))
    if not diff:
        return ExpectationResult(
            index, "body", True, f"body {'contains' if subset else 'equals'} the expected value"
        )
    what = "does not contain" if subset else "differs from"
    return ExpectationResult(
        index,
        "body",
        False,
        f"body {what} the expected value ({len(diff)} difference(s))",
        expected,
        actual,
        diff,
    )


def _calls(observed: Observed, node: Node, step: Step) -> list[Mapping[str, Any]]:
    return [
        e
        for e in observed.events
        if e["type"] in ("step.finished", "step.skipped")
        and e["node"] == node.name
        and e["step_index"] == step.index
    ]


def _step_document(event: Mapping[str, Any]) -> tuple[bytes | None, str | None]:
    """A step's response bytes from its ``step.finished`` event, or why they are not usable."""
    if event["type"] != "step.finished":
        return None, "the step was skipped"
    view = event["data"].get("response")
    if view is None:
        return (
            None,
            f"the step has no response ({event['data'].get('error') or event['data'].get('outcome')})",
        )
    if view.get("truncated"):
        return None, f"the trace kept {len(view['body'])} of the response's {view['size']} bytes"
    if view.get("encoding") == "base64":
        return base64.b64decode(view["body"]), None
    return str(view["body"]).encode(), None


def _path(
    index: int,
    expectation: PathExpectation,
    observed: Observed,
    manifest: Manifest,
    limits: Limits,
    budget: Budget | None,
) -> ExpectationResult:
    where = "the final body"
    documents: list[bytes] = [observed.body]
    if expectation.step is not None:
        found = resolve_step(manifest, expectation.step)
        assert not isinstance(found, str)  # reference_problems ran first
        calls = [e for e in _calls(observed, *found) if e["type"] == "step.finished"]
        where = f"the response of step {expectation.step}"
        if not calls:
            return ExpectationResult(
                index, "path", False, f"step {expectation.step} did not answer in this run"
            )
        documents = []
        for call in calls:
            body, why = _step_document(call)
            if body is None:
                return ExpectationResult(index, "path", False, f"cannot read {where}: {why}")
            documents.append(body)
    for document in documents:
        if budget is not None:
            budget.check()
        verdict = _compare(index, expectation, document, where, limits)
        if not verdict.passed:
            return verdict
    return verdict


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."


def _compare(
    index: int, e: PathExpectation, document: bytes, where: str, limits: Limits
) -> ExpectationResult:
    found = evaluate_condition(document, e.path)
    label = f"{e.path} in {where}"

    def verdict(
        ok: bool, message: str, actual: Any = None, diff: Sequence[DiffEntry] = ()
    ) -> ExpectationResult:
        return ExpectationResult(index, "path", ok, message, e.expected, actual, tuple(diff))

    if e.operator == "missing":
        if found.matches:
            return verdict(False, f"{label} exists ({_show(found.value)}), expected it missing", found.value)
        return verdict(True, f"{label} is missing")
    if not found.matches:
        return verdict(False, f"{label}: {found.reason or 'path not found'}")
    if e.operator == "matches":
        ok, message, diff = _matches(label, found.value, e, limits)
    else:
        ok, message, diff = _CHECKS[e.operator](label, found.value, e)
    return verdict(ok, message, found.value, diff)


# What each operator (but ``missing``) says of the value found: (passed, message, diff).
_Check = tuple[bool, str, Sequence[DiffEntry]]


def _exists(label: str, actual: Any, e: PathExpectation) -> _Check:
    return True, f"{label} exists", ()


def _equals(label: str, actual: Any, e: PathExpectation) -> _Check:
    if json_equal(actual, e.expected):
        return True, f"{label} is {_show(actual)}", ()
    return False, f"{label} is {_show(actual)}, expected {_show(e.expected)}", json_diff(e.expected, actual)


def _not_equals(label: str, actual: Any, e: PathExpectation) -> _Check:
    same = json_equal(actual, e.expected)
    return not same, f"{label} is {_show(actual)}" + (", expected anything else" if same else ""), ()


def _matches(label: str, actual: Any, e: PathExpectation, limits: Limits) -> _Check:
    # A non-string value is matched as compact JSON, whatever spacing the step answered with.
    text = (
        actual if isinstance(actual, str) else json.dumps(actual, separators=(",", ":"), ensure_ascii=False)
    )
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > limits.regex_input:
        return (
            False,
            f"{label} is {size} bytes of text, more than the {limits.regex_input} a regex is matched "
            "against (GRAPH_TEST_REGEX_MAX_INPUT); match a smaller part of it",
            (),
        )
    try:
        pattern = compile_pattern(e.expected, limits.regex_program)
    except ValueError as exc:  # a case read under looser bounds than these
        return False, f"{label}: the regex is refused: {exc}", ()
    ok = pattern.search(text) is not None
    return ok, f"{label} is {_show(actual)}, which {'matches' if ok else 'does not match'} /{e.expected}/", ()


def _numeric(compare: Callable[[float, PathExpectation], tuple[bool, str]]) -> Callable[..., _Check]:
    """An operator on numbers: any other value fails it, saying so."""

    def check(label: str, actual: Any, e: PathExpectation) -> _Check:
        if not isinstance(actual, int | float) or isinstance(actual, bool):
            return False, f"{label} is {_show(actual)}, not a number", ()
        ok, relation = compare(actual, e)
        return ok, f"{label} is {actual}, {relation}", ()

    return check


def _gt(actual: float, e: PathExpectation) -> tuple[bool, str]:
    ok = actual > e.expected
    return ok, f"{'>' if ok else 'not >'} {e.expected}"


def _lt(actual: float, e: PathExpectation) -> tuple[bool, str]:
    ok = actual < e.expected
    return ok, f"{'<' if ok else 'not <'} {e.expected}"


def _approx(actual: float, e: PathExpectation) -> tuple[bool, str]:
    tolerance = e.tolerance if e.tolerance is not None else abs(e.expected) * _DEFAULT_REL_TOLERANCE
    ok = abs(actual - e.expected) <= tolerance
    return ok, f"{'within' if ok else 'not within'} {tolerance:g} of {e.expected}"


def _contains(label: str, actual: Any, e: PathExpectation) -> _Check:
    expected = e.expected
    if isinstance(actual, str):
        ok = isinstance(expected, str) and expected in actual
    elif isinstance(actual, list):
        ok = any(json_equal(item, expected) for item in actual)
    elif isinstance(actual, dict):
        ok = isinstance(expected, dict) and json_subset(expected, actual)
    else:
        return False, f"{label} is {_show(actual)}; contains needs a string, an array or an object", ()
    return ok, f"{label} {'contains' if ok else 'does not contain'} {_show(expected)}", ()


_CHECKS: Final[dict[str, Callable[[str, Any, PathExpectation], _Check]]] = {
    "exists": _exists,
    "equals": _equals,
    "not_equals": _not_equals,
    "gt": _numeric(_gt),
    "lt": _numeric(_lt),
    "approx": _numeric(_approx),
    "contains": _contains,
}


def _route(
    index: int, expectation: RouteExpectation, observed: Observed, manifest: Manifest
) -> ExpectationResult:
    target = _route_target(manifest, expectation)
    assert not isinstance(target, str)  # reference_problems ran first
    node, step = target
    decisions = [
        e["data"].get("chosen")
        for e in observed.events
        if e["type"] == "route.decided"
        and e["node"] == node.name
        and e["data"].get("router") == node.router_type
    ]
    want = step.label if step is not None else None

    def label(chosen: int | None) -> str | None:
        return node.steps[chosen].label if chosen is not None and 0 <= chosen < len(node.steps) else None

    if not decisions:
        return ExpectationResult(
            index, "route", False, f"node {node.name!r} was not reached", want, "not-reached"
        )
    taken = [label(c) for c in decisions]
    ok = all(t == want for t in taken)
    shown = taken[0] if len(taken) == 1 else taken
    nothing = "matched nothing" if node.router_type == "Switch" else "picked nothing"
    said = ", ".join(f"took {t}" if t is not None else nothing for t in dict.fromkeys(taken))
    message = f"{node.router_type} {node.name!r} {said}"
    if not ok:
        message += f", expected {'step ' + want if want is not None else nothing}"
    return ExpectationResult(index, "route", ok, message, want, shown)


def _step_state(event: Mapping[str, Any]) -> int | str:
    if event["type"] == "step.skipped":
        return "skipped"
    status = event["data"].get("status")
    return status if status is not None else "error"


def _step(
    index: int, expectation: StepExpectation, observed: Observed, manifest: Manifest
) -> ExpectationResult:
    found = resolve_step(manifest, expectation.step)
    assert not isinstance(found, str)  # reference_problems ran first
    states: list[int | str] = [_step_state(e) for e in _calls(observed, *found)] or ["not-reached"]
    ok = all(state == expectation.status for state in states)
    shown = states[0] if len(states) == 1 else states
    said = ", ".join(str(state) for state in states)
    message = f"step {expectation.step}: {said}" + ("" if ok else f", expected {expectation.status}")
    return ExpectationResult(index, "step", ok, message, expectation.status, shown)


def _latency(index: int, expectation: LatencyExpectation, observed: Observed) -> ExpectationResult:
    took = observed.duration_ms
    if took is None:
        return ExpectationResult(
            index, "latency", False, "the run's duration is unknown", expectation.within_ms
        )
    ok = took <= expectation.within_ms
    return ExpectationResult(
        index,
        "latency",
        ok,
        f"answered in {took:g} ms, {'within' if ok else 'over'} {expectation.within_ms:g} ms",
        expectation.within_ms,
        took,
    )
