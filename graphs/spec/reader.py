"""Reading manifests: YAML or JSON text → JSON-compatible documents with source positions → Manifest.

Safety is ``yaml.safe_load``'s: only the YAML core types are built (mappings, lists, strings,
numbers, booleans, null), never Python objects. On top of that the reader refuses hostile input
early, naming the limit it hit: the size of the text, the nesting depth, the number of alias
references and the number of values after alias expansion (billion laughs), the number of graph
nodes and steps.

Documents are built from the parser's event stream rather than from ``yaml.compose``: the loop is
iterative (a deeply nested document cannot exhaust the C or Python stack before the depth limit
trips), it sees every anchor and alias (so expansion is counted before anything is copied), and the
events carry the marks from which every path's (line, column) is recorded. libyaml's C parser is used
when PyYAML was built with it (``yaml.__with_libyaml__``); the pure-Python parser otherwise.

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
from types import MappingProxyType
from typing import Any, Final, Literal

import yaml
from yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    DocumentStartEvent,
    Event,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)
from yaml.nodes import ScalarNode

from .issues import ERROR, Issue, SpecError, format_path
from .model import (
    API_VERSION,
    KIND,
    Manifest,
    Metadata,
    Node,
    PathKey,
    Position,
    RouterTimeouts,
    Spec,
    Step,
)

# Defaults. 2 MiB is twice the largest Kubernetes object etcd stores by default (1.5 MiB request
# limit), so no deployable manifest is refused; the other limits are far above real graphs
# (KServe's own examples have ≤ 3 nodes) yet bound the work a hostile input can cause.
MAX_BYTES: Final = 2 * 1024 * 1024
MAX_DEPTH: Final = 100
MAX_ALIASES: Final = 1000
MAX_VALUES: Final = 500_000
MAX_GRAPH_NODES: Final = 2000
MAX_STEPS: Final = 20_000

_TAG = "tag:yaml.org,2002:"
_TIMESTAMP = _TAG + "timestamp"
_MERGE = _TAG + "merge"
_LIST_KINDS: Final = ("List", "InferenceGraphList")


class _PySafeLoader(yaml.SafeLoader):
    """SafeLoader without the timestamp resolver (timestamps stay strings, as JSON needs)."""


_PySafeLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}

_LOADER: type[Any] = _PySafeLoader
if yaml.__with_libyaml__:  # pragma: no branch - depends on how PyYAML was built

    class _CSafeLoader(yaml.CSafeLoader):
        """The same resolver table over libyaml's C parser (about 5x faster)."""

    _CSafeLoader.yaml_implicit_resolvers = _PySafeLoader.yaml_implicit_resolvers
    _LOADER = _CSafeLoader


# How many source positions alias copies may add to a document (see the alias branch of the reader).
_ALIAS_POSITIONS: Final = 20_000


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
        return _build_manifest(self.document, self.positions)


@dataclass(frozen=True, slots=True)
class _Limits:
    max_bytes: int
    max_depth: int
    max_aliases: int
    max_values: int
    max_graph_nodes: int
    max_steps: int


class _Refused(Exception):
    def __init__(self, issue: Issue) -> None:
        super().__init__(issue.message)
        self.issue = issue


