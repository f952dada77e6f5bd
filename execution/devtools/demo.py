"""Demo data for the one-machine setup: the demo user, the ``local`` environment (the built-in mock
model server) and demo graphs that run against it. ``seed()`` is idempotent: it creates only what
is missing, so ``manage.py seed_demo`` may run on every start."""

from __future__ import annotations

import base64
import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from django.conf import settings
from django.contrib.auth import get_user_model

from execution.cases import services as test_services
from execution.cases.models import GraphCase
from execution.services import environments
from graphs import services as graph_services
from graphs.models import Graph

DEMO_USER = "demo"
DEMO_PASSWORD = "demo-studio"  # the published demo login of the one-machine setup


def _manifest(name: str, nodes: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "serving.kserve.io/v1alpha1",
        "kind": "InferenceGraph",
        "metadata": {"name": name},
        "spec": {"nodes": nodes},
    }


# Each graph: (manifest, layout, description, a request that flows through it).
DEMO_GRAPHS: dict[str, tuple[dict[str, Any], dict[str, Any], str, Any]] = {
    "face-recognition": (
        _manifest(
            "face-recognition",
            {
                "root": {
                    "routerType": "Sequence",
                    "steps": [
                        {"name": "face-detector", "serviceName": "face-detector"},
                        {
                            "name": "feature-extractor",
                            "serviceName": "feature-extractor",
                            "data": "$response",
                        },
                        {"name": "match", "nodeName": "match", "data": "$response"},
                        {"name": "result-merger", "serviceName": "result-merger", "data": "$response"},
                    ],
                },
                "match": {
                    "routerType": "Ensemble",
                    "steps": [
                        {"name": "db-employees", "serviceName": "face-db-employees"},
                        {"name": "db-visitors", "serviceName": "face-db-visitors"},
                    ],
                },
            },
        ),
        {"nodes": {"root": {"x": 0, "y": 0}, "match": {"x": 420, "y": 0}}},
        "Detect faces, embed them, match them against two databases at once, merge the answers.",
        {"instances": [{"image": "lobby-camera-0001.jpg"}]},
    ),
    "cat-dog-breed": (
        _manifest(
            "cat-dog-breed",
            {
                "root": {
                    "routerType": "Sequence",
                    "steps": [
                        {"name": "cat-dog-classifier", "serviceName": "cat-dog-classifier"},
                        {
                            "name": "breed",
                            "serviceName": "dog-breed-classifier",
                            "condition": '[@this].#(predictions.0=="dog")',
                        },
                    ],
                }
            },
        ),
        {"nodes": {"root": {"x": 0, "y": 0}}},
        "KServe's image pipeline: classify cat or dog; only for a dog, ask the breed classifier.",
        {"instances": [{"animal": "dog", "image": "rex.jpg"}]},
    ),
    "animal-switch": (
        _manifest(
            "animal-switch",
            {
                "root": {
                    "routerType": "Switch",
                    "steps": [
                        {
                            "name": "cat",
                            "serviceName": "cat-breed-classifier",
                            "condition": 'instances.#(animal=="cat")',
                        },
                        {
                            "name": "dog",
                            "serviceName": "dog-breed-classifier",
                            "condition": 'instances.#(animal=="dog")',
                        },
                    ],
                }
            },
        ),
        {"nodes": {"root": {"x": 0, "y": 0}}},
        "A Switch on the request: cats go to the cat breed model, dogs to the dog breed model.",
        {"instances": [{"animal": "cat", "image": "tom.jpg"}]},
    ),
    "canary": (
        _manifest(
            "canary",
            {
                "root": {
                    "routerType": "Splitter",
                    "steps": [
                        {"name": "stable", "serviceName": "sentiment-v1", "weight": 90},
                        {"name": "canary", "serviceName": "sentiment-v2", "weight": 10},
                    ],
                }
            },
        ),
        {"nodes": {"root": {"x": 0, "y": 0}}},
        "A Splitter canary: 90% of requests to sentiment-v1, 10% to the new sentiment-v2.",
        {"instances": [{"text": "The new release is lovely."}]},
    ),
}


# Each demo graph's test suite (kind: InferenceGraphTest), green against the mock model server.
DEMO_TESTS = Path(__file__).resolve().parent / "demotests"

# The demo of a red suite: cat-dog-breed gets a version 2 with a typo in the breed condition
# ("Dog" never matches), which fails the dog case, and a version 3 that puts it right again (so
# the latest version, the one runs use by default, stays green). Run the suite on version 2 to
# see a failure and its diff: ``manage.py testgraph cat-dog-breed --version 2``.
BROKEN_DEMO = "cat-dog-breed"
BROKEN_CONDITION = '[@this].#(predictions.0=="Dog")'


# Photos for the real models (models/server.py), JPEG files made from scikit-image's sample images:
# the astronaut Eileen Collins (NASA, public domain; her face is in the "employees" gallery), Chelsea
# the cat, and a rocket on its launch pad (no face).
PHOTOS = Path(__file__).resolve().parents[2] / "models" / "samples"
REAL_DEMO = "face-recognition"  # the demo graph whose every step has a real model


def photo_request(photo: str = "astronaut.jpg") -> dict[str, Any]:
    """A v1 request carrying a photo as KServe's binary convention: ``{"image": {"b64": …}}``."""
    b64 = base64.b64encode((PHOTOS / photo).read_bytes()).decode("ascii")
    return {"instances": [{"image": {"b64": b64}}]}


