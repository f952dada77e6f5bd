"""Semantic diff between two manifests: what changed in terms of the graph, not of text lines.

``diff(a, b)`` compares the documents as written (unknown fields included; key order, formatting
and layout never matter since layout is not part of a manifest):

- ``document``: top-level fields other than metadata and spec (apiVersion, kind, status, …);
- ``metadata``: every metadata field, maps (labels, annotations) key by key;
- ``spec``: spec fields other than ``nodes``, objects leaf by leaf, lists as a whole;
- nodes added and removed (by name), and for each node present in both: its own fields
  (``routerType``, unknown keys) and its steps.

Steps are matched within a node in four passes, each pairing a step of ``a`` (in order) with the
first still-unmatched step of ``b`` that qualifies: (1) the same non-empty ``name``; (2) an identical
step; (3) the same target (``nodeName``/``serviceName``/``serviceUrl`` and its value); (4) the same
index. Unmatched steps of ``a`` are removed, of ``b`` added. Matched steps whose relative order
changed are reported as moved: the fewest steps that explain the new order (those outside a longest
run of pairs kept in order). Matched steps whose content differs are changed, field by field.
A value that is absent is ``None`` in ``before``/``after`` (null and absent mean the same to KServe).
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from .issues import format_path
from .model import Manifest, PathKey

_TARGETS: Final = ("nodeName", "serviceName", "serviceUrl")


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One field that differs. ``field`` is a dotted path relative to the section it is listed in."""

    field: str
    before: Any
    after: Any

    def to_dict(self) -> dict[str, Any]:
        return {"field": self.field, "before": self.before, "after": self.after}


@dataclass(frozen=True, slots=True)
class StepEntry:
    """A step added (``index`` in ``b``) or removed (``index`` in ``a``), with its content."""

    index: int
    name: str | None
    step: Any

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "name": self.name, "step": self.step}


@dataclass(frozen=True, slots=True)
class StepMove:
    name: str | None
    from_index: int
    to_index: int

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "from": self.from_index, "to": self.to_index}


@dataclass(frozen=True, slots=True)
class StepChange:
    """A matched step whose content differs; ``index`` is its index in ``b``, ``from_index`` in ``a``."""

    index: int
    from_index: int
    name: str | None
    fields: tuple[FieldChange, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "from": self.from_index,
            "name": self.name,
            "fields": [change.to_dict() for change in self.fields],
        }


