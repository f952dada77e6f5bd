"""Authentication, CSRF, login rate limiting and production settings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.django_db
def test_pages_redirect_anonymous_users_to_login() -> None:
    client = Client()
    for url in ["/", "/graphs/anything/"]:
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/login/")
    assert client.get("/login/").status_code == 200


@pytest.mark.django_db
def test_login_attempts_are_rate_limited_per_user_and_address(user: Any, settings: Any) -> None:
    settings.LOGIN_MAX_FAILURES = 3
    client = Client()
    for _ in range(3):
        assert client.post("/login/", {"username": "alice", "password": "wrong"}).status_code == 200
    blocked = client.post("/login/", {"username": "alice", "password": "alice-password-1"})
    assert blocked.status_code == 429
    assert b"Too many failed sign-in attempts" in blocked.content
    # another user from the same address is not locked out
    assert client.post("/login/", {"username": "bob", "password": "x"}).status_code == 200


@pytest.mark.django_db
def test_login_with_the_right_password_works(user: Any) -> None:
    client = Client()
    response = client.post("/login/", {"username": "alice", "password": "alice-password-1"})
    assert response.status_code == 302
    assert client.get("/api/graphs/").status_code == 200


def _production_env(**extra: str) -> dict[str, str]:
    """This process's environment minus every studio setting, plus ``extra``: what a deployment that
    sets only ``extra`` sees. (The browser tests set DJANGO_ALLOW_ASYNC_UNSAFE for Playwright, which
    check --deploy rightly refuses.)"""
    inherited = {
        k: v
        for k, v in os.environ.items()
        if k != "DJANGO_ALLOW_ASYNC_UNSAFE"
        and not k.startswith(("DJANGO_", "STUDIO_", "CSRF_", "ALLOWED_HOSTS"))
    }
    return {**inherited, "DJANGO_SETTINGS_MODULE": "config.settings", **extra}


def _check_deploy(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_check_deploy_is_clean_with_production_defaults() -> None:
    """DJANGO_DEBUG=0 and a secret key, nothing else: HTTPS redirect and HSTS are on by default."""
    env = _production_env(DJANGO_DEBUG="0", DJANGO_SECRET_KEY="a-long-random-production-key-" + "x" * 40)
    result = _check_deploy(env)
    assert result.returncode == 0, result.stdout + result.stderr


def test_https_settings_can_each_be_turned_off_by_environment() -> None:
    """What docker-compose.yml does for its plain-HTTP localhost: no redirect, no HSTS."""
    env = _production_env(
        DJANGO_DEBUG="0",
        DJANGO_SECRET_KEY="a-long-random-production-key-" + "x" * 40,
        DJANGO_SECURE_SSL_REDIRECT="0",
        DJANGO_HSTS_SECONDS="0",
        DJANGO_HSTS_PRELOAD="0",
    )
    probe = (
        "from django.conf import settings as s; "
        "print(s.SECURE_SSL_REDIRECT, s.SECURE_HSTS_SECONDS, s.SECURE_HSTS_PRELOAD, s.SECURE_PROXY_SSL_HEADER)"
    )
    result = subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(); {probe}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.stdout.split(maxsplit=3) == ["False", "0", "False", "('HTTP_X_FORWARDED_PROTO', 'https')\n"]
    defaults = _production_env(DJANGO_DEBUG="0", DJANGO_SECRET_KEY="k" * 50)
    result = subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(); {probe}"],
        cwd=ROOT,
        env=defaults,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    # the defaults: redirect, HSTS for 60 s (cookiecutter-django's first value), preload
    assert result.stdout.split()[:3] == ["True", "60", "True"], result.stderr


def test_settings_refuse_to_start_without_a_secret_key_when_debug_is_off() -> None:
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SECRET_KEY"}
    env.update({"DJANGO_SETTINGS_MODULE": "config.settings", "DJANGO_DEBUG": "0"})
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd="/tmp",
        env={**env, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY" in result.stderr
