"""YAML text → JSON-compatible values with source positions, built from the parser's event stream.

The reader (``reader.py``) uses this half for every YAML source and to find the positions in JSON.
Documents are built from the event stream rather than from ``yaml.compose``: the loop is iterative (a
deeply nested document cannot exhaust the C or Python stack before the depth limit trips), it sees
every anchor and alias (so expansion is counted before anything is copied), and the events carry the
marks from which every path's (line, column) is recorded. libyaml's C parser is used when PyYAML was
built with it (``yaml.__with_libyaml__``); the pure-Python parser otherwise.

Only the YAML core types are built (mappings, lists, strings, numbers, booleans, null), never Python
objects. Timestamps stay strings (the timestamp resolver is removed); mapping keys are always the
key's text; merge keys (``<<``) are honoured; duplicate keys, non-scalar keys, non-JSON tags and
non-finite numbers are refused with the position of the offending text.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

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

from .issues import ERROR, Issue, SpecError, error_issue
from .model import PathKey, Position
from .storable import unstorable

_TAG = "tag:yaml.org,2002:"
_TIMESTAMP = _TAG + "timestamp"
_MERGE = _TAG + "merge"


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


# How many source positions alias copies may add to a document (see ``EventBuilder._alias``).
_ALIAS_POSITIONS: Final = 20_000

# One read document: its value and the (line, column) of every path in it.
RawDocument = tuple[Any, dict[PathKey, Position]]


@dataclass(frozen=True, slots=True)
class Limits:
    """The reader's limits on hostile input (the keywords of ``load_documents``)."""

    max_bytes: int
    max_depth: int
    max_aliases: int
    max_values: int
    max_graph_nodes: int
    max_steps: int


class Refused(Exception):
    """Reading stopped at ``issue``; the caller turns it into a ``SpecError``."""

    def __init__(self, issue: Issue) -> None:
        super().__init__(issue.message)
        self.issue = issue


def too_deep(limits: Limits, position: Position | None) -> Issue:
    return error_issue(
        "load.too-deep",
        f"the document nests deeper than {limits.max_depth} levels (max_depth)",
        position,
    )


def read_yaml(text: str, limits: Limits) -> list[RawDocument]:
    """Every document of a YAML stream; raises ``SpecError`` on a syntax error or a limit."""
    loader = _LOADER(text)
    try:
        return list(EventBuilder(loader, limits).documents())
    except Refused as refused:
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
        raise SpecError([error_issue("yaml.syntax", f"YAML error: {exc}")]) from None
    finally:
        loader.dispose()


