"""Seeded generation of graphs and requests for the differential test.

Everything here is a pure function of a ``random.Random``: the same seed gives the same cases.
Step URLs are written with two placeholders, ``@STEP@`` (the behaviour server) and ``@REFUSED@``
(a port that refuses connections), filled in by :func:`materialize` once the servers run; a case
written to disk therefore replays on any machine.

Two sets:

- **normal** cases: graphs on which KServe's router answers every request. They mix the four router
  types nested through ``nodeName``, ``serviceUrl`` and ``serviceName`` steps, step names (missing,
  unique, colliding with indices such as ``"1"``, duplicated), Soft/Hard dependencies, ``data``,
  conditions from :data:`CONDITIONS`, ``mapPredictionsToInstances``, Splitter weight vectors from
  :data:`WEIGHTS`, missing ``nodeName`` targets, zero-step nodes below the root, and cycles that
  the request leaves (a condition on a countdown answer, or a route the request never takes).
- **deviation** cases: graphs on which KServe crashes or drops the connection (infinite recursion,
  a zero-step Sequence root, a status 0 reaching the client); the engine must answer 500 with a
  cause that names the problem (docs/router-semantics.md, "Deliberate deviations").

Ensemble timing: Go's router collects Ensemble results in index order while *any* step's error
can arrive first, so the answer depends on arrival order when two steps fail. Generated Ensembles
make arrival order equal index order: only step 0 may be a nested node or an instant failure
(refused port, malformed URL); every later step is a behaviour whose delay is at least
:data:`GAP_MS` after the latest possible answer of the step before it.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "CONDITIONS",
    "GAP_MS",
    "PROPAGATE_PATTERNS",
    "REQUEST_BODIES",
    "WEIGHTS",
    "Case",
    "Request",
    "deviation_cases",
    "materialize",
    "normal_cases",
    "oracle_spec",
]

from tests.engine.differential.pools import (
    _BEHAVIOURS,
    _CLIENT_HEADERS,
    _INSTANT,
    _NODE_NAMES,
    _ROUTERS,
    CALL_MS,
    CONDITIONS,
    GAP_MS,
    PROPAGATE_PATTERNS,
    REFUSED,
    REQUEST_BODIES,
    STEP,
    WEIGHTS,
)

Kind = Literal["normal", "deviation"]


@dataclass(frozen=True, slots=True)
class Request:
    """One client request: method, raw body and header lines (repeated names keep every value)."""

    body: bytes
    headers: tuple[tuple[str, str], ...] = ()
    method: str = "POST"

    def to_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "headers": [list(h) for h in self.headers],
            "body_hex": self.body.hex(),
            "body": self.body.decode("utf-8", "replace"),
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Request:
        return cls(bytes.fromhex(doc["body_hex"]), tuple((k, v) for k, v in doc["headers"]), doc["method"])


@dataclass(frozen=True, slots=True)
class Case:
    """A graph (``spec`` with placeholders, ``serviceName``s unresolved) and the requests to send.

    ``services`` maps each ``serviceName`` to its URL, as KServe's controller resolves it.
    ``propagate`` is the comma-joined ``PROPAGATE_HEADERS`` for both routers.
    ``random`` is true when the graph holds a Splitter: answers are then compared as sets.
    ``timed`` is true when it holds an Ensemble of two or more steps: its answer then rests on the
    order in which the steps' answers arrive (see the module docstring), which load can upset.
    """

    case_id: str
    kind: Kind
    spec: dict[str, Any]
    services: dict[str, str]
    propagate: str
    requests: tuple[Request, ...]
    note: str = ""
    random: bool = field(init=False)
    timed: bool = field(init=False)

    def __post_init__(self) -> None:
        nodes = self.spec["nodes"]
        reached: set[str] = set()
        todo = ["root"]
        while todo:
            name = todo.pop()
            if name in reached or name not in nodes:
                continue
            reached.add(name)
            todo += [s["nodeName"] for s in nodes[name].get("steps", []) if "nodeName" in s]
        routers = [(nodes[n].get("routerType"), len(nodes[n].get("steps", []))) for n in reached]
        object.__setattr__(self, "random", any(router == "Splitter" for router, _ in routers))
        object.__setattr__(self, "timed", any(router == "Ensemble" and n > 1 for router, n in routers))

    def to_json(self) -> dict[str, Any]:
        return {
            "case_id": self.case_id,
            "kind": self.kind,
            "note": self.note,
            "propagate": self.propagate,
            "services": self.services,
            "spec": self.spec,
            "requests": [r.to_json() for r in self.requests],
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Case:
        return cls(
            doc["case_id"],
            doc["kind"],
            doc["spec"],
            doc["services"],
            doc["propagate"],
            tuple(Request.from_json(r) for r in doc["requests"]),
            doc.get("note", ""),
        )


def materialize(value: Any, step_host: str, refused_host: str) -> Any:
    """``value`` (JSON) with the placeholders replaced by the running servers' ``ip:port``."""
    text = json.dumps(value).replace(STEP, step_host).replace(REFUSED, refused_host)
    return json.loads(text)


