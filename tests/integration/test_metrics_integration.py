"""``/metrics``: the studio's own metrics in the Prometheus text format, read back with
prometheus_client's own parser, after real runs on a real worker with real Redis."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families
from rest_framework.test import APIClient
from runhelpers import wait_for_run
from stepserver import Reply, StepServer

from execution.models import Environment, Run
from graphs import services as graph_services


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

TOKEN = "metrics-token-for-tests"


@pytest.fixture
def steps() -> Iterator[StepServer]:
    with StepServer() as server:
        server.route("/fast", Reply(json={"predictions": [1]}))
        server.route("/slow", Reply(json={"predictions": [2]}, delay=0.06))
        server.route("/broken", Reply(status=503, json={"error": "down"}))
        yield server


@pytest.fixture
def staff(db: Any) -> Client:
    from django.contrib.auth import get_user_model

    get_user_model().objects.create_user("ops", password="ops-password-1", is_staff=True)
    client = Client()
    assert client.login(username="ops", password="ops-password-1")
    return client


def scrape(client: Client, **headers: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = client.get("/metrics", headers=headers)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=0.0.4")
    samples = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def value(samples: dict[Any, float], name: str, **labels: str) -> float:
    return samples[(name, tuple(sorted(labels.items())))]


def test_metrics_count_runs_step_calls_durations_queue_and_workers(
    worker: Any, api: APIClient, user: Any, staff: Client, steps: StepServer, settings: Any
) -> None:
    settings.STUDIO_METRICS_TOKEN = TOKEN
    graph_services.graph_create(
        owner=user,
        manifest={
            "apiVersion": "serving.kserve.io/v1alpha1",
            "kind": "InferenceGraph",
            "metadata": {"name": "metered"},
            "spec": {
                "nodes": {
                    "root": {
                        "routerType": "Sequence",
                        "steps": [
                            {"name": "fast", "serviceUrl": steps.url("/fast")},
                            {"name": "slow", "serviceUrl": steps.url("/slow")},
                        ],
                    },
                    "bad": {"routerType": "Sequence", "steps": [{"serviceUrl": steps.url("/broken")}]},
                }
            },
        },
    )
    Environment.objects.create(
        name="metered", visibility="shared", url_template="http://x/{name}", allow_loopback=True
    )
    for _ in range(3):
        response = api.post(
            "/api/graphs/metered/runs/",
            {"payload": {"instances": [1]}, "environment": "metered"},
            format="json",
        )
        assert response.status_code == 202
        assert wait_for_run(response.json()["id"]).status == "succeeded"

    # A run nobody sent to the broker waits in the queue; it was made 30 s ago.
    version = Run.objects.first().version  # type: ignore[union-attr]
    waiting = Run.objects.create(graph=version.graph, version=version, created_by=user, seed=1)
    Run.objects.filter(pk=waiting.pk).update(created_at=timezone.now() - timedelta(seconds=30))

    samples = scrape(staff)
    assert value(samples, "studio_runs", status="succeeded") == 3
    assert value(samples, "studio_runs", status="queued") == 1
    assert value(samples, "studio_runs", status="failed") == 0
    assert value(samples, "studio_suite_runs", status="passed") == 0
    assert value(samples, "studio_queue_depth", kind="run") == 1
    assert value(samples, "studio_queue_oldest_age_seconds", kind="run") >= 30
    assert value(samples, "studio_queue_depth", kind="suite_run") == 0

    fast = {"graph": "metered", "node": "root", "step": "fast"}
    slow = {"graph": "metered", "node": "root", "step": "slow"}
    assert value(samples, "studio_step_calls_total", **fast, outcome="ok") == 3
    assert value(samples, "studio_step_calls_total", **slow, outcome="ok") == 3
    assert value(samples, "studio_step_duration_seconds_count", **slow) == 3
    assert value(samples, "studio_step_duration_seconds_bucket", **slow, le="+Inf") == 3
    assert value(samples, "studio_step_duration_seconds_bucket", **slow, le="0.05") == 0  # each took 60 ms
    assert value(samples, "studio_step_duration_seconds_sum", **slow) >= 3 * 0.06
    assert value(samples, "studio_metrics_redis_up") == 1

    # The session worker's consumer beats.
    assert value(samples, "studio_workers_alive") >= 1
    ages = {
        labels: v for (name, labels), v in samples.items() if name == "studio_worker_heartbeat_age_seconds"
    }
    assert ages and min(ages.values()) < 60

    # The same answer for the token; nothing for anyone else.
    assert value(scrape(Client(), Authorization=f"Bearer {TOKEN}"), "studio_runs", status="succeeded") == 3


def test_open_event_streams_are_counted_while_they_are_open(
    worker: Any, api: APIClient, user: Any, staff: Client, steps: StepServer
) -> None:
    graph_services.graph_create(
        owner=user,
        manifest={
            "apiVersion": "serving.kserve.io/v1alpha1",
            "kind": "InferenceGraph",
            "metadata": {"name": "streamed"},
            "spec": {
                "nodes": {"root": {"routerType": "Sequence", "steps": [{"serviceUrl": steps.url("/fast")}]}}
            },
        },
    )
    Environment.objects.create(
        name="streamed", visibility="shared", url_template="http://x/{name}", allow_loopback=True
    )
    response = api.post(
        "/api/graphs/streamed/runs/", {"payload": {}, "environment": "streamed"}, format="json"
    )
    run_id = response.json()["id"]
    wait_for_run(run_id)
    before = value(scrape(staff), "studio_event_streams_open")
    stream = api.get(f"/api/runs/{run_id}/events/", HTTP_ACCEPT="text/event-stream")
    assert stream.status_code == 200
    assert value(scrape(staff), "studio_event_streams_open") == before + 1
    stream.close()
    assert value(scrape(staff), "studio_event_streams_open") == before


def test_metrics_need_a_staff_session_or_the_token(user: Any, settings: Any) -> None:
    settings.STUDIO_METRICS_TOKEN = TOKEN
    anonymous = Client().get("/metrics")
    assert anonymous.status_code == 401 and anonymous["WWW-Authenticate"].startswith("Bearer")
    assert Client().get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 403
    member = Client()
    assert member.login(username="alice", password="alice-password-1")
    assert member.get("/metrics").status_code == 403  # signed in, not staff
    settings.STUDIO_METRICS_TOKEN = ""
    assert Client().get("/metrics", headers={"Authorization": "Bearer "}).status_code == 403  # no token set


def test_without_redis_the_scrape_still_answers_from_the_database(
    user: Any, staff: Client, settings: Any
) -> None:
    settings.RUN_EVENTS_REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    samples = scrape(staff)
    assert value(samples, "studio_metrics_redis_up") == 0
    assert value(samples, "studio_runs", status="queued") == 0
    assert not any(name.startswith("studio_step_") for name, _ in samples)
