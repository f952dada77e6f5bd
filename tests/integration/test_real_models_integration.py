"""The demo's real models on KServe's own model server (models/server.py, .venv-models) on loopback:
both protocols, Test connection against it, the demo suite on the photos, and face-recognition on the
astronaut's photo through the studio (API, Redis, Celery worker, engine) and through KServe's compiled
router (``shared/oracle/kserve-router``): the two answers are the same bytes."""

from __future__ import annotations

import base64
import copy
import io
import json
import os
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.test import APIClient
from runhelpers import wait_for_run

from execution.devtools import demo
from execution.models import Environment
from execution.services import environments
from tests.conftest import free_port

pytestmark = [pytest.mark.integration, pytest.mark.models]

FACE_SERVICES = (
    "face-detector",
    "feature-extractor",
    "face-db-employees",
    "face-db-visitors",
    "result-merger",
)
ORACLE = (
    Path(
        os.environ.get("KSERVE_ORACLE_DIR")
        or Path(__file__).resolve().parents[2].parent / "shared" / "oracle"
    )
    / "kserve-router"
)


def predict(url: str, model: str, body: Any) -> httpx.Response:
    return httpx.post(f"{url}/v1/models/{model}:predict", json=body, timeout=30)


def photo_b64(name: str = "astronaut.jpg") -> str:
    return base64.b64encode((demo.PHOTOS / name).read_bytes()).decode("ascii")


def test_the_model_server_answers_v1_and_v2_for_the_detector(real_models: str) -> None:
    answer = predict(real_models, "face-detector", demo.photo_request())
    assert answer.status_code == 200, answer.text
    (face,) = answer.json()["predictions"][0]["faces"]
    x, y, w, h = face["box"]
    assert abs(x - 177) <= 4 and abs(y - 66) <= 4 and abs(w - 95) <= 4 and abs(h - 95) <= 4
    assert httpx.get(f"{real_models}/v1/models/face-detector", timeout=5).json() == {
        "name": "face-detector",
        "ready": True,
    }
    metadata = httpx.get(f"{real_models}/v2/models/face-detector", timeout=5).json()
    assert metadata["inputs"] == [{"name": "image", "datatype": "BYTES", "shape": [-1]}]
    assert metadata["outputs"] == [{"name": "boxes", "datatype": "INT32", "shape": [-1, 4]}]
    assert httpx.get(f"{real_models}/v2/models/face-detector/ready", timeout=5).status_code == 200
    v2 = httpx.post(
        f"{real_models}/v2/models/face-detector/infer",
        json={"inputs": [{"name": "image", "datatype": "BYTES", "shape": [1], "data": [photo_b64()]}]},
        timeout=30,
    )
    assert v2.status_code == 200, v2.text
    (boxes,) = v2.json()["outputs"]
    assert boxes["name"] == "boxes" and boxes["datatype"] == "INT32" and boxes["shape"] == [1, 4]
    assert boxes["data"] == face["box"]
    rocket = predict(real_models, "face-detector", demo.photo_request("rocket.jpg")).json()
    assert rocket["predictions"][0]["faces"] == []


def test_bad_input_answers_400_with_what_and_where(real_models: str) -> None:
    bad = predict(real_models, "face-detector", {"instances": [{"image": {"b64": "bm90IGFuIGltYWdl"}}]})
    assert bad.status_code == 400
    assert bad.json()["error"].startswith("face-detector: instances[0].image: the image could not be decoded")
    v1_only = httpx.post(
        f"{real_models}/v2/models/feature-extractor/infer",
        json={"inputs": [{"name": "x", "datatype": "FP32", "shape": [1], "data": [1.0]}]},
        timeout=10,
    )
    assert v1_only.status_code == 400
    assert "v1 protocol only" in v1_only.json()["error"]