def oracle_spec(case: Case) -> dict[str, Any]:
    """The spec KServe's controller hands its router: every ``serviceName`` turned into a ``serviceUrl``."""
    spec = json.loads(json.dumps(case.spec))
    for node in spec["nodes"].values():
        for step in node.get("steps", []):
            name = step.pop("serviceName", None)
            if name is not None:
                step["serviceUrl"] = case.services[name]
    return {**spec, "resources": {}}


# --- normal graphs ---------------------------------------------------------------------------------


class _Builder:
    """Builds one graph: nodes in creation order; a node may only call nodes created after it."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.nodes: dict[str, dict[str, Any]] = {}
        self.services: dict[str, str] = {}
        self.splitters = 0

    def url(self, behaviour: str, delay_ms: int = 0) -> str:
        return f"http://{STEP}/b/{behaviour}" + (f"?d={delay_ms}" if delay_ms else "")

    def behaviour(self) -> str:
        names = [name for name, _ in _BEHAVIOURS]
        weights = [weight for _, weight in _BEHAVIOURS]
        return self.rng.choices(names, weights)[0]

    def service_target(self, behaviour: str, delay_ms: int = 0) -> dict[str, Any]:
        url = self.url(behaviour, delay_ms)
        if self.rng.random() < 0.3:
            name = f"svc-{behaviour}" + (f"-{delay_ms}" if delay_ms else "")
            self.services[name] = url
            return {"serviceName": name}
        return {"serviceUrl": url}

    def decorate(self, step: dict[str, Any], router: str, index: int, names: list[str]) -> None:
        """Names, dependency, data, conditions and mapping flags, drawn per router type."""
        rng = self.rng
        roll = rng.random()
        if roll < 0.35:
            name = f"s{index}"
        elif roll < 0.5:
            name = str(rng.randrange(4))  # may collide with an unnamed step's index key
        elif roll < 0.55 and names:
            name = rng.choice(names)  # duplicate (the webhook refuses it; the router does not care)
        else:
            name = None
        if name is not None:
            step["name"] = name
            names.append(name)
        dep = rng.random()
        if dep < 0.3:
            step["dependency"] = "Hard"
        elif dep < 0.45:
            step["dependency"] = "Soft"
        data = rng.random()
        if data < 0.35:
            step["data"] = "$response"
        elif data < 0.5:
            step["data"] = "$request"
        elif data < 0.53:
            step["data"] = ""
        cond_share = {"Switch": 0.92, "Sequence": 0.25}.get(router, 0.08)
        if rng.random() < cond_share:
            step["condition"] = rng.choice(CONDITIONS)
        if rng.random() < (0.2 if router == "Sequence" else 0.03):
            step["mapPredictionsToInstances"] = True

    def plain_step(self, later: list[str], *, allow_instant: bool, allow_node: bool) -> dict[str, Any]:
        rng = self.rng
        roll = rng.random()
        if allow_node and later and roll < 0.35:
            return {"nodeName": rng.choice(later)}
        if allow_node and roll < 0.38:
            return {"nodeName": "no-such-node"}
        if allow_instant and roll < 0.43:
            return {"serviceUrl": rng.choice(_INSTANT)}
        return self.service_target(self.behaviour())

    def node(self, name: str, later: list[str], *, root: bool) -> None:
        rng = self.rng
        router = rng.choices(_ROUTERS, (4, 3, 3, 1))[0]
        if router == "Splitter" and self.splitters >= 2:
            router = "Sequence"
        if router == "Splitter":
            self.splitters += 1
        if not root and rng.random() < 0.06:
            self.nodes[name] = {"routerType": router, "steps": []}
            return
        if router == "Splitter":
            weights = rng.choice(WEIGHTS)
            count = len(weights)
        else:
            count = rng.choice((1, 1, 2, 2, 2, 3, 3, 4))
        names: list[str] = []
        steps: list[dict[str, Any]] = []
        for i in range(count):
            step: dict[str, Any]
            if router == "Ensemble" and i > 0:
                step = {"_behaviour": self.behaviour()}  # delay and target set by time_ensembles
            else:
                step = self.plain_step(later, allow_instant=True, allow_node=True)
            self.decorate(step, router, i, names)
            if router == "Splitter":
                step["weight"] = weights[i]
            steps.append(step)
        self.nodes[name] = {"routerType": router, "steps": steps}

    def latency(self, name: str, seen: tuple[str, ...] = ()) -> int:
        """The latest (ms) a node can answer, by the generator's timing model."""
        node = self.nodes.get(name)
        if node is None or name in seen:
            return 0
        times = [self.step_latency(s, (*seen, name)) for s in node["steps"]]
        if not times:
            return 0
        return sum(times) if node["routerType"] == "Sequence" else max(times)

    def step_latency(self, step: dict[str, Any], seen: tuple[str, ...]) -> int:
        if "nodeName" in step:
            return self.latency(step["nodeName"], seen)
        url = step.get("serviceUrl") or self.services.get(step.get("serviceName", ""), "")
        delay = int(url.split("?d=", 1)[1]) if "?d=" in url else 0
        hops = 2 if "/b/redirect" in url else 1
        return delay + CALL_MS * hops

    def time_ensembles(self) -> None:
        """Give each Ensemble step after the first a delay that orders its answer after the last."""
        for name in reversed(list(self.nodes)):  # callees first: their latencies are final
            node = self.nodes[name]
            if node["routerType"] != "Ensemble":
                continue
            previous = 0
            for i, step in enumerate(node["steps"]):
                behaviour = step.pop("_behaviour", None)
                if i == 0 or behaviour is None:
                    previous = self.step_latency(step, (name,))
                    continue
                delay = previous + GAP_MS
                step.update(self.service_target(behaviour, delay))
                previous = delay + CALL_MS * (2 if behaviour.startswith("redirect") else 1)

    def spec(self) -> dict[str, Any]:
        # Steps keep KServe's key order: name, target, then the rest (purely cosmetic).
        return {"nodes": self.nodes}


