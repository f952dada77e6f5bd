"""Reading manifests: YAML or JSON text → JSON-compatible documents with source positions → Manifest.

Safety is ``yaml.safe_load``'s: only the YAML core types are built (mappings, lists, strings,
numbers, booleans, null), never Python objects. On top of that the reader refuses hostile input
early, naming the limit it hit: the size of the text, the nesting depth, the number of alias
references and the number of values after alias expansion (billion laughs), the number of graph
nodes and steps.

The text is read by one of two halves: ``yaml_events`` builds values and positions from the YAML
parser's event stream (JSON is read by ``json`` and only its positions come from there);
``manifest_builder`` turns a document into the typed ``Manifest``. This module holds what lies
between: the public entry points, the limits, and the checks on whole documents (kubectl ``List``s,
kind and apiVersion, graph size).

YAML 1.1 details: timestamps stay strings (the timestamp resolver is removed, so values stay
JSON-compatible); mapping keys are always the key's text (``on:``/``yes:``/``1:`` are the strings
``"on"``, ``"yes"``, ``"1"``), values follow YAML 1.1 (``yes`` is ``true``) as kubectl reads them;
merge keys (``<<``) are honoured; duplicate keys are refused (which one would win is ambiguous).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from .issues import ERROR, Issue, SpecError, error_issue
from .manifest_builder import build_manifest
from .model import API_VERSION, KIND, Manifest, PathKey, Position
from .storable import unstorable
from .yaml_events import Limits, RawDocument, Refused, read_yaml, too_deep

# Defaults. 2 MiB is twice the largest Kubernetes object etcd stores by default (1.5 MiB request
# limit), so no deployable manifest is refused; the other limits are far above real graphs
# (KServe's own examples have ≤ 3 nodes) yet bound the work a hostile input can cause.
MAX_BYTES: Final = 2 * 1024 * 1024
MAX_DEPTH: Final = 100
MAX_ALIASES: Final = 1000
MAX_VALUES: Final = 500_000
MAX_GRAPH_NODES: Final = 2000
MAX_STEPS: Final = 20_000

_LIST_KINDS: Final = ("List", "InferenceGraphList")


@dataclass(frozen=True, slots=True)
class LoadedDocument:
    """One InferenceGraph document read from a source.

    ``document`` is JSON-compatible (dicts with string keys, lists, str, int, finite float, bool,
    None). ``positions`` maps paths of ``document`` to 1-based (line, column). ``number`` is the
    1-based document number in the stream; ``item`` the 0-based index in a kubectl ``List``.
    """

    document: dict[str, Any]
    positions: Mapping[PathKey, Position] = field(default_factory=dict)
    number: int = 1
    item: int | None = None

    @property
    def where(self) -> str:
        """``document 2`` or ``document 1, item 3`` (1-based, as people count)."""
        if self.item is None:
            return f"document {self.number}"
        return f"document {self.number}, item {self.item + 1}"

    def manifest(self) -> Manifest:
        return build_manifest(self.document, self.positions)


# --------------------------------------------------------------------------------------------------
# Public API


def load_documents(
    source: str | bytes,
    *,
    max_bytes: int = MAX_BYTES,
    max_depth: int = MAX_DEPTH,
    max_aliases: int = MAX_ALIASES,
    max_values: int = MAX_VALUES,
    max_graph_nodes: int = MAX_GRAPH_NODES,
    max_steps: int = MAX_STEPS,
    other_kinds: Literal["error", "skip"] = "error",
) -> list[LoadedDocument]:
    """Read every InferenceGraph document of a YAML or JSON source.

    Accepts one document, a multi-document YAML stream (``---``) and kubectl ``List``s
    (``kind: List``/``InferenceGraphList`` with ``items``); empty documents are skipped. Text that
    starts with ``{`` or ``[`` is read as strict JSON (no NaN/Infinity, no duplicate keys), falling
    back to YAML when it is YAML flow style. A document of another kind or apiVersion is an error
    naming what was found (or skipped with ``other_kinds="skip"``); a document without
    apiVersion/kind is accepted and left to ``validate``.

    Raises ``SpecError`` (all issues are errors, with line/column when known) on a syntax error, a
    limit exceeded (the message names the limit and its keyword), a document that is not a
    mapping or not an InferenceGraph, or when no InferenceGraph is found. Pure: no side effects.
    """
    limits = Limits(max_bytes, max_depth, max_aliases, max_values, max_graph_nodes, max_steps)
    text = _decode(source, limits)
    stripped = text.lstrip()
    looks_like_json = stripped.startswith(("{", "["))
    raw = _read_json(text, limits) if looks_like_json else read_yaml(text, limits)

    found: list[LoadedDocument] = []
    problems: list[Issue] = []
    number = 0
    for value, positions in raw:
        number += 1
        if value is None:
            continue
        if not isinstance(value, dict):
            problems.append(
                _identity_issue(value, f"document {number}", positions) or error_issue("load.not-mapping", "")
            )
            continue
        for loaded in _expand_list(value, positions, number):
            if isinstance(loaded, Issue):
                problems.append(loaded)
                continue
            issue = _identity_issue(loaded.document, loaded.where, loaded.positions)
            if issue is not None:
                if other_kinds == "error" or issue.code == "load.not-mapping":
                    problems.append(issue)
                continue
            size_issue = _graph_size_issue(loaded.document, loaded.where, limits)
            if size_issue is not None:
                problems.append(size_issue)
                continue
            found.append(loaded)
    if problems:
        raise SpecError(problems)
    if not found:
        raise SpecError([error_issue("load.empty", "no InferenceGraph document found")])
    return found


def parse(source: str | bytes | Mapping[str, Any], *, max_bytes: int = MAX_BYTES) -> Manifest:
    """Read exactly one InferenceGraph into a ``Manifest``.

    Text is read with ``load_documents`` (positions recorded); a mapping is copied (it must hold
    only JSON values) and has no positions. Lenient: anything KServe would reject but that is
    still a JSON object parses, and ``validate`` says what is wrong. Raises ``SpecError`` when the
    source cannot be read, is not an InferenceGraph, or holds more or fewer than one.
    """
    if isinstance(source, Mapping):
        limits = Limits(max_bytes, MAX_DEPTH, MAX_ALIASES, MAX_VALUES, MAX_GRAPH_NODES, MAX_STEPS)
        document = _json_copy(source, limits)
        if not isinstance(document, dict):  # pragma: no cover - a Mapping copies to a dict
            raise SpecError([error_issue("load.not-mapping", "the manifest must be a mapping")])
        for issue in (
            _identity_issue(document, "the manifest", {}),
            _graph_size_issue(document, "the manifest", limits),
        ):
            if issue is not None:
                raise SpecError([issue])
        return build_manifest(document, {})
    documents = load_documents(source, max_bytes=max_bytes)
    if len(documents) != 1:
        raise SpecError(
            [
                error_issue(
                    "load.multiple-documents",
                    f"expected one InferenceGraph, found {len(documents)} "
                    f"({', '.join(d.where for d in documents)})",
                )
            ]
        )
    return documents[0].manifest()


def manifest_from_document(
    document: Mapping[str, Any], positions: Mapping[PathKey, Position] | None = None
) -> Manifest:
    """Build the typed view of one document (copied; it must hold only JSON values).

    Lenient by contract: known fields of the wrong type go to the owner's ``extra`` under their
    KServe key, unknown fields (including the legacy ``routes``/``service``) too; nothing is
    converted and nothing is checked beyond JSON-compatibility (``validate`` reports the rest).
    Raises ``SpecError`` if the document holds non-JSON values or is not a mapping.
    """
    if not isinstance(document, Mapping):
        raise SpecError([error_issue("load.not-mapping", "the manifest must be a mapping")])
    limits = Limits(MAX_BYTES, MAX_DEPTH, MAX_ALIASES, MAX_VALUES, MAX_GRAPH_NODES, MAX_STEPS)
    copied = _json_copy(document, limits)
    assert isinstance(copied, dict)
    return build_manifest(copied, dict(positions or {}))


# --------------------------------------------------------------------------------------------------
# Text → values


def _decode(source: str | bytes, limits: Limits) -> str:
    size = len(source) if isinstance(source, bytes) else len(source.encode("utf-8", "surrogatepass"))
    if size > limits.max_bytes:
        raise SpecError(
            [
                error_issue(
                    "load.too-large",
                    f"the input is {size:,} bytes; the limit is {limits.max_bytes:,} bytes (max_bytes)",
                )
            ]
        )
    if isinstance(source, str):
        return source.removeprefix("\ufeff")
    try:
        return source.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SpecError(
            [error_issue("load.encoding", f"the input is not UTF-8 text (byte {exc.start}: {exc.reason})")]
        ) from None


def _read_json(text: str, limits: Limits) -> list[RawDocument]:
    def no_constants(name: str) -> Any:
        raise Refused(error_issue("json.constant", f"{name} is not valid JSON (only finite numbers are)"))

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in items:
            if key in out:
                raise Refused(
                    error_issue("json.duplicate-key", f"duplicate key {json.dumps(key)} in a JSON object")
                )
            out[key] = value
        return out

    try:
        value = json.loads(text, parse_constant=no_constants, object_pairs_hook=pairs)
    except Refused as refused:
        raise SpecError([refused.issue]) from None
    except RecursionError:
        raise SpecError([too_deep(limits, None)]) from None
    except json.JSONDecodeError as exc:
        # Text starting with "{" may be YAML flow style; only if YAML cannot read it either is it
        # reported, with the JSON error (that is what the author meant to write).
        try:
            return read_yaml(text, limits)
        except SpecError as yaml_error:
            if any(issue.code.startswith("load.") for issue in yaml_error.issues):
                raise  # a limit is a limit whichever way the text is read
        raise SpecError(
            [
                Issue(
                    code="json.syntax",
                    severity=ERROR,
                    message=f"JSON syntax error: {exc.msg}",
                    line=exc.lineno,
                    column=exc.colno,
                )
            ]
        ) from None
    try:
        _check_tree(value, limits)
    except SpecError as exc:
        if exc.issues[0].code == "load.unstorable-text":
            # The YAML reader refuses the same text with its line and column (JSON is YAML),
            # unless its parser refuses the escape first; then the path alone says where.
            try:
                read_yaml(text, limits)
            except SpecError as located:
                if located.issues[0].code == "load.unstorable-text":
                    raise located from None
        raise
    positions: dict[PathKey, Position] = {}
    try:
        # Positions are a convenience for JSON: JSON is (nearly always) YAML, so the YAML reader
        # finds them; if it cannot, issues simply have no line numbers.
        docs = read_yaml(text, limits)
        if len(docs) == 1:
            positions = docs[0][1]
    except SpecError:
        positions = {}
    return [(value, positions)]


# --------------------------------------------------------------------------------------------------
# Documents → InferenceGraph documents


def _describe(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    return f"a {type(value).__name__}"


def _expand_list(
    value: dict[str, Any], positions: dict[PathKey, Position], number: int
) -> Iterator[LoadedDocument | Issue]:
    """Yield the document itself, or each item of a kubectl ``List`` with its positions re-rooted."""
    items = value.get("items")
    if value.get("kind") not in _LIST_KINDS or not isinstance(items, list):
        yield LoadedDocument(document=value, positions=positions, number=number)
        return
    per_item: dict[int, dict[PathKey, Position]] = {}
    for path, pos in positions.items():
        if len(path) >= 2 and path[0] == "items" and isinstance(path[1], int):
            per_item.setdefault(path[1], {})[path[2:]] = pos
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            yield error_issue(
                "load.not-mapping",
                f"expected kind InferenceGraph ({API_VERSION}), found {_describe(item)} "
                f"in document {number}, item {index + 1}",
                positions.get(("items", index)),
            )
            continue
        yield LoadedDocument(document=item, positions=per_item.get(index, {}), number=number, item=index)


def _identity_issue(document: Any, where: str, positions: Mapping[PathKey, Position]) -> Issue | None:
    if not isinstance(document, dict):
        return error_issue(
            "load.not-mapping",
            f"expected kind InferenceGraph ({API_VERSION}), found {_describe(document)} in {where}",
            positions.get(()),
        )
    kind = document.get("kind")
    api_version = document.get("apiVersion")
    if (kind is None or kind == KIND) and (api_version is None or api_version == API_VERSION):
        return None
    found_kind = kind if isinstance(kind, str) else json.dumps(kind)
    found_api = api_version if isinstance(api_version, str) else "no apiVersion"
    return error_issue(
        "load.not-inferencegraph",
        f"expected kind {KIND} ({API_VERSION}), found kind {found_kind} ({found_api}) in {where}",
        positions.get(("kind",)) or positions.get(()),
    )


def _graph_size_issue(document: dict[str, Any], where: str, limits: Limits) -> Issue | None:
    spec = document.get("spec")
    nodes = spec.get("nodes") if isinstance(spec, dict) else None
    if not isinstance(nodes, dict):
        return None
    if len(nodes) > limits.max_graph_nodes:
        return error_issue(
            "load.too-many-nodes",
            f"{where} has {len(nodes):,} graph nodes; the limit is {limits.max_graph_nodes:,} "
            "(max_graph_nodes)",
        )
    steps = sum(
        len(node["steps"])
        for node in nodes.values()
        if isinstance(node, dict) and isinstance(node.get("steps"), list)
    )
    if steps > limits.max_steps:
        return error_issue(
            "load.too-many-steps",
            f"{where} has {steps:,} steps; the limit is {limits.max_steps:,} (max_steps)",
        )
    return None


def _check_tree(value: Any, limits: Limits) -> None:
    """Depth and size limits, and storable text (``storable.unstorable``), for a value that did
    not come through the YAML reader (JSON)."""
    count = 0
    stack: list[tuple[Any, PathKey]] = [(value, ())]
    while stack:
        item, path = stack.pop()
        depth = len(path)
        count += 1
        if count > limits.max_values:
            raise SpecError(
                [
                    error_issue(
                        "load.too-many-values",
                        f"the document has more than {limits.max_values:,} values (max_values)",
                    )
                ]
            )
        if isinstance(item, str):
            _check_text(item, path)
            continue
        if isinstance(item, dict):
            for key in item:
                _check_text(key, path)
            children: Any = [(child, (*path, key)) for key, child in item.items()]
        elif isinstance(item, list):
            children = [(child, (*path, index)) for index, child in enumerate(item)]
        else:
            continue
        if depth >= limits.max_depth:
            raise SpecError([too_deep(limits, None)])
        stack.extend(children)


def _check_text(text: str, path: PathKey) -> None:
    if "\x00" in text or not text.isascii():
        problem = unstorable(text)
        if problem is not None:
            issue = error_issue("load.unstorable-text", f"the text holds {problem}", None, path or None)
            raise SpecError([issue])


def _json_copy(value: Any, limits: Limits, path: PathKey = ()) -> Any:
    """A deep copy of ``value`` as plain JSON types (tuples become lists); refuses anything else."""
    if len(path) > limits.max_depth:
        raise SpecError([too_deep(limits, None)])
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        raise SpecError([error_issue("load.not-json", f"{value} is not a JSON number", path=path)])
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise SpecError(
                    [error_issue("load.not-json", f"mapping key {key!r} is not a string", path=path or None)]
                )
            out[key] = _json_copy(item, limits, (*path, key))
        return out
    if isinstance(value, (list, tuple)):
        return [_json_copy(item, limits, (*path, index)) for index, item in enumerate(value)]
    raise SpecError(
        [error_issue("load.not-json", f"a {type(value).__name__} is not a JSON value", path=path or None)]
    )
