"""What KServe accepts and then does something other than it looks like: the warnings of ``validate``.

Each rule yields the issue code, a message that says what KServe will really do, and where (a path
below the node or step). ``validate`` pins them to node, step, line and column. The behaviours behind
the messages are described in docs/router-semantics.md ("Routers", "Deliberate deviations").
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any, Final

from .model import RESPONSE_DATA, ROOT_NODE, Manifest, Node, Step

# (issue code, message, path below the step or node) of one warning.
Pitfall = tuple[str, str, tuple[str, ...]]

_ROUTERS: Final = ("Sequence", "Splitter", "Ensemble", "Switch")


def show(value: Any) -> str:
    """A value as it would be written in JSON (strings quoted)."""
    return json.dumps(value, ensure_ascii=False)


# --------------------------------------------------------------------------------------------------
# Steps


def step_pitfalls(router: str | None, step: Step, nodes: Mapping[str, Node]) -> Iterator[Pitfall]:
    """The warnings of one step of a ``router`` node, in a fixed order: its target, condition, data,
    weight, then the fields its router ignores."""
    yield from _target_pitfalls(step, nodes)
    yield from _condition_pitfalls(router, step)
    yield from _data_pitfalls(router, step)
    yield from _weight_pitfalls(router, step)
    yield from _ignored_field_pitfalls(router, step)


def _target_pitfalls(step: Step, nodes: Mapping[str, Node]) -> Iterator[Pitfall]:
    if "service" in step.extra:
        consequence = "" if step.targets else ", so this step has no inference target in KServe"
        yield (
            "legacy.service",
            'the legacy key "service" (KServe v0.9 proposal) is not in the InferenceGraph schema: '
            f"KServe's API server drops it{consequence}; use serviceName",
            ("service",),
        )
    if step.node_name and step.node_name not in nodes:
        yield (
            "graph.unknown-node",
            f'nodeName "{step.node_name}" names no node of this graph: KServe answers 500 with cause '
            '"invalid route type: " when the step runs',
            ("nodeName",),
        )


def _condition_pitfalls(router: str | None, step: Step) -> Iterator[Pitfall]:
    condition = step.condition or ""
    if router == "Switch" and not condition:
        yield (
            "switch.no-condition",
            "Switch step without a condition: KServe never chooses it (an empty condition never matches)",
            (),
        )
    if not condition:
        return
    if router in ("Splitter", "Ensemble"):
        yield (
            "step.condition-ignored",
            f"condition on a {router} step: KServe's {router} ignores it (it is used by Switch and "
            "Sequence only)",
            ("condition",),
        )
    if router == "Sequence" and step.index == 0:
        yield (
            "sequence.condition-on-first-step",
            "condition on the first step of a Sequence: it is checked against the previous step's "
            'response, which is empty, so KServe always fails the node with 500 "invalid response"',
            ("condition",),
        )
    if router in ("Switch", "Sequence"):
        for code, message in _condition_problems(condition):
            yield code, message, ("condition",)


def _data_pitfalls(router: str | None, step: Step) -> Iterator[Pitfall]:
    data = step.data or ""
    if not data or router not in _ROUTERS:
        return
    if router != "Sequence":
        yield (
            "step.data-ignored",
            f"data on a {router} step: only Sequence uses data; KServe sends this step the node input",
            ("data",),
        )
    elif data == RESPONSE_DATA and step.index == 0:
        yield (
            "sequence.response-on-first-step",
            '"$response" on the first step of a Sequence is ignored: there is no previous response, so '
            "KServe sends the node input",
            ("data",),
        )
    elif data not in (RESPONSE_DATA, "$request"):
        yield (
            "step.data-unknown",
            f'data "{data}" has no effect: KServe acts only on the exact string "$response" and sends '
            "the node input for any other value",
            ("data",),
        )


def _weight_pitfalls(router: str | None, step: Step) -> Iterator[Pitfall]:
    if step.weight is None:
        return
    if router in _ROUTERS and router != "Splitter":
        yield (
            "step.weight-ignored",
            f"weight on a {router} step: only Splitter uses weights; KServe ignores it",
            ("weight",),
        )
    if router == "Splitter" and step.weight < 0:
        yield (
            "splitter.negative-weight",
            f"negative weight {step.weight}: KServe accepts it, but this step is never chosen and it "
            "shifts the traffic ranges of the steps after it",
            ("weight",),
        )


def _ignored_field_pitfalls(router: str | None, step: Step) -> Iterator[Pitfall]:
    if step.map_predictions_to_instances and router in _ROUTERS and router != "Sequence":
        yield (
            "step.map-predictions-ignored",
            f"mapPredictionsToInstances on a {router} step: only Sequence applies it; KServe ignores it",
            ("mapPredictionsToInstances",),
        )
    if step.is_hard and router in ("Switch", "Splitter"):
        yield (
            "step.dependency-ignored",
            f"dependency Hard on a {router} step: KServe only logs it; the chosen step's response is "
            "returned whatever its status",
            ("dependency",),
        )


# --------------------------------------------------------------------------------------------------
# Nodes


def node_pitfalls(node: Node) -> Iterator[Pitfall]:
    """The warnings about a node itself (its steps aside): legacy syntax or no steps at all."""
    if "routes" in node.extra:
        consequence = (
            "KServe uses only steps"
            if node.steps
            else "so this node has no steps in KServe; rename it to steps"
        )
        yield (
            "legacy.routes",
            'the legacy key "routes" (KServe v0.9 proposal) is not in the InferenceGraph schema: '
            f"KServe's API server drops it, {consequence}",
            ("routes",),
        )
    elif not node.steps and "steps" not in node.extra:
        message = empty_node_message(node)
        if message is not None:
            yield "graph.empty-node", message, ()


def ensemble_collisions(node: Node) -> Iterator[tuple[int, str]]:
    """The steps of an Ensemble that write a key an earlier step wrote (an unnamed step's key is its
    index): (the step's index, the message)."""
    keys: dict[str, Step] = {}
    for step in node.steps:
        other = keys.get(step.key)
        if other is not None and not (other.name and step.name):
            yield (
                step.index,
                f"step {other.index} ({_step_kind(other)}) and step {step.index} ({_step_kind(step)}) "
                f'both write the key "{step.key}" of the Ensemble output (an unnamed step\'s key is '
                "its index): KServe keeps only the later one",
            )
        keys[step.key] = step


def _step_kind(step: Step) -> str:
    return f'named "{step.name}"' if step.name else "unnamed"


# --------------------------------------------------------------------------------------------------
# Graph helpers


def _edges(manifest: Manifest, name: str) -> Iterator[Step]:
    node = manifest.spec.nodes.get(name)
    if node is None:
        return
    for step in node.steps:
        if step.node_name and step.node_name in manifest.spec.nodes:
            yield step


def reachable(manifest: Manifest) -> set[str]:
    seen = {ROOT_NODE}
    todo = [ROOT_NODE]
    while todo:
        for step in _edges(manifest, todo.pop()):
            target = step.node_name or ""
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def cycles(manifest: Manifest) -> list[tuple[list[str], str, Step]]:
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


def empty_node_message(node: Node) -> str | None:
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
                    f"condition {show(condition)} is JSONPath-style, not GJSON: GJSON reads {{…}} as a "
                    "multipath, "
                    "which always yields an object that exists, so KServe treats it as always true",
                )
            )
        else:
            problems.append(
                (
                    "condition.always-true",
                    f"condition {show(condition)} is a GJSON multipath ({{…}}): it always yields an object, "
                    "which exists, so KServe treats it as always true",
                )
            )
    elif text.startswith("[") and text.endswith("]"):
        problems.append(
            (
                "condition.always-true",
                f"condition {show(condition)} is a GJSON multipath ([…]): it always yields an array "
                "(possibly "
                "empty), which exists, so KServe treats it as always true",
            )
        )
    elif text.endswith(")#"):
        problems.append(
            (
                "condition.always-true",
                f"condition {show(condition)} ends with a #(…)# query, which yields an array of all matches "
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
                f"condition {show(condition)} has unbalanced brackets or quotes: GJSON will not read it as "
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
