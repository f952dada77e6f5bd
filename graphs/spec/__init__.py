"""The graph language: KServe ``InferenceGraph`` manifests as typed values.

Read (``load_documents``, ``parse``), check (``validate``), canonicalise and hash
(``canonical_document``, ``spec_hash``), export (``to_kserve_document``, ``export_yaml``,
``export_json``) and compare (``diff``). Pure Python: imports no Django, DRF, Celery or engine.
"""

from .canonical import canonical_document, canonical_json, spec_hash
from .diff import FieldChange, GraphDiff, NodeChange, StepChange, StepEntry, StepMove, diff
from .export import export_json, export_yaml, normalize_for_export, to_kserve_document
from .issues import ERROR, WARNING, Issue, Severity, SpecError, describe_issue, format_path, has_errors
from .model import (
    API_VERSION,
    DEPENDENCIES,
    KIND,
    RESPONSE_DATA,
    ROOT_NODE,
    ROUTER_TYPES,
    SCALE_METRICS,
    Manifest,
    Metadata,
    Node,
    PathKey,
    Position,
    RouterTimeouts,
    Spec,
    Step,
    TargetKind,
)
from .reader import (
    MAX_ALIASES,
    MAX_BYTES,
    MAX_DEPTH,
    MAX_GRAPH_NODES,
    MAX_STEPS,
    MAX_VALUES,
    LoadedDocument,
    load_documents,
    manifest_from_document,
    parse,
)
from .validate import validate

__all__ = [
    "API_VERSION",
    "DEPENDENCIES",
    "ERROR",
    "KIND",
    "MAX_ALIASES",
    "MAX_BYTES",
    "MAX_DEPTH",
    "MAX_GRAPH_NODES",
    "MAX_STEPS",
    "MAX_VALUES",
    "RESPONSE_DATA",
    "ROOT_NODE",
    "ROUTER_TYPES",
    "SCALE_METRICS",
    "WARNING",
    "FieldChange",
    "GraphDiff",
    "Issue",
    "LoadedDocument",
    "Manifest",
    "Metadata",
    "Node",
    "NodeChange",
    "PathKey",
    "Position",
    "RouterTimeouts",
    "Severity",
    "Spec",
    "SpecError",
    "Step",
    "StepChange",
    "StepEntry",
    "StepMove",
    "TargetKind",
    "canonical_document",
    "canonical_json",
    "describe_issue",
    "diff",
    "export_json",
    "export_yaml",
    "format_path",
    "has_errors",
    "load_documents",
    "manifest_from_document",
    "normalize_for_export",
    "parse",
    "spec_hash",
    "to_kserve_document",
    "validate",
]
