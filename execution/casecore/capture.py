"""Writing a case from a finished run ("save run as test"): the run's request, its final status,
its body as a subset, and the route every Switch and Splitter took. The author prunes from there.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from execution.engine import is_valid_json
from graphs.language.model import Manifest

__all__ = ["case_document_from_run"]


def _payload(body: bytes) -> dict[str, Any]:
    if is_valid_json(body):
        return {"payload": json.loads(body)}
    return {"raw": body.decode("utf-8", errors="replace")}


def case_document_from_run(
    *,
    name: str,
    manifest: Manifest,
    request_body: bytes,
    request_headers: Sequence[tuple[str, str]],
    content_type: str | None,
    status: int,
    response_body: bytes | None,
    events: Iterable[Mapping[str, Any]],
    description: str = "",
    seed: int | None = None,
    environment: str | None = None,
) -> dict[str, Any]:
    """A case document (as :func:`~.loader.parse_case` reads it) that the run it describes passes.

    ``request_headers`` should already be redacted; ``Content-Type`` among them is folded into
    ``content_type``. ``response_body`` None (a stored body that was truncated) writes no body
    expectation, as does a body that is not JSON. ``events`` are the run's trace events as mappings. Routes are written once
    per node, in the order first decided; a node decided differently on two calls is left out
    (no single expectation holds for it). Pure.
    """
    headers = {k: v for k, v in request_headers if k.lower() != "content-type"}
    request: dict[str, Any] = {**_payload(request_body), "content_type": content_type}
    if headers:
        request["headers"] = headers
    expectations: list[dict[str, Any]] = [{"status": status}]
    if response_body is not None and is_valid_json(response_body):
        expectations.append({"body": json.loads(response_body), "match": "subset"})
    decided: dict[str, set[int | None]] = {}
    for event in events:
        data = event.get("data") or {}
        if event.get("type") == "route.decided" and data.get("router") in ("Switch", "Splitter"):
            decided.setdefault(str(event.get("node")), set()).add(data.get("chosen"))
    for node_name, chosen in decided.items():
        node = manifest.spec.nodes.get(node_name)
        if node is None or len(chosen) != 1:
            continue
        (index,) = chosen
        took: str | int | None = None
        if index is not None and 0 <= index < len(node.steps):
            step = node.steps[index]
            took = step.name if step.name else step.index
        expectations.append({"route": node_name, "took": took})
    document: dict[str, Any] = {"name": name}
    if description:
        document["description"] = description
    document["request"] = request
    if seed is not None:
        document["seed"] = seed
    if environment is not None:
        document["environment"] = environment
    document["expectations"] = expectations
    return document
