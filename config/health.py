"""Health endpoints for Kubernetes probes (and any load balancer): ``/healthz`` and ``/readyz``.

``/healthz`` (liveness) says the web process answers; it touches nothing else, so a database or
Redis outage never gets web pods restarted. ``/readyz`` (readiness) says the database and Redis
answer within ``HEALTH_CHECK_TIMEOUT`` seconds; a pod that fails it is taken out of its Service
until it passes again. Both answer JSON with ``Cache-Control: no-store``.

:class:`HealthCheckMiddleware` sits first in ``MIDDLEWARE`` and answers these two paths before
anything else runs: no host validation (the kubelet sends the pod's IP as ``Host``, which is not
in ``ALLOWED_HOSTS``), no HTTPS redirect (a probe counts a 301 as success, which would hide a
failing check), no session, CSRF or login. A failing ``/readyz`` is not logged by
``django.request`` as a server error every probe period; the checks log a warning when a
dependency starts failing and a line when it recovers, once per process.

The checks run concurrently, each on its own short-lived thread with the timeout also given to the
client (connect and read), so one probe costs at most the timeout however the dependency fails.
The result is reused for ``_REUSE_SECONDS`` so that requests from outside (the path is reachable
through the Ingress) cannot turn into a connection storm on the database.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import redis
from django.conf import settings
from django.db import connections
from django.http import HttpRequest, HttpResponse, JsonResponse

logger = logging.getLogger(__name__)

LIVENESS_PATH: Final = "/healthz"
READINESS_PATH: Final = "/readyz"
# A second: far below any probe period (Kubernetes' default is 10 s), far above what a caller
# hammering the path would need to turn every request into two new connections.
_REUSE_SECONDS: Final = 1.0


@dataclass(frozen=True)
class CheckResult:
    name: str
    ok: bool
    ms: int
    error: str = ""

    def as_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"ok": self.ok, "ms": self.ms}
        if self.error:
            body["error"] = self.error
        return body


def _check_database(timeout: float) -> None:
    """Open a fresh connection to the default database and run ``SELECT 1``; the request's own
    connection (and its transaction state) is left alone."""
    connection = connections["default"]
    params = connection.get_connection_params()
    if connection.vendor == "postgresql":
        # libpq's connect_timeout is whole seconds; 2 is its documented minimum.
        params["connect_timeout"] = max(2, round(timeout))
    elif connection.vendor == "sqlite":
        params["timeout"] = timeout
    raw = connection.get_new_connection(params)
    try:
        cursor = raw.cursor()
        cursor.execute("SELECT 1")
        cursor.fetchone()
    finally:
        raw.close()


def _check_redis(url: str, timeout: float) -> None:
    client = redis.Redis.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout)
    try:
        client.ping()
    finally:
        client.close()


def _dependencies() -> list[tuple[str, Callable[[float], None]]]:
    """What the studio cannot serve without: the database, the Redis of the run events, and the
    Celery broker when it is another Redis (an AMQP broker is left to the workers' own checks)."""
    events_url = settings.RUN_EVENTS_REDIS_URL
    checks: list[tuple[str, Callable[[float], None]]] = [
        ("database", _check_database),
        ("redis", lambda timeout: _check_redis(events_url, timeout)),
    ]
    broker_url = settings.CELERY_BROKER_URL
    if broker_url != events_url and broker_url.split("://", 1)[0] in ("redis", "rediss", "unix"):
        checks.append(("broker", lambda timeout: _check_redis(broker_url, timeout)))
    return checks


def _run(name: str, check: Callable[[float], None], timeout: float, results: dict[str, CheckResult]) -> None:
    started = time.monotonic()
    try:
        check(timeout)
    except Exception as exc:
        # The class only: the message can carry host names and user names, and this answer is public.
        results[name] = CheckResult(name, False, _ms(started), type(exc).__name__)
        logger.debug("readiness check %s failed", name, exc_info=True)
    else:
        results[name] = CheckResult(name, True, _ms(started))
    finally:
        if name == "database":
            connections.close_all()  # this thread's wrappers, if a backend opened one


def _ms(started: float) -> int:
    return round((time.monotonic() - started) * 1000)


def run_checks(timeout: float | None = None) -> list[CheckResult]:
    """Every dependency's check, concurrently; one that has not answered after ``timeout`` seconds
    fails as ``timeout`` (its thread is a daemon and ends when the client's own timeout fires)."""
    timeout = settings.HEALTH_CHECK_TIMEOUT if timeout is None else timeout
    results: dict[str, CheckResult] = {}
    started = time.monotonic()
    threads = []
    dependencies = _dependencies()
    for name, check in dependencies:
        thread = threading.Thread(
            target=_run, args=(name, check, timeout, results), name=f"readyz-{name}", daemon=True
        )
        thread.start()
        threads.append(thread)
    for thread in threads:
        thread.join(max(0.0, started + timeout - time.monotonic()))
    return [
        results.get(name) or CheckResult(name, False, _ms(started), f"timeout after {timeout:g} s")
        for name, _ in dependencies
    ]


class _Recent:
    """The last readiness result of this process, reused briefly; and the failing names, so that a
    failure is logged when it starts and when it ends rather than on every probe."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.key: tuple[Any, ...] = ()
        self.at = 0.0
        self.results: list[CheckResult] = []
        self.failing: frozenset[str] = frozenset()

    def get(self) -> list[CheckResult]:
        # Keyed by what the checks depend on, so a settings change is never answered from before it.
        key = (
            settings.HEALTH_CHECK_TIMEOUT,
            settings.RUN_EVENTS_REDIS_URL,
            settings.CELERY_BROKER_URL,
            repr(settings.DATABASES.get("default")),
        )
        with self.lock:
            now = time.monotonic()
            if key == self.key and now - self.at < _REUSE_SECONDS:
                return self.results
            results = run_checks()
            self.key, self.at, self.results = key, time.monotonic(), results
            failing = frozenset(r.name for r in results if not r.ok)
            for result in results:
                if result.name in failing - self.failing:
                    logger.warning("Not ready: %s failed (%s)", result.name, result.error)
            for name in sorted(self.failing - failing):
                logger.warning("Ready again: %s answers", name)
            self.failing = failing
            return results


_recent = _Recent()


def _answer(body: dict[str, Any], status: int, request: HttpRequest) -> HttpResponse:
    response: HttpResponse = JsonResponse(body, status=status)
    if request.method == "HEAD":
        response = HttpResponse(status=status, content_type="application/json")
    response["Cache-Control"] = "no-store"
    # django.request logs every 5xx as an error; an unready pod is reported by the kubelet and by
    # the transition warnings above, not once per probe.
    response._has_been_logged = True  # type: ignore[attr-defined]
    return response


def healthz(request: HttpRequest) -> HttpResponse:
    """Liveness: the process answers. Reads nothing, so it never fails for a dependency's sake."""
    return _answer({"status": "ok"}, 200, request)


def readyz(request: HttpRequest) -> HttpResponse:
    """Readiness: 200 when the database and Redis answer, else 503 naming each that did not."""
    results = _recent.get()
    checks = {r.name: r.as_json() for r in results}
    failed = [r for r in results if not r.ok]
    if not failed:
        return _answer({"status": "ok", "checks": checks}, 200, request)
    names = ", ".join(r.name for r in failed)
    return _answer(
        {
            "status": "unavailable",
            "detail": f"Not ready: {names} did not answer.",
            "issues": [
                {
                    "code": f"ready.{r.name}",
                    "severity": "error",
                    "message": f"{r.name}: {r.error}",
                }
                for r in failed
            ],
            "checks": checks,
        },
        503,
        request,
    )


_VIEWS: Final[dict[str, Callable[[HttpRequest], HttpResponse]]] = {
    LIVENESS_PATH: healthz,
    READINESS_PATH: readyz,
}


class HealthCheckMiddleware:
    """Answers ``/healthz`` and ``/readyz`` (with or without a trailing slash) before every other
    middleware; put it first in ``MIDDLEWARE``. Any other path goes on untouched."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        view = _VIEWS.get(request.path_info.rstrip("/") or "/")
        if view is None:
            return self.get_response(request)
        if request.method not in ("GET", "HEAD"):
            response = _answer(
                {
                    "detail": f"Method {request.method} not allowed.",
                    "issues": [
                        {
                            "code": "method.not-allowed",
                            "severity": "error",
                            "message": "Probes use GET or HEAD.",
                        }
                    ],
                },
                405,
                request,
            )
            response["Allow"] = "GET, HEAD"
            return response
        return view(request)
