"""Ensemble races: how often each answer comes where KServe's router leaves it to chance.

When steps of an Ensemble answer at the same instant, which one Go's receiving loop takes first
is left to its scheduler and its ``select`` (uniform among the ready cases). The engine draws those
choices from the run's random source (``routers._Arrivals``). ``data/oracle_races.json`` records how
often each outcome came in ``RACE_REQUESTS`` requests to ``../shared/oracle/kserve-router`` for
each of ``oracle_vectors.RACE_CASES``; the engine, run as many times at fixed seeds, must agree
with it by a two-proportion z-test at alpha = 0.001 (|z| < 3.29) for every outcome.

The recorded comparison uses an ``httpx.MockTransport`` whose ``together`` steps are released in
the same turn of the event loop, so it is deterministic for its seeds (never flaky). The live
comparison (skipped without the oracle) sends the same requests over loopback to real step servers
from both the oracle and the engine, and checks a wider band (see ``LIVE_BAND``).
"""

from __future__ import annotations

import asyncio
import json
import math
import random
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
from graphkit import manifest
from mockkit import Harness
from oracle_vectors import RACE_CASES, install_race, race_outcome, race_spec
from oraclekit import OracleRouter, require_oracle
from stepserver import StepServer

from execution.engine import EngineConfig, run_graph_sync

RECORDED: dict[str, Any] = json.loads(
    (Path(__file__).resolve().parent / "data" / "oracle_races.json").read_text()
)
# |z| below this for every outcome: a two-sided two-proportion test at alpha = 0.001.
Z_LIMIT = 3.29
SEED = 20261204
MOCK_HOST = "http://race.test"
# The mock's ``together`` steps answer this long after both were called: the first step's answer,
# which needs no waiting, is taken long before (its few event-loop turns take microseconds).
MOCK_HOLD = 0.005


def z_score(k1: int, n1: int, k2: int, n2: int) -> float:
    """The two-proportion z statistic of k1/n1 against k2/n2 (pooled variance); 0 when both are
    0 or both are 1 (no spread: the proportions agree)."""
    pooled = (k1 + k2) / (n1 + n2)
    spread = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    return 0.0 if spread == 0 else (k1 / n1 - k2 / n2) / spread


def disagreements(ours: Counter[str], n1: int, theirs: dict[str, int], n2: int) -> dict[str, float]:
    """The outcomes whose frequencies differ beyond the tolerance, with their z."""
    out = {}
    for outcome in set(ours) | set(theirs):
        z = z_score(ours.get(outcome, 0), n1, theirs.get(outcome, 0), n2)
        if abs(z) >= Z_LIMIT:
            out[outcome] = round(z, 2)
    return out


def test_the_z_test_tells_chance_from_a_fixed_choice() -> None:
    assert abs(z_score(176, 400, 200, 400)) < Z_LIMIT  # 44% against 50%: sampling error
    assert abs(z_score(1, 40, 15, 40)) >= Z_LIMIT  # 1 of 40 against 15 of 40: a real difference
    assert z_score(0, 10, 0, 10) == 0.0


def _manifest(case: str) -> Any:
    return manifest(race_spec(case, lambda path: MOCK_HOST + path)["nodes"])


class _Together:
    """Mock answers for a race case: the ``together`` steps wait until all of them are called,
    then answer in one turn of the event loop (``MOCK_HOLD`` later); the others at once."""

    def __init__(self, case: str) -> None:
        self.spec = RACE_CASES[case]
        self.waiting = 0
        self.release: asyncio.Future[None] | None = None

    def routes(self) -> dict[str, Any]:
        return {MOCK_HOST + path: self._handler(path) for path in self.spec["answers"]}

    def _handler(self, path: str) -> Any:
        status, body = self.spec["answers"][path]

        async def handle(_request: httpx.Request) -> httpx.Response:
            if path in self.spec["together"]:
                loop = asyncio.get_running_loop()
                if self.release is None or self.release.get_loop() is not loop:
                    self.release, self.waiting = loop.create_future(), 0
                release = self.release
                self.waiting += 1
                if self.waiting == len(self.spec["together"]):
                    loop.call_later(MOCK_HOLD, release.set_result, None)
                await release
            return httpx.Response(status, content=body, headers={"Content-Type": "application/json"})

        return handle


