"""An environment's KServe release: set on the API, stored by its canonical name, checked against
the header patterns, and the release a run in that environment reproduces."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from execution.models import Environment
from execution.services import environments

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("quick_run_settings", "enqueued")]


def _create(api: APIClient, **fields: Any) -> Any:
    return api.post("/api/environments/", {"name": "cluster", **fields}, format="json")


def test_the_default_is_the_newest_release(api: APIClient) -> None:
    body = _create(api).json()
    assert body["kserve_version"] == "master"
    environment = Environment.objects.get(pk=body["id"])
    config = environments.engine_config(
        environments.environment_config(environment), graph_namespace="default"
    )
    assert config.release.name == "master"


def test_an_alias_is_stored_as_the_release_with_that_router_and_reaches_the_engine(api: APIClient) -> None:
    response = _create(api, kserve_version="v0.17.1")
    assert response.status_code == 201, response.json()
    assert response.json()["kserve_version"] == "v0.16.0"
    environment = Environment.objects.get(pk=response.json()["id"])
    snapshot = environments.environment_config(environment)
    assert snapshot["kserve_version"] == "v0.16.0"
    assert environments.engine_config(snapshot, graph_namespace="default").release.name == "v0.16.0"
    # A run stored before the setting existed ran as the newest release.
    old = {k: v for k, v in snapshot.items() if k != "kserve_version"}
    assert environments.engine_config(old, graph_namespace="default").release.name == "master"
    patched = api.patch(f"/api/environments/{environment.pk}/", {"kserve_version": "0.13.0"}, format="json")
    assert patched.status_code == 200 and patched.json()["kserve_version"] == "v0.13.1"


def test_an_unknown_release_is_refused_naming_the_known_ones(api: APIClient) -> None:
    response = _create(api, kserve_version="v0.10.0")
    assert response.status_code == 400
    issue = next(i for i in response.json()["issues"] if i["path"] == "kserve_version")
    assert issue["message"].startswith("unknown KServe release 'v0.10.0': choose one of v0.11.2, v0.11.1")


def test_v0_11_takes_header_names_not_patterns(api: APIClient) -> None:
    response = _create(api, kserve_version="v0.11.2", propagate_headers=["^X-Request-Id$", "X-Request-Id"])
    assert response.status_code == 400
    issues = response.json()["issues"]
    assert [i["path"] for i in issues] == ["propagate_headers[0]"]
    assert "KServe v0.11.2 compares header names exactly" in issues[0]["message"]
    assert _create(api, kserve_version="v0.11.2", propagate_headers=["X-Request-Id"]).status_code == 201


def test_a_run_shows_the_release_it_runs_as_in_its_config_and_queued_event(
    api: APIClient, graph: Any, local_env: Any
) -> None:
    """What the run console shows: the release in the run's config snapshot and its run.queued."""
    from execution.models import RunEvent

    environment_id = _create(api, kserve_version="v0.14.1").json()["id"]
    started = api.post(
        "/api/graphs/model-chainer/runs/",
        {"payload": {"instances": [[1]]}, "environment": "cluster"},
        format="json",
    )
    assert started.status_code == 202, started.json()
    body = api.get(f"/api/runs/{started.json()['id']}/").json()
    assert body["environment"]["id"] == environment_id
    assert body["config"]["kserve_version"] == "v0.14.1"
    queued = RunEvent.objects.get(run_id=body["id"], type="run.queued")
    assert queued.data["kserve_version"] == "v0.14.1"
