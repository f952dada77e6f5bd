"""Reading one expectation of a test case (status, body, path, route, step or latency).

Each kind has its reader; every problem is filed at its field (:class:`~.fields.At`), and an
expectation with any problem is left out (the case then fails to load, with all its issues).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Final, cast

import re2

from .fields import At, is_int, is_number, is_step_ref, json_size
from .jsondiff import parse_ignore_path
from .limits import DEFAULT_LIMITS
from .model import (
    OPERATORS,
    STEP_STATES,
    BodyExpectation,
    Expectation,
    LatencyExpectation,
    Operator,
    PathExpectation,
    RouteExpectation,
    StatusExpectation,
    StepExpectation,
    StepState,
)

# An expected value (a body, an ``equals``) larger than 1 MiB is a copied response, not a test.
MAX_EXPECTED_BYTES: Final = 1024 * 1024
# Regexes longer than this are not hand-written; RE2 bounds matching time, this bounds compiling.
MAX_PATTERN: Final = 4096
# RE2's default memory budget for one compiled program (re2.h: max_mem = 8 << 20).
_RE2_MAX_MEM: Final = 8 << 20

# The keys that decide an expectation's kind, in the order they are looked for: ``step`` also
# appears in path expectations, and ``status`` in step expectations, so the more specific come first.
_KINDS: Final = ("path", "route", "step", "body", "latency", "status")
_ALLOWED: Final[dict[str, set[str]]] = {
    "status": {"status"},
    "body": {"body", "match", "ignore"},
    "path": {"path", "step", "tolerance", *OPERATORS},
    "route": {"route", "took"},
    "step": {"step", "status"},
    "latency": {"latency"},
}
_STEP_REF_MESSAGE: Final = "step is node/step (a step name or index), e.g. root/classify"


class PatternTooCostly(ValueError):
    """A valid regex whose compiled program is larger than the bound (``GRAPH_TEST_REGEX_MAX_PROGRAM``)."""


def compile_pattern(pattern: str, max_program: int = DEFAULT_LIMITS.regex_program) -> Any:
    """Compile a ``matches`` regex with RE2 (linear-time matching: no catastrophic backtracking).

    Raises ``ValueError`` with RE2's reason for a pattern it refuses (too long, invalid, or
    needing more than RE2's default memory budget), and :class:`PatternTooCostly` for one whose
    program has more than ``max_program`` instructions: RE2's time per byte grows with it.
    Accepted patterns are cached (a suite judges the same ones case after case); a few dozen, as
    each may grow a DFA cache of up to RE2's memory budget while it searches.
    """
    return _compile(pattern, max_program)


@functools.lru_cache(maxsize=32)
def _compile(pattern: str, max_program: int) -> Any:
    # A refused pattern raises, so it is not cached.
    if len(pattern) > MAX_PATTERN:
        raise ValueError(f"the regex is longer than {MAX_PATTERN} characters")
    options = re2.Options()
    options.log_errors = False  # the reason goes into the issue instead
    options.max_mem = _RE2_MAX_MEM
    try:
        compiled = re2.compile(pattern, options)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else str(exc)
        text = detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)
        raise ValueError(f"not a valid regex: {text}") from None
    if compiled.programsize > max_program:
        raise PatternTooCostly(
            f"the regex compiles to {compiled.programsize} RE2 instructions, more than the {max_program} "
            "allowed (GRAPH_TEST_REGEX_MAX_PROGRAM): counted repetitions such as {1,100} and long "
            "alternations multiply it; prefer + and * to large counts"
        )
    return compiled


def read_expectation(at: At, raw: Any) -> Expectation | None:
    """The expectation ``raw`` describes, or None (with the problems filed at ``at``)."""
    if not isinstance(raw, dict):
        at.add("expectation.not-mapping", f"an expectation is a mapping with one of: {', '.join(_KINDS)}")
        return None
    kind = next((k for k in _KINDS if k in raw), None)
    if kind is None:
        at.add(
            "expectation.kind",
            f"an expectation names one of: {', '.join(_KINDS)} (got {', '.join(map(str, raw)) or 'nothing'})",
        )
        return None
    before = at.count()
    at.unknown(raw, _ALLOWED[kind])
    result = _READERS[kind](at, raw)
    return result if at.count() == before else None


def _status(at: At, raw: dict[str, Any]) -> Expectation | None:
    status = raw["status"]
    if not is_int(status) or not 100 <= status <= 599:
        at.add("expectation.status", "status is an HTTP status code (100-599)", "status")
        return None
    return StatusExpectation(status=status)


def _body(at: At, raw: dict[str, Any]) -> Expectation | None:
    before = at.count()
    match = raw.get("match", "exact")
    if match not in ("exact", "subset"):
        at.add("expectation.match", f"match is exact or subset, got {match!r}", "match")
    if json_size(raw["body"]) > MAX_EXPECTED_BYTES:
        at.add(
            "expectation.too-large", f"the expected body is larger than {MAX_EXPECTED_BYTES} bytes", "body"
        )
    ignore = raw.get("ignore", [])
    if not isinstance(ignore, list) or not all(isinstance(p, str) for p in ignore):
        at.add("expectation.ignore", "ignore is a list of paths (a.b, a.0, a.#.b, a.*)", "ignore")
        ignore = []
    for k, item in enumerate(ignore):
        try:
            parse_ignore_path(item)
        except ValueError as exc:
            at.add("expectation.ignore", f"ignore path {item!r}: {exc}", "ignore", k)
    if at.count() > before:
        return None
    return BodyExpectation(value=raw["body"], match=match, ignore=tuple(ignore))


def _operand_problem(operator: Operator, expected: Any, max_program: int) -> tuple[str, str] | None:
    """(code, message) when ``expected`` cannot be what ``operator`` compares with."""
    if operator in ("exists", "missing"):
        return None if expected is True else ("expectation.operand", f"write `{operator}: true`")
    if operator in ("gt", "lt", "approx"):
        return None if is_number(expected) else ("expectation.operand", f"{operator} compares with a number")
    if operator == "matches":
        if not isinstance(expected, str):
            return ("expectation.operand", "matches takes a regex (RE2 syntax, as Go's regexp)")
        try:
            compile_pattern(expected, max_program)
        except PatternTooCostly as exc:
            return ("expectation.regex-cost", str(exc))
        except ValueError as exc:
            return ("expectation.regex", str(exc))
        return None
    if json_size(expected) > MAX_EXPECTED_BYTES:
        return ("expectation.too-large", f"the expected value is larger than {MAX_EXPECTED_BYTES} bytes")
    return None


def _path(at: At, raw: dict[str, Any]) -> Expectation | None:
    before = at.count()
    gjson_path = raw["path"]
    if not isinstance(gjson_path, str) or not gjson_path:
        at.add("expectation.path", "path is a non-empty GJSON path", "path")
    step = raw.get("step")
    if step is not None and not is_step_ref(step):
        at.add("expectation.step", _STEP_REF_MESSAGE, "step")
    operators = [op for op in OPERATORS if op in raw]
    if len(operators) != 1:
        at.add(
            "expectation.operator",
            f"a path expectation has exactly one operator of: {', '.join(OPERATORS)}"
            + (f" (got {', '.join(operators)})" if operators else ""),
            "path",
        )
        return None
    operator: Operator = operators[0]
    expected = raw[operator]
    tolerance = raw.get("tolerance")
    if "tolerance" in raw and operator != "approx":
        at.add("expectation.tolerance", "tolerance goes with approx only", "tolerance")
    problem = _operand_problem(operator, expected, at.issues.limits.regex_program)
    if problem is not None:
        at.add(*problem, operator)
    if operator == "approx" and tolerance is not None and (not is_number(tolerance) or tolerance < 0):
        at.add(
            "expectation.tolerance", "tolerance is a number ≥ 0 (the largest difference allowed)", "tolerance"
        )
    if at.count() > before:
        return None
    return PathExpectation(
        path=gjson_path,
        operator=operator,
        expected=expected,
        step=step,
        tolerance=float(tolerance) if tolerance is not None else None,
    )


def _route(at: At, raw: dict[str, Any]) -> Expectation | None:
    before = at.count()
    node, took = raw["route"], raw.get("took", "<absent>")
    if not isinstance(node, str) or not node:
        at.add("expectation.route", "route names a Switch or Splitter node", "route")
    if took == "<absent>":
        at.add(
            "expectation.took", "took names the step the node routed to (null: it matched nothing)", "took"
        )
    elif took is not None and not (isinstance(took, str) and took) and not (is_int(took) and took >= 0):
        at.add("expectation.took", "took is a step name, a step index, or null (matched nothing)", "took")
    if at.count() > before:
        return None
    return RouteExpectation(node=node, took=took)


def _step(at: At, raw: dict[str, Any]) -> Expectation | None:
    before = at.count()
    step, status = raw["step"], raw.get("status")
    if not is_step_ref(step):
        at.add("expectation.step", _STEP_REF_MESSAGE, "step")
    if not ((is_int(status) and 100 <= cast(int, status) <= 599) or status in STEP_STATES):
        at.add(
            "expectation.step-status",
            f"status is an HTTP status or one of: {', '.join(STEP_STATES)}",
            "status",
        )
    if at.count() > before:
        return None
    return StepExpectation(step=step, status=cast("int | StepState", status))


def _latency(at: At, raw: dict[str, Any]) -> Expectation | None:
    within = raw["latency"]
    if not is_number(within) or within <= 0:
        at.add("expectation.latency", "latency is a positive number of milliseconds", "latency")
        return None
    return LatencyExpectation(within_ms=float(within))


_READERS: Final[dict[str, Callable[[At, dict[str, Any]], Expectation | None]]] = {
    "status": _status,
    "body": _body,
    "path": _path,
    "route": _route,
    "step": _step,
    "latency": _latency,
}
