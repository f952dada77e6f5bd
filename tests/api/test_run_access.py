"""What is private stays private: a run, its steps, events, rerun, saved case and the suite runs
that carry it are readable by whoever may see its environment, and do not exist (404) for anyone
else, as the private environment itself does not; naming another user's private environment is
answered as naming one that does not exist.

The cast: alice owns the graph and a private environment (whose URLs carry an api key); bob is a
viewer member of the graph; carol is neither; dave is staff.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from execution import events
from execution.cases.models import GraphCase
from execution.models import Environment, Run, RunStep
from execution.services import environments
from execution.suites.models import SuiteCaseResult, SuiteRun
from graphs import services as graph_services
from tests.conftest import client_for

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("quick_run_settings", "enqueued")]

SECRET_URL = "http://10.1.2.3:8080/v1/models/classifier:predict?api_key=s3cr3t-key"


@pytest.fixture
def cast(user: Any, other_user: Any, graph: Any, local_env: Any) -> dict[str, APIClient]:
    users = get_user_model().objects
    carol = users.create_user("carol", password="carol-password-1")
    dave = users.create_user("dave", password="dave-password-1", is_staff=True)
    graph_services.graph_member_add(graph=graph, user=other_user, actor=user, role="viewer")
    return {
        "alice": client_for(user),
        "bob": client_for(other_user),
        "carol": client_for(carol),
        "dave": client_for(dave),
    }


@pytest.fixture
def lab(user: Any) -> Environment:
    return environments.environment_create(
        owner=user,
        name="alices-lab",
        service_urls={"classifier": SECRET_URL},
        allow_networks=["10.1.0.0/16"],
    )


def _start(client: APIClient, **body: Any) -> Any:
    return client.post(
        "/api/graphs/model-chainer/runs/", {"payload": {"instances": [[1, 2]]}, **body}, format="json"
    )


def _private_run(cast: dict[str, APIClient], lab: Environment) -> str:
    """alice's run in her private lab, with a step and events that name the secret URL."""
    response = _start(cast["alice"], environment="alices-lab")
    assert response.status_code == 202, response.json()
    run_id = response.json()["id"]
    RunStep.objects.create(
        run_id=run_id, call_id="root/0", node="root", step_index=0, kind="http", target=SECRET_URL,
        outcome="error", error=f"Post {SECRET_URL!r}: connection refused",
    )  # fmt: skip
    events.emit(run_id, "step.started", {"call_id": "root/0", "target": SECRET_URL})
    return str(run_id)


SEES = {"alice": True, "bob": False, "carol": False, "dave": True}


@pytest.mark.parametrize("who", list(SEES))
def test_a_run_in_a_private_environment_is_read_only_by_who_may_see_the_environment(
    who: str, cast: dict[str, APIClient], lab: Environment
) -> None:
    run_id = _private_run(cast, lab)
    client = cast[who]
    detail = client.get(f"/api/runs/{run_id}/")
    listing = client.get("/api/graphs/model-chainer/runs/")
    by_env = client.get(f"/api/graphs/model-chainer/runs/?environment={lab.pk}")
    log = client.get(f"/api/runs/{run_id}/events/?format=json")
    if SEES[who]:
        assert detail.status_code == 200 and detail.json()["steps"][0]["target"] == SECRET_URL
        assert [r["id"] for r in listing.json()["results"]] == [run_id]
        assert by_env.json()["count"] == 1
        assert log.status_code == 200 and SECRET_URL in json.dumps(log.json())
        return
    for response in (detail, log):
        assert response.status_code == 404, response.json()
        assert "s3cr3t" not in json.dumps(response.json())
    assert detail.json() == client.get(f"/api/runs/{uuid.uuid4()}/").json() | {
        "detail": f"There is no run {run_id}."
    }
    assert listing.json()["count"] == 0 and by_env.json()["count"] == 0
    assert client.get(f"/api/runs/{run_id}/events/", HTTP_ACCEPT="text/event-stream").status_code == 404
    # nothing may be done with it either: rerun, cancel, save as a test case
    before = (Run.objects.count(), GraphCase.objects.count())
    assert client.post(f"/api/runs/{run_id}/rerun/").status_code == 404
    assert client.post(f"/api/runs/{run_id}/cancel/").status_code == 404
    saved = client.post(f"/api/runs/{run_id}/save-as-test/", {"name": "borrowed"}, format="json")
    assert saved.status_code == 404
    assert (Run.objects.count(), GraphCase.objects.count()) == before
    assert Run.objects.get(pk=run_id).status == "queued"


def test_runs_in_shared_environments_stay_readable_by_every_user(
    cast: dict[str, APIClient], lab: Environment
) -> None:
    shared = _start(cast["alice"]).json()["id"]  # the system default, shared with everyone
    _private_run(cast, lab)
    for who, client in cast.items():
        assert client.get(f"/api/runs/{shared}/").status_code == 200, who
        listed = [r["id"] for r in client.get("/api/graphs/model-chainer/runs/").json()["results"]]
        assert shared in listed, who
        assert len(listed) == (2 if SEES[who] else 1), who


def test_once_an_environment_is_deleted_its_runs_are_the_starters_and_staffs(
    cast: dict[str, APIClient], lab: Environment, graph: Any, user: Any
) -> None:
    """The run keeps the environment's snapshot; so do the suite runs that carried it."""
    run_id = _private_run(cast, lab)
    suite = _suite(graph, user, run_id, lab)
    Environment.objects.filter(pk=lab.pk).delete()
    assert Run.objects.get(pk=run_id).config["service_urls"] == {"classifier": SECRET_URL}
    for who, client in cast.items():
        code = 200 if SEES[who] else 404
        assert client.get(f"/api/runs/{run_id}/").status_code == code, who
        assert client.get(f"/api/suite-runs/{suite.pk}/").status_code == code, who


