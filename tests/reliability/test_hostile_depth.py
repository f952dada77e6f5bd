"""Hostile JSON nesting against a real web process and a real worker process: every attempt is
refused with a 400 naming the limit, or shown as text, and no process crashes (security issue #16,
items 1 and 9). ``make reliability`` prints the attempts and the crashes (goal: 0 crashes).

The documents: 400,000 nested ``[`` (800 KB: under the body limit, and deep enough to overflow a
native recursive validator), 3,000 and 1,100 levels (past Python's recursion limit), in request
bodies, inside string fields (a run's raw payload on a Switch root, the condition evaluator's
document), and as step answers a worker stores and the run API renders.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from faultkit import WebProcess, stepserver, wait_until

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True), pytest.mark.timeout(180)]

NATIVE_CRASH_DEPTH = 400_000
LIMIT = 200  # config/nesting.py MAX_JSON_DEPTH


# Go's encoding/json refuses JSON nested deeper than this (json.Valid is false beyond it).
GO_MAX_DEPTH = 10_000


def deep(levels: int) -> str:
    return "[" * levels + "]" * levels


@pytest.fixture
def web(worker_env: dict[str, str]) -> Iterator[WebProcess]:
    server = WebProcess(worker_env).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def deep_answers() -> Iterator[Any]:
    with stepserver.StepServer() as server:
        server.route("/deep3000", stepserver.Reply(body=deep(3000).encode()))
        server.route("/deep30000", stepserver.Reply(body=deep(30_000).encode()))
        yield server


def test_hostile_nesting_is_refused_or_shown_as_text_and_crashes_no_process(
    web: WebProcess,
    start_worker: Any,
    make_graph: Any,
    deep_answers: Any,
    user: Any,
    record_figure: Any,
) -> None:
    from rest_framework.authtoken.models import Token

    from execution.models import Environment, Run

    token = Token.objects.create(user=user).key
    client = httpx.Client(base_url=web.url, headers={"Authorization": f"Token {token}"}, timeout=60)
    Environment.objects.create(
        name="deep", visibility="shared", allow_loopback=True, step_timeout=10, deadline=30
    )
    switch = make_graph("deep-switch", [{"serviceName": "echo", "condition": "instances"}], router="Switch")
    answers = {
        levels: make_graph(f"deep-answer-{levels}", [{"serviceUrl": deep_answers.url(f"/deep{levels}")}])
        for levels in (3000, 30_000)
    }
    worker = start_worker()
    outcomes: list[tuple[str, int, bool]] = []  # (attempt, HTTP status, every process alive)

    def attempt(name: str, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            response = client.request(method, path, **kwargs)
            status = response.status_code
        except httpx.TransportError:  # the web process died under the request
            response, status = httpx.Response(599), 599
        outcomes.append((name, status, web.alive() and worker.alive()))
        return response

    crash = "[" * NATIVE_CRASH_DEPTH
    refused = [
        ("condition document string, 400,000 deep", "/api/conditions/evaluate/", {"document": crash, "condition": "a"}),
        ("condition document string, 1,100 deep", "/api/conditions/evaluate/", {"document": deep(1100), "condition": "@this"}),
        ("run payload string, 400,000 deep, Switch root", f"/api/graphs/{switch.name}/runs/",
         {"payload": crash, "content_type": "application/json", "environment": "deep"}),
        ("run payload string, 3,000 deep", f"/api/graphs/{switch.name}/runs/",
         {"payload": deep(3000), "environment": "deep"}),
    ]  # fmt: skip
    for name, path, body in refused:
        response = attempt(name, "POST", path, json=body)
        assert response.status_code == 400, (name, response.status_code, response.text[:300], web.log_tail())
        assert f"nested deeper than {LIMIT} levels" in response.json()["detail"], (name, response.text[:300])
    for name, path in (
        ("request body, 400,000 deep", "/api/conditions/evaluate/"),
        ("graph body", "/api/graphs/"),
    ):
        response = attempt(
            name, "POST", path, content=crash.encode(), headers={"Content-Type": "application/json"}
        )
        assert response.status_code == 400, (name, response.status_code, response.text[:300])
    assert not Run.objects.exists()  # nothing refused reached the worker

    for levels, graph in answers.items():  # step answers a worker stores, rendered by the run API
        started = attempt(
            f"step answer {levels} deep",
            "POST",
            f"/api/graphs/{graph.name}/runs/",
            json={"payload": {}, "environment": "deep"},
        )
        assert started.status_code == 202, started.text[:300]
        run_id = started.json()["id"]
        wait_until(
            lambda run_id=run_id: Run.objects.get(pk=run_id).status in Run.TERMINAL,
            timeout=60,
            what=f"the run answered {levels} deep\n{worker.log_tail()}",
        )
        shown = attempt(f"run detail, answer {levels} deep", "GET", f"/api/runs/{run_id}/")
        assert shown.status_code == 200, (levels, shown.status_code, shown.text[:300])
        response = shown.json()["response"]
        assert response["body"].startswith("[[[")
        if levels > GO_MAX_DEPTH:  # not JSON to Go's json.Valid: sniffed as text, as KServe does
            assert response["content_type"].startswith("text/plain"), response["content_type"]
        else:
            assert "shown as text" in response["note"], response.get("note")
        assert Run.objects.get(pk=run_id).status == "succeeded"

    crashes = sum(1 for _, _, alive in outcomes if not alive)
    server_errors = [(name, status) for name, status, _ in outcomes if status >= 500]
    record_figure("hostile_depth_attempts", len(outcomes))
    record_figure("hostile_depth_crashes", crashes)
    record_figure("hostile_depth_5xx", len(server_errors))
    assert crashes == 0, (outcomes, web.log_tail(), worker.log_tail())
    assert not server_errors, server_errors


def test_step_answers_400000_deep_crash_no_worker(
    start_worker: Any, start_run: Any, make_graph: Any, deep_answers: Any, record_figure: Any
) -> None:
    """The engine reads a step's answer as JSON (the response's type, a Sequence condition, a Switch
    below a nodeName step): 400,000 levels must fail or pass, never kill the worker."""
    from execution.models import Environment, Run

    deep_answers.route("/crash", stepserver.Reply(body=deep(NATIVE_CRASH_DEPTH).encode()))
    environment = Environment.objects.create(
        name="deep", visibility="shared", allow_loopback=True, step_timeout=20, deadline=60
    )
    url = deep_answers.url("/crash")
    graphs = [
        make_graph("answer-as-response", [{"serviceUrl": url}]),
        make_graph("answer-then-condition", [{"serviceUrl": url}, {"serviceUrl": url, "condition": "0"}]),
    ]
    worker = start_worker()
    crashes = 0
    for graph in graphs:
        run = start_run(graph, environment)
        wait_until(
            lambda run=run, worker=worker: (
                Run.objects.get(pk=run.pk).status in Run.TERMINAL or not worker.alive()
            ),
            timeout=90,
            what=f"{graph.name}: the run to end\n{worker.log_tail()}",
        )
        if not worker.alive():
            crashes += 1
            worker = start_worker()
    record_figure("hostile_depth_engine_attempts", len(graphs))
    record_figure("hostile_depth_engine_crashes", crashes)
    assert crashes == 0, worker.log_tail()
