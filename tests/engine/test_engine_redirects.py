"""Redirects as Go's ``http.Client`` follows them inside KServe's ``callService``.

``tests/engine/data/oracle_redirects.json`` holds what ``../shared/oracle/kserve-router`` answered
for each case of ``oracle_vectors.REDIRECT_CASES`` (status, body, and every request each step
server received); the engine must produce the same. The URL guard's part (every hop checked) is
the studio's own and is tested here without the oracle.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from graphkit import manifest, seq
from oracle_vectors import REDIRECT_CASES, ask_redirects, redirect_answer, spec_headers, start_url
from oraclekit import require_oracle
from stepserver import Canary, Reply, StepServer

from execution.engine import EngineConfig, GraphResult, UrlGuard, run_graph_sync
from execution.engine.headers import split_patterns
from execution.engine.transport.outbound import _referer, is_domain_or_subdomain

VECTORS: dict[str, Any] = json.loads(
    (Path(__file__).resolve().parent / "data" / "oracle_redirects.json").read_text()
)


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[StepServer, StepServer]]:
    with StepServer() as a, StepServer() as b:
        yield a, b


def run_step(url: str, *, guard: UrlGuard, propagate: str | None = None, body: bytes = b"{}",
             headers: list[tuple[str, str]] | None = None) -> GraphResult:  # fmt: skip
    config = EngineConfig(
        propagate_headers=split_patterns(propagate) if propagate is not None else (),
        guard=guard,
        step_timeout=10,
    )
    return run_graph_sync(manifest({"root": seq({"serviceUrl": url})}), body, headers or [], config=config)


@pytest.mark.parametrize("case", sorted(REDIRECT_CASES))
def test_redirects_are_followed_as_kserves_router_follows_them(
    case: str, servers: tuple[StepServer, StepServer]
) -> None:
    """Status, body, and each server's requests (method, path, header lines, body) as recorded."""
    a, b = servers
    spec = REDIRECT_CASES[case]

    def call() -> tuple[int, bytes]:
        result = run_step(
            start_url(spec, a),
            guard=UrlGuard(allow_loopback=True),
            propagate=spec.get("propagate"),
            body=spec.get("body", '{"x":1}').encode(),
            headers=spec_headers(spec),
        )
        return result.status, result.body

    assert redirect_answer(spec, a, b, {"A": a.port, "B": b.port}, call) == VECTORS[case]


def test_the_recorded_redirect_answers_are_what_the_oracle_answers_today() -> None:
    require_oracle()
    assert ask_redirects() == VECTORS


def test_the_hops_are_in_the_step_trace(servers: tuple[StepServer, StepServer]) -> None:
    a, _ = servers
    a.route("/one", Reply(status=307, body=b"", headers={"Location": "/two"}))
    a.route("/two", Reply(status=302, body=b"", headers={"Location": "/end"}))
    a.route("/end", Reply(json={"ok": True}))
    result = run_step(a.url("/one"), guard=UrlGuard(allow_loopback=True))
    assert (result.status, json.loads(result.body)) == (200, {"ok": True})
    finished = next(e for e in result.trace if e.type == "step.finished")
    assert finished.data["redirects"] == [
        {
            "status": 307,
            "url": a.url("/one"),
            "location": "/two",
            "next_url": a.url("/two"),
            "next_method": "POST",
            "dropped_headers": [],
        },
        {
            "status": 302,
            "url": a.url("/two"),
            "location": "/end",
            "next_url": a.url("/end"),
            "next_method": "GET",
            "dropped_headers": [],
        },
    ]


@pytest.mark.parametrize(
    ("location", "reason"),
    [
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a link-local/metadata address"),
        ("http://127.0.0.1:{canary}/", "127.0.0.1 is a loopback address"),
        ("http://metadata.google.internal/", "metadata.google.internal is a cloud metadata host"),
    ],
)
def test_the_guard_checks_every_hop_and_names_the_redirect(
    location: str, reason: str, servers: tuple[StepServer, StepServer]
) -> None:
    """Hop 0 (a host the environment allows) passes; the forbidden hop is refused, not connected to."""
    a, _ = servers
    canary = Canary()
    try:
        target = location.format(canary=canary.port)
        a.route("/jump", Reply(status=302, body=b"", headers={"Location": target}))
        a.reset()
        url = f"http://localhost:{a.port}/jump"
        result = run_step(url, guard=UrlGuard(allow_hosts=("localhost",)))
        assert result.status == 500
        assert result.error == f'Post "{target}": blocked by URL guard: {reason} (redirect 1 from "{url}")'
        assert [r.path for r in a.received()] == ["/jump"]
        assert canary.accepted == 0
        finished = next(e for e in result.trace if e.type == "step.finished")
        assert [hop["next_url"] for hop in finished.data["redirects"]] == [target]
    finally:
        canary.close()


@pytest.mark.parametrize(
    ("sub", "parent", "expected"),
    [
        ("example.com:80", "example.com:80", True),
        ("api.example.com:80", "example.com:80", True),
        ("badexample.com:80", "example.com:80", False),
        ("example.com:8080", "example.com:80", False),
        ("example.com:80", "api.example.com:80", False),
    ],
)
def test_credentials_follow_only_to_the_same_host_port_or_a_subdomain(
    sub: str, parent: str, expected: bool
) -> None:
    """Go 1.19's isDomainOrSubdomain on canonical host:port addresses."""
    assert is_domain_or_subdomain(sub, parent) is expected


def test_the_first_of_several_locations_is_followed(servers: tuple[StepServer, StepServer]) -> None:
    """Go's ``Header.Get("Location")`` is the first value (httpx's ``get`` would join them)."""
    a, _ = servers

    a.route("/two", Reply(json={"at": "two"}))
    a.route("/three", Reply(json={"at": "three"}))
    a.route(
        "/start",
        Reply(status=302, body=b"", headers={"Location": "/two", "location": "/three"}),
    )
    result = run_step(a.url("/start"), guard=UrlGuard(allow_loopback=True))
    assert json.loads(result.body) == {"at": "two"}


@pytest.mark.parametrize(
    ("last", "new", "referer"),
    [
        ("http://a.test/x?q=1", "http://b.test/", "http://a.test/x?q=1"),
        ("https://a.test/x", "http://b.test/", None),  # no Referer from https to http
        ("https://a.test/x", "https://b.test/", "https://a.test/x"),
        ("http://user:pw@a.test/x", "http://a.test/y", "http://a.test/x"),  # user info never sent
    ],
)
def test_the_referer_of_a_redirect_is_gos(last: str, new: str, referer: str | None) -> None:
    """Go's ``refererForURL`` (the TLS cases cannot be asked of the loopback oracle)."""
    assert _referer(httpx.URL(last), httpx.URL(new)) == referer
