"""``validate(manifest)``: every problem of a manifest at once, each pinned to its node, step and line.

Errors are exactly what KServe rejects: the CRD's structural schema (enforced by the API server),
apiVersion/kind and a name, and the five rules of KServe's validating webhook, with KServe's own
messages word for word. Unlike KServe, which stops at the first error and visits nodes in Go's random
map order, all errors are reported, nodes in document order, rules in the webhook's order.

Warnings are what KServe accepts and then does something other than it looks like (``pitfalls.py``;
docs/router-semantics.md, "What KServe accepts but does not do as written"); each message says what
KServe will really do.

Order of the result: identity, metadata, schema (document order), webhook rules 1-5, then warnings
per node in document order (node, then its steps), then graph-wide warnings (cycles, unreachable
nodes). Deterministic for a given manifest.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from .issues import ERROR, WARNING, Issue, Severity, format_path, position_of
from .model import API_VERSION, KIND, ROOT_NODE, Manifest, Node, PathKey, Step
from .pitfalls import cycles, ensemble_collisions, node_pitfalls, reachable, show, step_pitfalls
from .release_rules import release_issues
from .releases import Release
from .schema import check, json_type

# KServe's webhook (pkg/apis/serving/v1alpha1/inference_graph_validation.go), kept verbatim.
NAME_REGEX: Final = "[a-z]([-a-z0-9]*[a-z0-9])?"
_NAME_RE: Final = re.compile(NAME_REGEX)
NAME_FORMAT_MESSAGE: Final = (
    'The InferenceGraph "%s" is invalid: a InferenceGraph name must consist of lower case alphanumeric '
    'characters or \'-\', and must start with alphabetical character. (e.g. "my-name" or "abc-123", '
    "regex used for validation is '%s')"
)
ROOT_NOT_FOUND_MESSAGE: Final = (
    "root node not found, InferenceGraph needs a node with name 'root' as the root node of the graph"
)
DUPLICATE_STEP_MESSAGE: Final = 'Node "%s" of InferenceGraph "%s" contains more than one step with name "%s"'
NO_TARGET_MESSAGE: Final = (
    'Step %d ("%s") in node "%s" of InferenceGraph "%s" does not specify an inference target'
)
MANY_TARGETS_MESSAGE: Final = (
    'Step %d ("%s") in node "%s" of InferenceGraph "%s" specifies more than one of '
    "nodeName, serviceName, serviceUrl"
)
WEIGHT_MISSING_MESSAGE: Final = "InferenceGraph[%s] Node[%s] Route[%s] missing the 'Weight'"
WEIGHT_SUM_MESSAGE: Final = (
    "InferenceGraph[%s] Node[%s] splitter node: "
    "the sum of traffic weights for all routing targets should be 100"
)
SPLITTER_TOTAL: Final = 100

_LEGACY_KEYS: Final = {"routes": 4, "service": 6}  # key -> path length where it is legacy (node / step)
_STANDARD_MODES: Final = ("Standard", "RawDeployment")
_DEPLOYMENT_MODE: Final = "serving.kserve.io/deploymentMode"


def validate(manifest: Manifest, release: Release | None = None) -> list[Issue]:
    """All issues of ``manifest`` (errors and warnings), in a deterministic order. Pure.

    With ``release``, also what that KServe release's CRD and router make of it
    (:func:`~graphs.language.release_rules.release_issues`), after everything else.
    """
    issues = _Validator(manifest).run()
    if release is not None:
        issues += release_issues(manifest, release)
    return issues


def _locate(path: PathKey) -> tuple[str | None, int | None]:
    """The node and step index a document path belongs to."""
    if len(path) >= 3 and path[0] == "spec" and path[1] == "nodes" and isinstance(path[2], str):
        if len(path) >= 5 and path[3] == "steps" and isinstance(path[4], int):
            return path[2], path[4]
        return path[2], None
    return None, None


def _node_path(node: str) -> PathKey:
    return ("spec", "nodes", node)


def _step_path(node: str, index: int, *rest: str) -> PathKey:
    return ("spec", "nodes", node, "steps", index, *rest)


class _Validator:
    def __init__(self, manifest: Manifest) -> None:
        self.manifest = manifest
        self.issues: list[Issue] = []
        name = manifest.metadata.name
        self.graph = name if name is not None else ""
        raw_spec = manifest.document.get("spec")
        raw_nodes = raw_spec.get("nodes") if isinstance(raw_spec, Mapping) else None
        self.raw_nodes: Mapping[str, Any] = raw_nodes if isinstance(raw_nodes, Mapping) else {}

    def run(self) -> list[Issue]:
        self._identity()
        self._schema()
        self._webhook()
        for node in self.manifest.spec.nodes.values():
            self._node_warnings(node)
        self._graph_warnings()
        return self.issues

    # -- helpers ---------------------------------------------------------------------------------

    def add(
        self,
        code: str,
        severity: Severity,
        message: str,
        path: PathKey,
        *,
        step: Step | None = None,
    ) -> None:
        node_name, step_index = _locate(path)
        step_name: str | None = None
        if step is None and node_name is not None and step_index is not None:
            node = self.manifest.spec.nodes.get(node_name)
            if node is not None and step_index < len(node.steps):
                step = node.steps[step_index]
        if step is not None:
            step_index = step.index
            step_name = step.name or None
        line, column = position_of(self.manifest.positions, path) or (None, None)
        self.issues.append(
            Issue(
                code=code,
                severity=severity,
                message=message,
                node=node_name,
                step=step_index,
                step_name=step_name,
                path=format_path(path) or None,
                line=line,
                column=column,
            )
        )

    def raw_step(self, node: str, index: int) -> Any:
        raw = self.raw_nodes.get(node)
        steps = raw.get("steps") if isinstance(raw, Mapping) else None
        return steps[index] if isinstance(steps, list) and index < len(steps) else None

    # -- errors ----------------------------------------------------------------------------------

    def _identity(self) -> None:
        document = self.manifest.document
        api_version = document.get("apiVersion")
        if api_version != API_VERSION:
            found = "it is missing" if api_version is None else f"found {show(api_version)}"
            self.add(
                "manifest.api-version", ERROR, f'apiVersion must be "{API_VERSION}"; {found}', ("apiVersion",)
            )
        kind = document.get("kind")
        if kind != KIND:
            found = "it is missing" if kind is None else f"found {show(kind)}"
            self.add("manifest.kind", ERROR, f'kind must be "{KIND}"; {found}', ("kind",))
        metadata = document.get("metadata")
        if metadata is not None and not isinstance(metadata, Mapping):
            self.add(
                "schema.type",
                ERROR,
                _type_message("metadata", metadata, "object"),
                ("metadata",),
            )
            metadata = None
        metadata = metadata or {}
        name = metadata.get("name")
        if name is None or name == "":
            self.add(
                "metadata.name-missing",
                ERROR,
                "metadata.name: Required value: name or generateName is required",
                ("metadata", "name") if "name" in metadata else ("metadata",),
            )
        for key in ("name", "namespace"):
            value = metadata.get(key)
            if value is not None and not isinstance(value, str):
                self.add(
                    "schema.type", ERROR, _type_message(f"metadata.{key}", value, "string"), ("metadata", key)
                )
        for key in ("labels", "annotations"):
            value = metadata.get(key)
            if value is None:
                continue
            if not isinstance(value, Mapping):
                self.add(
                    "schema.type", ERROR, _type_message(f"metadata.{key}", value, "object"), ("metadata", key)
                )
                continue
            for sub, item in value.items():
                if not isinstance(item, str):
                    where = format_path(("metadata", key, sub))
                    self.add(
                        "schema.type", ERROR, _type_message(where, item, "string"), ("metadata", key, sub)
                    )

    def _schema(self) -> None:
        for found in check(self.manifest.document):
            path = found.path
            if found.code == "schema.unknown-field" and path and _LEGACY_KEYS.get(str(path[-1])) == len(path):
                continue  # reported below as legacy syntax, with what KServe does with it
            self.add(found.code, found.severity, found.message, path)

    def _webhook(self) -> None:
        """KServe's validating webhook, rule by rule in its order (each rule over every node)."""
        self._webhook_name_and_root()
        nodes = list(self.manifest.spec.nodes.values())
        for node in nodes:
            self._duplicate_step_names(node)
        for node in nodes:
            self._step_targets(node)
        for node in nodes:
            if node.router_type == "Splitter":
                self._splitter_weights(node)

    def _webhook_name_and_root(self) -> None:
        # 1. Name format (a missing name is reported above, as the API server would).
        name = self.manifest.metadata.name
        if name and not _NAME_RE.fullmatch(name):
            self.add(
                "webhook.name-format", ERROR, NAME_FORMAT_MESSAGE % (name, NAME_REGEX), ("metadata", "name")
            )
        # 2. Root node.
        if ROOT_NODE not in self.manifest.spec.nodes:
            self.add(
                "webhook.root-missing",
                ERROR,
                ROOT_NOT_FOUND_MESSAGE,
                ("spec", "nodes") if "nodes" in (self.manifest.document.get("spec") or {}) else ("spec",),
            )

    def _duplicate_step_names(self, node: Node) -> None:
        """3. Unique step names per node (non-empty names only); one issue per repeated name."""
        seen: set[str] = set()
        reported: set[str] = set()
        for step in node.steps:
            if not step.name:
                continue
            if step.name in seen and step.name not in reported:
                reported.add(step.name)
                self.add(
                    "webhook.duplicate-step-name",
                    ERROR,
                    DUPLICATE_STEP_MESSAGE % (node.name, self.graph, step.name),
                    _step_path(node.name, step.index, "name"),
                    step=step,
                )
            seen.add(step.name)

    def _step_targets(self, node: Node) -> None:
        """4. Exactly one target per step."""
        for step in node.steps:
            if not isinstance(self.raw_step(node.name, step.index), Mapping):
                continue  # not an object: the schema error says so
            targets = step.targets
            if len(targets) == 1:
                continue
            if not targets:
                code, message, path = (
                    "webhook.no-target",
                    NO_TARGET_MESSAGE,
                    _step_path(node.name, step.index),
                )
            else:
                code, message = "webhook.multiple-targets", MANY_TARGETS_MESSAGE
                path = _step_path(node.name, step.index, targets[1])
            self.add(
                code, ERROR, message % (step.index, step.name or "", node.name, self.graph), path, step=step
            )

    def _splitter_weights(self, node: Node) -> None:
        """5. Splitter weights: every step has one (KServe then stops, so no sum), and they sum to 100."""
        missing = [step for step in node.steps if step.weight is None]
        for step in missing:
            if "weight" in step.extra:
                continue  # present but not an integer: the schema error says so
            self.add(
                "webhook.weight-missing",
                ERROR,
                WEIGHT_MISSING_MESSAGE % (self.graph, node.name, step.service_name or ""),
                _step_path(node.name, step.index),
                step=step,
            )
        if not missing and sum(step.weight or 0 for step in node.steps) != SPLITTER_TOTAL:
            self.add(
                "webhook.weight-sum",
                ERROR,
                WEIGHT_SUM_MESSAGE % (self.graph, node.name),
                (*_node_path(node.name), "steps") if node.steps else _node_path(node.name),
            )

    # -- warnings --------------------------------------------------------------------------------

    def _node_warnings(self, node: Node) -> None:
        path = _node_path(node.name)
        for code, message, below in node_pitfalls(node):
            self.add(code, WARNING, message, (*path, *below))
        collisions = dict(ensemble_collisions(node)) if node.router_type == "Ensemble" else {}
        for step in node.steps:
            spath = _step_path(node.name, step.index)
            for code, message, below in step_pitfalls(node.router_type, step, self.manifest.spec.nodes):
                self.add(code, WARNING, message, (*spath, *below), step=step)
            if step.index in collisions:
                self.add("ensemble.key-collision", WARNING, collisions[step.index], spath, step=step)

    def _graph_warnings(self) -> None:
        spec = self.manifest.spec
        mode = self.manifest.metadata.annotations.get(_DEPLOYMENT_MODE)
        if spec.timeout is not None and mode in _STANDARD_MODES:
            self.add(
                "spec.timeout-ignored",
                WARNING,
                f"spec.timeout sets the Knative revision timeout only; in {mode} mode KServe ignores it "
                "(routerTimeouts.serverWrite bounds a request)",
                ("spec", "timeout"),
            )
        for cycle, node, step in cycles(self.manifest):
            self.add(
                "graph.cycle",
                WARNING,
                f"cycle through nodeName steps: {' -> '.join(cycle)}; KServe does not detect cycles: a "
                "request "
                "that follows it makes the router recurse until the Go stack overflows and the router "
                "crashes",
                _step_path(node, step.index, "nodeName"),
                step=step,
            )
        if ROOT_NODE in spec.nodes:
            reached = reachable(self.manifest)
            for name in spec.nodes:
                if name not in reached:
                    self.add(
                        "graph.unreachable",
                        WARNING,
                        f'node "{name}" is not reachable from "root" through nodeName steps: KServe '
                        "never runs it",
                        _node_path(name),
                    )


def _type_message(where: str, value: Any, expected: str) -> str:
    actual = json_type(value)
    return f'{where}: Invalid value: "{actual}": {where} in body must be of type {expected}: "{actual}"'
