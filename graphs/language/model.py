"""Typed, immutable view of a KServe ``InferenceGraph`` manifest.

Everything past the parser works on these classes, never on raw dicts. The original document is
kept on :class:`Manifest` (``document``) so that export is lossless: fields this module does not
model (and fields of the wrong type, which validation reports) survive a round trip.

Field names follow Python style; ``yaml_key`` metadata gives the KServe spelling. Values keep the
type they had in the document when it is the declared one; a value of the wrong type is kept in
``extra`` under its KServe key and reported by ``validate``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Literal

API_VERSION: Final = "serving.kserve.io/v1alpha1"
KIND: Final = "InferenceGraph"
ROOT_NODE: Final = "root"
ROUTER_TYPES: Final = ("Sequence", "Splitter", "Ensemble", "Switch")
DEPENDENCIES: Final = ("Soft", "Hard")
SCALE_METRICS: Final = ("cpu", "memory", "concurrency", "rps")
RESPONSE_DATA: Final = "$response"

TargetKind = Literal["nodeName", "serviceName", "serviceUrl"]

PathKey = tuple[str | int, ...]
"""A location in a document: mapping keys and list indices from the root, e.g. ``("spec", "nodes")``."""

Position = tuple[int, int]
"""A 1-based ``(line, column)`` in the source text."""

_EMPTY: Mapping[str, Any] = MappingProxyType({})


def _empty() -> Mapping[str, Any]:
    # A factory, not ``default=_EMPTY``: dataclasses refuse unhashable defaults (mappingproxy is
    # unhashable), and one shared read-only empty mapping is all any instance needs.
    return _EMPTY


def _no_positions() -> Mapping[PathKey, Position]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Step:
    """One entry of a node's ``steps`` list (``InferenceStep`` + inline ``InferenceTarget``)."""

    index: int
    name: str | None = None
    node_name: str | None = None
    service_name: str | None = None
    service_url: str | None = None
    data: str | None = None
    condition: str | None = None
    dependency: str | None = None
    weight: int | None = None
    map_predictions_to_instances: bool | None = None
    extra: Mapping[str, Any] = field(default_factory=_empty)
    """Keys unknown to the CRD (``service``, typos, …) and known keys of the wrong type."""

    @property
    def key(self) -> str:
        """The Ensemble output key: the name, or the index as a string when the name is empty."""
        return self.name if self.name else str(self.index)

    @property
    def label(self) -> str:
        """How messages refer to the step: its name, else ``#index``."""
        return self.name if self.name else f"#{self.index}"

    @property
    def targets(self) -> tuple[TargetKind, ...]:
        """The target fields that are set (non-empty), in KServe's order."""
        found: list[TargetKind] = []
        if self.node_name:
            found.append("nodeName")
        if self.service_name:
            found.append("serviceName")
        if self.service_url:
            found.append("serviceUrl")
        return tuple(found)

    @property
    def is_hard(self) -> bool:
        return self.dependency == "Hard"


@dataclass(frozen=True, slots=True)
class Node:
    """One entry of ``spec.nodes`` (``InferenceRouter``)."""

    name: str
    router_type: str | None
    steps: tuple[Step, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=_empty)


@dataclass(frozen=True, slots=True)
class RouterTimeouts:
    """``spec.routerTimeouts`` in seconds; ``None`` means KServe's default."""

    server_read: int | None = None
    server_write: int | None = None
    server_idle: int | None = None
    service_client: int | None = None
    extra: Mapping[str, Any] = field(default_factory=_empty)
    """Keys unknown to the CRD and known keys of the wrong type."""


@dataclass(frozen=True, slots=True)
class Metadata:
    name: str | None = None
    namespace: str | None = None
    labels: Mapping[str, str] = field(default_factory=_empty)
    annotations: Mapping[str, str] = field(default_factory=_empty)
    extra: Mapping[str, Any] = field(default_factory=_empty)


@dataclass(frozen=True, slots=True)
class Spec:
    """``InferenceGraphSpec``. Kubernetes sub-objects (resources, affinity, tolerations) stay as JSON."""

    nodes: Mapping[str, Node]
    """In document order."""
    resources: Mapping[str, Any] | None = None
    affinity: Mapping[str, Any] | None = None
    timeout: int | None = None
    router_timeouts: RouterTimeouts | None = None
    min_replicas: int | None = None
    max_replicas: int | None = None
    scale_target: int | None = None
    scale_metric: str | None = None
    tolerations: tuple[Mapping[str, Any], ...] | None = None
    node_selector: Mapping[str, str] | None = None
    node_name: str | None = None
    """The Kubernetes node to pin the router pod to; not a graph node."""
    service_account_name: str | None = None
    extra: Mapping[str, Any] = field(default_factory=_empty)


@dataclass(frozen=True, slots=True)
class Manifest:
    """A whole InferenceGraph document: typed view plus the original JSON-compatible document."""

    api_version: str | None
    kind: str | None
    metadata: Metadata
    spec: Spec
    document: Mapping[str, Any]
    """The document as read (JSON-compatible), for lossless export."""
    positions: Mapping[PathKey, Position] = field(default_factory=_no_positions, compare=False, repr=False)
    """Where each path of ``document`` starts in the source (key of a mapping entry, ``-`` of a list
    item); empty when the manifest was built from a mapping. Not part of equality: two manifests
    with the same content are equal wherever they were written."""

    @property
    def name(self) -> str | None:
        return self.metadata.name

    @property
    def namespace(self) -> str:
        return self.metadata.namespace or "default"

    def node(self, name: str) -> Node | None:
        return self.spec.nodes.get(name)