@dataclass(frozen=True, slots=True)
class NodeChange:
    node: str
    fields: tuple[FieldChange, ...] = ()
    steps_added: tuple[StepEntry, ...] = ()
    steps_removed: tuple[StepEntry, ...] = ()
    steps_moved: tuple[StepMove, ...] = ()
    steps_changed: tuple[StepChange, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not (
            self.fields or self.steps_added or self.steps_removed or self.steps_moved or self.steps_changed
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "fields": [change.to_dict() for change in self.fields],
            "steps": {
                "added": [entry.to_dict() for entry in self.steps_added],
                "removed": [entry.to_dict() for entry in self.steps_removed],
                "moved": [move.to_dict() for move in self.steps_moved],
                "changed": [change.to_dict() for change in self.steps_changed],
            },
        }


@dataclass(frozen=True, slots=True)
class GraphDiff:
    """The difference from manifest ``a`` to manifest ``b``; see the module docstring."""

    document: tuple[FieldChange, ...] = ()
    metadata: tuple[FieldChange, ...] = ()
    spec: tuple[FieldChange, ...] = ()
    nodes_added: tuple[str, ...] = ()
    nodes_removed: tuple[str, ...] = ()
    nodes_changed: tuple[NodeChange, ...] = field(default=())

    @property
    def is_empty(self) -> bool:
        return not (
            self.document
            or self.metadata
            or self.spec
            or self.nodes_added
            or self.nodes_removed
            or self.nodes_changed
        )

    @property
    def summary(self) -> str:
        """A short English summary, e.g. ``"2 nodes added, 1 step changed"``; ``"no changes"``."""
        counts = [
            (len(self.document) + len(self.metadata), "metadata field", "changed"),
            (len(self.spec), "spec field", "changed"),
            (len(self.nodes_added), "node", "added"),
            (len(self.nodes_removed), "node", "removed"),
            (sum(len(node.fields) for node in self.nodes_changed), "node field", "changed"),
            (sum(len(node.steps_added) for node in self.nodes_changed), "step", "added"),
            (sum(len(node.steps_removed) for node in self.nodes_changed), "step", "removed"),
            (sum(len(node.steps_moved) for node in self.nodes_changed), "step", "moved"),
            (sum(len(node.steps_changed) for node in self.nodes_changed), "step", "changed"),
        ]
        parts = [f"{count} {noun}{'' if count == 1 else 's'} {verb}" for count, noun, verb in counts if count]
        return ", ".join(parts) if parts else "no changes"

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible: ``{"document", "metadata", "spec": [{"field","before","after"}], "nodes":
        {"added": [names], "removed": [names], "changed": [NodeChange]}, "summary"}``."""
        return {
            "document": [change.to_dict() for change in self.document],
            "metadata": [change.to_dict() for change in self.metadata],
            "spec": [change.to_dict() for change in self.spec],
            "nodes": {
                "added": list(self.nodes_added),
                "removed": list(self.nodes_removed),
                "changed": [node.to_dict() for node in self.nodes_changed],
            },
            "summary": self.summary,
        }


def diff(a: Manifest, b: Manifest) -> GraphDiff:
    """What changed from ``a`` to ``b``. Pure; ``diff(a, a).is_empty`` holds."""
    doc_a, doc_b = a.document, b.document
    document = _top_level_changes(doc_a, doc_b)
    metadata = _changes(_mapping(doc_a.get("metadata")), _mapping(doc_b.get("metadata")), ())
    spec_a, spec_b = _mapping(doc_a.get("spec")), _mapping(doc_b.get("spec"))
    nodes_a, nodes_b = spec_a.get("nodes"), spec_b.get("nodes")
    spec_changes = _changes(
        {key: value for key, value in spec_a.items() if key != "nodes"},
        {key: value for key, value in spec_b.items() if key != "nodes"},
        ("spec",),
    )
    if not isinstance(nodes_a, Mapping) or not isinstance(nodes_b, Mapping):
        if not _same(nodes_a, nodes_b):
            spec_changes.append(FieldChange("spec.nodes", nodes_a, nodes_b))
        nodes_a = nodes_a if isinstance(nodes_a, Mapping) else {}
        nodes_b = nodes_b if isinstance(nodes_b, Mapping) else {}
    added = tuple(name for name in nodes_b if name not in nodes_a)
    removed = tuple(name for name in nodes_a if name not in nodes_b)
    changed = []
    for name in nodes_b:
        if name in nodes_a and not _same(nodes_a[name], nodes_b[name]):
            node_change = _node_change(name, nodes_a[name], nodes_b[name])
            if not node_change.is_empty:
                changed.append(node_change)
    return GraphDiff(
        document=tuple(document),
        metadata=tuple(metadata),
        spec=tuple(spec_changes),
        nodes_added=added,
        nodes_removed=removed,
        nodes_changed=tuple(changed),
    )


# --------------------------------------------------------------------------------------------------


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _same(a: Any, b: Any) -> bool:
    # Type-exact equality: in Python 1 == 1.0 == True, but they are different manifests.
    if type(a) is not type(b):
        return False
    if isinstance(a, Mapping):
        return a.keys() == b.keys() and all(_same(a[key], b[key]) for key in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _top_level_changes(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[FieldChange]:
    keys = [key for key in a if key not in ("metadata", "spec")]
    keys += [key for key in b if key not in ("metadata", "spec") and key not in a]
    return [FieldChange(key, a.get(key), b.get(key)) for key in keys if not _same(a.get(key), b.get(key))]


def _changes(a: Any, b: Any, path: PathKey) -> list[FieldChange]:
    """Leaf-level changes between two values; objects recurse, everything else compares whole."""
    # An absent object and a non-empty one compare key by key ("labels.team" added, not "labels").
    if a is None and isinstance(b, Mapping) and b:
        a = {}
    elif b is None and isinstance(a, Mapping) and a:
        b = {}
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        out: list[FieldChange] = []
        keys = list(a) + [key for key in b if key not in a]
        for key in keys:
            out.extend(_changes(a.get(key), b.get(key), (*path, key)))
        return out
    if _same(a, b):
        return []
    return [FieldChange(format_path(path), a, b)]


def _name(step: Any) -> str | None:
    name = step.get("name") if isinstance(step, Mapping) else None
    return name if isinstance(name, str) and name else None


def _target(step: Any) -> tuple[str, str] | None:
    if not isinstance(step, Mapping):
        return None
    for key in _TARGETS:
        value = step.get(key)
        if isinstance(value, str) and value:
            return key, value
    return None


def _match(a: list[Any], b: list[Any]) -> dict[int, int]:
    """Pairs (index in a → index in b); see the module docstring for the passes."""
    pairs: dict[int, int] = {}
    taken: set[int] = set()
    b_by_name: dict[str, int] = {}
    for index, step in enumerate(b):
        name = _name(step)
        if name is not None:
            b_by_name.setdefault(name, index)
    for index, step in enumerate(a):
        name = _name(step)
        if name is not None and name in b_by_name and b_by_name[name] not in taken:
            pairs[index] = b_by_name[name]
            taken.add(b_by_name[name])

    def qualify(test: Any) -> None:
        for i, step in enumerate(a):
            if i in pairs:
                continue
            for j, other in enumerate(b):
                if j not in taken and test(i, step, j, other):
                    pairs[i] = j
                    taken.add(j)
                    break

    qualify(lambda i, x, j, y: _same(x, y))
    qualify(lambda i, x, j, y: _target(x) is not None and _target(x) == _target(y))
    qualify(lambda i, x, j, y: i == j)
    return pairs


def _kept_in_order(pairs: dict[int, int]) -> set[int]:
    """Indices (in a) of a longest run of pairs whose b-indices increase: the steps that did not move."""
    ordered = sorted(pairs.items())
    if not ordered:
        return set()
    # O(n log n) longest increasing subsequence over the b-indices, with back-pointers.
    tails: list[int] = []  # position in ``ordered`` of the smallest tail of each length
    previous: list[int] = [-1] * len(ordered)
    tail_values: list[int] = []
    for position, (_, target) in enumerate(ordered):
        length = bisect.bisect_left(tail_values, target)
        if length > 0:
            previous[position] = tails[length - 1]
        if length == len(tails):
            tails.append(position)
            tail_values.append(target)
        else:
            tails[length] = position
            tail_values[length] = target
    kept: set[int] = set()
    position = tails[-1]
    while position != -1:
        kept.add(ordered[position][0])
        position = previous[position]
    return kept


def _node_change(name: str, a: Any, b: Any) -> NodeChange:
    node_a, node_b = _mapping(a), _mapping(b)
    steps_a, steps_b = node_a.get("steps"), node_b.get("steps")
    fields = _changes(
        {key: value for key, value in node_a.items() if key != "steps"},
        {key: value for key, value in node_b.items() if key != "steps"},
        (),
    )
    if not isinstance(a, Mapping) or not isinstance(b, Mapping):
        fields.append(FieldChange("", a, b))
    if not isinstance(steps_a, list) or not isinstance(steps_b, list):
        if not _same(steps_a, steps_b):
            fields.append(FieldChange("steps", steps_a, steps_b))
        return NodeChange(node=name, fields=tuple(fields))
    return _step_changes(name, tuple(fields), steps_a, steps_b)


def _step_changes(
    name: str, fields: tuple[FieldChange, ...], steps_a: list[Any], steps_b: list[Any]
) -> NodeChange:
    """The node's steps matched (see the module docstring): added, removed, moved and changed."""
    pairs = _match(steps_a, steps_b)
    matched_b = set(pairs.values())
    kept = _kept_in_order(pairs)
    in_new_order = sorted(pairs.items(), key=lambda p: p[1])
    changed = []
    for i, j in in_new_order:
        step_fields = _step_fields(steps_a[i], steps_b[j])
        if step_fields:
            changed.append(StepChange(j, i, _name(steps_b[j]) or _name(steps_a[i]), tuple(step_fields)))
    return NodeChange(
        node=name,
        fields=fields,
        steps_added=tuple(
            StepEntry(j, _name(step), step) for j, step in enumerate(steps_b) if j not in matched_b
        ),
        steps_removed=tuple(
            StepEntry(i, _name(step), step) for i, step in enumerate(steps_a) if i not in pairs
        ),
        steps_moved=tuple(
            StepMove(_name(steps_b[j]) or _name(steps_a[i]), i, j) for i, j in in_new_order if i not in kept
        ),
        steps_changed=tuple(changed),
    )


def _step_fields(a: Any, b: Any) -> list[FieldChange]:
    """Field by field for two objects; a step that is not an object changes as a whole."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return _changes(a, b, ())
    return [] if _same(a, b) else [FieldChange("", a, b)]
