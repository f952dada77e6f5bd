"""A load test's secret headers through the real pieces (API -> Redis -> Celery worker -> engine ->
a step server on loopback that records what it got): every request carries their real values; the
database, the API's answers, the events and the logs hold them redacted; Redis holds them only
while the load test runs. A saved case's redacted header is left out unless the load test gives it."""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import pytest
import redis
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient
from stepserver import Reply, StepServer

from execution import bus
from execution.loadtests.models import LoadTest, LoadTestEvent
from execution.models import Environment
from tests.conftest import client_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

MANIFEST = {
    "apiVersion": "serving.kserve.io/v1alpha1",
    "kind": "InferenceGraph",
    "metadata": {"name": "vaulted"},
    "spec": {"nodes": {"root": {"routerType": "Sequence", "steps": [{"name": "a", "serviceName": "a"}]}}},
}
TOKEN = "Bearer top-s3cret-token"
API_KEY = "k-7f3e9a-api-key"
TENANT = "tenant-42-secret"  # X-Request-Id: harmless, but the environment marks it secret
HEADERS = {"Authorization": TOKEN, "X-Api-Key": API_KEY, "X-Request-Id": TENANT, "X-Correlation-Id": "c-1"}
VALUES = ("top-s3cret", API_KEY, TENANT)


def vault(server: StepServer, owner: Any) -> APIClient:
    """``owner``'s client, with the graph ``vaulted`` and the environment ``vault`` that sends its
    one step to ``server`` and forwards the headers of :data:`HEADERS` to it."""
    server.route("/a", Reply(json={"says": "meow"}))
    Environment.objects.create(
        name="vault",
        owner=owner,
        url_template=server.url("/") + "{name}",
        allow_loopback=True,
        propagate_headers=["^Authorization$", "^X-Api-Key$", "^X-Request-Id$", "^X-Correlation-Id$"],
        secret_headers=["x-request-id"],
    )
    api = client_for(owner)
    assert api.post("/api/graphs/", {"manifest": MANIFEST}, format="json").status_code == 201
    return api


def run_to_end(api: APIClient, **body: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the answer to the start, the load test once it ended)."""
    body = {"environment": "vault", "requests": 6, "concurrency": 2, **body}
    started = api.post("/api/graphs/vaulted/load-tests/", body, format="json")
    assert started.status_code == 202, started.json()
    deadline = time.monotonic() + 60
    while (done := api.get(f"/api/load-tests/{started.json()['id']}/").json())["status"] in (
        "queued",
        "running",
    ):
        assert time.monotonic() < deadline, done
        time.sleep(0.05)
    return started.json(), done


def test_a_load_tests_secret_headers_reach_every_request_and_are_kept_nowhere(
    worker: Any, run_settings: None, redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="execution")
    user = get_user_model().objects.create_user("loader")
    with StepServer() as server:
        api = vault(server, user)
        started, done = run_to_end(api, payload={"x": 1}, headers=HEADERS)
        received = server.received("/a")

    assert done["status"] == "finished" and done["completed"] == 6 and done["errors"] == 0, done
    assert len(received) == 6
    for got in received:
        assert got.header("Authorization") == [TOKEN]
        assert got.header("X-Api-Key") == [API_KEY]
        assert got.header("X-Request-Id") == [TENANT]
        assert got.header("X-Correlation-Id") == ["c-1"]

    assert done["request_headers"] == {
        "Authorization": "Bearer ***",
        "X-Api-Key": "***",
        "X-Request-Id": "***",
        "X-Correlation-Id": "c-1",
    }
    assert done["secret_header_names"] == ["Authorization", "X-Api-Key", "X-Request-Id"]
    load_id = started["id"]
    answered = json.dumps(
        [
            started,
            done,
            api.get("/api/graphs/vaulted/load-tests/").json(),
            api.get(f"/api/load-tests/{load_id}/events/?format=json").json(),
        ]
    )
    stored = json.dumps(
        [
            list(LoadTest.objects.filter(pk=load_id).values()),
            list(LoadTestEvent.objects.filter(load_test_id=load_id).values()),
        ],
        default=str,
    )
    for value in VALUES:
        assert value not in answered and value not in stored and value not in caplog.text, value
    assert "Bearer ***" in answered and "Bearer ***" in stored
    # Deleted once it ended (not left for their TTL); a run's key of the same id was never written.
    raw = redis.Redis.from_url(redis_url)
    assert raw.exists(bus.secret_headers_key(load_id, owner="load")) == 0
    assert raw.exists(bus.secret_headers_key(load_id)) == 0


def test_a_cases_redacted_header_is_left_out_unless_the_load_test_gives_its_value(
    worker: Any, run_settings: None
) -> None:
    user = get_user_model().objects.create_user("case-loader")
    with StepServer() as server:
        api = vault(server, user)
        case = {
            "name": "c",
            "environment": "vault",
            "request": {"payload": {"x": 1}, "headers": {"Authorization": TOKEN, "X-Correlation-Id": "c-1"}},
            "expectations": [{"status": 200}],
        }
        created = api.post("/api/graphs/vaulted/tests/", case, format="json")
        assert created.status_code == 201, created.json()
        case_id = created.json()["id"]

        _, alone = run_to_end(api, test_case=case_id, requests=2)
        without = server.received("/a")
        server.reset()
        _, given = run_to_end(api, test_case=case_id, requests=2, headers={"authorization": TOKEN})
        with_value = server.received("/a")

    assert alone["status"] == "finished" and alone["secret_header_names"] == [], alone
    assert [(g.header("Authorization"), g.header("X-Correlation-Id")) for g in without] == [([], ["c-1"])] * 2
    assert given["status"] == "finished" and given["secret_header_names"] == ["authorization"], given
    assert given["request_headers"] == {"X-Correlation-Id": "c-1", "authorization": "Bearer ***"}
    assert [(g.header("Authorization"), g.header("X-Correlation-Id")) for g in with_value] == [
        ([TOKEN], ["c-1"])
    ] * 2
