"""/healthz and /readyz: the probes' endpoints answer before host checks, login and sessions."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from django.test import Client, override_settings

from config import health
from tests.conftest import free_port


@pytest.fixture(autouse=True)
def _fresh_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test sees its own checks, not the answer a previous test left for reuse."""
    monkeypatch.setattr(health, "_recent", health._Recent())


@pytest.fixture
def up(redis_url: str) -> Any:
    with override_settings(RUN_EVENTS_REDIS_URL=redis_url, CELERY_BROKER_URL=redis_url):
        yield


def closed_redis() -> str:
    return f"redis://127.0.0.1:{free_port()}/0"


def test_healthz_answers_without_the_database_or_redis() -> None:
    """No ``db`` fixture: a query would fail the test (pytest-django blocks database access)."""
    with override_settings(RUN_EVENTS_REDIS_URL=closed_redis(), CELERY_BROKER_URL=closed_redis()):
        response = Client().get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert response["Cache-Control"] == "no-store"
    assert "Set-Cookie" not in response and "Vary" not in response


@pytest.mark.django_db
def test_readyz_is_200_when_the_database_and_redis_answer(up: None) -> None:
    response = Client().get("/readyz")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["status"] == "ok"
    assert set(body["checks"]) == {"database", "redis"}
    assert all(check["ok"] for check in body["checks"].values())
    assert response["Cache-Control"] == "no-store"


@pytest.mark.django_db
def test_readyz_is_503_naming_redis_when_redis_is_unreachable(caplog: pytest.LogCaptureFixture) -> None:
    closed = closed_redis()
    with (
        override_settings(RUN_EVENTS_REDIS_URL=closed, CELERY_BROKER_URL=closed),
        caplog.at_level(logging.INFO),
    ):
        response = Client().get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["checks"]["database"]["ok"] is True
    assert body["checks"]["redis"]["ok"] is False
    assert "redis" in body["detail"]
    assert [issue["code"] for issue in body["issues"]] == ["ready.redis"]
    assert response["Cache-Control"] == "no-store"
    # Not an error in the logs every probe period: django.request stays quiet, the check warns once.
    assert not [r for r in caplog.records if r.name == "django.request"]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert [r.getMessage() for r in caplog.records if r.name == "config.health"] == [
        "Not ready: redis failed (ConnectionError)"
    ]


@pytest.mark.django_db
def test_readyz_names_a_separate_broker_that_is_down(redis_url: str) -> None:
    with override_settings(RUN_EVENTS_REDIS_URL=redis_url, CELERY_BROKER_URL=closed_redis()):
        response = Client().get("/readyz")
    assert response.status_code == 503
    checks = response.json()["checks"]
    assert checks["redis"]["ok"] is True and checks["broker"]["ok"] is False


@pytest.mark.django_db
def test_readyz_is_503_naming_the_database_when_it_cannot_be_opened(
    up: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from django.db import OperationalError

    def refuse(timeout: float) -> None:
        raise OperationalError("connection refused")

    monkeypatch.setattr(health, "_check_database", refuse)
    response = Client().get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"]["database"] == {"ok": False, "ms": 0, "error": "OperationalError"}


@pytest.mark.django_db
def test_a_check_that_hangs_fails_as_a_timeout(up: None, monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    release = threading.Event()
    monkeypatch.setattr(health, "_check_database", lambda timeout: release.wait(5))
    try:
        with override_settings(HEALTH_CHECK_TIMEOUT=0.2):
            response = Client().get("/readyz")
    finally:
        release.set()
    assert response.status_code == 503
    assert response.json()["checks"]["database"]["error"] == "timeout after 0.2 s"


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/healthz", "/readyz", "/healthz/", "/readyz/"])
@pytest.mark.parametrize("host", ["10.244.3.17:8000", "[fd00::12]:8000", "bad host!"])
def test_probes_answer_any_host_header_over_plain_http(up: None, path: str, host: str) -> None:
    """The kubelet sends the pod IP as Host, over HTTP: no DisallowedHost 400, no HTTPS redirect
    (a probe counts a 301 as success)."""
    with override_settings(ALLOWED_HOSTS=["studio.example.com"], SECURE_SSL_REDIRECT=True):
        response = Client().get(path, HTTP_HOST=host)
    assert response.status_code == 200, response.content


@pytest.mark.django_db
def test_other_paths_still_validate_the_host() -> None:
    with override_settings(ALLOWED_HOSTS=["studio.example.com"]):
        response = Client().get("/login/", HTTP_HOST="10.244.3.17:8000")
    assert response.status_code == 400


@pytest.mark.django_db
def test_probes_are_anonymous_and_set_no_session_or_csrf_cookie(up: None, user: Any) -> None:
    """Signed out: no login redirect; signed in: the session is not touched either."""
    for client in (Client(enforce_csrf_checks=True), Client(enforce_csrf_checks=True)):
        for path in ("/healthz", "/readyz"):
            response = client.get(path)
            assert response.status_code == 200
            assert not response.cookies
        client.force_login(user)


@pytest.mark.django_db
def test_head_answers_the_status_without_a_body(up: None) -> None:
    response = Client().head("/readyz")
    assert response.status_code == 200 and response.content == b""


def test_other_methods_are_refused_with_the_error_shape() -> None:
    response = Client().post("/healthz", data={})
    assert response.status_code == 405
    assert response["Allow"] == "GET, HEAD"
    assert response.json()["issues"][0]["code"] == "method.not-allowed"


@pytest.mark.django_db
def test_a_burst_of_readiness_requests_checks_once(up: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The path is public through the Ingress: a burst reuses one check instead of opening two
    connections per request."""
    calls: list[float] = []
    monkeypatch.setattr(health, "_check_database", calls.append)
    client = Client()
    for _ in range(20):
        assert client.get("/readyz").status_code == 200
    assert len(calls) == 1


def test_the_probe_middleware_runs_before_every_other() -> None:
    from django.conf import settings

    assert settings.MIDDLEWARE[0] == "config.health.HealthCheckMiddleware"