def _cycle_template(b: _Builder, entry: str) -> list[str]:
    """Add a cycle that every request leaves; returns the node names added (``entry`` first)."""
    rng = b.rng
    kind = rng.randrange(4)
    if kind == 0:
        # A Sequence that re-enters itself while the countdown answer still has "loop".
        b.nodes[entry] = {
            "routerType": "Sequence",
            "steps": [
                {"name": "count", **b.service_target("countdown")},
                {"name": "again", "nodeName": entry, "condition": "loop", "data": "$response"},
            ],
        }
        return [entry]
    if kind == 1:
        # A Switch and a Sequence calling each other until the countdown runs out.
        body = f"{entry}-body"
        fallback = rng.choice(("@this", "done", "a", "[@this].#(done==true)"))
        b.nodes[entry] = {
            "routerType": "Switch",
            "steps": [
                {"condition": "loop", "nodeName": body},
                {"condition": fallback, **b.service_target(rng.choice(("echo", "obj", "headers")))},
            ],
        }
        b.nodes[body] = {
            "routerType": "Sequence",
            "steps": [
                b.service_target("countdown"),
                {"nodeName": entry, "data": "$response", "dependency": rng.choice(("Hard", "Soft"))},
            ],
        }
        return [entry, body]
    if kind == 2:
        # A Switch whose first route back to itself never matches.
        b.nodes[entry] = {
            "routerType": "Switch",
            "steps": [
                {"condition": "never_present", "nodeName": entry},
                {"condition": "@this", **b.service_target(b.behaviour())},
            ],
        }
        return [entry]
    # A Splitter whose route back to itself has weight 0.
    b.splitters += 1
    b.nodes[entry] = {
        "routerType": "Splitter",
        "steps": [
            {"nodeName": entry, "weight": 0},
            {**b.service_target(b.behaviour()), "weight": 100},
        ],
    }
    return [entry]


def _graph(rng: random.Random) -> tuple[dict[str, Any], dict[str, str], str]:
    b = _Builder(rng)
    count = rng.choice((1, 1, 2, 2, 3, 3, 4, 5))
    names = ["root", *rng.sample(_NODE_NAMES, count - 1)]
    note = "dag"
    cycle_roll = rng.random()
    if cycle_roll < 0.08:
        _cycle_template(b, "root")
        note = "cycle at root"
        return b.spec(), b.services, note
    for i, name in enumerate(names):
        b.node(name, names[i + 1 :], root=(i == 0))
    if cycle_roll < 0.2:
        loop = "loop"
        _cycle_template(b, loop)
        # Reach the cycle from the root, never from an Ensemble (its timing model has no loops).
        root = b.nodes["root"]
        if root["routerType"] != "Ensemble":
            root["steps"].insert(rng.randrange(len(root["steps"]) + 1), {"nodeName": loop})
            if root["routerType"] == "Switch":
                root["steps"][0].setdefault("condition", "@this")
            if root["routerType"] == "Splitter":
                _rebalance(root["steps"], rng)
            note = "cycle below root"
    b.time_ensembles()
    return b.spec(), b.services, note


