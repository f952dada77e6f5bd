"""docker-compose.yml and the Dockerfile agree with the code (no Docker engine runs here)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core.management import get_commands

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = (ROOT / "config" / "settings.py").read_text()


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def command_words(service: dict[str, Any]) -> list[str]:
    command = service.get("command", [])
    return shlex.split(command) if isinstance(command, str) else list(command)


def test_every_service_the_studio_needs_is_there(compose: dict[str, Any]) -> None:
    assert set(compose["services"]) >= {"web", "worker", "beat", "db", "redis", "mockmodels"}


def test_web_runs_migrations_then_a_production_server(compose: dict[str, Any]) -> None:
    words = command_words(compose["services"]["web"])
    text = " ".join(words)
    assert "manage.py migrate" in text
    assert "gunicorn config.wsgi:application" in text
    assert "runserver" not in text


def test_worker_and_beat_use_the_celery_app_of_the_code(compose: dict[str, Any]) -> None:
    assert (ROOT / "config" / "celery_app.py").exists()
    worker = command_words(compose["services"]["worker"])
    assert worker[:4] == ["celery", "-A", "config.celery_app", "worker"]
    assert "--pool=threads" in worker
    assert command_words(compose["services"]["beat"])[:4] == ["celery", "-A", "config.celery_app", "beat"]
    assert "ports" not in compose["services"]["worker"], "workers take no traffic: scale them freely"


def test_exactly_one_service_schedules_and_no_worker_embeds_a_scheduler(compose: dict[str, Any]) -> None:
    schedulers = [
        name
        for name, service in compose["services"].items()
        if {"beat", "--beat", "-B"} & set(command_words(service))
    ]
    assert schedulers == ["beat"]
    assert compose["services"]["beat"].get("deploy", {}).get("replicas", 1) == 1


def test_management_commands_named_in_compose_exist(compose: dict[str, Any]) -> None:
    commands = get_commands()
    for name, service in compose["services"].items():
        text = " ".join(command_words(service))
        for used in re.findall(r"manage\.py (\w+)", text):
            assert used in commands, f"service {name} runs manage.py {used}, which does not exist"


def test_every_environment_variable_is_read_by_the_settings(compose: dict[str, Any]) -> None:
    env = compose["x-studio-env"]
    assert {"DJANGO_SECRET_KEY", "DATABASE_URL", "REDIS_URL", "ALLOWED_HOSTS"} <= set(env)
    for name in env:
        assert f'"{name}"' in SETTINGS, f"{name} is set in compose but config/settings.py never reads it"
    assert env["DJANGO_DEBUG"] == "0"
    assert env["DATABASE_URL"].startswith("postgres://") and "@db:5432/" in env["DATABASE_URL"]
    assert env["REDIS_URL"].startswith("redis://redis:6379")
    for name in ("web", "worker", "beat", "mockmodels"):
        assert compose["services"][name]["environment"] == env


def test_plain_http_compose_turns_https_redirect_and_hsts_off(compose: dict[str, Any]) -> None:
    """The settings default to HTTPS with DJANGO_DEBUG=0; compose serves http://localhost:8000/."""
    env = compose["x-studio-env"]
    for name in ("DJANGO_SECURE_COOKIES", "DJANGO_SECURE_SSL_REDIRECT", "DJANGO_HSTS_SECONDS"):
        assert re.fullmatch(rf"\$\{{{name}:-0\}}", env[name]), name


def test_no_secret_is_written_into_the_file(compose: dict[str, Any]) -> None:
    assert compose["x-studio-env"]["DJANGO_SECRET_KEY"].startswith("${DJANGO_SECRET_KEY:?")


def test_long_running_services_have_healthchecks(compose: dict[str, Any]) -> None:
    for name in ("web", "worker", "db", "redis", "mockmodels"):
        assert "healthcheck" in compose["services"][name], name
    for name in ("web", "worker"):
        depends = compose["services"][name]["depends_on"]
        assert depends["db"]["condition"] == depends["redis"]["condition"] == "service_healthy"


def test_dockerfile_ships_every_package_and_the_built_frontend() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    for folder in ("config/", "graphs/", "execution/", "templates/"):
        assert f"COPY {folder}" in dockerfile
    assert "npm run build" in dockerfile and "frontend/dist" in dockerfile
    assert "collectstatic" in dockerfile
    user = re.search(r"^USER (\d+)(?::\d+)?$", dockerfile, re.MULTILINE)
    assert user is not None and int(user.group(1)) > 0, "the image runs as a numeric non-root user"


def test_web_threads_outnumber_the_event_streams_a_process_serves(compose: dict[str, Any]) -> None:
    """Each open event stream holds a gthread thread: streams must never take every thread."""
    from django.conf import settings

    text = " ".join(command_words(compose["services"]["web"]))
    threads = re.search(r"--threads (\d+)", text)
    assert "--worker-class gthread" in text and threads is not None
    assert int(threads.group(1)) > settings.RUN_SSE_MAX_STREAMS
    script = (ROOT / "scripts" / "run.sh").read_text()
    default = re.search(r"WEB_THREADS=\$\{WEB_THREADS:-(\d+)\}", script)
    assert default is not None and int(default.group(1)) > settings.RUN_SSE_MAX_STREAMS
