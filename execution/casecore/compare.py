"""Regression comparison of two runs of the same request (typically version A and version B of a
graph): for the final answer and for *every step*, what changed: status, outcome, route taken,
latency, and a structural JSON diff of each step's request and response.

Steps are matched by a label path built from the trace (``root/pick>pets/cat``: node and step
names, indices where a step has no name), not by position, so inserting a step elsewhere does not
shift every comparison after it. Pure: it reads two :class:`~.evaluate.Observed` runs.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from execution.engine import is_valid_json

from .evaluate import Observed
from .jsondiff import DiffEntry, json_diff

__all__ = ["RouteChange", "RunComparison", "StepComparison", "compare_runs"]

# Labels longer than this (characters) are replaced by a digest: a deep loop must not make them
# grow with its depth (each label would hold the whole path: quadratic in all).
_MAX_LABEL: Final = 512


@dataclass(frozen=True, slots=True)
class StepComparison:
    """One step seen in either run. ``a``/``b`` hold ``status``, ``outcome`` and ``duration_ms``
    (None when the step did not appear in that run); ``changed`` names what differs, latency
    aside (it always differs a little; read ``a``/``b``)."""

    label: str
    node: str | None
    a: Mapping[str, Any] | None
    b: Mapping[str, Any] | None
    changed: tuple[str, ...]
    request_diff: tuple[DiffEntry, ...] = ()
    response_diff: tuple[DiffEntry, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "node": self.node,
            "a": dict(self.a) if self.a is not None else None,
            "b": dict(self.b) if self.b is not None else None,
            "changed": list(self.changed),
            "request_diff": [d.as_dict() for d in self.request_diff],
            "response_diff": [d.as_dict() for d in self.response_diff],
        }


@dataclass(frozen=True, slots=True)
class RouteChange:
    """A Switch or Splitter node (by label) that routed differently: the step labels taken."""

    node: str
    a: tuple[str | None, ...]
    b: tuple[str | None, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"node": self.node, "a": list(self.a), "b": list(self.b)}


@dataclass(frozen=True, slots=True)
class RunComparison:
    """What differs between run ``a`` and run ``b``; ``same`` when nothing but latency does."""

    status: tuple[int, int]
    duration_ms: tuple[float | None, float | None]
    body_diff: tuple[DiffEntry, ...]
    routes: tuple[RouteChange, ...]
    steps: tuple[StepComparison, ...] = field(default=())

    @property
    def same(self) -> bool:
        return (
            self.status[0] == self.status[1]
            and not self.body_diff
            and not self.routes
            and all(not s.changed for s in self.steps)
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "same": self.same,
            "status": list(self.status),
            "duration_ms": list(self.duration_ms),
            "body_diff": [d.as_dict() for d in self.body_diff],
            "routes": [r.as_dict() for r in self.routes],
            "steps": [s.as_dict() for s in self.steps],
        }


def _value(body: bytes) -> Any:
    return json.loads(body) if is_valid_json(body) else body.decode("utf-8", errors="replace")


def _view_value(view: Mapping[str, Any] | None) -> Any:
    """A trace body view as JSON data (or text); None when absent."""
    if not view:
        return None
    raw = base64.b64decode(view["body"]) if view.get("encoding") == "base64" else str(view["body"]).encode()
    value = _value(raw)
    if view.get("truncated"):
        return {
            "truncated": True,
            "size": view.get("size"),
            "head": raw[:200].decode("utf-8", errors="replace"),
        }
    return value


def _labels(events: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """call_id -> label path (``root/pick>pets/cat``): the steps that led to a call, each named
    (its index when it has no name), with the nodes they called.

    Built from the parent links (a node invocation's ``parent_call_id`` is the step that called
    it), so it does not depend on the form of the call ids, and the same position in two runs gets
    the same label. A label past :data:`_MAX_LABEL` characters (a deep loop) is replaced by a
    digest of itself, so that labels stay bounded while still telling positions apart.
    """
    nodes: dict[str, str] = {}
    steps: dict[str, str] = {}
    for event in events:
        kind, call_id = event["type"], event["call_id"]
        if kind == "node.started" and call_id not in nodes:
            parent = event.get("parent_call_id")
            nodes[call_id] = (
                call_id if parent is None else f"{_bounded(steps.get(parent, parent))}>{event['node']}"
            )
        elif kind in ("step.started", "step.skipped") and call_id not in steps:
            node_call, _, index = call_id.rpartition("/")
            steps[call_id] = f"{nodes.get(node_call, node_call)}/{event.get('step_name') or index}"
    return {event["call_id"]: steps.get(event["call_id"]) or nodes.get(event["call_id"]) or event["call_id"]
            for event in events}  # fmt: skip


def _bounded(label: str) -> str:
    if len(label) <= _MAX_LABEL:
        return label
    return "…" + hashlib.blake2b(label.encode(), digest_size=8).hexdigest()


@dataclass
class _Step:
    node: str | None
    status: int | None = None
    outcome: str = "not-reached"
    duration_ms: float | None = None
    request: Any = None
    response: Any = None


def _steps(observed: Observed) -> tuple[dict[str, _Step], dict[str, list[str | None]]]:
    labels = _labels(observed.events)
    steps: dict[str, _Step] = {}
    routes: dict[str, list[str | None]] = {}
    for event in observed.events:
        kind, data = event["type"], event.get("data") or {}
        key = labels.get(event["call_id"], event["call_id"])
        if kind == "step.started":
            steps.setdefault(key, _Step(event.get("node"))).request = _view_value(data.get("request"))
        elif kind == "step.finished":
            step = steps.setdefault(key, _Step(event.get("node")))
            step.status, step.outcome = data.get("status"), data.get("outcome") or "ok"
            step.duration_ms = data.get("duration_ms")
            step.response = _view_value(data.get("response"))
        elif kind == "step.skipped":
            steps.setdefault(key, _Step(event.get("node"))).outcome = "skipped"
        elif kind == "route.decided" and data.get("router") in ("Switch", "Splitter"):
            chosen = data.get("chosen")
            taken = (
                None if chosen is None else _chosen_label(observed.events, event["call_id"], chosen, labels)
            )
            routes.setdefault(key, []).append(taken)
    return steps, routes


def _chosen_label(
    events: Sequence[Mapping[str, Any]], node_call: str, chosen: int, labels: Mapping[str, str]
) -> str:
    call = f"{node_call}/{chosen}"
    return labels.get(call, call).rsplit("/", 1)[-1]


def compare_runs(a: Observed, b: Observed) -> RunComparison:
    """Compare run ``a`` with run ``b`` step by step (see the module docstring). Pure."""
    steps_a, routes_a = _steps(a)
    steps_b, routes_b = _steps(b)
    order = list(dict.fromkeys([*steps_a, *steps_b]))
    compared: list[StepComparison] = []
    for label in order:
        x, y = steps_a.get(label), steps_b.get(label)
        side_a = (
            None if x is None else {"status": x.status, "outcome": x.outcome, "duration_ms": x.duration_ms}
        )
        side_b = (
            None if y is None else {"status": y.status, "outcome": y.outcome, "duration_ms": y.duration_ms}
        )
        if x is None or y is None:
            present = x if x is not None else y
            assert present is not None  # the label came from one of the two runs
            compared.append(StepComparison(label, present.node, side_a, side_b, ("presence",)))
            continue
        request_diff = tuple(json_diff(x.request, y.request))
        response_diff = tuple(json_diff(x.response, y.response))
        changed = tuple(
            name
            for name, differs in (
                ("status", x.status != y.status),
                ("outcome", x.outcome != y.outcome),
                ("request", bool(request_diff)),
                ("response", bool(response_diff)),
            )
            if differs
        )
        compared.append(StepComparison(label, x.node, side_a, side_b, changed, request_diff, response_diff))
    routes = tuple(
        RouteChange(node, tuple(routes_a.get(node, ())), tuple(routes_b.get(node, ())))
        for node in dict.fromkeys([*routes_a, *routes_b])
        if routes_a.get(node) != routes_b.get(node)
    )
    return RunComparison(
        status=(a.status, b.status),
        duration_ms=(a.duration_ms, b.duration_ms),
        body_diff=tuple(json_diff(_value(a.body), _value(b.body))),
        routes=routes,
        steps=tuple(compared),
    )
