"""A wide Ensemble of large answers on a real worker: the run's byte budget stops it, and the
worker's memory stays bounded (security issue #16, item 6).

Forty members each answer 9 MiB (under the 10 MiB step cap). Before the budget, the worker held
every member's body at once, and went from 124 to 448 MiB. The figure ``make reliability`` prints
is the worker's peak resident memory above its warmed-up start while the run executes.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from faultkit import stepserver, wait_until

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True), pytest.mark.timeout(180)]

MB = 1024 * 1024
MEMBERS = 40
MEMBER_BYTES = 9 * MB
BUDGET = 64 * MB  # config/settings.py RUN_MAX_RUN_BYTES, the workers' default
# The bodies a run may hold (the budget), the same again for the copies reading makes (chunks
# joined into one bytes object) and 64 MiB for everything else the run allocates: a bound of the
# budget's making, well under the 324 MiB the unbounded run took.
PEAK_GROWTH_LIMIT = 2 * BUDGET + 64 * MB


@pytest.fixture
def big_answers() -> Iterator[Any]:
    with stepserver.StepServer() as server:
        body = json.dumps({"predictions": ["x" * (MEMBER_BYTES - 32)]}).encode()
        server.route("/big", stepserver.Reply(body=body))
        server.route("/small", stepserver.Reply(json={"predictions": [1]}))
        yield server


def test_a_40_member_ensemble_of_9_mib_answers_fails_at_the_run_budget_with_bounded_worker_memory(
    start_worker: Any, start_run: Any, make_graph: Any, big_answers: Any, record_figure: Any
) -> None:
    from execution.models import Environment, Run, RunEvent

    environment = Environment.objects.create(
        name="big", visibility="shared", allow_loopback=True, step_timeout=30, deadline=60
    )
    wide = make_graph(
        "wide-ensemble",
        [{"name": f"m{i}", "serviceUrl": big_answers.url("/big")} for i in range(MEMBERS)],
        router="Ensemble",
    )
    small = make_graph("small", [{"name": "m", "serviceUrl": big_answers.url("/small")}], router="Ensemble")
    worker = start_worker(concurrency=4)
    warm = start_run(small, environment)  # imports and connections, so the figure is the run's own
    wait_until(
        lambda: Run.objects.get(pk=warm.pk).status in Run.TERMINAL,
        timeout=60,
        what=f"the warm-up run\n{worker.log_tail()}",
    )
    before = peak = worker.rss_bytes()
    run = start_run(wide, environment)
    began = time.monotonic()
    while Run.objects.get(pk=run.pk).status not in Run.TERMINAL:
        assert time.monotonic() - began < 120, f"the wide run did not finish\n{worker.log_tail()}"
        peak = max(peak, worker.rss_bytes())
        time.sleep(0.02)
    time.sleep(1.0)  # the worker returns freed memory after it stores the outcome
    after = worker.rss_bytes()

    done = Run.objects.get(pk=run.pk)
    assert done.status == "failed" and done.response_status == 500, (done.status, done.error)
    assert f"exceed its budget of {BUDGET} bytes" in done.error and "max_run_bytes" in done.error
    # Nothing the run stored or published holds a whole body: each event carries capped views.
    largest_event = max(
        len(json.dumps(data)) for data in RunEvent.objects.filter(run=done).values_list("data", flat=True)
    )
    assert largest_event < 2 * 64 * 1024 + 4096, largest_event
    growth = peak - before
    record_figure("ensemble_worker_rss_start_mb", round(before / MB, 1))
    record_figure("ensemble_worker_peak_growth_mb", round(growth / MB, 1))
    record_figure("ensemble_worker_after_growth_mb", round((after - before) / MB, 1))
    assert growth < PEAK_GROWTH_LIMIT, f"worker RSS peaked {growth / MB:.0f} MB above its start"
    # And the worker gives the run's memory back: it kept 73 MiB before it collected after a run,
    # and 2 to 38 MiB (as the bodies fell in its threads' malloc arenas) before it trimmed them.
    assert after - before < BUDGET / 4, f"worker RSS stayed {(after - before) / MB:.0f} MB above its start"
    assert worker.alive()
