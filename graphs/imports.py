"""Import InferenceGraph YAML/JSON (one document, a ``---`` stream or a kubectl List).

Only text that cannot be read, or a document that is not an InferenceGraph, is refused (400,
with line and column). Manifests KServe would reject are imported as versions marked invalid,
so a broken graph can be brought in and mended on the canvas.

A request holds at most ``STUDIO_MAX_IMPORT_DOCUMENTS`` documents (413 naming the limit), and each
document is committed in its own transaction: one import never holds the database's write lock
for longer than one graph takes (a 10,000-graph stream in one transaction locked SQLite for 45 s).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User

from graphs import language, selectors, services
from graphs.access import access_graph_for_edit
from graphs.errors import GraphRefused, ManifestTooLarge
from graphs.language import issue_dict
from graphs.models import Graph, GraphVersion


@dataclass(frozen=True)
class ImportedGraph:
    graph: str
    version: GraphVersion
    created: bool


@dataclass(frozen=True)
class ImportResult:
    """What an import did: one entry per document, and the issues of all of them (with their YAML
    line and column)."""

    graphs: list[ImportedGraph]
    issues: list[dict[str, Any]]


@dataclass(frozen=True)
class _Prepared:
    """A document ready to be written: its manifest, the document to save, the graph's name."""

    manifest: language.Manifest
    document: dict[str, Any]
    target: str | None
    issues: list[dict[str, Any]]


def graph_import(
    *,
    source: bytes | str,
    owner: User,
    graph_name: str | None = None,
    name: str | None = None,
    message: str = "",
    base_version: int | None = None,
) -> ImportResult:
    """Create one graph per document, or with ``graph_name`` add one version to that graph.

    Everything that can be checked is checked before the first write (syntax, document count, names
    taken or repeated), so a refused stream imports nothing; then each document is committed on its
    own.
    """
    documents = _read(source, single=bool(graph_name or name))
    prepared = [_prepare(loaded, name=name, renaming=not graph_name) for loaded in documents]
    if not graph_name:
        _check_new_names([item.target for item in prepared])
    note = message or "Imported"
    results: list[ImportedGraph] = []
    issues: list[dict[str, Any]] = []
    for item in prepared:  # each one commits on its own
        issues += item.issues
        if graph_name:
            results.append(_add_version(item, graph_name, owner, note, base_version))
        else:
            results.append(_create(item, owner, note))
    return ImportResult(graphs=results, issues=issues)


def graph_version_from_text(
    *, graph: Graph, source: bytes | str, author: User, message: str, base_version: int | None
) -> services.SaveResult:
    """Save the one manifest in ``source`` (YAML or JSON text) as a new version of ``graph``,
    exactly as a JSON save (``services.graph_version_create``: stale base → StaleVersion, same
    content → the latest version, a rename refused), keeping the latest version's canvas layout.

    Unreadable text, or more or fewer than one document, is GraphRefused (400) with line and
    column; the stored issues keep their YAML positions. Writes nothing before the save itself.
    Only those who may change the graph may (NotPermitted, 403), asked before the text is read.
    """
    access_graph_for_edit(author, graph)
    item = _prepare(_read(source, single=True)[0], name=None, renaming=False)
    latest = graph.latest_version
    return services.graph_version_create(
        graph=graph,
        manifest=item.document,
        layout=dict(latest.layout or {}) if latest is not None else {},
        author=author,
        message=message,
        base_version=base_version,
        issues=item.issues,
    )


def _read(source: bytes | str, *, single: bool) -> list[language.LoadedDocument]:
    """The InferenceGraph documents of ``source``, within the size and document-count limits."""
    limit = settings.STUDIO_MAX_MANIFEST_BYTES
    size = len(source.encode() if isinstance(source, str) else source)
    if size > limit:
        message = (
            f"The manifest is {size} bytes, over the limit of {limit} bytes (STUDIO_MAX_MANIFEST_BYTES)."
        )
        raise ManifestTooLarge(message, issues=[issue_dict("load.too-large", message)])
    if not source.strip():
        raise GraphRefused("Nothing to import: the request body is empty. Send InferenceGraph YAML or JSON.")
    try:
        documents = language.load_documents(source, max_bytes=limit)
    except language.SpecError as exc:
        raise GraphRefused(str(exc), issues=[i.to_dict() for i in exc.issues]) from exc
    if not documents:
        raise GraphRefused("The text holds no InferenceGraph document.")
    if single and len(documents) > 1:
        raise GraphRefused(f"The text holds {len(documents)} documents; a target name takes exactly one.")
    documents_limit = settings.STUDIO_MAX_IMPORT_DOCUMENTS
    if len(documents) > documents_limit:
        message = (
            f"The text holds {len(documents)} documents, over the import limit of {documents_limit} "
            "documents per request (STUDIO_MAX_IMPORT_DOCUMENTS); split it into several imports."
        )
        raise ManifestTooLarge(
            message,
            issues=[issue_dict("import.too-many-documents", message)],
        )
    return documents


def _prepare(loaded: language.LoadedDocument, *, name: str | None, renaming: bool) -> _Prepared:
    """Validate one document (issues keep their positions); ``name`` renames a new graph."""
    manifest = language.manifest_from_document(loaded.document, loaded.positions)
    document = dict(manifest.document)
    target = name or manifest.name
    if renaming and target and manifest.name and target != manifest.name:
        document = {**document, "metadata": {**dict(document.get("metadata") or {}), "name": target}}
    return _Prepared(
        manifest, document, target, [i.to_dict() for i in language.issues_with_contracts(manifest)]
    )


def _add_version(
    item: _Prepared, graph_name: str, owner: User, note: str, base_version: int | None
) -> ImportedGraph:
    graph = selectors.graph_get(name=graph_name, user=owner)
    result = services.graph_version_create(
        graph=graph,
        manifest=item.document,
        layout={},
        author=owner,
        message=note,
        base_version=base_version,
        issues=item.issues,
    )
    return ImportedGraph(graph.name, result.version, result.created)


def _create(item: _Prepared, owner: User, note: str) -> ImportedGraph:
    graph = services.graph_create(
        owner=owner,
        name=item.target,
        manifest=item.document,
        message=note,
        # Issues found with positions hold for the stored document unless it was renamed.
        issues=item.issues if item.target == item.manifest.name else None,
    )
    assert isinstance(graph, Graph) and graph.latest_version is not None
    return ImportedGraph(graph.name, graph.latest_version, True)


def _check_new_names(names: list[str | None]) -> None:
    """Refuse, before anything is written, a stream naming one graph twice or a taken name.

    ``graph_create`` checks again (and a unique constraint backs it): a graph created by someone
    else in between still fails that one document, after the ones before it were committed.
    """
    seen: set[str] = set()
    for graph_name in names:
        if graph_name is not None and graph_name in seen:
            raise GraphRefused(f"The text holds two documents named {graph_name!r}; nothing was imported.")
        if graph_name is not None:
            seen.add(graph_name)
    taken = sorted(Graph.objects.filter(name__in=seen).values_list("name", flat=True))
    if taken:
        raise GraphRefused(
            f"A graph named {taken[0]!r} already exists"
            + (f" (and {len(taken) - 1} more)" if len(taken) > 1 else "")
            + "; nothing was imported.",
            issues=[
                issue_dict(
                    "graph.name-taken", f"A graph named {name!r} already exists.", path="metadata.name"
                )
                for name in taken
            ],
        )
