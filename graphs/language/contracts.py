"""Edge contracts: where a Sequence step's answer cannot be the next step's request.

A Sequence step with ``data: $response`` receives the previous step's raw answer as its request
(reference/ROUTER-SEMANTICS.md §2.4); the router does not translate between protocols. So:

- a v1 answer ``{"predictions": …}`` reaches a v1 step that reads ``{"instances": …}`` unchanged,
  unless that step sets ``mapPredictionsToInstances`` (KServe v0.16+, in the CRD this studio
  validates against), which rewrites it (``contract.predictions-to-instances``);
- a v1 step followed by a v2 step, or the reverse, sends one protocol's body to the other's
  endpoint (``contract.protocol-mismatch``);
- between two v2 steps whose metadata is known, an input of the next step that no output of the
  previous one provides under that name, datatype and shape (``contract.tensor-mismatch``).

A step's protocol comes from its ``serviceUrl`` path (``/v1/models/{m}:predict``,
``/v2/models/{m}[/versions/{v}]/infer``) or, for a ``serviceName``, from the ``services`` mapping
(what a Test connection of an environment found). Without that a ``serviceName``'s protocol is
unknown and its edges are not judged: the URL it is called at depends on the environment (KServe's
controller picks the InferenceService's URL; a studio environment may map it to a v2 endpoint), and
a guess would flag every graph of serviceNames. Everything here is a warning: KServe accepts such
graphs. Pure: no Django.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal
from urllib.parse import urlsplit

from .issues import WARNING, Issue, format_path, position_of
from .model import Manifest, Node, Step
from .schema import OPENAPI_SCHEMA
from .validate import validate

__all__ = [
    "MAP_FIELD_SUPPORTED",
    "ServiceContract",
    "edge_contracts",
    "issues_with_contracts",
    "url_protocol",
]

Protocol = Literal["v1", "v2", "unknown"]

_V1_PATH: Final = re.compile(r"/v1/models/[^/:]+(?::[a-z]+)?/?$")
_V2_PATH: Final = re.compile(r"/v2/models/[^/]+(?:/versions/[^/]+)?/infer/?$")


def _crd_has_map_field() -> bool:
    """Whether the bundled CRD (the KServe version this studio targets) has the step field."""
    try:
        nodes = OPENAPI_SCHEMA["properties"]["spec"]["properties"]["nodes"]
        step = nodes["additionalProperties"]["properties"]["steps"]["items"]
        return "mapPredictionsToInstances" in step["properties"]
    except (KeyError, TypeError):
        return False


# KServe v0.16+ only; the fix is offered when the CRD the studio validates against has it.
MAP_FIELD_SUPPORTED: Final = _crd_has_map_field()


@dataclass(frozen=True, slots=True)
class ServiceContract:
    """What is known of a service: its protocol and, for v2, its metadata's tensors
    (``{"name", "datatype", "shape"}`` each; None when unknown)."""

    protocol: Protocol = "unknown"
    inputs: tuple[Mapping[str, Any], ...] | None = None
    outputs: tuple[Mapping[str, Any], ...] | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ServiceContract:
        protocol = data.get("protocol")

        def tensors(key: str) -> tuple[Mapping[str, Any], ...] | None:
            value = data.get(key)
            if not isinstance(value, list):
                return None
            return tuple(t for t in value if isinstance(t, Mapping) and isinstance(t.get("name"), str))

        return cls(
            protocol=protocol if protocol in ("v1", "v2") else "unknown",
            inputs=tensors("inputs"),
            outputs=tensors("outputs"),
        )


def url_protocol(url: str) -> Protocol:
    """The protocol a step URL's path names: v1 predict, v2 infer, else unknown."""
    try:
        path = urlsplit(url).path
    except ValueError:
        return "unknown"
    if _V2_PATH.search(path):
        return "v2"
    if _V1_PATH.search(path):
        return "v1"
    return "unknown"


def _contract(step: Step, services: Mapping[str, ServiceContract]) -> tuple[str, ServiceContract] | None:
    """A model step's label and contract; None for a nodeName step or one without a target."""
    if step.service_url:
        known = services.get(step.service_url)
        if known is not None and known.protocol != "unknown":
            return step.name or step.service_url, known
        return step.name or step.service_url, ServiceContract(url_protocol(step.service_url))
    if step.service_name:
        known = services.get(step.service_name)
        if known is not None and known.protocol != "unknown":
            return step.name or step.service_name, known
        return step.name or step.service_name, ServiceContract("unknown")
    return None


def _shape_fits(out: Any, want: Any) -> bool:
    """Whether a tensor of shape ``out`` fits a declared ``want`` (-1 is any size)."""
    if not isinstance(out, list) or not isinstance(want, list):
        return True
    if len(out) != len(want):
        return False
    return all(a == b or a == -1 or b == -1 for a, b in zip(out, want, strict=True))


