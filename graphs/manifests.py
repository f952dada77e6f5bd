"""What the graph store checks in a manifest before it saves one, and what it derives from it.

A graph's name must be one KServe accepts (its webhook's first rule), a manifest must stay within
the limits an import applies, and a version's list summary (node, step and issue counts) is
computed once, when it is saved. Used by the write path in ``graphs/services.py``.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from typing import Any

from django.conf import settings

from graphs import language
from graphs.errors import GraphRefused, ManifestTooLarge
from graphs.language import issue_dict
from graphs.language.validate import NAME_FORMAT_MESSAGE, NAME_REGEX
from graphs.models import GRAPH_NAME_PATTERN

NAME_RE = re.compile(GRAPH_NAME_PATTERN)


def name_issue(name: str) -> dict[str, Any]:
    """KServe's own message for a name its webhook rejects (docs/router-semantics.md, "What KServe
    refuses", rule 1)."""
    return issue_dict("webhook.name-format", NAME_FORMAT_MESSAGE % (name, NAME_REGEX), path="metadata.name")


def check_graph_name(name: Any) -> str:
    """Return ``name`` if KServe accepts it as an InferenceGraph name, else raise 400."""
    if not isinstance(name, str) or not name:
        raise GraphRefused(
            "The graph needs a name: set metadata.name in the manifest or send a name.",
            issues=[issue_dict("graph.name-missing", "metadata.name is required", path="metadata.name")],
        )
    if len(name) > 63 or not NAME_RE.match(name):
        raise GraphRefused(
            f"Graph name {name!r} is not a valid InferenceGraph name.", issues=[name_issue(name)]
        )
    return name


def starter_manifest(name: str, namespace: str = "default") -> dict[str, Any]:
    """The manifest of a new, empty graph: a root Sequence without steps."""
    return {
        "apiVersion": language.API_VERSION,
        "kind": language.KIND,
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"nodes": {"root": {"routerType": "Sequence", "steps": []}}},
    }


def manifest_name(manifest: Mapping[str, Any]) -> Any:
    metadata = manifest.get("metadata")
    return metadata.get("name") if isinstance(metadata, Mapping) else None


def with_name(manifest: Mapping[str, Any], name: str) -> dict[str, Any]:
    """A copy of ``manifest`` whose metadata.name is ``name`` (metadata created when missing)."""
    doc = copy.deepcopy(dict(manifest))
    metadata = doc.get("metadata")
    if not isinstance(metadata, dict):
        metadata = {}
        doc["metadata"] = metadata
    metadata["name"] = name
    return doc


# The reader's limit issues (graphs.language.reader): what every way in answers a manifest over a limit.
_LIMIT_CODES = frozenset(
    {
        "load.too-large",
        "load.too-deep",
        "load.too-many-values",
        "load.too-many-aliases",
        "load.too-many-nodes",
        "load.too-many-steps",
    }
)


def check_manifest_limits(manifest: Mapping[str, Any]) -> None:
    """Refuse a manifest over the limits that YAML/JSON import applies, with the same issue codes.

    The manifest is read as its compact JSON text by the same reader as an import
    (``language.load_documents``): at most ``STUDIO_MAX_MANIFEST_BYTES`` bytes (ManifestTooLarge,
    ``load.too-large``), and the reader's nesting depth, value, graph node and step limits
    (GraphRefused, ``load.too-deep``, ``load.too-many-nodes``, …). Anything else the reader
    would refuse (another kind, say) is left to ``validate``: the manifest is saved invalid.
    """
    limit = settings.STUDIO_MAX_MANIFEST_BYTES
    try:
        text = json.dumps(manifest, separators=(",", ":"), ensure_ascii=False)
    except RecursionError:
        text = None
    if text is None:
        issue = issue_dict(
            "load.too-deep", f"the document nests deeper than {language.MAX_DEPTH} levels (max_depth)"
        )
        raise GraphRefused(issue["message"], issues=[issue])
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > limit:
        message = f"the manifest is {size:,} bytes; the limit is {limit:,} bytes (STUDIO_MAX_MANIFEST_BYTES)"
        raise ManifestTooLarge(message, issues=[issue_dict("load.too-large", message)])
    try:
        language.load_documents(text, max_bytes=limit)
    except language.SpecError as exc:
        issues = [issue.to_dict() for issue in exc.issues if issue.code in _LIMIT_CODES]
        if issues:
            raise GraphRefused(issues[0]["message"], issues=issues) from exc


def summary_counts(manifest: Mapping[str, Any], issues: list[dict[str, Any]]) -> dict[str, int]:
    """The list summary of a version: its graph nodes and steps (counted as the reader's limits
    count them) and its issues by severity."""
    spec_doc = manifest.get("spec")
    nodes = spec_doc.get("nodes") if isinstance(spec_doc, Mapping) else None
    nodes = nodes if isinstance(nodes, Mapping) else {}
    steps = sum(
        len(node["steps"])
        for node in nodes.values()
        if isinstance(node, Mapping) and isinstance(node.get("steps"), list)
    )
    return {
        "node_count": len(nodes),
        "step_count": steps,
        "error_count": sum(1 for issue in issues if issue.get("severity") == "error"),
        "warning_count": sum(1 for issue in issues if issue.get("severity") == "warning"),
    }


def service_names(manifest: Mapping[str, Any]) -> list[str]:
    """The serviceNames the manifest's steps call, sorted, each once (the empty name left out): the
    catalog of services (``GET /api/services/``) reads them from the latest versions without
    loading their manifests."""
    spec_doc = manifest.get("spec")
    nodes = spec_doc.get("nodes") if isinstance(spec_doc, Mapping) else None
    names: set[str] = set()
    for node in nodes.values() if isinstance(nodes, Mapping) else ():
        steps = node.get("steps") if isinstance(node, Mapping) else None
        for step in steps if isinstance(steps, list) else ():
            name = step.get("serviceName") if isinstance(step, Mapping) else None
            if isinstance(name, str) and name:
                names.add(name)
    return sorted(names)
