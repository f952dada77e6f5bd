"""Reading test documents: YAML or JSON text (or an already decoded mapping) → :class:`GraphTestSuite`.

Text is read with PyYAML's safe loader (only mappings, lists, strings, numbers, booleans and null
are ever built) and bounded before anything is expanded: the size of the text, the nesting depth
and the number of values after alias expansion (a "billion laughs" document is refused, not
expanded). Every problem is collected and raised at once in :class:`TestSpecError`, each pinned to
its case, expectation and field, with the line and column of the source text.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, cast

import re2
import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from .jsondiff import parse_ignore_path
from .model import (
    API_VERSION,
    KIND,
    OPERATORS,
    STEP_STATES,
    BodyExpectation,
    Expectation,
    GraphTestCase,
    GraphTestSuite,
    LatencyExpectation,
    Operator,
    PathExpectation,
    RouteExpectation,
    StatusExpectation,
    StepExpectation,
    StepState,
    TestIssue,
    TestRequest,
    TestSpecError,
)

__all__ = [
    "MAX_BYTES",
    "MAX_CASES",
    "MAX_EXPECTATIONS",
    "MAX_EXPECTED_BYTES",
    "MAX_PATTERN",
    "compile_pattern",
    "load_suite",
    "parse_case",
    "suite_from_document",
]

# Bounds on what one document may ask of us. 16 MiB leaves room for a few hundred cases with photo
# payloads (a base64 JPEG is ~100 KiB); 1,000 cases is five times the benchmark's 200-case suite;
# 200 expectations per case is far beyond what "save run as test" writes (status, body, routes).
MAX_BYTES: Final = 16 * 1024 * 1024
MAX_CASES: Final = 1000
MAX_EXPECTATIONS: Final = 200
# An expected value (a body, an ``equals``) larger than 1 MiB is a copied response, not a test.
MAX_EXPECTED_BYTES: Final = 1024 * 1024
# Regexes longer than this are not hand-written; RE2 bounds matching time, this bounds compiling.
MAX_PATTERN: Final = 4096
# RE2's default memory budget for one compiled program (re2.h: max_mem = 8 << 20).
_RE2_MAX_MEM: Final = 8 << 20
# As graphs.spec.reader.MAX_DEPTH: JSON payloads of real models nest a handful of levels.
MAX_DEPTH: Final = 100
# As graphs.spec.reader.MAX_VALUES: far above any real document, reached in well under a second.
MAX_VALUES: Final = 500_000
# The length of the TestCase.name column (execution/testcases/models.py).
MAX_NAME: Final = 200

Path = tuple[str | int, ...]
Position = tuple[int, int]

_TIMESTAMP: Final = "tag:yaml.org,2002:timestamp"
_MERGE: Final = "tag:yaml.org,2002:merge"
_BASE_LOADER: type[Any] = yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader


class _Loader(_BASE_LOADER):  # type: ignore[misc]
    """The safe loader without the timestamp resolver: dates stay strings, as JSON needs."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _format_path(path: Path) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part.replace("_", "").replace("-", "").isalnum():
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(part)}]"
    return out


class _Refused(Exception):
    def __init__(self, issue: TestIssue) -> None:
        super().__init__(issue.message)
        self.issue = issue


def _read_text(text: str) -> tuple[Any, dict[Path, Position]]:
    """The document as JSON-compatible data plus the (line, column) of every path."""
    loader = _Loader(text)
    try:
        root = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (None, None)
        problem = exc.problem or exc.context or "invalid YAML"
        raise _Refused(
            TestIssue("load.syntax", f"not valid YAML: {problem}", line=line, column=column)
        ) from None
    except yaml.YAMLError as exc:
        raise _Refused(TestIssue("load.syntax", f"not valid YAML: {exc}")) from None
    finally:
        loader.dispose()
    if root is None:
        return None, {}
    if _expanded_size(root) > MAX_VALUES:
        line, column = root.start_mark.line + 1, root.start_mark.column + 1
        raise _Refused(
            TestIssue(
                "load.too-many-values",
                f"the document expands to more than {MAX_VALUES} values (aliases included)",
                line=line,
                column=column,
            )
        )
    builder = _Builder(loader)
    return builder.value(root, ()), builder.positions


