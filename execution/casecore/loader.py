"""Reading test documents: YAML or JSON text (or an already decoded mapping) → :class:`ParsedSuite`.

Text is read with PyYAML's safe loader (only mappings, lists, strings, numbers, booleans and null
are ever built) and bounded before anything is expanded: the size of the text, the nesting depth
and the number of values after alias expansion (a "billion laughs" document is refused, not
expanded). Every problem is collected and raised at once in :class:`CaseDocumentError`, each pinned to
its case, expectation and field, with the line and column of the source text.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, cast

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from graphs.language.storable import unstorable

from .expectations import read_expectation
from .fields import At, Issues, Path, Position, format_path, is_int
from .limits import DEFAULT_LIMITS, Limits
from .model import (
    API_VERSION,
    KIND,
    CaseDocumentError,
    CaseIssue,
    Expectation,
    ParsedCase,
    ParsedSuite,
)
from .request import read_request

__all__ = [
    "MAX_BYTES",
    "MAX_CASES",
    "MAX_EXPECTATIONS",
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
# As graphs.language.reader.MAX_DEPTH: JSON payloads of real models nest a handful of levels.
MAX_DEPTH: Final = 100
# As graphs.language.reader.MAX_VALUES: far above any real document, reached in well under a second.
MAX_VALUES: Final = 500_000
# The length of the GraphCase.name column (execution/cases/models.py).
MAX_NAME: Final = 200

_TAG: Final = "tag:yaml.org,2002:"
_TIMESTAMP: Final = _TAG + "timestamp"
_MERGE: Final = _TAG + "merge"
# Scalar tags the safe loader builds; what they build is then checked to be a JSON value (a
# timestamp or binary is not). Any other tag (``!foo``, ``!!python/...``) is refused by name.
_SCALAR_TAGS: Final = frozenset(_TAG + name for name in ("str", "int", "float", "bool", "null", "binary")) | {
    _TIMESTAMP,
    "!",
}
_BASE_LOADER: type[Any] = yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader


class _Loader(_BASE_LOADER):  # type: ignore[misc]
    """The safe loader without the timestamp resolver: dates stay strings, as JSON needs."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


class _Refused(Exception):
    def __init__(self, issue: CaseIssue) -> None:
        super().__init__(issue.message)
        self.issue = issue


def _read_text(text: str, max_bytes: int, limit_name: str) -> tuple[Any, dict[Path, Position]]:
    """The document as JSON-compatible data plus the (line, column) of every path."""
    loader = _Loader(text)
    try:
        root = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (None, None)
        problem = exc.problem or exc.context or "invalid YAML"
        raise _Refused(
            CaseIssue("load.syntax", f"not valid YAML: {problem}", line=line, column=column)
        ) from None
    except yaml.YAMLError as exc:
        raise _Refused(CaseIssue("load.syntax", f"not valid YAML: {exc}")) from None
    finally:
        loader.dispose()
    if root is None:
        return None, {}
    values, _, over = _expanded_size(root, max_bytes)
    if values > MAX_VALUES:
        line, column = root.start_mark.line + 1, root.start_mark.column + 1
        raise _Refused(
            CaseIssue(
                "load.too-many-values",
                f"the document expands to more than {MAX_VALUES} values (aliases included)",
                line=line,
                column=column,
            )
        )
    if over is not None:
        raise _Refused(
            CaseIssue(
                "load.too-large-expanded",
                f"the document expands to more than {max_bytes:,} bytes once its aliases are copied "
                f"out ({limit_name}: a test file may hold no more than its text may; alias expansion "
                "counts every copy)",
                line=over.start_mark.line + 1,
                column=over.start_mark.column + 1,
            )
        )
    builder = _Builder(loader)
    return builder.value(root, ()), builder.positions


