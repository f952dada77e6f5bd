"""docker-compose.yml and the Dockerfile agree with the code (no Docker engine runs here)."""

from __future__ import annotations

import ast
import re
import shlex
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import dockerfile
import pytest
import yaml
from django.core.management import get_commands

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = (ROOT / "config" / "settings.py").read_text()
stages = dockerfile.stages


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def command_words(service: dict[str, Any]) -> list[str]:
    command = service.get("command", [])
    return shlex.split(command) if isinstance(command, str) else list(command)


def test_every_service_the_studio_needs_is_there(compose: dict[str, Any]) -> None:
    assert set(compose["services"]) >= {"web", "worker", "beat", "db", "redis", "mockmodels", "models"}


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
    for name in ("web", "worker", "db", "redis", "mockmodels", "models"):
        assert "healthcheck" in compose["services"][name], name
    for name in ("web", "worker"):
        depends = compose["services"][name]["depends_on"]
        assert depends["db"]["condition"] == depends["redis"]["condition"] == "service_healthy"


def test_dockerfile_ships_every_package_and_the_built_frontend() -> None:
    built = stages()
    # The studio's image is the last stage: what `docker build .` makes.
    assert list(built)[-1] == "studio"
    studio = built["studio"]
    # Every package pyproject.toml installs and every app of the project's own that Django loads
    # (a new app that the image lacks fails only when the image starts).
    from django.conf import settings

    included = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    packages = {pattern.rstrip("*") for pattern in included["include"]}
    apps = {app.split(".")[0] for app in settings.INSTALLED_APPS if (ROOT / app.split(".")[0]).is_dir()}
    install = studio.index("RUN pip install")
    for folder in sorted(packages | apps):
        assert f"COPY {folder}/ {folder}/" in studio[:install], f"the studio image lacks {folder}/"
    compiled = re.search(r"compileall -q (.+)$", studio, re.MULTILINE)
    assert compiled is not None and set(compiled.group(1).split()) >= packages
    assert "COPY templates/ templates/" in studio
    assert (
        "npm run build" in built["frontend"]
        and "COPY --from=frontend /src/frontend/dist frontend/dist" in studio
    )
    assert "collectstatic" in studio
    assert dockerfile.user(studio)[0] > 0, "the image runs as a numeric non-root user"
    # The demo's photos: `seed_demo` reads them for face-recognition's suite when LOCAL_MODELS_URL
    # is set, as it is in compose.
    from execution.devtools import demo

    photos = demo.PHOTOS.relative_to(ROOT).as_posix()
    assert f"COPY {photos}/ {photos}/" in studio
    assert "COPY models/ " not in studio and "models/server.py" not in studio


def test_the_studios_services_build_the_studio_stage_and_the_models_their_own(
    compose: dict[str, Any],
) -> None:
    targets = {
        name: service["build"]["target"]
        for name, service in compose["services"].items()
        if "build" in service
    }
    assert targets == {
        "web": "studio",
        "worker": "studio",
        "beat": "studio",
        "mockmodels": "studio",
        "models": "models",
    }
    assert set(targets.values()) <= set(stages())


def model_server_options() -> set[str]:
    """The options models/server.py's argument parser takes (read from its source: the models'
    packages are not installed beside the studio's)."""
    tree = ast.parse((ROOT / "models" / "server.py").read_text())
    return {
        str(node.args[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "add_argument"
        and isinstance(node.args[0], ast.Constant)
    }


def models_command() -> list[str]:
    """The models stage's CMD, with the shell's words: ``sh -c "exec python -m models.server …"``."""
    cmd = re.search(r"^CMD (\[.*\])$", stages()["models"], re.MULTILINE)
    assert cmd is not None, "the models stage has an exec-form CMD"
    words = yaml.safe_load(cmd.group(1))
    assert words[:2] == ["sh", "-c"] and len(words) == 3, "a shell expands MODELS_PORT"
    return shlex.split(words[2])


def test_the_models_stage_runs_kserves_model_server_as_make_run_does() -> None:
    stage = stages()["models"]
    assert "pip install --no-cache-dir -r models/requirements.txt" in stage
    # Every module of the models package the server imports is in the image.
    tree = ast.parse((ROOT / "models" / "server.py").read_text())
    imported = {
        a.name
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and n.module == "models"
        for a in n.names
    }
    copied = re.search(r"^COPY (.+) models/$", stage, re.MULTILINE)
    assert copied is not None and imported
    assert {f"models/{name}.py" for name in imported} | {"models/server.py", "models/__init__.py"} <= set(
        copied.group(1).split()
    )

    words = models_command()
    assert words[:4] == ["exec", "python", "-m", "models.server"]
    options = dict(zip(words[4::2], words[5::2], strict=True))
    assert set(options) <= model_server_options()
    # On every interface of the container, on the port the variable names, as scripts/run.sh does.
    assert options == {"--host": "0.0.0.0", "--http_port": "$MODELS_PORT"}
    script = (ROOT / "scripts" / "run.sh").read_text()
    assert '--http_port "$MODELS_PORT"' in script
    default = re.search(r"MODELS_PORT=\$\{MODELS_PORT:-(\d+)\}", script)
    assert default is not None
    assert re.search(rf"^ENV .*\bMODELS_PORT={default.group(1)}\b", stage, re.MULTILINE)
    assert re.search(rf"^EXPOSE {default.group(1)}$", stage, re.MULTILINE)


def test_the_models_image_runs_as_a_numeric_non_root_user() -> None:
    stage = stages()["models"]
    uid, gid = dockerfile.user(stage)
    assert uid > 0 and gid is not None and gid > 0
    assert re.search(rf"useradd .*--uid {uid}\b", stage), "the user exists in the image"
    # Nothing after USER runs as root again.
    assert stage.rindex("USER ") > stage.rindex("RUN ")


def test_the_local_environment_points_at_the_models_service(compose: dict[str, Any]) -> None:
    models = compose["services"]["models"]
    port = models["environment"]["MODELS_PORT"]
    url = re.fullmatch(r"\$\{LOCAL_MODELS_URL-(.+)\}", compose["x-studio-env"]["LOCAL_MODELS_URL"])
    assert url is not None, "LOCAL_MODELS_URL= (empty) turns the real models off, as MODELS=0 does"
    parts = urlsplit(url.group(1))
    assert (parts.scheme, parts.hostname, str(parts.port)) == ("http", "models", port)
    # The healthcheck asks the server itself, on its port, whether its models are ready.
    check = " ".join(models["healthcheck"]["test"])
    assert f"http://127.0.0.1:{port}/v2/health/ready" in check
    # None of the studio's settings (its secret key above all) reach the model server.
    assert not set(models["environment"]) & set(compose["x-studio-env"])


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


def test_the_build_context_leaves_out_what_the_checkout_makes_and_its_secrets() -> None:
    """Everything .gitignore names (virtualenvs, node_modules, the built frontend, the database,
    .env) stays out of `docker build`'s context: a local node_modules would otherwise be copied over
    the image's own, and .env and the database would be baked into the image."""
    ignored = {
        line.strip().lstrip("/").rstrip("/")
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    for line in (ROOT / ".gitignore").read_text().splitlines():
        name = line.strip().lstrip("/").rstrip("/")
        if name and not line.startswith("#"):
            assert name in ignored or f"**/{name}" in ignored, f".dockerignore lacks {line.strip()}"
    assert ".git" in ignored