def _expanded_size(root: Node) -> int:
    """How many values the tree holds once every alias is expanded, counted on the shared nodes
    (each distinct node once, bottom-up), so that a "billion laughs" costs nothing to measure."""
    sizes: dict[int, int] = {}
    open_: set[int] = set()  # nodes whose children are still being counted
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in sizes:
            continue
        if not children_done and id(node) in open_:
            return MAX_VALUES + 1  # an alias inside its own anchor: an endless document
        if isinstance(node, MappingNode):
            children = [child for pair in node.value for child in pair]
        elif isinstance(node, SequenceNode):
            children = list(node.value)
        else:
            sizes[id(node)] = 1
            continue
        if children_done:
            sizes[id(node)] = min(1 + sum(sizes.get(id(c), 0) for c in children), MAX_VALUES + 1)
            open_.discard(id(node))
        else:
            open_.add(id(node))
            stack.append((node, True))
            stack.extend((c, False) for c in children if id(c) not in sizes)
    return sizes[id(root)]


@dataclass
class _Builder:
    """Walks the composed node tree into plain data; aliases are walked again (counted, bounded)."""

    loader: Any
    positions: dict[Path, Position] = field(default_factory=dict)
    values: int = 0

    def value(self, node: Node, path: Path) -> Any:
        self.values += 1
        pos = (node.start_mark.line + 1, node.start_mark.column + 1)
        if self.values > MAX_VALUES:
            raise _Refused(
                TestIssue(
                    "load.too-many-values",
                    f"the document expands to more than {MAX_VALUES} values (aliases included)",
                    line=pos[0],
                    column=pos[1],
                )
            )
        if len(path) > MAX_DEPTH:
            raise _Refused(
                TestIssue(
                    "load.too-deep", f"nesting deeper than {MAX_DEPTH} levels", line=pos[0], column=pos[1]
                )
            )
        if len(self.positions) < MAX_VALUES:
            self.positions.setdefault(path, pos)
        if isinstance(node, MappingNode):
            out: dict[str, Any] = {}
            for key_node, value_node in node.value:
                kpos = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
                if not isinstance(key_node, ScalarNode) or key_node.tag == _MERGE:
                    raise _Refused(
                        TestIssue(
                            "load.key",
                            "mapping keys must be plain text (no merge keys, lists or mappings)",
                            path=_format_path(path) or None,
                            line=kpos[0],
                            column=kpos[1],
                        )
                    )
                key = str(key_node.value)
                if key in out:
                    raise _Refused(
                        TestIssue(
                            "load.duplicate-key",
                            f"duplicate key {key!r}",
                            path=_format_path(path) or None,
                            line=kpos[0],
                            column=kpos[1],
                        )
                    )
                # An entry is pinned at its key (where an editor puts the cursor), not its value.
                if len(self.positions) < MAX_VALUES:
                    self.positions.setdefault((*path, key), kpos)
                out[key] = self.value(value_node, (*path, key))
            return out
        if isinstance(node, SequenceNode):
            return [self.value(item, (*path, i)) for i, item in enumerate(node.value)]
        scalar = self.loader.construct_object(node, deep=True)
        if scalar is None or isinstance(scalar, str | bool | int):
            return scalar
        if isinstance(scalar, float) and math.isfinite(scalar):
            return scalar
        raise _Refused(
            TestIssue(
                "load.not-json",
                f"{node.value!r} is not a JSON value (tag {node.tag})",
                path=_format_path(path) or None,
                line=pos[0],
                column=pos[1],
            )
        )


