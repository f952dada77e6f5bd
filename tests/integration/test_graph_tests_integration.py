"""Save a real run as a test and run it again: API -> Redis -> Celery worker -> engine -> mock model
server, then ``save-as-test`` on the stored run (its persisted events), then ``testgraph NAME``."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from runhelpers import run_testgraph, wait_for_run

from execution.devtools import demo
from tests.conftest import client_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize(
    ("graph", "payload", "seed", "expectations"),
    [
        (
            "canary",
            demo.demo_request("canary"),
            20,  # random.Random(20).randrange(100) == 92: the canary route
            [
                {"status": 200},
                {
                    "body": {"predictions": [{"label": "negative", "score": 0.922, "model_version": "v2"}]},
                    "match": "subset",
                },
                {"route": "root", "took": "canary"},
            ],
        ),
        (
            "animal-switch",
            {"instances": [{"animal": "fish"}]},
            None,
            [
                {"status": 404},
                {
                    "body": {
                        "error": "Failed to process request",
                        "cause": "None of the routes matched with the switch condition",
                    },
                    "match": "subset",
                },
                {"route": "root", "took": None},
            ],
        ),
    ],
)
def test_a_run_saved_as_a_test_passes_when_run_again(
    worker: Any, demo_graphs: list, graph: str, payload: Any, seed: int | None, expectations: list
) -> None:
    api = client_for(get_user_model().objects.get(username=demo.DEMO_USER))
    body: dict[str, Any] = {"payload": payload, "headers": {"Authorization": "Bearer s3cret"}}
    if seed is not None:
        body["seed"] = seed
    started = api.post(f"/api/graphs/{graph}/runs/", body, format="json")
    assert started.status_code == 202, started.json()
    run = wait_for_run(started.json()["id"])
    assert run.status in ("succeeded", "failed")

    saved = api.post(f"/api/runs/{run.pk}/save-as-test/", {"name": "from a run"}, format="json")
    assert saved.status_code == 201, saved.json()
    document = saved.json()["document"]
    assert document["expectations"] == expectations
    assert document["request"]["headers"] == {"Authorization": "Bearer ***"}
    assert document["environment"] == "local" and document["seed"] == run.seed

    out, code = run_testgraph(graph, "--case", "from a run")
    assert code == 0, out
    assert out.splitlines()[1].startswith("PASS  from a run")