def _error(code: str, message: str, position: Position | None = None, path: PathKey | None = None) -> Issue:
    line, column = position if position is not None else (None, None)
    return Issue(
        code=code,
        severity=ERROR,
        message=message,
        path=format_path(path) if path else None,
        line=line,
        column=column,
    )


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
    limits = _Limits(max_bytes, max_depth, max_aliases, max_values, max_graph_nodes, max_steps)
    text = _decode(source, limits)
    stripped = text.lstrip()
    looks_like_json = stripped.startswith(("{", "["))
    raw = _read_json(text, limits) if looks_like_json else _read_yaml(text, limits)

    found: list[LoadedDocument] = []
    problems: list[Issue] = []
    number = 0
    for value, positions in raw:
        number += 1
        if value is None:
            continue
        if not isinstance(value, dict):
            problems.append(
                _identity_issue(value, f"document {number}", positions) or _error("load.not-mapping", "")
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
        raise SpecError([_error("load.empty", "no InferenceGraph document found")])
    return found


def parse(source: str | bytes | Mapping[str, Any], *, max_bytes: int = MAX_BYTES) -> Manifest:
    """Read exactly one InferenceGraph into a ``Manifest``.

    Text is read with ``load_documents`` (positions recorded); a mapping is copied (it must hold
    only JSON values) and has no positions. Lenient: anything KServe would reject but that is
    still a JSON object parses, and ``validate`` says what is wrong. Raises ``SpecError`` when the
    source cannot be read, is not an InferenceGraph, or holds more or fewer than one.
    """
    if isinstance(source, Mapping):
        limits = _Limits(max_bytes, MAX_DEPTH, MAX_ALIASES, MAX_VALUES, MAX_GRAPH_NODES, MAX_STEPS)
        document = _json_copy(source, limits)
        if not isinstance(document, dict):  # pragma: no cover - a Mapping copies to a dict
            raise SpecError([_error("load.not-mapping", "the manifest must be a mapping")])
        for issue in (
            _identity_issue(document, "the manifest", {}),
            _graph_size_issue(document, "the manifest", limits),
        ):
            if issue is not None:
                raise SpecError([issue])
        return _build_manifest(document, {})
    documents = load_documents(source, max_bytes=max_bytes)
    if len(documents) != 1:
        raise SpecError(
            [
                _error(
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
        raise SpecError([_error("load.not-mapping", "the manifest must be a mapping")])
    limits = _Limits(MAX_BYTES, MAX_DEPTH, MAX_ALIASES, MAX_VALUES, MAX_GRAPH_NODES, MAX_STEPS)
    copied = _json_copy(document, limits)
    assert isinstance(copied, dict)
    return _build_manifest(copied, dict(positions or {}))


# --------------------------------------------------------------------------------------------------
# Text → values


def _decode(source: str | bytes, limits: _Limits) -> str:
    size = len(source) if isinstance(source, bytes) else len(source.encode("utf-8", "surrogatepass"))
    if size > limits.max_bytes:
        raise SpecError(
            [
                _error(
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
            [_error("load.encoding", f"the input is not UTF-8 text (byte {exc.start}: {exc.reason})")]
        ) from None


def _read_json(text: str, limits: _Limits) -> list[tuple[Any, dict[PathKey, Position]]]:
    def no_constants(name: str) -> Any:
        raise _Refused(_error("json.constant", f"{name} is not valid JSON (only finite numbers are)"))

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in items:
            if key in out:
                raise _Refused(
                    _error("json.duplicate-key", f"duplicate key {json.dumps(key)} in a JSON object")
                )
            out[key] = value
        return out

    try:
        value = json.loads(text, parse_constant=no_constants, object_pairs_hook=pairs)
    except _Refused as refused:
        raise SpecError([refused.issue]) from None
    except RecursionError:
        raise SpecError([_too_deep(limits, None)]) from None
    except json.JSONDecodeError as exc:
        # Text starting with "{" may be YAML flow style; only if YAML cannot read it either is it
        # reported, with the JSON error (that is what the author meant to write).
        try:
            return _read_yaml(text, limits)
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
    _check_tree(value, limits)
    positions: dict[PathKey, Position] = {}
    try:
        # Positions are a convenience for JSON: JSON is (nearly always) YAML, so the YAML reader
        # finds them; if it cannot, issues simply have no line numbers.
        docs = _read_yaml(text, limits)
        if len(docs) == 1:
            positions = docs[0][1]
    except SpecError:
        positions = {}
    return [(value, positions)]


def _read_yaml(text: str, limits: _Limits) -> list[tuple[Any, dict[PathKey, Position]]]:
    loader = _LOADER(text)
    try:
        return list(_EventBuilder(loader, limits).documents())
    except _Refused as refused:
        raise SpecError([refused.issue]) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        issue = Issue(
            code="yaml.syntax",
            severity=ERROR,
            message=f"YAML syntax error: {problem}"
            + (f" ({exc.context})" if exc.context and exc.problem else ""),
            line=mark.line + 1 if mark is not None else None,
            column=mark.column + 1 if mark is not None else None,
        )
        raise SpecError([issue]) from None
    except yaml.YAMLError as exc:
        raise SpecError([_error("yaml.syntax", f"YAML error: {exc}")]) from None
    finally:
        loader.dispose()


def _position(event: Event) -> Position:
    mark = event.start_mark
    return (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)


def _too_deep(limits: _Limits, position: Position | None) -> Issue:
    return _error(
        "load.too-deep",
        f"the document nests deeper than {limits.max_depth} levels (max_depth)",
        position,
    )


class _Frame:
    __slots__ = ("anchor", "is_map", "key", "key_pos", "log_start", "merges", "path", "size", "value")

    def __init__(self, value: Any, path: PathKey, anchor: str | None, log_start: int) -> None:
        self.value = value
        self.is_map = isinstance(value, dict)
        self.path = path
        self.anchor = anchor
        self.log_start = log_start
        self.size = 1
        self.key: str | None = None
        self.key_pos: Position | None = None
        self.merges: list[Any] | None = None


_MERGE_KEY: Final = object()


class _EventBuilder:
    """Builds values and positions from the event stream, one document at a time, iteratively."""

    def __init__(self, loader: Any, limits: _Limits) -> None:
        self.loader = loader
        self.limits = limits
        self.positions: dict[PathKey, Position] = {}
        self.log: list[tuple[PathKey, Position]] = []
        # First characters for which a plain scalar may resolve to something other than a string.
        self.plain_resolvable = frozenset(loader.yaml_implicit_resolvers) | {""}

    def documents(self) -> Iterator[tuple[Any, dict[PathKey, Position]]]:
        loader = self.loader
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, DocumentStartEvent):
                yield self._document()

    def _document(self) -> tuple[Any, dict[PathKey, Position]]:
        loader = self.loader
        limits = self.limits
        positions: dict[PathKey, Position] = {}
        log: list[tuple[PathKey, Position]] = []
        self.positions = positions
        self.log = log
        anchors: dict[str, tuple[Any, int, list[tuple[PathKey, Position]]]] = {}
        stack: list[_Frame] = []
        root: Any = None
        aliases = 0
        values = 0
        alias_positions_left = _ALIAS_POSITIONS

        def place(event: Event) -> tuple[PathKey, Position] | None:
            """Path and position of the node starting at ``event``; ``None`` if it is a key."""
            pos = _position(event)
            if not stack:
                return (), pos
            top = stack[-1]
            if top.is_map:
                if top.key is None:
                    return None
                return (*top.path, top.key), top.key_pos or pos
            return (*top.path, len(top.value)), pos

        def attach(value: Any, size: int) -> None:
            nonlocal root
            if not stack:
                root = value
                return
            top = stack[-1]
            top.size += size
            if top.is_map:
                key = top.key
                top.key = None
                if key is _MERGE_KEY:
                    top.merges = [*(top.merges or []), value]
                else:
                    top.value[key] = value
            else:
                top.value.append(value)

        get_event = loader.get_event
        plain_resolvable = self.plain_resolvable
        max_values = limits.max_values
        max_depth = limits.max_depth
        while True:
            event = get_event()
            # Fast path for the commonest events (a key, or a plain scalar value of a mapping):
            # the general code below handles them too, only slower.
            if type(event) is ScalarEvent and stack:
                top = stack[-1]
                if top.is_map:
                    key = top.key
                    if key is None:
                        text = event.value
                        if text in top.value or text == "<<" or len(top.path) >= max_depth:
                            self._key(event, top)  # duplicates, merge keys, depth: the careful path
                            continue
                        pos = _position(event)
                        top.key = text
                        top.key_pos = pos
                        path = (*top.path, text)
                        positions[path] = pos
                        log.append((path, pos))
                        continue
                    if event.anchor is None and key is not _MERGE_KEY and len(top.path) + 1 < max_depth:
                        values += 1
                        if values > max_values:
                            self._check_values(values, _position(event))
                        text = event.value
                        if event.tag is None and (
                            not event.implicit[0] or (text and text[0] not in plain_resolvable)
                        ):
                            top.value[key] = text
                        else:
                            top.value[key] = self._scalar(event, _position(event))
                        top.key = None
                        top.size += 1
                        continue
            if isinstance(event, DocumentEndEvent):
                break
            if isinstance(event, (MappingEndEvent, SequenceEndEvent)):
                frame = stack.pop()
                if frame.merges:
                    self._merge(frame)
                if frame.anchor is not None:
                    base = len(frame.path)
                    anchors[frame.anchor] = (
                        frame.value,
                        frame.size,
                        [(p[base:], q) for p, q in log[frame.log_start :]],
                    )
                attach(frame.value, frame.size)
                continue

            where = place(event)
            if where is None:
                self._key(event, stack[-1])
                continue
            path, pos = where
            if len(path) >= limits.max_depth:
                raise _Refused(_too_deep(limits, pos))
            if stack and not stack[-1].is_map:
                positions[path] = pos
                log.append((path, pos))
            elif not stack:
                positions[path] = pos

            if isinstance(event, AliasEvent):
                aliases += 1
                if aliases > limits.max_aliases:
                    raise _Refused(
                        _error(
                            "load.too-many-aliases",
                            f"the document uses more than {limits.max_aliases} alias references "
                            "(max_aliases)",
                            pos,
                        )
                    )
                anchored = anchors.get(event.anchor or "")
                if anchored is None:  # pragma: no cover - the parser rejects undefined aliases
                    raise _Refused(_error("yaml.syntax", f"unknown alias *{event.anchor}", pos))
                value, size, rel = anchored
                values += size
                self._check_values(values, pos)
                # Positions inside an alias copy point at the anchor's text. Copying them costs a
                # tuple per value, so only a bounded number is copied: past it, issues inside
                # further copies carry no line (billion-laughs input stays small in memory).
                if alias_positions_left >= len(rel):
                    alias_positions_left -= len(rel)
                    for sub, sub_pos in rel:
                        if sub:
                            full = (*path, *sub)
                            positions[full] = sub_pos
                            log.append((full, sub_pos))
                attach(value, size)
                continue

            values += 1
            self._check_values(values, pos)
            if isinstance(event, ScalarEvent):
                value = self._scalar(event, pos)
                if event.anchor is not None:
                    anchors[event.anchor] = (value, 1, [])
                attach(value, 1)
            elif isinstance(event, MappingStartEvent):
                self._container_tag(event, "map", pos)
                stack.append(_Frame({}, path, event.anchor, len(log)))
            elif isinstance(event, SequenceStartEvent):
                self._container_tag(event, "seq", pos)
                stack.append(_Frame([], path, event.anchor, len(log)))
            else:  # pragma: no cover - no other event can appear inside a document
                raise _Refused(_error("yaml.syntax", f"unexpected {type(event).__name__}", pos))
        return root, positions

    def _check_values(self, values: int, pos: Position) -> None:
        if values > self.limits.max_values:
            raise _Refused(
                _error(
                    "load.too-many-values",
                    f"the document expands to more than {self.limits.max_values:,} values "
                    "(max_values; alias expansion counts every copy)",
                    pos,
                )
            )

    def _key(self, event: Event, frame: _Frame) -> None:
        pos = _position(event)
        if not isinstance(event, ScalarEvent):
            raise _Refused(
                _error(
                    "yaml.key", "mapping keys must be plain strings, not lists or mappings", pos, frame.path
                )
            )
        if event.value == "<<" and event.tag is None and event.implicit[0]:
            frame.key = _MERGE_KEY  # type: ignore[assignment]
            frame.key_pos = pos
            return
        key = str(event.value)
        if key in frame.value:
            raise _Refused(
                _error(
                    "yaml.duplicate-key",
                    f"duplicate key {json.dumps(key, ensure_ascii=False)} in a mapping",
                    pos,
                    (*frame.path, key),
                )
            )
        frame.key = key
        frame.key_pos = pos
        path = (*frame.path, key)
        if len(path) <= self.limits.max_depth:
            # Keys are recorded here (not their values) so that an issue about ``weight`` points
            # at the ``weight:`` line.
            self._record(path, pos)

    def _record(self, path: PathKey, pos: Position) -> None:
        self.positions[path] = pos
        self.log.append((path, pos))

    def _merge(self, frame: _Frame) -> None:
        merged: dict[str, Any] = {}
        for value in frame.merges or []:
            sources = value if isinstance(value, list) else [value]
            for source in sources:
                if not isinstance(source, dict):
                    raise _Refused(
                        _error(
                            "yaml.merge",
                            "a merge key (<<) needs a mapping or a list of mappings",
                            None,
                            frame.path,
                        )
                    )
                for key, item in source.items():
                    merged.setdefault(key, item)
        for key, item in merged.items():
            frame.value.setdefault(key, item)

    def _container_tag(self, event: Any, kind: str, pos: Position) -> None:
        tag = event.tag
        if tag is None or tag == "!" or tag == _TAG + kind:
            return
        raise _Refused(
            _error("yaml.tag", f"tag {tag} is not supported: a manifest holds only JSON values", pos)
        )

    def _scalar(self, event: ScalarEvent, pos: Position) -> Any:
        value = event.value
        tag = event.tag
        if tag is None:
            if not event.implicit[0]:
                return value  # quoted
            tag = self.loader.resolve(ScalarNode, value, (True, False))
        elif tag == "!":
            return value
        if tag == _TAG + "str" or tag == _TIMESTAMP:
            return value
        if tag == _TAG + "null":
            return None
        node = ScalarNode(tag, value)
        if tag == _TAG + "bool":
            return self.loader.construct_yaml_bool(node)
        if tag == _TAG + "int":
            return self.loader.construct_yaml_int(node)
        if tag == _TAG + "float":
            number = self.loader.construct_yaml_float(node)
            if not math.isfinite(number):
                raise _Refused(
                    _error("yaml.non-finite", f"{value} is not a JSON number (only finite numbers are)", pos)
                )
            return number
        if tag == _MERGE:
            return value
        raise _Refused(
            _error("yaml.tag", f"tag {tag} is not supported: a manifest holds only JSON values", pos)
        )


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
            yield _error(
                "load.not-mapping",
                f"expected kind InferenceGraph ({API_VERSION}), found {_describe(item)} "
                f"in document {number}, item {index + 1}",
                positions.get(("items", index)),
            )
            continue
        yield LoadedDocument(document=item, positions=per_item.get(index, {}), number=number, item=index)


def _identity_issue(document: Any, where: str, positions: Mapping[PathKey, Position]) -> Issue | None:
    if not isinstance(document, dict):
        return _error(
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
    return _error(
        "load.not-inferencegraph",
        f"expected kind {KIND} ({API_VERSION}), found kind {found_kind} ({found_api}) in {where}",
        positions.get(("kind",)) or positions.get(()),
    )


def _graph_size_issue(document: dict[str, Any], where: str, limits: _Limits) -> Issue | None:
    spec = document.get("spec")
    nodes = spec.get("nodes") if isinstance(spec, dict) else None
    if not isinstance(nodes, dict):
        return None
    if len(nodes) > limits.max_graph_nodes:
        return _error(
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
        return _error(
            "load.too-many-steps",
            f"{where} has {steps:,} steps; the limit is {limits.max_steps:,} (max_steps)",
        )
    return None


def _check_tree(value: Any, limits: _Limits) -> None:
    """Depth and size limits for a value that did not come through the YAML reader (JSON)."""
    count = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        count += 1
        if count > limits.max_values:
            raise SpecError(
                [
                    _error(
                        "load.too-many-values",
                        f"the document has more than {limits.max_values:,} values (max_values)",
                    )
                ]
            )
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth >= limits.max_depth:
            raise SpecError([_too_deep(limits, None)])
        stack.extend((child, depth + 1) for child in children)


def _json_copy(value: Any, limits: _Limits, path: PathKey = ()) -> Any:
    """A deep copy of ``value`` as plain JSON types (tuples become lists); refuses anything else."""
    if len(path) > limits.max_depth:
        raise SpecError([_too_deep(limits, None)])
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        raise SpecError([_error("load.not-json", f"{value} is not a JSON number", path=path)])
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise SpecError(
                    [_error("load.not-json", f"mapping key {key!r} is not a string", path=path or None)]
                )
            out[key] = _json_copy(item, limits, (*path, key))
        return out
    if isinstance(value, (list, tuple)):
        return [_json_copy(item, limits, (*path, index)) for index, item in enumerate(value)]
    raise SpecError(
        [_error("load.not-json", f"a {type(value).__name__} is not a JSON value", path=path or None)]
    )


# --------------------------------------------------------------------------------------------------
# Document → Manifest (lenient)


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


def _is_int(value: Any) -> bool:
    # Kubernetes' schema validator accepts a float with an integral value as an integer.
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool)


def _is_object(value: Any) -> bool:
    return isinstance(value, dict)


def _is_str_map(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())


def _is_object_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, dict) for v in value)


def _typed(value: Any, check: Any) -> Any:
    if check is _is_int:
        return int(value)
    if check is _is_str_map or check is _is_object:
        return MappingProxyType(dict(value))
    if check is _is_object_list:
        return tuple(MappingProxyType(dict(v)) for v in value)
    return value


# (KServe key, attribute, type check), in the Go struct's order.
_STEP_FIELDS: Final = (
    ("name", "name", _is_str),
    ("nodeName", "node_name", _is_str),
    ("serviceName", "service_name", _is_str),
    ("serviceUrl", "service_url", _is_str),
    ("data", "data", _is_str),
    ("mapPredictionsToInstances", "map_predictions_to_instances", _is_bool),
    ("weight", "weight", _is_int),
    ("condition", "condition", _is_str),
    ("dependency", "dependency", _is_str),
)
_TIMEOUT_FIELDS: Final = (
    ("serverRead", "server_read", _is_int),
    ("serverWrite", "server_write", _is_int),
    ("serverIdle", "server_idle", _is_int),
    ("serviceClient", "service_client", _is_int),
)
_SPEC_FIELDS: Final = (
    ("resources", "resources", _is_object),
    ("affinity", "affinity", _is_object),
    ("timeout", "timeout", _is_int),
    ("minReplicas", "min_replicas", _is_int),
    ("maxReplicas", "max_replicas", _is_int),
    ("scaleTarget", "scale_target", _is_int),
    ("scaleMetric", "scale_metric", _is_str),
    ("tolerations", "tolerations", _is_object_list),
    ("nodeSelector", "node_selector", _is_str_map),
    ("nodeName", "node_name", _is_str),
    ("serviceAccountName", "service_account_name", _is_str),
)
_METADATA_FIELDS: Final = (
    ("name", "name", _is_str),
    ("namespace", "namespace", _is_str),
    ("labels", "labels", _is_str_map),
    ("annotations", "annotations", _is_str_map),
)


# Lookup tables for ``_split``, built once: KServe key -> (attribute, type check).
_TABLES: Final[dict[Any, dict[str, tuple[str, Any]]]] = {
    fields: {key: (attr, check) for key, attr, check in fields}
    for fields in (_STEP_FIELDS, _TIMEOUT_FIELDS, _SPEC_FIELDS, _METADATA_FIELDS)
}


def _split(
    raw: Mapping[str, Any], fields: tuple[tuple[str, str, Any], ...], skip: tuple[str, ...] = ()
) -> tuple[dict[str, Any], Mapping[str, Any]]:
    """Typed keyword arguments for the known fields, and ``extra`` for the rest.

    ``null`` means "absent" (the API server prunes nulls), so it is neither typed nor extra.
    """
    kwargs: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    known = _TABLES[fields]
    for key, value in raw.items():
        if key in skip:
            continue
        spec = known.get(key)
        if spec is None:
            extra[key] = value
        elif value is None:
            continue
        elif spec[1](value):
            kwargs[spec[0]] = _typed(value, spec[1])
        else:
            extra[key] = value
    return kwargs, MappingProxyType(extra)


def _build_step(index: int, raw: Any) -> Step:
    if not isinstance(raw, dict):
        return Step(index=index)
    kwargs, extra = _split(raw, _STEP_FIELDS)
    return Step(index=index, extra=extra, **kwargs)


def _build_node(name: str, raw: Any) -> Node:
    if not isinstance(raw, dict):
        return Node(name=name, router_type=None)
    extra: dict[str, Any] = {}
    router_type = raw.get("routerType")
    if router_type is not None and not isinstance(router_type, str):
        extra["routerType"] = router_type
        router_type = None
    steps_raw = raw.get("steps")
    steps: tuple[Step, ...] = ()
    if isinstance(steps_raw, list):
        steps = tuple(_build_step(index, step) for index, step in enumerate(steps_raw))
    elif steps_raw is not None:
        extra["steps"] = steps_raw
    for key, value in raw.items():
        if key not in ("routerType", "steps"):
            extra[key] = value
    return Node(name=name, router_type=router_type, steps=steps, extra=MappingProxyType(extra))


def _build_spec(raw: Any) -> Spec:
    if not isinstance(raw, dict):
        return Spec(nodes=MappingProxyType({}))
    kwargs, extra_view = _split(raw, _SPEC_FIELDS, skip=("nodes", "routerTimeouts"))
    extra = dict(extra_view)
    nodes_raw = raw.get("nodes")
    nodes: dict[str, Node] = {}
    if isinstance(nodes_raw, dict):
        nodes = {name: _build_node(name, node) for name, node in nodes_raw.items()}
    elif nodes_raw is not None:
        extra["nodes"] = nodes_raw
    timeouts_raw = raw.get("routerTimeouts")
    if isinstance(timeouts_raw, dict):
        timeout_kwargs, timeout_extra = _split(timeouts_raw, _TIMEOUT_FIELDS)
        kwargs["router_timeouts"] = RouterTimeouts(extra=timeout_extra, **timeout_kwargs)
    elif timeouts_raw is not None:
        extra["routerTimeouts"] = timeouts_raw
    return Spec(nodes=MappingProxyType(nodes), extra=MappingProxyType(extra), **kwargs)


def _build_manifest(document: dict[str, Any], positions: Mapping[PathKey, Position]) -> Manifest:
    """The typed view of a JSON-compatible document (not copied: callers own it)."""
    metadata_raw = document.get("metadata")
    if isinstance(metadata_raw, dict):
        kwargs, extra = _split(metadata_raw, _METADATA_FIELDS)
        metadata = Metadata(extra=extra, **kwargs)
    else:
        metadata = Metadata()
    api_version = document.get("apiVersion")
    kind = document.get("kind")
    return Manifest(
        api_version=api_version if isinstance(api_version, str) else None,
        kind=kind if isinstance(kind, str) else None,
        metadata=metadata,
        spec=_build_spec(document.get("spec")),
        document=document,
        positions=MappingProxyType(dict(positions)),
    )
