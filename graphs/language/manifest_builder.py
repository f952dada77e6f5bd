"""A JSON-compatible document → the typed ``Manifest`` (lenient).

Known fields of the right type become typed attributes; a known field of the wrong type and every
unknown field (the legacy ``routes``/``service`` included) go to the owner's ``extra`` under their
KServe key, so nothing is lost and ``validate`` can say what is wrong. ``null`` means "absent", as
the API server prunes nulls. Nothing is converted beyond the types (an integral float is an int).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

from .model import Manifest, Metadata, Node, PathKey, Position, RouterTimeouts, Spec, Step


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


def build_manifest(document: dict[str, Any], positions: Mapping[PathKey, Position]) -> Manifest:
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
