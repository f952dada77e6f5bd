"""The engine as each KServe release: what changed between releases, against each release's router.

``data/oracle_releases.json`` holds what every release's own router build answered to the probes
of ``release_probes.py`` (recorded with ``python -m tests.engine.release_probes``); the engine,
served as ``servegraph`` serves it with ``--kserve-version``, must answer the same, byte for byte,
except where the build closed the connection (it crashed): there the engine answers 500 with a
cause naming the crash. Where the builds are on this machine, the recording is checked to be
still what they answer.
"""

from __future__ import annotations

import itertools
import json
import random
import re
from typing import Any

import pytest
from release_probes import DATA, PROBES, ask, materialize, record, routes
from stepserver import StepServer

from execution.engine.server import GraphServer
from execution.management.cli import engine_config
from graphs.language import API_VERSION, KIND, manifest_from_document
from graphs.language.releases import (
    DEFAULT_RELEASE,
    RELEASES,
    UnknownRelease,
    get_release,
    release_names,
    releases_between,
)
from tests.engine.differential.harness import ORACLE_DIR, Reply, is_deviation_answer, oracle_binary

RECORDED: dict[str, Any] = json.loads(DATA.read_text())


@pytest.fixture(scope="module")
def steps() -> Any:
    with StepServer() as server:
        routes(server)
        yield server


def _engine_answers(release_name: str, probe: dict[str, Any], base: str) -> list[dict[str, Any]]:
    document = {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"name": "probe", "namespace": "default"},
        "spec": materialize(probe["spec"], base),
    }
    options = {"propagate_headers": probe.get("propagate") or None, "service": [], "url_template": None}
    config = engine_config(options, release=get_release(release_name))
    server = GraphServer(manifest_from_document(document), config, port=0, rng=random.Random(1))
    server.start()
    try:
        return [ask(server.port, request, base) for request in probe["requests"]]
    finally:
        server.stop()


CASES = [(release.name, name) for release in RELEASES for name in PROBES]


def test_every_release_and_probe_is_recorded() -> None:
    assert sorted(RECORDED) == sorted(r.name for r in RELEASES)
    assert all(sorted(answers) == sorted(PROBES) for answers in RECORDED.values())


@pytest.mark.parametrize(("release", "probe"), CASES, ids=[f"{p}@{r}" for r, p in CASES])
def test_the_engine_answers_as_the_release_s_router(release: str, probe: str, steps: StepServer) -> None:
    base = steps.url("").rstrip("/")
    got = _engine_answers(release, PROBES[probe], base)
    for expected, answer in zip(RECORDED[release][probe], got, strict=True):
        if expected["status"] is None:
            reply = Reply(answer["status"], answer["content_type"], answer["body"].encode())
            assert is_deviation_answer(reply), answer
            assert f"KServe {release} crashes here" in answer["body"]
        else:
            assert answer == expected


def test_the_recorded_answers_show_each_documented_change() -> None:
    """The recording is not vacuous: each probe's answers differ where the releases README says."""

    def differs(probe: str) -> list[str]:
        return [
            b.name
            for a, b in itertools.pairwise(RELEASES)
            if RECORDED[a.name][probe] != RECORDED[b.name][probe]
        ]

    assert differs("header-patterns") == ["v0.12.1"]
    assert differs("bad-url") == ["v0.12.1"]
    assert differs("gjson-tilde-and-dig") == ["v0.12.1"]
    assert differs("readyz") == ["v0.15.2"]
    assert differs("unmet-condition") == ["v0.15.2"]
    assert differs("map-predictions") == ["v0.16.0"]
    assert differs("service-client-timeout") == ["v0.16.0"]
    assert differs("splitter-no-route") == ["master"]


@pytest.mark.timeout(300)
def test_the_recording_is_what_the_builds_answer() -> None:
    missing = [r.name for r in RELEASES if not oracle_binary(r).exists()]
    if missing:
        pytest.skip(f"no KServe router build for {', '.join(missing)} under {ORACLE_DIR}")
    assert record() == RECORDED


# --- the draw ranges, with a source that always draws its highest value ---------------------------


class _Highest(random.Random):
    def randrange(self, start: int, stop: int | None = None, step: int = 1) -> int:  # type: ignore[override]
        return (start if stop is None else stop) - 1


