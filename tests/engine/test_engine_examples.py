"""KServe's own router tests (docs/router-semantics.md, "How exactness is checked") as example graphs on real HTTP servers.

Each ``examples/*.yaml`` is one scenario; this single parametrised test runs it against a loopback
step server (real sockets, keep-alive, the production client from ``make_client``) and checks the
status, the parsed body and which services were or were not called. A scenario runs as every
KServe release whose own router tests hold it (its ``releases``; master when it names none).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from graphkit import manifest
from stepserver import Dynamic, Recorded, Reply, StepServer

from execution.engine import EngineConfig, UrlGuard, run_graph_sync
from graphs.language.releases import DEFAULT_RELEASE, get_release

EXAMPLES = sorted((Path(__file__).parent / "examples").glob("*.yaml"))
RUNS = [
    (path, release)
    for path in EXAMPLES
    for release in yaml.safe_load(path.read_text()).get("releases") or [DEFAULT_RELEASE.name]
]


def _path(key: str) -> str:
    return key if key.startswith("/") else f"/v1/models/{key}:predict"


def _behaviour(spec: dict[str, Any]) -> Dynamic:
    reply = Reply(status=spec.get("status", 200), json=spec.get("json"), delay=spec.get("delay", 0.0))
    required = spec.get("require_key")
    echoed = spec.get("echo_headers", [])

    def answer(rec: Recorded) -> Reply:
        if required is not None and required not in json.loads(rec.body or b"{}"):
            return Reply(status=400, json={"detail": f"request lacks {required!r}"})
        if not echoed:
            return reply
        body = dict(reply.json)
        for name in echoed:
            values = rec.header(name)
            if values:
                body[name] = values[0]
        return Reply(status=reply.status, json=body)

    return Dynamic(answer)


@pytest.mark.parametrize(("path", "release"), RUNS, ids=[f"{p.stem}@{r}" for p, r in RUNS])
def test_kserve_scenario(path: Path, release: str, server: StepServer) -> None:
    text = path.read_text().replace("${SERVER}", server.url("").rstrip("/"))
    case = yaml.safe_load(text)
    for key, spec in (case.get("services") or {}).items():
        server.route(_path(key), _behaviour(spec))
    graph = manifest(case["manifest"]["spec"]["nodes"])
    config = EngineConfig(
        url_template=server.url("/v1/models/{name}:predict"),
        propagate_headers=tuple(case.get("propagate") or ()),
        guard=UrlGuard(allow_loopback=True),
        step_timeout=10,
        release=get_release(release),
    )
    result = run_graph_sync(
        graph,
        json.dumps(case["request"]).encode(),
        case.get("headers") or {},
        config=config,
        rng=random.Random(case.get("seed", 0)),
    )
    expect = case["expect"]
    assert result.status == expect["status"], result.body
    assert json.loads(result.body) == expect["body"]
    assert result.content_type == "application/json"
    called = {r.path for r in server.received()}
    for key in expect.get("called") or []:
        assert _path(key) in called, f"{key} was not called"
    for key in expect.get("not_called") or []:
        assert _path(key) not in called, f"{key} was called"
    for key, body in (expect.get("requests") or {}).items():
        assert [r.json() for r in server.received(_path(key))] == [body]
    assert all(r.method == "POST" for r in server.received())


def test_every_example_is_collected() -> None:
    """Guard against a silently empty folder: 10 router unit tests (plus the older releases'
    variant of one) and 13 e2e scenarios; every release runs each of its router tests in here."""
    assert len(EXAMPLES) == 24
    per_release = {r: sum(1 for p, rr in RUNS if rr == r and p.stem.startswith("unit")) for _, r in RUNS}
    # KServe's own count of router tests per release (oracle README) that are routing scenarios:
    # TestServerTimeout (v0.16 on) and master's further tests are covered elsewhere.
    assert per_release == {
        "v0.11.2": 6, "v0.12.1": 9, "v0.13.1": 9, "v0.14.1": 9, "v0.15.2": 10, "v0.16.0": 10, "master": 10,
    }  # fmt: skip