def real_models() -> bool:
    """Does this studio's ``local`` environment send the demo's models to the real model server?"""
    return bool(settings.LOCAL_MODELS_URL)


def _real_tests() -> str:
    """face-recognition's suite for the real models: the photos (inline, base64) and what the
    models find on them."""
    cases = [
        {
            "name": "astronaut",
            "description": "One face, found where it is and recognised as an employee.",
            "request": {"payload": photo_request("astronaut.jpg")},
            "expectations": [
                {"status": 200},
                {"path": "predictions.0.faces.#", "step": "root/face-detector", "equals": 1},
                {"path": "predictions.0.identities.0.name", "equals": "Eileen Collins"},
                {"path": "predictions.0.identities.0.source", "equals": "employees"},
                {"path": "predictions.0.known_faces", "equals": 1},
            ],
        },
        {
            "name": "no face in a landscape",
            "description": "A rocket on its launch pad: the detector finds no face, nobody is matched.",
            "request": {"payload": photo_request("rocket.jpg")},
            "expectations": [
                {"status": 200},
                {"path": "predictions.0.faces.#", "step": "root/face-detector", "equals": 0},
                {"path": "predictions.0.known_faces", "equals": 0},
            ],
        },
    ]
    document = {
        "apiVersion": "tests.inferencegraph.studio/v1alpha1",
        "kind": "InferenceGraphTest",
        "graph": REAL_DEMO,
        "cases": cases,
    }
    return yaml.safe_dump(document, sort_keys=False, width=120)


def demo_tests(name: str) -> str:
    """The YAML test file of demo graph ``name`` (for face-recognition on the real models, when
    they are on, the photos' suite)."""
    if name == REAL_DEMO and real_models():
        return _real_tests()
    return (DEMO_TESTS / f"{name}.tests.yaml").read_text()


def _broken_then_fixed(graph: Graph, user: Any) -> None:
    manifest = demo_manifest(graph.name)
    broken = copy.deepcopy(manifest)
    broken["spec"]["nodes"]["root"]["steps"][1]["condition"] = BROKEN_CONDITION
    layout = demo_layout(graph.name)
    for number, (document, message) in enumerate(
        [
            (broken, 'Demo: the breed condition compares with "Dog" (its test suite fails the dog case)'),
            (manifest, 'Demo: compare with "dog" again (the suite is green)'),
        ],
        start=1,
    ):
        graph_services.graph_version_create(
            graph=Graph.objects.get(pk=graph.pk),
            manifest=document,
            layout=layout,
            author=user,
            message=message,
            base_version=number,
        )


def demo_manifest(name: str) -> dict[str, Any]:
    return copy.deepcopy(DEMO_GRAPHS[name][0])


def demo_request(name: str) -> Any:
    return copy.deepcopy(DEMO_GRAPHS[name][3])


# The layout key under which a version carries sample payloads; the editor's Run panel offers them
# (frontend/src/panels/run/samples.ts, ``graphSamples``) and starts with the first.
SAMPLES_KEY = "samples"


def demo_layout(name: str) -> dict[str, Any]:
    """The demo graph's layout, carrying its request as the graph's sample payload (face-recognition
    also carries the astronaut's photo: first when the real models are on, else second)."""
    layout = copy.deepcopy(DEMO_GRAPHS[name][1])
    samples = [{"name": "Demo request", "payload": demo_request(name)}]
    # The photos sit beside the model server in a checkout; an image of the studio alone has none.
    if name == REAL_DEMO and (PHOTOS / "astronaut.jpg").is_file():
        photo = {"name": "Astronaut photo (real models)", "payload": photo_request()}
        samples = [photo, *samples] if real_models() else [*samples, photo]
    layout[SAMPLES_KEY] = samples
    return layout


def seed() -> Iterator[str]:
    """Create what is missing; yields a line for each thing created. Safe to call on every start."""
    User = get_user_model()
    user, created = User.objects.get_or_create(username=DEMO_USER, defaults={"is_staff": True})
    if created:
        user.set_password(DEMO_PASSWORD)
        user.save()
        yield f"Created the demo user {DEMO_USER!r} (password {DEMO_PASSWORD!r})."
    environment, created = environments.ensure_local_environment()
    if created:
        yield f"Created the environment {environment.name!r} -> {environment.url_template}"
    for name, (manifest, _layout, description, _request) in DEMO_GRAPHS.items():
        graph = Graph.objects.filter(name=name).select_related("latest_version", "owner").first()
        if graph is None:
            graph = graph_services.graph_create(
                owner=user,
                name=name,
                description=description,
                manifest=copy.deepcopy(manifest),
                layout=demo_layout(name),
                message="Demo graph",
            )
            yield f"Created the demo graph {name!r}."
            if name == BROKEN_DEMO:
                _broken_then_fixed(graph, user)
                graph = Graph.objects.select_related("latest_version", "owner").get(pk=graph.pk)
        if not GraphCase.objects.filter(graph=graph).exists():
            cases = test_services.test_cases_import(graph=graph, user=graph.owner, text=demo_tests(name))
            yield f"Added {len(cases)} test cases to {name!r}."