def load_suite(source: str | bytes) -> GraphTestSuite:
    """Read one ``kind: InferenceGraphTest`` document from YAML or JSON text.

    Raises :class:`TestSpecError` with every problem found (syntax, limits, structure, each
    malformed case and expectation). Pure; safe on hostile input (bounded work and memory).
    """
    if len(source) > MAX_BYTES:
        raise TestSpecError([TestIssue("load.too-large", f"the test file is larger than {MAX_BYTES} bytes")])
    if isinstance(source, bytes):
        try:
            source = source.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise TestSpecError([TestIssue("load.encoding", f"not UTF-8 text (byte {exc.start})")]) from None
    try:
        document, positions = _read_text(source)
    except _Refused as exc:
        raise TestSpecError([exc.issue]) from None
    return suite_from_document(document, positions)


class _Issues:
    """Collects issues, filling in the position of each path from the source."""

    def __init__(self, positions: Mapping[Path, Position]) -> None:
        self.positions = positions
        self.items: list[TestIssue] = []

    def add(
        self,
        code: str,
        message: str,
        path: Path,
        *,
        case: int | None = None,
        case_name: str | None = None,
        expectation: int | None = None,
    ) -> None:
        pos: Position | None = None
        for cut in range(len(path), -1, -1):
            pos = self.positions.get(path[:cut])
            if pos is not None:
                break
        names = [part for part in path if isinstance(part, str) and part not in ("cases", "expectations")]
        last = names[-1] if names and path[-1] not in ("cases", "expectations") else None
        self.items.append(
            TestIssue(
                code=code,
                message=message,
                case=case,
                case_name=case_name,
                expectation=expectation,
                field=last,
                path=_format_path(path) or None,
                line=pos[0] if pos else None,
                column=pos[1] if pos else None,
            )
        )


def suite_from_document(document: Any, positions: Mapping[Path, Position] | None = None) -> GraphTestSuite:
    """Build a suite from decoded data (``positions`` as :func:`load_suite` records them).

    Raises :class:`TestSpecError` with every problem found.
    """
    issues = _Issues(positions or {})
    if not isinstance(document, dict):
        issues.add("suite.not-mapping", "a test document is a mapping with kind, graph and cases", ())
        raise TestSpecError(issues.items)
    _unknown(issues, document, {"apiVersion", "kind", "metadata", "graph", "cases"}, ())
    kind = document.get("kind")
    if kind != KIND:
        issues.add("suite.kind", f"kind must be {KIND!r}, got {kind!r}", ("kind",))
    api_version = document.get("apiVersion", API_VERSION)
    if api_version != API_VERSION:
        issues.add(
            "suite.api-version", f"apiVersion must be {API_VERSION!r}, got {api_version!r}", ("apiVersion",)
        )
    graph = document.get("graph")
    if not isinstance(graph, str) or not graph:
        issues.add("suite.graph", "graph (the InferenceGraph's name) is a non-empty string", ("graph",))
        graph = ""
    raw_cases = document.get("cases")
    cases: list[GraphTestCase] = []
    if not isinstance(raw_cases, list):
        issues.add("suite.cases", "cases is a list of test cases", ("cases",))
    elif len(raw_cases) > MAX_CASES:
        issues.add(
            "suite.too-many-cases", f"{len(raw_cases)} cases; at most {MAX_CASES} per file", ("cases",)
        )
    else:
        seen: dict[str, int] = {}
        for i, raw in enumerate(raw_cases):
            case = _case(issues, raw, ("cases", i), i)
            if case is not None:
                cases.append(case)
            name = raw.get("name") if isinstance(raw, dict) else None
            if not isinstance(name, str):
                continue
            if name in seen:
                issues.add(
                    "case.duplicate-name",
                    f"case name {name!r} is also case {seen[name]}",
                    ("cases", i, "name"),
                    case=i,
                    case_name=name,
                )
            seen.setdefault(name, i)
    if issues.items:
        raise TestSpecError(issues.items)
    return GraphTestSuite(graph=graph, cases=tuple(cases), document=document)


