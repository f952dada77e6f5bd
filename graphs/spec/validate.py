"""``validate(manifest)``: every problem of a manifest at once, each pinned to its node, step and line.

Errors are exactly what KServe rejects: the CRD's structural schema (enforced by the API server),
apiVersion/kind and a name, and the five rules of KServe's validating webhook, with KServe's own
messages word for word. Unlike KServe, which stops at the first error and visits nodes in Go's random
map order, all errors are reported, nodes in document order, rules in the webhook's order.

Warnings are what KServe accepts and then does something other than it looks like (see
ROUTER-SEMANTICS §1.10, §2); each message says what KServe will really do.

Order of the result: identity, metadata, schema (document order), webhook rules 1-5, then warnings
per node in document order (node, then its steps), then graph-wide warnings (cycles, unreachable
nodes). Deterministic for a given manifest.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any, Final

from .issues import ERROR, WARNING, Issue, Severity, format_path, position_of
from .model import API_VERSION, KIND, RESPONSE_DATA, ROOT_NODE, Manifest, Node, PathKey, Step
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


def validate(manifest: Manifest) -> list[Issue]:
    """All issues of ``manifest`` (errors and warnings), in a deterministic order. Pure."""
    return _Validator(manifest).run()


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
            found = "it is missing" if api_version is None else f"found {_show(api_version)}"
            self.add(
                "manifest.api-version", ERROR, f'apiVersion must be "{API_VERSION}"; {found}', ("apiVersion",)
            )
        kind = document.get("kind")
        if kind != KIND:
            found = "it is missing" if kind is None else f"found {_show(kind)}"
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
        spec = self.manifest.spec
        name = self.manifest.metadata.name
        # 1. Name format (a missing name is reported above, as the API server would).
        if name and not _NAME_RE.fullmatch(name):
            self.add(
                "webhook.name-format", ERROR, NAME_FORMAT_MESSAGE % (name, NAME_REGEX), ("metadata", "name")
            )
        # 2. Root node.
        if ROOT_NODE not in spec.nodes:
            self.add(
                "webhook.root-missing",
                ERROR,
                ROOT_NOT_FOUND_MESSAGE,
                ("spec", "nodes") if "nodes" in (self.manifest.document.get("spec") or {}) else ("spec",),
            )
        # 3. Unique step names per node (non-empty names only); one issue per repeated name.
        for node in spec.nodes.values():
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
        # 4. Exactly one target per step.
        for node in spec.nodes.values():
            for step in node.steps:
                if not isinstance(self.raw_step(node.name, step.index), Mapping):
                    continue  # not an object: the schema error says so
                targets = step.targets
                if not targets:
                    self.add(
                        "webhook.no-target",
                        ERROR,
                        NO_TARGET_MESSAGE % (step.index, step.name or "", node.name, self.graph),
                        _step_path(node.name, step.index),
                        step=step,
                    )
                elif len(targets) > 1:
                    self.add(
                        "webhook.multiple-targets",
                        ERROR,
                        MANY_TARGETS_MESSAGE % (step.index, step.name or "", node.name, self.graph),
                        _step_path(node.name, step.index, targets[1]),
                        step=step,
                    )
        # 5. Splitter weights: every step has one (KServe then stops, so no sum), and they sum to 100.
        for node in spec.nodes.values():
            if node.router_type != "Splitter":
                continue
            complete = True
            for step in node.steps:
                if step.weight is not None:
                    continue
                complete = False
                if "weight" in step.extra:
                    continue  # present but not an integer: the schema error says so
                self.add(
                    "webhook.weight-missing",
                    ERROR,
                    WEIGHT_MISSING_MESSAGE % (self.graph, node.name, step.service_name or ""),
                    _step_path(node.name, step.index),
                    step=step,
                )
            if complete and sum(step.weight or 0 for step in node.steps) != SPLITTER_TOTAL:
                self.add(
                    "webhook.weight-sum",
                    ERROR,
                    WEIGHT_SUM_MESSAGE % (self.graph, node.name),
                    (*_node_path(node.name), "steps") if node.steps else _node_path(node.name),
                )

    # -- warnings --------------------------------------------------------------------------------

    def _node_warnings(self, node: Node) -> None:
        path = _node_path(node.name)
        router = node.router_type
        if "routes" in node.extra:
            consequence = (
                "KServe uses only steps"
                if node.steps
                else "so this node has no steps in KServe; rename it to steps"
            )
            self.add(
                "legacy.routes",
                WARNING,
                'the legacy key "routes" (KServe v0.9 proposal) is not in the InferenceGraph schema: '
                "KServe's API "
                f"server drops it, {consequence}",
                (*path, "routes"),
            )
        elif not node.steps and "steps" not in node.extra:
            message = _empty_node_message(node)
            if message is not None:
                self.add("graph.empty-node", WARNING, message, path)

        keys: dict[str, Step] = {}
        for step in node.steps:
            self._step_warnings(node, step)
            if router == "Ensemble":
                other = keys.get(step.key)
                if other is not None and not (other.name and step.name):
                    self.add(
                        "ensemble.key-collision",
                        WARNING,
                        f"step {other.index} ({_step_kind(other)}) and step {step.index} "
                        f"({_step_kind(step)}) both "
                        f'write the key "{step.key}" of the Ensemble output (an unnamed step\'s key is '
                        "its index): "
                        "KServe keeps only the later one",
                        _step_path(node.name, step.index),
                        step=step,
                    )
                keys[step.key] = step

    def _step_warnings(self, node: Node, step: Step) -> None:
        router = node.router_type
        known_router = router in ("Sequence", "Splitter", "Ensemble", "Switch")
        spath = _step_path(node.name, step.index)
        nodes = self.manifest.spec.nodes

        if "service" in step.extra:
            consequence = "" if step.targets else ", so this step has no inference target in KServe"
            self.add(
                "legacy.service",
                WARNING,
                'the legacy key "service" (KServe v0.9 proposal) is not in the InferenceGraph schema: '
                "KServe's API "
                f"server drops it{consequence}; use serviceName",
                (*spath, "service"),
                step=step,
            )
        if step.node_name and step.node_name not in nodes:
            self.add(
                "graph.unknown-node",
                WARNING,
                f'nodeName "{step.node_name}" names no node of this graph: KServe answers 500 with cause '
                '"invalid route type: " when the step runs',
                (*spath, "nodeName"),
                step=step,
            )

        condition = step.condition or ""
        if router == "Switch" and not condition:
            self.add(
                "switch.no-condition",
                WARNING,
                "Switch step without a condition: KServe never chooses it (an empty condition never matches)",
                spath,
                step=step,
            )
        if condition and router in ("Splitter", "Ensemble"):
            self.add(
                "step.condition-ignored",
                WARNING,
                f"condition on a {router} step: KServe's {router} ignores it (it is used by Switch and "
                "Sequence only)",
                (*spath, "condition"),
                step=step,
            )
        if condition and router == "Sequence" and step.index == 0:
            self.add(
                "sequence.condition-on-first-step",
                WARNING,
                "condition on the first step of a Sequence: it is checked against the previous step's "
                "response, "
                'which is empty, so KServe always fails the node with 500 "invalid response"',
                (*spath, "condition"),
                step=step,
            )
        if condition and router in ("Switch", "Sequence"):
            for code, message in _condition_problems(condition):
                self.add(code, WARNING, message, (*spath, "condition"), step=step)

        data = step.data or ""
        if data and known_router and router != "Sequence":
            self.add(
                "step.data-ignored",
                WARNING,
                f"data on a {router} step: only Sequence uses data; KServe sends this step the node input",
                (*spath, "data"),
                step=step,
            )
        elif data and router == "Sequence":
            if data == RESPONSE_DATA and step.index == 0:
                self.add(
                    "sequence.response-on-first-step",
                    WARNING,
                    '"$response" on the first step of a Sequence is ignored: there is no previous '
                    "response, so "
                    "KServe sends the node input",
                    (*spath, "data"),
                    step=step,
                )
            elif data not in (RESPONSE_DATA, "$request"):
                self.add(
                    "step.data-unknown",
                    WARNING,
                    f'data "{data}" has no effect: KServe acts only on the exact string "$response" and '
                    "sends "
                    "the node input for any other value",
                    (*spath, "data"),
                    step=step,
                )

        if step.weight is not None and known_router and router != "Splitter":
            self.add(
                "step.weight-ignored",
                WARNING,
                f"weight on a {router} step: only Splitter uses weights; KServe ignores it",
                (*spath, "weight"),
                step=step,
            )
        if router == "Splitter" and step.weight is not None and step.weight < 0:
            self.add(
                "splitter.negative-weight",
                WARNING,
                f"negative weight {step.weight}: KServe accepts it, but this step is never chosen and it "
                "shifts "
                "the traffic ranges of the steps after it",
                (*spath, "weight"),
                step=step,
            )
        if step.map_predictions_to_instances and known_router and router != "Sequence":
            self.add(
                "step.map-predictions-ignored",
                WARNING,
                f"mapPredictionsToInstances on a {router} step: only Sequence applies it; KServe ignores it",
                (*spath, "mapPredictionsToInstances"),
                step=step,
            )
        if step.is_hard and router in ("Switch", "Splitter"):
            self.add(
                "step.dependency-ignored",
                WARNING,
                f"dependency Hard on a {router} step: KServe only logs it; the chosen step's response is "
                "returned whatever its status",
                (*spath, "dependency"),
                step=step,
            )

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
        for cycle, node, step in _cycles(self.manifest):
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
            reached = _reachable(self.manifest)
            for name in spec.nodes:
                if name not in reached:
                    self.add(
                        "graph.unreachable",
                        WARNING,
                        f'node "{name}" is not reachable from "root" through nodeName steps: KServe '
                        "never runs it",
                        _node_path(name),
                    )


# --------------------------------------------------------------------------------------------------
# Graph helpers


def _edges(manifest: Manifest, name: str) -> Iterator[Step]:
    node = manifest.spec.nodes.get(name)
    if node is None:
        return
    for step in node.steps:
        if step.node_name and step.node_name in manifest.spec.nodes:
            yield step


def _reachable(manifest: Manifest) -> set[str]:
    seen = {ROOT_NODE}
    todo = [ROOT_NODE]
    while todo:
        for step in _edges(manifest, todo.pop()):
            target = step.node_name or ""
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def _cycles(manifest: Manifest) -> list[tuple[list[str], str, Step]]:
    """One entry per distinct cycle found by depth-first search from every node in document order:
    (the cycle ``[a, b, a]``, the node whose step closes it, that step). Iterative: graphs may hold
    thousands of nodes."""
    order = {name: index for index, name in enumerate(manifest.spec.nodes)}
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    found: list[tuple[list[str], str, Step]] = []
    seen: set[tuple[str, ...]] = set()
    for start in manifest.spec.nodes:
        if start in state:
            continue
        path: list[str] = [start]
        iterators = [_edges(manifest, start)]
        state[start] = 1
        while iterators:
            step = next(iterators[-1], None)
            current = path[-1]
            if step is None:
                state[current] = 2
                path.pop()
                iterators.pop()
                continue
            target = step.node_name or ""
            if state.get(target) == 1:
                cycle = path[path.index(target) :]
                pivot = min(range(len(cycle)), key=lambda i: order[cycle[i]])
                key = tuple(cycle[pivot:] + cycle[:pivot])
                if key not in seen:
                    seen.add(key)
                    found.append(([*cycle, target], current, step))
            elif target not in state:
                state[target] = 1
                path.append(target)
                iterators.append(_edges(manifest, target))
    return found


def _empty_node_message(node: Node) -> str | None:
    name = node.name
    if node.router_type == "Sequence":
        if name == ROOT_NODE:
            return (
                'node "root" is a Sequence with no steps: KServe\'s router returns status 0, panics '
                "writing it and "
                "drops the connection (the client sees EOF)"
            )
        return (
            f'node "{name}" is a Sequence with no steps: KServe returns an empty body with status 0 to '
            "the step that "
            "calls it"
        )
    if node.router_type == "Switch":
        return (
            f'node "{name}" is a Switch with no steps: nothing can match, so KServe always answers "None '
            "of the "
            'routes matched with the switch condition" (404 at the root, 500 when nested)'
        )
    if node.router_type == "Ensemble":
        return f'node "{name}" is an Ensemble with no steps: KServe always returns {{}} with status 200'
    return None  # Splitter: the webhook's weight sum already rejects it; unknown types: schema error


# --------------------------------------------------------------------------------------------------
# Conditions (GJSON as KServe uses it: ``gjson.GetBytes(doc, condition).Exists()``)

_JSONPATH_STYLE: Final = re.compile(r"^\{\s*(\.|\$|@)|(\s==\s|\s!=\s)")
_PAIRS: Final = {")": "(", "]": "[", "}": "{"}


def _condition_problems(condition: str) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    text = condition.strip()
    if text.startswith("{") and text.endswith("}"):
        if _JSONPATH_STYLE.search(text):
            problems.append(
                (
                    "condition.jsonpath",
                    f"condition {_show(condition)} is JSONPath-style, not GJSON: GJSON reads {{…}} as a "
                    "multipath, "
                    "which always yields an object that exists, so KServe treats it as always true",
                )
            )
        else:
            problems.append(
                (
                    "condition.always-true",
                    f"condition {_show(condition)} is a GJSON multipath ({{…}}): it always yields an object, "
                    "which exists, so KServe treats it as always true",
                )
            )
    elif text.startswith("[") and text.endswith("]"):
        problems.append(
            (
                "condition.always-true",
                f"condition {_show(condition)} is a GJSON multipath ([…]): it always yields an array "
                "(possibly "
                "empty), which exists, so KServe treats it as always true",
            )
        )
    elif text.endswith(")#"):
        problems.append(
            (
                "condition.always-true",
                f"condition {_show(condition)} ends with a #(…)# query, which yields an array of all matches "
                "(possibly empty) that always exists, so KServe treats it as always true; use #(…) for "
                '"some element matches"',
            )
        )
    for operator in ("&&", "||"):
        if operator in condition:
            problems.append(
                (
                    "condition.logical-operator",
                    f'condition uses "{operator}", which GJSON does not have: the text after the comparison '
                    f'operator, "{operator} …" included, is read as the value, so a number field is compared '
                    "with 0 (data>0.5 && data<=0.9 means data>0) and a string field with the whole text",
                )
            )
            break
    if not _balanced(text):
        problems.append(
            (
                "condition.syntax",
                f"condition {_show(condition)} has unbalanced brackets or quotes: GJSON will not read it as "
                "intended (it most likely never matches)",
            )
        )
    return problems


def _balanced(text: str) -> bool:
    stack: list[str] = []
    quoted = False
    escaped = False
    for char in text:
        if quoted:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                quoted = False
            continue
        if char == '"':
            quoted = True
        elif char in "([{":
            stack.append(char)
        elif char in _PAIRS and (not stack or stack.pop() != _PAIRS[char]):
            return False
    return not stack and not quoted


# --------------------------------------------------------------------------------------------------
# Small helpers


def _step_kind(step: Step) -> str:
    return f'named "{step.name}"' if step.name else "unnamed"


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _type_message(where: str, value: Any, expected: str) -> str:
    actual = json_type(value)
    return f'{where}: Invalid value: "{actual}": {where} in body must be of type {expected}: "{actual}"'