def _size(text: str) -> int:
    """UTF-8 bytes of ``text`` (its length when it is ASCII, which ``isascii`` knows at once)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _position(event: Event) -> Position:
    mark = event.start_mark
    return (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)


class _Frame:
    """A mapping or list being built: its value so far, its path, and the key awaiting a value."""

    __slots__ = (
        "anchor",
        "bytes_start",
        "is_map",
        "key",
        "key_pos",
        "log_start",
        "merges",
        "path",
        "size",
        "value",
    )

    def __init__(
        self, value: Any, path: PathKey, anchor: str | None, log_start: int, bytes_start: int
    ) -> None:
        self.value = value
        self.bytes_start = bytes_start
        self.is_map = isinstance(value, dict)
        self.path = path
        self.anchor = anchor
        self.log_start = log_start
        self.size = 1
        self.key: str | None = None
        self.key_pos: Position | None = None
        self.merges: list[Any] | None = None


_MERGE_KEY: Final = object()


class EventBuilder:
    """Builds values and positions from the event stream, one document at a time, iteratively.

    The state of the document being built lives on the instance: the stack of open containers, the
    anchors seen so far (value, size and the positions inside it, for alias copies), the positions
    and their log in recording order (an anchored container's positions are the log's tail from where
    it started), and the alias and value counts the limits apply to.
    """

    def __init__(self, loader: Any, limits: Limits) -> None:
        self.loader = loader
        self.limits = limits
        # First characters for which a plain scalar may resolve to something other than a string.
        self.plain_resolvable = frozenset(loader.yaml_implicit_resolvers) | {""}
        self._start_document()

    def _start_document(self) -> None:
        self.positions: dict[PathKey, Position] = {}
        self.log: list[tuple[PathKey, Position]] = []
        # name -> (value, values in it, positions inside it, bytes it expands to)
        self.anchors: dict[str, tuple[Any, int, list[tuple[PathKey, Position]], int]] = {}
        self.stack: list[_Frame] = []
        self.root: Any = None
        self.aliases = 0
        self.values = 0
        # The size of the document as built, alias copies included: every key's and scalar's text
        # plus one per key, value and container (about its compact JSON size without quotes). A
        # document written out without aliases never counts more than its text's bytes, so the
        # text's own limit (max_bytes) bounds the expansion too, checked as each copy is made.
        self.bytes = 0
        self.alias_positions_left = _ALIAS_POSITIONS

    def documents(self) -> Iterator[RawDocument]:
        loader = self.loader
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, DocumentStartEvent):
                yield self._document()

    def _document(self) -> RawDocument:
        self._start_document()
        get_event = self.loader.get_event
        while True:
            event = get_event()
            if type(event) is ScalarEvent and self.stack and self._plain_scalar(event, self.stack[-1]):
                continue
            if isinstance(event, DocumentEndEvent):
                return self.root, self.positions
            if isinstance(event, (MappingEndEvent, SequenceEndEvent)):
                self._close(self.stack.pop())
            else:
                self._node(event)

    # -- the fast path: keys and plain scalar values of a mapping (most events of a manifest) ------

    def _plain_scalar(self, event: ScalarEvent, top: _Frame) -> bool:
        """Handle a key, or a plain value of a mapping, without the general path; False when the
        event needs it (a list item, an anchor, a merge key, a duplicate, the depth limit)."""
        if not top.is_map:
            return False
        if top.key is None:
            text = event.value
            if text in top.value or text == "<<" or len(top.path) >= self.limits.max_depth:
                self._key(event, top)  # duplicates, merge keys, depth: the careful path
                return True
            pos = _position(event)
            if "\x00" in text or not text.isascii():
                self._check_text(text, pos, top.path)
            self._grow(_size(text) + 1, pos)
            top.key = text
            top.key_pos = pos
            self._record((*top.path, text), pos)
            return True
        if event.anchor is not None or top.key is _MERGE_KEY or len(top.path) + 1 >= self.limits.max_depth:
            return False
        self._count(1, event)
        text = event.value
        if "\x00" in text or not text.isascii():
            self._check_text(text, _position(event), (*top.path, top.key))
        self.bytes += _size(text) + 1
        if self.bytes > self.limits.max_bytes:
            self._too_large(_position(event))
        if event.tag is None and (not event.implicit[0] or (text and text[0] not in self.plain_resolvable)):
            top.value[top.key] = text  # a quoted scalar, or a plain one only a string resolver matches
        else:
            top.value[top.key] = self._scalar(event, _position(event))
        top.key = None
        top.size += 1
        return True

    # -- the general path -------------------------------------------------------------------------

    def _node(self, event: Event) -> None:
        """A node starts (a scalar, an alias, a mapping or a list), or a key that is not plain."""
        where = self._place(event)
        if where is None:
            self._key(event, self.stack[-1])
            return
        path, pos = where
        if len(path) >= self.limits.max_depth:
            raise Refused(too_deep(self.limits, pos))
        if not self.stack:
            self.positions[path] = pos
        elif not self.stack[-1].is_map:
            self._record(path, pos)  # a list item; a mapping value's position is its key's
        if isinstance(event, AliasEvent):
            self._alias(event, path, pos)
            return
        self.values += 1
        self._check_values(pos)
        if isinstance(event, ScalarEvent):
            self._check_text(event.value, pos, path)
            scalar_bytes = _size(event.value) + 1
            self._grow(scalar_bytes, pos)
            value = self._scalar(event, pos)
            if event.anchor is not None:
                self.anchors[event.anchor] = (value, 1, [], scalar_bytes)
            self._attach(value, 1)
        elif isinstance(event, MappingStartEvent):
            self._container_tag(event, "map", pos)
            self._grow(1, pos)
            self.stack.append(_Frame({}, path, event.anchor, len(self.log), self.bytes - 1))
        elif isinstance(event, SequenceStartEvent):
            self._container_tag(event, "seq", pos)
            self._grow(1, pos)
            self.stack.append(_Frame([], path, event.anchor, len(self.log), self.bytes - 1))
        else:  # pragma: no cover - no other event can appear inside a document
            raise Refused(error_issue("yaml.syntax", f"unexpected {type(event).__name__}", pos))

    def _place(self, event: Event) -> tuple[PathKey, Position] | None:
        """Path and position of the node starting at ``event``; ``None`` if it is a key."""
        pos = _position(event)
        if not self.stack:
            return (), pos
        top = self.stack[-1]
        if not top.is_map:
            return (*top.path, len(top.value)), pos
        if top.key is None:
            return None
        return (*top.path, top.key), top.key_pos or pos

    def _close(self, frame: _Frame) -> None:
        """A mapping or list ends: apply its merge keys, remember its anchor, attach it."""
        if frame.merges:
            self._merge(frame)
        if frame.anchor is not None:
            base = len(frame.path)
            inside = [(p[base:], q) for p, q in self.log[frame.log_start :]]
            self.anchors[frame.anchor] = (frame.value, frame.size, inside, self.bytes - frame.bytes_start)
        self._attach(frame.value, frame.size)

    def _attach(self, value: Any, size: int) -> None:
        """Put a finished value where it belongs: the root, the pending key, or the list's end."""
        if not self.stack:
            self.root = value
            return
        top = self.stack[-1]
        top.size += size
        if not top.is_map:
            top.value.append(value)
            return
        key = top.key
        top.key = None
        if key is _MERGE_KEY:
            top.merges = [*(top.merges or []), value]
        else:
            top.value[key] = value

    def _alias(self, event: AliasEvent, path: PathKey, pos: Position) -> None:
        """``*name``: the anchored value again, counted at its full size against the limits."""
        self.aliases += 1
        if self.aliases > self.limits.max_aliases:
            raise Refused(
                error_issue(
                    "load.too-many-aliases",
                    f"the document uses more than {self.limits.max_aliases} alias references (max_aliases)",
                    pos,
                )
            )
        anchored = self.anchors.get(event.anchor or "")
        if anchored is None:  # pragma: no cover - the parser rejects undefined aliases
            raise Refused(error_issue("yaml.syntax", f"unknown alias *{event.anchor}", pos))
        value, size, inside, anchored_bytes = anchored
        self.values += size
        self._check_values(pos)
        self._grow(anchored_bytes, pos)  # before the copy is attached: a bomb stops at its first excess
        # Positions inside an alias copy point at the anchor's text. Copying them costs a tuple per
        # value, so only a bounded number is copied: past it, issues inside further copies carry no
        # line (billion-laughs input stays small in memory).
        if self.alias_positions_left >= len(inside):
            self.alias_positions_left -= len(inside)
            for sub, sub_pos in inside:
                if sub:
                    self._record((*path, *sub), sub_pos)
        self._attach(value, size)

    def _count(self, values: int, event: Event) -> None:
        self.values += values
        if self.values > self.limits.max_values:
            self._check_values(_position(event))

    def _grow(self, size: int, pos: Position) -> None:
        self.bytes += size
        if self.bytes > self.limits.max_bytes:
            self._too_large(pos)

    def _too_large(self, pos: Position) -> None:
        raise Refused(
            error_issue(
                "load.too-large-expanded",
                f"the document expands to more than {self.limits.max_bytes:,} bytes once its aliases "
                "are copied out (max_bytes: a document may hold no more than its text may; alias "
                "expansion counts every copy)",
                pos,
            )
        )

    def _check_text(self, text: str, pos: Position, path: PathKey) -> None:
        """Refuse a key or string no database can store (``storable.unstorable``)."""
        problem = unstorable(text)
        if problem is not None:
            raise Refused(error_issue("load.unstorable-text", f"the text holds {problem}", pos, path))

    def _check_values(self, pos: Position) -> None:
        if self.values > self.limits.max_values:
            raise Refused(
                error_issue(
                    "load.too-many-values",
                    f"the document expands to more than {self.limits.max_values:,} values "
                    "(max_values; alias expansion counts every copy)",
                    pos,
                )
            )

    def _key(self, event: Event, frame: _Frame) -> None:
        pos = _position(event)
        if not isinstance(event, ScalarEvent):
            raise Refused(
                error_issue(
                    "yaml.key", "mapping keys must be plain strings, not lists or mappings", pos, frame.path
                )
            )
        if event.value == "<<" and event.tag is None and event.implicit[0]:
            frame.key = _MERGE_KEY  # type: ignore[assignment]
            frame.key_pos = pos
            return
        key = str(event.value)
        self._check_text(key, pos, frame.path)
        self._grow(_size(key) + 1, pos)
        if key in frame.value:
            raise Refused(
                error_issue(
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
                    raise Refused(
                        error_issue(
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
        raise Refused(
            error_issue("yaml.tag", f"tag {tag} is not supported: a manifest holds only JSON values", pos)
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
        if tag in (_TAG + "str", _TIMESTAMP, _MERGE):
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
                raise Refused(
                    error_issue(
                        "yaml.non-finite", f"{value} is not a JSON number (only finite numbers are)", pos
                    )
                )
            return number
        raise Refused(
            error_issue("yaml.tag", f"tag {tag} is not supported: a manifest holds only JSON values", pos)
        )
