"""Build ``graphs.language.model.Manifest`` objects from KServe-shaped dicts, for engine tests.

A deliberately tiny stand-in for the real parser (``graphs.language``): it maps the KServe keys the
engine reads onto the dataclasses and nothing more, so engine tests do not depend on parsing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graphs.language.model import Manifest, Metadata, Node, RouterTimeouts, Spec, Step

_STEP_KEYS = {
    "name": "name",
    "nodeName": "node_name",
    "serviceName": "service_name",
    "serviceUrl": "service_url",
    "data": "data",
    "condition": "condition",
    "dependency": "dependency",
    "weight": "weight",
    "mapPredictionsToInstances": "map_predictions_to_instances",
}


def step(index: int, doc: Mapping[str, Any]) -> Step:
    return Step(index=index, **{_STEP_KEYS[k]: v for k, v in doc.items()})


def manifest(
    nodes: Mapping[str, Mapping[str, Any]],
    *,
    router_timeouts: Mapping[str, int] | None = None,
    name: str = "test-graph",
    namespace: str | None = None,
) -> Manifest:
    """``manifest({"root": {"routerType": "Sequence", "steps": [{"serviceUrl": u}]}})``."""
    built = {
        node_name: Node(
            name=node_name,
            router_type=doc.get("routerType"),
            steps=tuple(step(i, s) for i, s in enumerate(doc.get("steps", []))),
        )
        for node_name, doc in nodes.items()
    }
    timeouts = None
    if router_timeouts is not None:
        timeouts = RouterTimeouts(
            server_read=router_timeouts.get("serverRead"),
            server_write=router_timeouts.get("serverWrite"),
            server_idle=router_timeouts.get("serverIdle"),
            service_client=router_timeouts.get("serviceClient"),
        )
    spec_doc: dict[str, Any] = {"nodes": {k: dict(v) for k, v in nodes.items()}}
    if router_timeouts is not None:
        spec_doc["routerTimeouts"] = dict(router_timeouts)
    metadata: dict[str, Any] = {"name": name}
    if namespace:
        metadata["namespace"] = namespace
    return Manifest(
        api_version="serving.kserve.io/v1alpha1",
        kind="InferenceGraph",
        metadata=Metadata(name=name, namespace=namespace),
        spec=Spec(nodes=built, router_timeouts=timeouts),
        document={
            "apiVersion": "serving.kserve.io/v1alpha1",
            "kind": "InferenceGraph",
            "metadata": metadata,
            "spec": spec_doc,
        },
    )


def seq(*steps: Mapping[str, Any]) -> dict[str, Any]:
    return {"routerType": "Sequence", "steps": list(steps)}


def switch(*steps: Mapping[str, Any]) -> dict[str, Any]:
    return {"routerType": "Switch", "steps": list(steps)}


def ensemble(*steps: Mapping[str, Any]) -> dict[str, Any]:
    return {"routerType": "Ensemble", "steps": list(steps)}


def splitter(*steps: Mapping[str, Any]) -> dict[str, Any]:
    return {"routerType": "Splitter", "steps": list(steps)}