def _engine_counts(case: str, requests: int) -> Counter[str]:
    harness = Harness(routes=_Together(case).routes())
    graph = _manifest(case)
    counts: Counter[str] = Counter()
    for k in range(requests):
        result = harness.run(graph, b"{}", rng=random.Random(SEED + k))
        counts[race_outcome(result.status, result.body)] += 1
    return counts


@pytest.mark.parametrize("case", sorted(RACE_CASES))
def test_outcome_frequencies_agree_with_the_recorded_router(case: str) -> None:
    recorded: dict[str, int] = RECORDED["cases"][case]
    n = int(RECORDED["requests"])
    ours = _engine_counts(case, n)
    assert set(ours) == set(recorded), (dict(ours), recorded)
    assert disagreements(ours, n, recorded, n) == {}, (dict(ours), recorded)


def test_a_seed_replays_the_same_choices() -> None:
    case = "a Hard failure and an error together"
    harness = Harness(routes=_Together(case).routes())
    graph = _manifest(case)
    first = [harness.run(graph, b"{}", rng=random.Random(SEED + k)).status for k in range(20)]
    again = [harness.run(graph, b"{}", rng=random.Random(SEED + k)).status for k in range(20)]
    assert first == again
    assert set(first) == {500, 502}


def test_an_error_before_the_awaited_result_still_wins_without_a_draw() -> None:
    """Go's blocked select takes the first sender: an error that arrives while the loop waits for
    an earlier step ends the node whatever the seed (no draw is made)."""

    class NoDraws(random.Random):
        def random(self) -> float:
            raise AssertionError("no draw expected")

        def shuffle(self, x: Any, random: Any = None) -> None:
            raise AssertionError("no draw expected")

    def slow(delay: float, status: int, body: bytes) -> Any:
        async def handle(_request: httpx.Request) -> httpx.Response:
            await asyncio.sleep(delay)
            return httpx.Response(status, content=body)

        return handle

    harness = Harness(
        routes={
            MOCK_HOST + "/ok": slow(0.05, 200, b"{}"),
            MOCK_HOST + "/hard": slow(0.0, 502, b"{}"),
            MOCK_HOST + "/bad": slow(0.02, 200, b"[1]"),
        }
    )
    result = harness.run(_manifest("a Hard failure and an error together"), b"{}", rng=NoDraws())
    assert race_outcome(result.status, result.body) == (
        "500 json: cannot unmarshal array into Go value of type map[string]interface {}"
    )


# Live, both sides' frequencies follow the machine's timing as well as the draws: on this shared
# machine each side's share of one outcome ranged from 34% to 66% between batches of requests, more
# than sampling error. The live check is therefore a band, not a z-test: every outcome the
# recorded answers name comes in at least LIVE_BAND of the requests on both sides (a nearly fixed
# choice, such as 1 in 40, fails it).
LIVE_BAND = 0.15


@pytest.mark.parametrize("case", sorted(RACE_CASES))
def test_outcome_frequencies_agree_with_the_router_live(case: str) -> None:
    """Both the oracle and the engine against the same real step servers (skipped without it)."""
    require_oracle()
    requests = 200
    oracle: Counter[str] = Counter()
    ours: Counter[str] = Counter()
    with StepServer() as server:
        install_race(server, case)
        spec = race_spec(case, server.url)
        with OracleRouter(spec) as router:
            for _ in range(requests):
                status, _, body = router.post(b"{}", [])
                oracle[race_outcome(status, body)] += 1
        graph = manifest(spec["nodes"])
        for k in range(requests):
            result = run_graph_sync(graph, b"{}", {}, config=EngineConfig(), rng=random.Random(SEED + k))
            ours[race_outcome(result.status, result.body)] += 1
    expected = set(RECORDED["cases"][case])
    assert set(oracle) == set(ours) == expected, (dict(ours), dict(oracle))
    low = {
        name: (ours[name], oracle[name])
        for name in expected
        if min(ours[name], oracle[name]) < LIVE_BAND * requests
    }
    assert low == {}, (dict(ours), dict(oracle))