@pytest.mark.django_db
def test_test_connection_reads_the_real_servers_readiness_and_metadata(
    api: APIClient, user: Any, real_models: str, settings: Any
) -> None:
    settings.PROBE_TIMEOUT = 5.0
    environment = Environment.objects.create(
        name="real",
        owner=user,
        allow_loopback=True,
        service_urls={
            "detector": f"{real_models}/v2/models/face-detector/infer",
            "extractor": f"{real_models}/v1/models/feature-extractor:predict",
            "refused": f"http://127.0.0.1:{free_port()}/v1/models/face-detector:predict",
        },
    )
    response = api.get(f"/api/environments/{environment.pk}/probe/")
    assert response.status_code == 200, response.content
    results = {entry["service"]: entry for entry in response.json()["services"]}
    detector, extractor = results["detector"], results["extractor"]
    assert detector["protocol"] == "v2" and detector["ready"] is True and detector["error"] is None
    assert detector["inputs"] == [{"name": "image", "datatype": "BYTES", "shape": [-1]}]
    assert detector["outputs"] == [{"name": "boxes", "datatype": "INT32", "shape": [-1, 4]}]
    assert (
        extractor["protocol"] == "v1"
        and extractor["ready"] is True
        and extractor["model"] == "feature-extractor"
    )
    assert results["refused"]["error"]["kind"] == "refused"


@pytest.mark.django_db
def test_the_local_environment_maps_the_demo_models_and_the_photos_suite_passes(
    real_models: str, mock_server: Any, settings: Any
) -> None:
    settings.MOCKMODELS_URL = mock_server.url
    settings.LOCAL_MODELS_URL = real_models
    seeded = list(demo.seed())
    assert "Added 2 test cases to 'face-recognition'." in seeded
    local, _ = environments.ensure_local_environment()
    assert local.service_urls["face-detector"] == f"{real_models}/v1/models/face-detector:predict"
    assert set(local.service_urls) == set(environments.REAL_MODEL_SERVICES)
    samples = demo.demo_layout("face-recognition")["samples"]
    assert samples[0]["name"] == "Astronaut photo (real models)"
    out = io.StringIO()
    try:
        call_command("testgraph", "face-recognition", stdout=out, stderr=io.StringIO())
    except CommandError as exc:
        raise AssertionError(out.getvalue()) from exc
    assert out.getvalue().splitlines()[-1].startswith("2 cases: 2 passed, 0 failed"), out.getvalue()
    # The other demos still run on the mock server.
    out = io.StringIO()
    call_command("testgraph", "canary", stdout=out, stderr=io.StringIO())
    # Back to the mock alone: the seeded map follows (MODELS=0 on the next start).
    settings.LOCAL_MODELS_URL = ""
    local, _ = environments.ensure_local_environment()
    assert local.service_urls == {}


def _oracle_answer(spec: dict[str, Any], body: bytes) -> tuple[int, bytes]:
    from tests.engine.differential.harness import Oracle

    oracle = Oracle(ORACLE, spec, "")
    oracle.start()
    try:
        reply = httpx.post(
            f"http://127.0.0.1:{oracle.port}/",
            content=body,
            headers={"Content-Type": "application/json"},
            timeout=60,
        )
        return reply.status_code, reply.content
    finally:
        oracle.stop()


@pytest.mark.django_db(transaction=True)
def test_face_recognition_on_the_photo_through_the_studio_and_kserves_router_is_the_same_bytes(
    worker: Any, demo_graphs: list, api: APIClient, user: Any, real_models: str
) -> None:
    services = {name: f"{real_models}/v1/models/{name}:predict" for name in FACE_SERVICES}
    Environment.objects.create(name="real", owner=user, allow_loopback=True, service_urls=services)
    payload = demo.photo_request()
    started = api.post(
        "/api/graphs/face-recognition/runs/", {"payload": payload, "environment": "real"}, format="json"
    )
    assert started.status_code == 202, started.json()
    run = wait_for_run(started.json()["id"], timeout=60)
    assert run.status == "succeeded", run.error
    studio = run.response_body.encode()
    answer = json.loads(studio)
    (prediction,) = answer["predictions"]
    assert prediction["known_faces"] == 1
    assert prediction["identities"][0]["name"] == "Eileen Collins"
    assert prediction["identities"][0]["source"] == "employees"
    detail = api.get(f"/api/runs/{run.pk}/").json()
    assert [step["node"] + "/" + step["step_name"] for step in detail["steps"]][:2] == [
        "root/face-detector",
        "root/feature-extractor",
    ]

    if not ORACLE.exists():
        pytest.skip(f"KServe's router is not at {ORACLE} (set KSERVE_ORACLE_DIR): the studio side passed")
    spec = copy.deepcopy(demo.demo_manifest("face-recognition")["spec"])
    for node in spec["nodes"].values():
        for step in node["steps"]:
            if "serviceName" in step:
                step["serviceUrl"] = services[step.pop("serviceName")]
    status, oracle = _oracle_answer(spec, json.dumps(payload).encode())
    assert status == 200, oracle[:500]
    assert oracle == studio