def parse_case(raw: Any) -> GraphTestCase:
    """One case from decoded data (the REST API's input). Raises :class:`TestSpecError`; the
    issues' paths start at the case (``expectations[1].gt``)."""
    issues = _Issues({})
    case = _case(issues, raw, (), None)
    if issues.items or case is None:
        raise TestSpecError(issues.items)
    return case


def _unknown(issues: _Issues, raw: dict[str, Any], allowed: set[str], path: Path, **where: Any) -> None:
    for key in raw:
        if key not in allowed:
            issues.add(
                "field.unknown",
                f"unknown field {key!r} (allowed: {', '.join(sorted(allowed))})",
                (*path, key),
                **where,
            )


def _case(issues: _Issues, raw: Any, path: Path, index: int | None) -> GraphTestCase | None:
    if not isinstance(raw, dict):
        issues.add(
            "case.not-mapping", "a case is a mapping with name, request and expectations", path, case=index
        )
        return None
    name = raw.get("name")
    case_name = name if isinstance(name, str) else None
    where: dict[str, Any] = {"case": index, "case_name": case_name}
    before = len(issues.items)
    _unknown(
        issues, raw, {"name", "description", "request", "seed", "environment", "expectations"}, path, **where
    )
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME:
        issues.add(
            "case.name",
            f"name is a non-empty string of at most {MAX_NAME} characters",
            (*path, "name"),
            **where,
        )
    description = raw.get("description", "")
    if description is None:
        description = ""
    if not isinstance(description, str):
        issues.add("case.description", "description is a string", (*path, "description"), **where)
    seed = raw.get("seed")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        issues.add("case.seed", "seed is an integer (it fixes the Splitter draws)", (*path, "seed"), **where)
    environment = raw.get("environment")
    if environment is not None and (not isinstance(environment, str) or not environment):
        issues.add(
            "case.environment", "environment is the name of an environment", (*path, "environment"), **where
        )
    request = _request(issues, raw.get("request"), (*path, "request"), where)
    expectations: list[Expectation] = []
    raw_expectations = raw.get("expectations", [])
    if not isinstance(raw_expectations, list):
        issues.add("case.expectations", "expectations is a list", (*path, "expectations"), **where)
    elif len(raw_expectations) > MAX_EXPECTATIONS:
        issues.add(
            "case.too-many-expectations",
            f"{len(raw_expectations)} expectations; at most {MAX_EXPECTATIONS} per case",
            (*path, "expectations"),
            **where,
        )
    else:
        for j, item in enumerate(raw_expectations):
            parsed = _expectation(issues, item, (*path, "expectations", j), {**where, "expectation": j})
            if parsed is not None:
                expectations.append(parsed)
    if len(issues.items) > before or request is None:
        return None
    return GraphTestCase(
        name=cast(str, name),
        request=request,
        expectations=tuple(expectations),
        description=cast(str, description),
        seed=seed,
        environment=environment,
        document=raw,
    )


