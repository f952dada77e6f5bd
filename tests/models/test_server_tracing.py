"""When models/server.py sets up tracing, and what it sets up: decided by the standard OpenTelemetry
variables alone, in the models' own interpreter (.venv-models). Whether the spans then arrive, and
nest under the studio's, is tests/integration/test_model_server_traces_integration.py's part."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

import pytest
from modelkit import ROOT, models_python

pytestmark = pytest.mark.models

# models.server (and KServe with it) is imported once; each case runs in a fork of that process,
# because a process's global tracer provider can be set only once.
SCRIPT = r"""
import json, os, sys
from models import server

CASES = json.loads(sys.argv[1])
for case in CASES:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        for name in [n for n in os.environ if n.startswith("OTEL_")]:
            del os.environ[name]
        os.environ.update(case)
        from opentelemetry import trace
        configured = server.configure_tracing()
        provider = trace.get_tracer_provider()
        resource = getattr(provider, "resource", None)
        answer = {
            "configured": configured,
            "provider": type(provider).__module__ + "." + type(provider).__name__,
            "service": None if resource is None else resource.attributes.get("service.name"),
            "sdk_imported": "opentelemetry.sdk.trace" in sys.modules,
        }
        os.write(write, json.dumps(answer).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        print(pipe.read())
    os.waitpid(pid, 0)
"""

ENDPOINT = "http://127.0.0.1:4318"
CASES: list[dict[str, str]] = [
    {},
    {"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT},
    {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"{ENDPOINT}/v1/traces"},
    {"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT, "OTEL_SERVICE_NAME": "my-predictor"},
    {"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT, "OTEL_SDK_DISABLED": "true"},
    {"OTEL_EXPORTER_OTLP_ENDPOINT": ""},
]


@pytest.fixture(scope="module")
def answers() -> list[dict[str, Any]]:
    env = {name: value for name, value in os.environ.items() if not name.startswith("OTEL_")}
    done = subprocess.run(
        [str(models_python()), "-c", SCRIPT, json.dumps(CASES)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert len(lines) == len(CASES), done.stdout
    return lines


NOT_SET_UP = {
    "configured": False,
    "provider": "opentelemetry.trace.ProxyTracerProvider",
    "service": None,
    "sdk_imported": False,
}


def set_up(service: str) -> dict[str, Any]:
    return {
        "configured": True,
        "provider": "opentelemetry.sdk.trace.TracerProvider",
        "service": service,
        "sdk_imported": True,
    }


def test_without_an_endpoint_nothing_is_set_up_or_imported(answers: list[dict[str, Any]]) -> None:
    assert answers[0] == NOT_SET_UP
    assert answers[5] == NOT_SET_UP  # set but empty is unset


def test_either_endpoint_variable_sets_up_the_sdk_as_the_demo_models_service(
    answers: list[dict[str, Any]],
) -> None:
    assert answers[1] == set_up("studio-demo-models")
    assert answers[2] == set_up("studio-demo-models")


def test_otel_service_name_renames_it_and_otel_sdk_disabled_turns_it_off(
    answers: list[dict[str, Any]],
) -> None:
    assert answers[3] == set_up("my-predictor")
    assert answers[4] == NOT_SET_UP
