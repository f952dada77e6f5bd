"""Import InferenceGraph YAML/JSON (one document, a ``---`` stream or a kubectl List).

Only text that cannot be read, or a document that is not an InferenceGraph, is refused (400,
with line and column). Manifests KServe would reject are imported as versions marked invalid,
so a broken graph can be brought in and mended on the canvas.

A request holds at most ``STUDIO_MAX_IMPORT_DOCUMENTS`` documents (413 naming the limit), and each
document is committed in its own transaction: one import never holds the database's write lock
for longer than one graph takes (a 10,000-graph stream in one transaction locked SQLite for 45 s).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import User

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
    the YAML line and column. Everything that can be checked is checked before the first write
    (syntax, document count, names taken or repeated), so a refused stream imports nothing; then
    each document is committed on its own.
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

    documents_limit = settings.STUDIO_MAX_IMPORT_DOCUMENTS
    if len(documents) > documents_limit:
        message = (
            f"The text holds {len(documents)} documents, over the import limit of {documents_limit} "
            "documents per request; split it into several imports."
        )
        raise PayloadTooLarge(
            message,
            issues=[{"code": "import.too-many-documents", "severity": "error", "message": message}],
        )

    prepared = []
    for loaded in documents:
        manifest = spec.manifest_from_document(loaded.document, loaded.positions)
        document = dict(manifest.document)
        target = name or manifest.name
        if not graph_name and target and manifest.name and target != manifest.name:
            document = {**document, "metadata": {**dict(document.get("metadata") or {}), "name": target}}
        prepared.append((manifest, document, target, [i.to_dict() for i in spec.validate(manifest)]))
    if not graph_name:
        _check_new_names([target for _, _, target, _ in prepared])

    results: list[dict[str, Any]] = []
    all_issues: list[dict[str, Any]] = []
    note = message or "Imported"
    for manifest, document, target, issues in prepared:  # each one commits on its own
        all_issues += issues
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


def _check_new_names(names: list[str | None]) -> None:
    """Refuse, before anything is written, a stream naming one graph twice or a taken name.

    ``graph_create`` checks again (and a unique constraint backs it): a graph created by someone
    else in between still fails that one document, after the ones before it were committed.
    """
    seen: set[str] = set()
    for graph_name in names:
        if graph_name is not None and graph_name in seen:
            raise BadRequest(f"The text holds two documents named {graph_name!r}; nothing was imported.")
        if graph_name is not None:
            seen.add(graph_name)
    taken = sorted(Graph.objects.filter(name__in=seen).values_list("name", flat=True))
    if taken:
        raise BadRequest(
            f"A graph named {taken[0]!r} already exists"
            + (f" (and {len(taken) - 1} more)" if len(taken) > 1 else "")
            + "; nothing was imported.",
            issues=[
                {
                    "code": "graph.name-taken",
                    "severity": "error",
                    "path": "metadata.name",
                    "message": f"A graph named {name!r} already exists.",
                }
                for name in taken
            ],
        )