def _request(issues: _Issues, raw: Any, path: Path, where: dict[str, Any]) -> TestRequest | None:
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        issues.add(
            "request.not-mapping",
            "request is a mapping (payload or raw, content_type, headers)",
            path,
            **where,
        )
        return None
    before = len(issues.items)
    _unknown(issues, raw, {"payload", "raw", "content_type", "headers"}, path, **where)
    if "payload" in raw and "raw" in raw:
        issues.add(
            "request.body",
            "give payload (a JSON value) or raw (text sent as is), not both",
            (*path, "raw"),
            **where,
        )
    body = b""
    if "payload" in raw:
        body = json.dumps(raw["payload"], ensure_ascii=False, separators=(",", ":")).encode()
    elif "raw" in raw:
        if not isinstance(raw["raw"], str):
            issues.add("request.raw", "raw is text, sent as it is", (*path, "raw"), **where)
        else:
            body = raw["raw"].encode()
    content_type = raw.get("content_type", "application/json")
    if content_type is not None and (not isinstance(content_type, str) or not content_type):
        issues.add(
            "request.content-type",
            "content_type is a media type (or null for none)",
            (*path, "content_type"),
            **where,
        )
    headers: list[tuple[str, str]] = []
    raw_headers = raw.get("headers", {}) or {}
    if not isinstance(raw_headers, dict):
        issues.add(
            "request.headers", "headers is a mapping of header names to text", (*path, "headers"), **where
        )
    else:
        for key, value in raw_headers.items():
            if (
                not key
                or any(c in key for c in " :\r\n\t")
                or not isinstance(value, str | int | float)
                or isinstance(value, bool)
            ):
                issues.add(
                    "request.header",
                    f"header {key!r} needs a token name and a text value",
                    (*path, "headers", key),
                    **where,
                )
            elif "\n" in str(value) or "\r" in str(value):
                issues.add(
                    "request.header",
                    f"header {key!r} has a line break in its value",
                    (*path, "headers", key),
                    **where,
                )
            else:
                headers.append((key, str(value)))
    if len(issues.items) > before:
        return None
    if content_type and not any(name.lower() == "content-type" for name, _ in headers):
        headers.insert(0, ("Content-Type", content_type))
    return TestRequest(body=body, content_type=content_type, headers=tuple(headers))


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


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def _step_ref(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    node, sep, step = value.rpartition("/")
    return bool(sep and node and step)


def compile_pattern(pattern: str) -> Any:
    """Compile a ``matches`` regex with RE2 (linear-time matching: no catastrophic backtracking).

    Raises ``ValueError`` with RE2's reason for a pattern it refuses (too long, invalid, or
    needing more than RE2's default memory budget).
    """
    if len(pattern) > MAX_PATTERN:
        raise ValueError(f"the regex is longer than {MAX_PATTERN} characters")
    options = re2.Options()
    options.log_errors = False  # the reason goes into the issue instead
    options.max_mem = _RE2_MAX_MEM
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else str(exc)
        text = detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)
        raise ValueError(f"not a valid regex: {text}") from None


def _expectation(issues: _Issues, raw: Any, path: Path, where: dict[str, Any]) -> Expectation | None:
    if not isinstance(raw, dict):
        issues.add(
            "expectation.not-mapping",
            f"an expectation is a mapping with one of: {', '.join(_KINDS)}",
            path,
            **where,
        )
        return None
    kind = next((k for k in _KINDS if k in raw), None)
    if kind is None:
        issues.add(
            "expectation.kind",
            f"an expectation names one of: {', '.join(_KINDS)} (got {', '.join(map(str, raw)) or 'nothing'})",
            path,
            **where,
        )
        return None
    before = len(issues.items)

    def bad(field_: str, code: str, message: str) -> None:
        issues.add(code, message, (*path, field_), **where)

    _unknown(issues, raw, _ALLOWED[kind], path, **where)
    result: Expectation | None = None
    if kind == "status":
        status = raw["status"]
        if not _is_int(status) or not 100 <= status <= 599:
            bad("status", "expectation.status", "status is an HTTP status code (100-599)")
        else:
            result = StatusExpectation(status=status)
    elif kind == "body":
        match = raw.get("match", "exact")
        if match not in ("exact", "subset"):
            bad("match", "expectation.match", f"match is exact or subset, got {match!r}")
        if _size(raw["body"]) > MAX_EXPECTED_BYTES:
            bad(
                "body",
                "expectation.too-large",
                f"the expected body is larger than {MAX_EXPECTED_BYTES} bytes",
            )
        ignore = raw.get("ignore", [])
        if not isinstance(ignore, list) or not all(isinstance(p, str) for p in ignore):
            bad("ignore", "expectation.ignore", "ignore is a list of paths (a.b, a.0, a.#.b, a.*)")
            ignore = []
        for k, item in enumerate(ignore):
            try:
                parse_ignore_path(item)
            except ValueError as exc:
                issues.add(
                    "expectation.ignore", f"ignore path {item!r}: {exc}", (*path, "ignore", k), **where
                )
        if len(issues.items) == before:
            result = BodyExpectation(value=raw["body"], match=match, ignore=tuple(ignore))
    elif kind == "path":
        result = _path_expectation(issues, raw, path, where, bad)
    elif kind == "route":
        node, took = raw["route"], raw.get("took", "<absent>")
        if not isinstance(node, str) or not node:
            bad("route", "expectation.route", "route names a Switch or Splitter node")
        if took == "<absent>":
            bad(
                "took",
                "expectation.took",
                "took names the step the node routed to (null: it matched nothing)",
            )
        elif took is not None and not (isinstance(took, str) and took) and not (_is_int(took) and took >= 0):
            bad("took", "expectation.took", "took is a step name, a step index, or null (matched nothing)")
        if len(issues.items) == before:
            result = RouteExpectation(node=node, took=took)
    elif kind == "step":
        step, status = raw["step"], raw.get("status")
        if not _step_ref(step):
            bad("step", "expectation.step", "step is node/step (a step name or index), e.g. root/classify")
        if not ((_is_int(status) and 100 <= cast(int, status) <= 599) or status in STEP_STATES):
            bad(
                "status",
                "expectation.step-status",
                f"status is an HTTP status or one of: {', '.join(STEP_STATES)}",
            )
        if len(issues.items) == before:
            result = StepExpectation(step=step, status=cast("int | StepState", status))
    else:  # latency
        within = raw["latency"]
        if not _is_number(within) or within <= 0:
            bad("latency", "expectation.latency", "latency is a positive number of milliseconds")
        else:
            result = LatencyExpectation(within_ms=float(within))
    return result if len(issues.items) == before else None