def test_a_shared_environment_made_private_again_hides_its_runs(
    cast: dict[str, APIClient], lab: Environment, user: Any
) -> None:
    run_id = _private_run(cast, lab)
    Environment.objects.filter(pk=lab.pk).update(visibility="shared")
    assert cast["carol"].get(f"/api/runs/{run_id}/").status_code == 200
    Environment.objects.filter(pk=lab.pk).update(visibility="private")
    assert cast["carol"].get(f"/api/runs/{run_id}/").status_code == 404


def _suite(graph: Any, user: Any, run_id: str | None, environment: Environment | None) -> SuiteRun:
    suite = SuiteRun.objects.create(
        graph=graph, version=graph.versions.get(number=1), status="failed", concurrency=1, seed=1,
        cases_digest="x", created_by=user, environment=environment,
        environment_name=environment.name if environment else "", total=1, failed=1,
    )  # fmt: skip
    SuiteCaseResult.objects.create(
        suite=suite, position=0, case_ref=1, name="case", document={}, environment=environment,
        outcome="failed", run_id=run_id, error=f"called {SECRET_URL}",
    )  # fmt: skip
    return suite


@pytest.mark.parametrize("who", list(SEES))
def test_a_suite_run_in_a_private_environment_is_read_only_by_who_may_see_the_environment(
    who: str, cast: dict[str, APIClient], lab: Environment, graph: Any, user: Any, local_env: Any
) -> None:
    run_id = _private_run(cast, lab)
    private = _suite(graph, user, run_id, lab)
    # cases each in their own environment: one of them private is enough to hide the suite run
    mixed = _suite(graph, user, None, None)
    SuiteCaseResult.objects.create(
        suite=mixed, position=1, case_ref=2, name="other", document={}, environment=lab, outcome="pending"
    )
    shared = _suite(graph, user, _start(cast["alice"]).json()["id"], local_env)
    client = cast[who]
    listed = {s["id"] for s in client.get("/api/graphs/model-chainer/suite-runs/").json()["results"]}
    hidden = {str(private.pk), str(mixed.pk)}
    assert str(shared.pk) in listed
    assert (hidden <= listed) if SEES[who] else not (hidden & listed)
    code = 200 if SEES[who] else 404
    for suite in (private, mixed):
        for url in (f"/api/suite-runs/{suite.pk}/", f"/api/suite-runs/{suite.pk}/events/?format=json"):
            response = client.get(url)
            assert response.status_code == code, (url, response.json())
    compare = client.get(f"/api/suite-runs/compare/?a={private.pk}&b={shared.pk}")
    assert compare.status_code == (200 if SEES[who] else 404)
    if not SEES[who]:
        assert "s3cr3t" not in json.dumps(compare.json())
    assert client.get(f"/api/suite-runs/{shared.pk}/").status_code == 200


@pytest.mark.parametrize("ref", ["alices-lab", "lab-id"])
def test_naming_another_users_private_environment_is_answered_as_naming_none(
    ref: str, cast: dict[str, APIClient], lab: Environment, graph: Any, user: Any
) -> None:
    """For a run, a suite run and a comparison alike: 400 ``run.environment-unknown``, the body
    one that does not exist gets (with the reference in place of the other)."""
    mine = str(lab.pk) if ref == "lab-id" else ref
    missing = str(lab.pk + 1000) if ref == "lab-id" else "no-such-lab"
    GraphCase.objects.create(
        graph=graph, name="a case", document={"request": {"payload": {"instances": [[1]]}}}, created_by=user
    )
    for who in ("bob", "carol"):
        client = cast[who]
        starts: list[tuple[str, dict[str, Any]]] = [
            ("/api/graphs/model-chainer/runs/", {"payload": {"instances": [[1]]}}),
            ("/api/graphs/model-chainer/suite-runs/", {"version": 1}),
        ]
        for url, body in starts:
            private = client.post(url, {**body, "environment": mine}, format="json")
            unknown = client.post(url, {**body, "environment": missing}, format="json")
            assert private.status_code == unknown.status_code == 400, (who, url, private.json())
            assert private.json() == json.loads(json.dumps(unknown.json()).replace(missing, mine))
            assert private.json()["issues"][0]["code"] == "run.environment-unknown"
    assert not Run.objects.exists() and not SuiteRun.objects.exists()
    assert _start(cast["alice"], environment=mine).status_code == 202
    assert _start(cast["dave"], environment=mine).status_code == 202


def test_a_case_naming_another_users_private_environment_errors_as_for_a_missing_one(
    cast: dict[str, APIClient], lab: Environment, graph: Any, user: Any
) -> None:
    for name, environment in (("private", "alices-lab"), ("missing", "no-such-lab")):
        GraphCase.objects.create(
            graph=graph, name=name, created_by=user,
            document={"request": {"payload": {"instances": [[1]]}}, "environment": environment},
        )  # fmt: skip
    suite = cast["carol"].post("/api/graphs/model-chainer/suite-runs/", {"version": 1}, format="json")
    assert suite.status_code == 202, suite.json()
    errors = {r["name"]: r["error"] for r in suite.json()["results"]}
    assert errors["private"] == errors["missing"].replace("no-such-lab", "alices-lab")
    assert not Run.objects.exists()