def _tensor_problems(outputs: Sequence[Mapping[str, Any]], inputs: Sequence[Mapping[str, Any]]) -> list[str]:
    by_name = {t["name"]: t for t in outputs}
    problems = []
    for wanted in inputs:
        name = wanted["name"]
        got = by_name.get(name)
        if got is None:
            offered = ", ".join(repr(n) for n in by_name) or "none"
            problems.append(f"input {name!r} is not among the outputs ({offered})")
            continue
        if wanted.get("datatype") and got.get("datatype") and wanted["datatype"] != got["datatype"]:
            problems.append(f"input {name!r} is {wanted['datatype']}, the output is {got['datatype']}")
        if not _shape_fits(got.get("shape"), wanted.get("shape")):
            problems.append(f"input {name!r} has shape {wanted.get('shape')}, the output {got.get('shape')}")
    return problems


def _issue(manifest: Manifest, node: Node, step: Step, code: str, message: str, field: str) -> Issue:
    path = ("spec", "nodes", node.name, "steps", step.index, field)
    line, column = position_of(manifest.positions, path) or (None, None)
    return Issue(
        code=code,
        severity=WARNING,
        message=message,
        node=node.name,
        step=step.index,
        step_name=step.name or None,
        path=format_path(path),
        line=line,
        column=column,
    )


def edge_contracts(manifest: Manifest, services: Mapping[str, Any] | None = None) -> list[Issue]:
    """The edge-contract warnings of ``manifest``, in node and step order.

    ``services`` maps a serviceName (or a serviceUrl) to what is known of it: a
    :class:`ServiceContract` or its dict form ``{"protocol", "inputs", "outputs"}`` (a probe's
    result). Each warning is pinned to the receiving step (its ``data`` field).
    """
    known = {
        name: value if isinstance(value, ServiceContract) else ServiceContract.from_dict(value)
        for name, value in (services or {}).items()
        if isinstance(value, ServiceContract | Mapping)
    }
    issues: list[Issue] = []
    for node in manifest.spec.nodes.values():
        if node.router_type != "Sequence":
            continue
        for previous, step in zip(node.steps, node.steps[1:], strict=False):
            if step.data != "$response":
                continue
            sender, receiver = _contract(previous, known), _contract(step, known)
            if sender is None or receiver is None:
                continue
            (from_label, source), (to_label, target) = sender, receiver
            issues.extend(_edge(manifest, node, step, from_label, source, to_label, target))
    return issues


def _edge(
    manifest: Manifest,
    node: Node,
    step: Step,
    from_label: str,
    source: ServiceContract,
    to_label: str,
    target: ServiceContract,
) -> list[Issue]:
    p, q = source.protocol, target.protocol
    if p == "v1" and q == "v1" and not step.map_predictions_to_instances:
        fix = (
            "; set mapPredictionsToInstances: true on this step to send them as instances"
            if MAP_FIELD_SUPPORTED
            else "; KServe v0.16+ can rewrite them with mapPredictionsToInstances"
        )
        return [
            _issue(
                manifest,
                node,
                step,
                "contract.predictions-to-instances",
                f'step "{to_label}" takes {{"instances": …}} (v1) but with data: $response it receives '
                f'"{from_label}"\'s answer {{"predictions": …}} unchanged{fix}',
                "data",
            )
        ]
    if p != "unknown" and q != "unknown" and p != q:
        shapes = {"v1": '{"predictions": …}', "v2": '{"outputs": […]}'}
        wants = {"v1": '{"instances": …}', "v2": '{"inputs": […]}'}
        return [
            _issue(
                manifest,
                node,
                step,
                "contract.protocol-mismatch",
                f'"{from_label}" speaks {p} and answers {shapes[p]}, but step "{to_label}" speaks {q} and '
                f"takes {wants[q]}: with data: $response it receives the {p} answer unchanged",
                "data",
            )
        ]
    if p == "v2" and q == "v2" and source.outputs is not None and target.inputs is not None:
        problems = _tensor_problems(source.outputs, target.inputs)
        if problems:
            return [
                _issue(
                    manifest,
                    node,
                    step,
                    "contract.tensor-mismatch",
                    f'the outputs of "{from_label}" do not fit the inputs of step "{to_label}": '
                    + "; ".join(problems),
                    "data",
                )
            ]
    return []


def issues_with_contracts(manifest: Manifest, services: Mapping[str, Any] | None = None) -> list[Issue]:
    """What the editor, the API and stored versions show: :func:`~graphs.language.validate.validate`'s
    issues, then the edge-contract warnings (which never change validity)."""
    return [*validate(manifest), *edge_contracts(manifest, services)]