@pytest.mark.parametrize(
    ("release", "outcome"),
    [
        ("v0.11.2", "first"),
        ("v0.12.1", "first"),
        ("v0.13.1", "crash"),
        ("v0.16.0", "crash"),
        ("master", "second"),
    ],
)
def test_the_splitter_draws_from_the_release_s_range(release: str, outcome: str, steps: StepServer) -> None:
    """Weights 99/1: 0..98 never reaches the second route; 0..100 can draw 100 (no route); 0..99
    reaches it."""
    from execution.engine import EngineConfig, UrlGuard, run_graph_sync
    from tests.engine.graphkit import manifest

    graph = manifest(
        {
            "root": {
                "routerType": "Splitter",
                "steps": [
                    {"serviceUrl": steps.url("/m1"), "weight": 99},
                    {"serviceUrl": steps.url("/m2"), "weight": 1},
                ],
            }
        }
    )
    config = EngineConfig(guard=UrlGuard(allow_loopback=True), release=get_release(release))
    result = run_graph_sync(graph, b"{}", {}, config=config, rng=_Highest())
    if outcome == "crash":
        assert result.status == 500
        assert result.error == (
            f"no route was selected by the splitter (draw 100) (KServe {release} crashes here and closes"
            " the connection)"
        )
    else:
        assert json.loads(result.body) == {"route": "m1" if outcome == "first" else "m2"}


# --- the release model ------------------------------------------------------------------------------


def test_releases_resolve_by_tag_alias_or_bare_number() -> None:
    assert get_release(None) is DEFAULT_RELEASE and DEFAULT_RELEASE.name == "master"
    assert get_release("v0.17.1").name == "v0.16.0"
    assert get_release("0.19.0").name == "master"
    assert get_release("v0.14.0").name == "v0.14.1"
    assert "v0.18.1" in release_names()
    with pytest.raises(
        UnknownRelease, match=re.escape("unknown KServe release 'v0.10.0': choose one of v0.11.2")
    ):
        get_release("v0.10.0")


def test_releases_between_is_the_upgrade_path() -> None:
    path = releases_between(get_release("v0.12.1"), get_release("v0.15.2"))
    assert [r.name for r in path] == ["v0.13.1", "v0.14.1", "v0.15.2"]


@pytest.mark.parametrize(("release", "cycle"), [("v0.11.2", True), ("v0.13.1", False), ("master", True)])
def test_a_splitter_that_always_picks_the_loop_is_a_cycle(release: str, cycle: bool) -> None:
    """Weight 100 on a step back to itself: every draw of 0..98 and 0..99 takes it (KServe recurses
    until it crashes), so the engine names the cycle at once; with 0..100 a draw of 100 leaves it
    (KServe crashes there), so the loop runs on until one does."""
    from execution.engine import EngineConfig, run_graph_sync
    from tests.engine.graphkit import manifest

    graph = manifest({"root": {"routerType": "Splitter", "steps": [{"weight": 100, "nodeName": "root"}]}})
    result = run_graph_sync(
        graph, b"{}", {}, config=EngineConfig(release=get_release(release)), rng=random.Random(3)
    )
    assert result.status == 500
    if cycle:
        assert result.error == "cycle detected: root -> root"
    else:
        assert result.error is not None and "KServe v0.13.1 crashes here" in result.error


def test_v0_11_warns_of_header_entries_that_can_match_nothing() -> None:
    from execution.engine import EngineConfig, run_graph_sync
    from tests.engine.graphkit import manifest

    graph = manifest({"root": {"routerType": "Sequence", "steps": []}})
    config = EngineConfig(
        release=get_release("v0.11.2"), propagate_headers=("X-Req.*", "X-Request-Id", "x-b")
    )
    result = run_graph_sync(graph, b"{}", {}, config=config)
    assert [w.split(":")[0] for w in result.warnings] == [
        "header 'X-Req.*' propagates nothing",
        "header 'x-b' propagates nothing",
    ]
    assert (
        run_graph_sync(graph, b"{}", {}, config=EngineConfig(propagate_headers=("X-Req.*",))).warnings == ()
    )