def _rebalance(steps: list[dict[str, Any]], rng: random.Random) -> None:
    weights = rng.choice([w for w in WEIGHTS if len(w) == len(steps)] or [(100,) + (0,) * (len(steps) - 1)])
    for step, weight in zip(steps, weights, strict=True):
        step["weight"] = weight


def _requests(rng: random.Random, count: int) -> tuple[Request, ...]:
    out: list[Request] = []
    for _ in range(count):
        body = rng.choice(REQUEST_BODIES)
        headers = tuple(h for h in _CLIENT_HEADERS if rng.random() < 0.3)
        # At most one Content-Type line: two would make the client's own choice ambiguous.
        types = [h for h in headers if h[0] == "Content-Type"]
        if len(types) > 1:
            headers = tuple(h for h in headers if h != types[1])
        method = rng.choices(("POST", "PUT", "GET"), (90, 5, 5))[0]
        out.append(Request(body, headers, method))
    return tuple(out)


def normal_cases(seed: int, requests: int, per_graph: int = 5) -> list[Case]:
    """Graphs and requests of the normal set: about ``requests`` requests, ``per_graph`` per graph."""
    rng = random.Random(seed)
    cases: list[Case] = []
    total = 0
    while total < requests:
        spec, services, note = _graph(rng)
        count = min(per_graph, requests - total)
        case = Case(
            f"n{len(cases):04d}",
            "normal",
            spec,
            services,
            rng.choice(PROPAGATE_PATTERNS),
            _requests(rng, count),
            note,
        )
        cases.append(case)
        total += count
    return cases


# --- deviation graphs -------------------------------------------------------------------------------


def _seq(*steps: dict[str, Any]) -> dict[str, Any]:
    return {"routerType": "Sequence", "steps": list(steps)}


def deviation_cases(seed: int) -> list[Case]:
    """Graphs on which KServe's router crashes or drops the connection for some requests.

    Each gets valid JSON requests (which trigger the problem) and invalid ones (which, for a Switch
    at the top of the loop, do not: those must match the oracle as usual).
    """
    rng = random.Random(seed)
    obj = {"serviceUrl": f"http://{STEP}/b/obj"}
    graphs: list[tuple[str, dict[str, Any]]] = [
        (
            "switch self-loop",
            {"root": {"routerType": "Switch", "steps": [{"condition": "@this", "nodeName": "root"}]}},
        ),
        (
            "splitter self-loop",
            {"root": {"routerType": "Splitter", "steps": [{"weight": 100, "nodeName": "root"}]}},
        ),
        ("sequence self-loop", {"root": _seq(obj, {"nodeName": "root", "data": "$response"})}),
        (
            "two-node cycle",
            {
                "root": _seq({"nodeName": "a"}),
                "a": {"routerType": "Switch", "steps": [{"condition": "a", "nodeName": "b"}]},
                "b": _seq({"nodeName": "a"}),
            },
        ),
        (
            "countdown that never leaves",
            {
                "root": _seq(
                    {"serviceUrl": f"http://{STEP}/b/echo"},
                    {"nodeName": "root", "condition": "@this", "data": "$response"},
                )
            },
        ),
        ("zero-step root Sequence", {"root": _seq()}),
        ("zero-step Sequence under a Sequence", {"root": _seq({"nodeName": "empty"}), "empty": _seq()}),
        (
            "zero-step Sequence as a Hard step",
            {"root": _seq(obj, {"nodeName": "empty", "dependency": "Hard"}), "empty": _seq()},
        ),
        (
            "zero-step Sequence under a Switch",
            {
                "root": {"routerType": "Switch", "steps": [{"condition": "@this", "nodeName": "empty"}]},
                "empty": _seq(),
            },
        ),
        (
            "zero-step Sequence under a Splitter",
            {
                "root": {"routerType": "Splitter", "steps": [{"weight": 100, "nodeName": "empty"}]},
                "empty": _seq(),
            },
        ),
    ]
    bodies = (b'{"a":1}', b'{"instances":[{"a":5}]}', b"not json", b"")
    cases: list[Case] = []
    for i, (note, nodes) in enumerate(graphs):
        reqs = tuple(
            Request(body, tuple(h for h in _CLIENT_HEADERS[:2] if rng.random() < 0.5)) for body in bodies
        )
        cases.append(Case(f"d{i:02d}", "deviation", {"nodes": nodes}, {}, "", reqs, note))
    return cases