def _path_expectation(
    issues: _Issues, raw: dict[str, Any], path: Path, where: dict[str, Any], bad: Any
) -> Expectation | None:
    before = len(issues.items)
    gjson_path = raw["path"]
    if not isinstance(gjson_path, str) or not gjson_path:
        bad("path", "expectation.path", "path is a non-empty GJSON path")
    step = raw.get("step")
    if step is not None and not _step_ref(step):
        bad("step", "expectation.step", "step is node/step (a step name or index), e.g. root/classify")
    operators = [op for op in OPERATORS if op in raw]
    if len(operators) != 1:
        bad(
            "path",
            "expectation.operator",
            f"a path expectation has exactly one operator of: {', '.join(OPERATORS)}"
            + (f" (got {', '.join(operators)})" if operators else ""),
        )
        return None
    operator: Operator = operators[0]
    expected = raw[operator]
    tolerance = raw.get("tolerance")
    if "tolerance" in raw and operator != "approx":
        bad("tolerance", "expectation.tolerance", "tolerance goes with approx only")
    if operator in ("exists", "missing") and expected is not True:
        bad(operator, "expectation.operand", f"write `{operator}: true`")
    elif operator in ("gt", "lt", "approx") and not _is_number(expected):
        bad(operator, "expectation.operand", f"{operator} compares with a number")
    elif operator == "matches":
        if not isinstance(expected, str):
            bad(operator, "expectation.operand", "matches takes a regex (RE2 syntax, as Go's regexp)")
        else:
            try:
                compile_pattern(expected)
            except ValueError as exc:
                bad(operator, "expectation.regex", str(exc))
    elif _size(expected) > MAX_EXPECTED_BYTES:
        bad(
            operator, "expectation.too-large", f"the expected value is larger than {MAX_EXPECTED_BYTES} bytes"
        )
    if operator == "approx" and tolerance is not None and (not _is_number(tolerance) or tolerance < 0):
        bad(
            "tolerance", "expectation.tolerance", "tolerance is a number ≥ 0 (the largest difference allowed)"
        )
    if len(issues.items) > before:
        return None
    return PathExpectation(
        path=gjson_path,
        operator=operator,
        expected=expected,
        step=step,
        tolerance=float(tolerance) if tolerance is not None else None,
    )