def _text_bytes(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _expanded_size(root: Node, max_bytes: int) -> tuple[int, int, Node | None]:
    """How many values, and how many bytes, the tree holds once every alias is expanded, counted
    on the shared nodes (each distinct node once, bottom-up), so that a "billion laughs" costs
    nothing to measure; and the first (innermost) node whose expansion is over ``max_bytes``.

    Bytes are the text of every key and scalar plus one per key, value and container (about the
    compact JSON size without quotes): a document written out without aliases never counts more
    than its text's bytes, so only alias copies can reach the limit.
    """
    sizes: dict[int, int] = {}
    weights: dict[int, int] = {}
    open_: set[int] = set()  # nodes whose children are still being counted
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in sizes:
            continue
        if not children_done and id(node) in open_:
            return MAX_VALUES + 1, 0, None  # an alias inside its own anchor: an endless document
        if isinstance(node, MappingNode):
            children = [child for pair in node.value for child in pair]
        elif isinstance(node, SequenceNode):
            children = list(node.value)
        else:
            sizes[id(node)] = 1
            weights[id(node)] = _text_bytes(str(node.value)) + 1
            continue
        if children_done:
            sizes[id(node)] = min(1 + sum(sizes.get(id(c), 0) for c in children), MAX_VALUES + 1)
            weight = 1 + sum(weights.get(id(c), 0) for c in children)
            weights[id(node)] = weight
            open_.discard(id(node))
            if weight > max_bytes:
                return sizes[id(node)], weight, node
        else:
            open_.add(id(node))
            stack.append((node, True))
            stack.extend((c, False) for c in children if id(c) not in sizes)
    return sizes[id(root)], weights[id(root)], None


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
                CaseIssue(
                    "load.too-many-values",
                    f"the document expands to more than {MAX_VALUES} values (aliases included)",
                    line=pos[0],
                    column=pos[1],
                )
            )
        if len(path) > MAX_DEPTH:
            raise _Refused(
                CaseIssue(
                    "load.too-deep", f"nesting deeper than {MAX_DEPTH} levels", line=pos[0], column=pos[1]
                )
            )
        if len(self.positions) < MAX_VALUES:
            self.positions.setdefault(path, pos)
        if isinstance(node, MappingNode | SequenceNode):
            kind = "map" if isinstance(node, MappingNode) else "seq"
            if node.tag != _TAG + kind:
                raise _Refused(_tag_issue(node, path, pos))
        elif node.tag not in _SCALAR_TAGS:
            raise _Refused(_tag_issue(node, path, pos))
        if isinstance(node, MappingNode):
            out: dict[str, Any] = {}
            for key_node, value_node in node.value:
                kpos = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
                if not isinstance(key_node, ScalarNode) or key_node.tag == _MERGE:
                    raise _Refused(
                        CaseIssue(
                            "load.key",
                            "mapping keys must be plain text (no merge keys, lists or mappings)",
                            path=format_path(path) or None,
                            line=kpos[0],
                            column=kpos[1],
                        )
                    )
                key = str(key_node.value)
                _check_text(key, path, kpos)
                if key in out:
                    raise _Refused(
                        CaseIssue(
                            "load.duplicate-key",
                            f"duplicate key {key!r}",
                            path=format_path(path) or None,
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
        try:
            scalar = self.loader.construct_object(node, deep=True)
        except yaml.YAMLError:
            raise _Refused(_tag_issue(node, path, pos)) from None
        if isinstance(scalar, str):
            _check_text(scalar, path, pos)
            return scalar
        if scalar is None or isinstance(scalar, bool | int):
            return scalar
        if isinstance(scalar, float) and math.isfinite(scalar):
            return scalar
        raise _Refused(
            CaseIssue(
                "load.not-json",
                f"{node.value!r} is not a JSON value (tag {node.tag})",
                path=format_path(path) or None,
                line=pos[0],
                column=pos[1],
            )
        )


def _tag_issue(node: Node, path: Path, pos: Position) -> CaseIssue:
    return CaseIssue(
        "load.tag",
        f"tag {node.tag} is not supported: a test file holds only JSON values",
        path=format_path(path) or None,
        line=pos[0],
        column=pos[1],
    )


def _check_text(text: str, path: Path, pos: Position) -> None:
    """Refuse a key or string no database can store (``graphs.language.storable``)."""
    if "\x00" in text or not text.isascii():
        problem = unstorable(text)
        if problem is not None:
            raise _Refused(
                CaseIssue(
                    "load.unstorable-text",
                    f"the text holds {problem}",
                    path=format_path(path) or None,
                    line=pos[0],
                    column=pos[1],
                )
            )


def load_suite(
    source: str | bytes,
    *,
    max_bytes: int = MAX_BYTES,
    limit_name: str = "MAX_BYTES",
    limits: Limits = DEFAULT_LIMITS,
) -> ParsedSuite:
    """Read one ``kind: InferenceGraphTest`` document from YAML or JSON text.

    Raises :class:`CaseDocumentError` with every problem found (syntax, limits, structure, each
    malformed case and expectation). Pure; safe on hostile input (bounded work and memory).
    ``max_bytes`` bounds the text and the document its aliases expand to; ``limit_name`` is how
    messages name it (the setting that chose it).
    """
    if len(source) > max_bytes:
        raise CaseDocumentError(
            [CaseIssue("load.too-large", f"the test file is larger than {max_bytes:,} bytes ({limit_name})")]
        )
    if isinstance(source, bytes):
        try:
            source = source.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CaseDocumentError(
                [CaseIssue("load.encoding", f"not UTF-8 text (byte {exc.start})")]
            ) from None
    try:
        document, positions = _read_text(source, max_bytes, limit_name)
    except _Refused as exc:
        raise CaseDocumentError([exc.issue]) from None
    return suite_from_document(document, positions, limits=limits)


def suite_from_document(
    document: Any, positions: Mapping[Path, Position] | None = None, *, limits: Limits = DEFAULT_LIMITS
) -> ParsedSuite:
    """Build a suite from decoded data (``positions`` as :func:`load_suite` records them).

    Raises :class:`CaseDocumentError` with every problem found.
    """
    issues = Issues(positions or {}, limits)
    at = At(issues, (), {})
    if not isinstance(document, dict):
        at.add("suite.not-mapping", "a test document is a mapping with kind, graph and cases")
        raise CaseDocumentError(issues.items)
    at.unknown(document, {"apiVersion", "kind", "metadata", "graph", "cases"})
    kind = document.get("kind")
    if kind != KIND:
        at.add("suite.kind", f"kind must be {KIND!r}, got {kind!r}", "kind")
    api_version = document.get("apiVersion", API_VERSION)
    if api_version != API_VERSION:
        at.add("suite.api-version", f"apiVersion must be {API_VERSION!r}, got {api_version!r}", "apiVersion")
    graph = document.get("graph")
    if not isinstance(graph, str) or not graph:
        at.add("suite.graph", "graph (the InferenceGraph's name) is a non-empty string", "graph")
        graph = ""
    cases = _cases(issues, document.get("cases"))
    if issues.items:
        raise CaseDocumentError(issues.items)
    return ParsedSuite(graph=graph, cases=tuple(cases), document=document)


def _cases(issues: Issues, raw_cases: Any) -> list[ParsedCase]:
    """The cases of a document; a name used twice is filed at its second use."""
    at = At(issues, ("cases",), {})
    if not isinstance(raw_cases, list):
        at.add("suite.cases", "cases is a list of test cases")
        return []
    if len(raw_cases) > MAX_CASES:
        at.add("suite.too-many-cases", f"{len(raw_cases)} cases; at most {MAX_CASES} per file")
        return []
    cases: list[ParsedCase] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(raw_cases):
        case = _case(issues, raw, ("cases", i), i)
        if case is not None:
            cases.append(case)
        name = raw.get("name") if isinstance(raw, dict) else None
        if not isinstance(name, str):
            continue
        if name in seen:
            At(issues, ("cases", i), {"case": i, "case_name": name}).add(
                "case.duplicate-name", f"case name {name!r} is also case {seen[name]}", "name"
            )
        seen.setdefault(name, i)
    return cases


def parse_case(raw: Any, *, limits: Limits = DEFAULT_LIMITS) -> ParsedCase:
    """One case from decoded data (the REST API's input). Raises :class:`CaseDocumentError`; the
    issues' paths start at the case (``expectations[1].gt``)."""
    issues = Issues({}, limits)
    case = _case(issues, raw, (), None)
    if issues.items or case is None:
        raise CaseDocumentError(issues.items)
    return case


def _case(issues: Issues, raw: Any, path: Path, index: int | None) -> ParsedCase | None:
    if not isinstance(raw, dict):
        At(issues, path, {"case": index}).add(
            "case.not-mapping", "a case is a mapping with name, request and expectations"
        )
        return None
    name = raw.get("name")
    at = At(issues, path, {"case": index, "case_name": name if isinstance(name, str) else None})
    before = at.count()
    at.unknown(raw, {"name", "description", "request", "seed", "environment", "expectations"})
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME:
        at.add("case.name", f"name is a non-empty string of at most {MAX_NAME} characters", "name")
    description = raw.get("description", "")
    if description is None:
        description = ""
    if not isinstance(description, str):
        at.add("case.description", "description is a string", "description")
    seed = raw.get("seed")
    if seed is not None and not is_int(seed):
        at.add("case.seed", "seed is an integer (it fixes the Splitter draws)", "seed")
    environment = raw.get("environment")
    if environment is not None and (not isinstance(environment, str) or not environment):
        at.add("case.environment", "environment is the name of an environment", "environment")
    request = read_request(At(issues, (*path, "request"), at.where), raw.get("request"))
    expectations = _expectations(at, raw.get("expectations", []))
    if at.count() > before or request is None:
        return None
    return ParsedCase(
        name=cast(str, name),
        request=request,
        expectations=tuple(expectations),
        description=cast(str, description),
        seed=seed,
        environment=environment,
        document=raw,
    )


def _expectations(at: At, raw_expectations: Any) -> list[Expectation]:
    if not isinstance(raw_expectations, list):
        at.add("case.expectations", "expectations is a list", "expectations")
        return []
    if len(raw_expectations) > MAX_EXPECTATIONS:
        at.add(
            "case.too-many-expectations",
            f"{len(raw_expectations)} expectations; at most {MAX_EXPECTATIONS} per case",
            "expectations",
        )
        return []
    expectations = []
    for j, item in enumerate(raw_expectations):
        parsed = read_expectation(
            At(at.issues, (*at.path, "expectations", j), {**at.where, "expectation": j}), item
        )
        if parsed is not None:
            expectations.append(parsed)
    return expectations
