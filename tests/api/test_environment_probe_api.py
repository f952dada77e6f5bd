"""Test connection (``GET /api/environments/{id}/probe/``): each mapped service's readiness, protocol
and v2 metadata, probed through the environment's URL guard with short timeouts; every failure of a
server is a clear per-service error, never a 500; only users who may use the environment probe it."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from rest_framework.test import APIClient

from execution.models import Environment
from tests.conftest import free_port

pytestmark = pytest.mark.django_db


@pytest.fixture
def probe_settings(settings: Any) -> None:
    settings.PROBE_TIMEOUT = 0.5
    settings.PROBE_TOTAL_TIMEOUT = 5.0
    settings.PROBE_CONCURRENCY = 4


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A loopback port that accepts connections and never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        sock.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
                held.append(conn)
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(timeout=2)
        for conn in held:
            conn.close()
        sock.close()


def _environment(owner: Any, service_urls: dict[str, str], **values: Any) -> Environment:
    values.setdefault("allow_loopback", True)
    return Environment.objects.create(name="probe-env", owner=owner, service_urls=service_urls, **values)


def _probe(api: APIClient, environment: Environment, query: str = "") -> dict[str, Any]:
    response = api.get(f"/api/environments/{environment.pk}/probe/{query}")
    assert response.status_code == 200, response.content
    return {entry["service"]: entry for entry in response.json()["services"]}


def test_v1_and_v2_services_of_the_mock_server_are_ready_with_v2_metadata(
    api: APIClient, user: Any, mock_server: Any, probe_settings: None
) -> None:
    base = mock_server.url.rstrip("/")
    environment = _environment(
        user,
        {
            "classifier": f"{base}/v1/models/cat-dog-classifier:predict",
            "merger": f"{base}/v2/models/result-merger/infer",
        },
    )
    results = _probe(api, environment)
    v1, v2 = results["classifier"], results["merger"]
    assert v1["protocol"] == "v1" and v1["ready"] is True and v1["error"] is None
    assert v1["model"] == "cat-dog-classifier" and v1["inputs"] is None
    assert v2["protocol"] == "v2" and v2["ready"] is True and v2["error"] is None
    assert v2["inputs"] == [{"name": "input-0", "datatype": "BYTES", "shape": [-1]}]
    assert v2["outputs"] == [{"name": "output-0", "datatype": "BYTES", "shape": [-1]}]
    assert v2["platform"] == "studio-mock" and v2["versions"] == ["1"]
    assert v1["latency_ms"] >= 0 and v2["latency_ms"] >= 0


def test_a_url_without_a_protocol_path_is_detected_and_a_non_model_answer_is_named(
    api: APIClient, user: Any, mock_server: Any, probe_settings: None
) -> None:
    base = mock_server.url.rstrip("/")
    environment = _environment(
        user, {"echo": f"{base}/predict", "nothing": f"{base}/v1/models/no-such:predict"}
    )
    results = _probe(api, environment)
    assert results["echo"]["protocol"] == "v2" and results["echo"]["ready"] is True
    assert results["nothing"]["error"]["kind"] == "not-a-model-server"
    assert results["nothing"]["ready"] is False and "no-such" in results["nothing"]["error"]["message"]


def test_refused_blocked_and_silent_servers_are_reported_per_service(
    api: APIClient, user: Any, silent_server: str, probe_settings: None
) -> None:
    environment = _environment(
        user,
        {
            "refused": f"http://127.0.0.1:{free_port()}/v1/models/a:predict",
            "metadata": "http://169.254.169.254/v2/models/a/infer",
            "silent": f"{silent_server}/v2/models/a/infer",
        },
    )
    results = _probe(api, environment)
    assert results["refused"]["error"]["kind"] == "refused"
    assert results["metadata"]["error"]["kind"] == "blocked"
    assert "link-local/metadata" in results["metadata"]["error"]["message"]
    assert results["silent"]["error"]["kind"] == "timeout"
    assert not any(entry["ready"] for entry in results.values())


def test_the_guard_is_the_environments_own(
    api: APIClient, user: Any, mock_server: Any, probe_settings: None
) -> None:
    """An environment that does not allow loopback cannot probe the mock server on loopback."""
    base = mock_server.url.rstrip("/")
    environment = _environment(user, {"a": f"{base}/v1/models/echo:predict"}, allow_loopback=False)
    error = _probe(api, environment)["a"]["error"]
    assert error["kind"] == "blocked" and "loopback" in error["message"]


def test_one_service_through_the_url_template(
    api: APIClient, user: Any, mock_server: Any, probe_settings: None
) -> None:
    base = mock_server.url.rstrip("/")
    environment = _environment(user, {}, url_template=base + "/v1/models/{name}:predict")
    results = _probe(api, environment, "?service=sentiment-v1")
    assert list(results) == ["sentiment-v1"]
    assert results["sentiment-v1"]["url"] == f"{base}/v1/models/sentiment-v1:predict"
    assert results["sentiment-v1"]["protocol"] == "v1" and results["sentiment-v1"]["ready"] is True
    bad = api.get(f"/api/environments/{environment.pk}/probe/?service=a/../b")
    assert bad.status_code == 400 and bad.json()["issues"][0]["code"] == "probe.service-invalid"


def test_the_total_time_is_capped(api: APIClient, user: Any, silent_server: str, settings: Any) -> None:
    settings.PROBE_TIMEOUT = 5.0
    settings.PROBE_TOTAL_TIMEOUT = 0.5
    settings.PROBE_CONCURRENCY = 1
    environment = _environment(user, {f"s{i}": f"{silent_server}/v2/models/s{i}/infer" for i in range(3)})
    results = _probe(api, environment)
    assert [entry["error"]["kind"] for entry in results.values()] == ["timeout"] * 3


def test_only_users_who_may_use_the_environment_probe_it(
    api: APIClient, bob_api: APIClient, anon: APIClient, user: Any, probe_settings: None
) -> None:
    environment = _environment(user, {"a": "http://169.254.169.254/v1/models/a:predict"})
    url = f"/api/environments/{environment.pk}/probe/"
    assert anon.get(url).status_code in (401, 403)
    assert bob_api.get(url).status_code == 404
    assert api.get(url).status_code == 200
