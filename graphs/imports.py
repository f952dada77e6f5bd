"""Import InferenceGraph YAML/JSON (one document, a ``---`` stream or a kubectl List).

Only text that cannot be read, or a document that is not an InferenceGraph, is refused (400,
with line and column). Manifests KServe would reject are imported as versions marked invalid,
so a broken graph can be brought in and mended on the canvas.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction

from config.exceptions import BadRequest, PayloadTooLarge
from graphs import selectors, services, spec
from graphs.models import Graph
from graphs.serializers import version_data


def graph_import(
    *,
    source: bytes | str,
    owner: User,
    graph_name: str | None = None,
    name: str | None = None,
    message: str = "",
    base_version: int | None = None,
) -> dict[str, Any]:
    """Create one graph per document, or with ``graph_name`` add one version to that graph.

    Returns ``{"graphs": [{"graph", "version", "created"}], "issues": [...]}`` where issues carry
    the YAML line and column. All documents are imported or none (one transaction).
    """
    limit = settings.STUDIO_MAX_MANIFEST_BYTES
    size = len(source.encode() if isinstance(source, str) else source)
    if size > limit:
        raise PayloadTooLarge(f"The manifest is {size} bytes, over the import limit of {limit} bytes.")
    if not source.strip():
        raise BadRequest("Nothing to import: the request body is empty. Send InferenceGraph YAML or JSON.")
    try:
        documents = spec.load_documents(source, max_bytes=limit)
    except spec.SpecError as exc:
        raise BadRequest(str(exc), issues=[i.to_dict() for i in exc.issues]) from exc
    if not documents:
        raise BadRequest("The text holds no InferenceGraph document.")
    if (graph_name or name) and len(documents) > 1:
        raise BadRequest(f"The text holds {len(documents)} documents; a target name takes exactly one.")

    results: list[dict[str, Any]] = []
    all_issues: list[dict[str, Any]] = []
    with transaction.atomic():
        for loaded in documents:
            manifest = spec.manifest_from_document(loaded.document, loaded.positions)
            issues = [i.to_dict() for i in spec.validate(manifest)]
            all_issues += issues
            document = dict(manifest.document)
            note = message or "Imported"
            if graph_name:
                graph = selectors.graph_get(name=graph_name, user=owner)
                services.ensure_can_write(graph, owner)
                result = services.graph_version_create(
                    graph=graph,
                    manifest=document,
                    layout={},
                    author=owner,
                    message=note,
                    base_version=base_version,
                    issues=issues,
                )
                results.append(
                    {"graph": graph.name, "version": version_data(result.version), "created": result.created}
                )
            else:
                target = name or manifest.name
                if target and manifest.name and target != manifest.name:
                    document = {
                        **document,
                        "metadata": {**dict(document.get("metadata") or {}), "name": target},
                    }
                graph = services.graph_create(
                    owner=owner,
                    name=target,
                    manifest=document,
                    message=note,
                    issues=issues if target == manifest.name else None,
                )
                assert isinstance(graph, Graph) and graph.latest_version is not None
                results.append(
                    {"graph": graph.name, "version": version_data(graph.latest_version), "created": True}
                )
    return {"graphs": results, "issues": all_issues}
