"""Who can open the export gate and who can force it.

A verdict opens the gate only when its suite run ran in an environment the graph trusts (the
graph's ``gate_environments``, by default the system's ``local``; never a private environment)
and was started by someone who may change the graph (its owner, an editor, a superuser). Anybody
signed in may start a suite run (as a run): an outsider's verdict is shown but opens nothing.
Forcing is a CSRF-checked POST by the owner or an editor with a reason of visible characters; a
GET never writes."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from execution.devtools import demo
from execution.models import Environment
from execution.services.environments import local_environment_values
from execution.suites.models import SuiteRun
from execution.tasks.runs import run_graph_task
from graphs.models import AuditEvent, Graph, GraphMember
from tests.conftest import client_for

GRAPH = "animal-switch"  # three demo cases: cat, dog, neither; all pass on the mock server
EXPORT = f"/api/graphs/{GRAPH}/versions/1/export/"
REASON = "hotfix for the outage in prod"


@pytest.fixture
def people(db: Any, mock_server: Any, other_user: Any) -> dict[str, Any]:
    """The demo graph, gated, with its owner, an editor, a viewer and a non-member (bob)."""
    list(demo.seed())
    users = get_user_model().objects
    graph = Graph.objects.get(name=GRAPH)
    editor = users.create_user("eddie", password="eddie-password-1")
    viewer = users.create_user("vera", password="vera-password-1")
    GraphMember.objects.create(graph=graph, user=editor, role="editor")
    GraphMember.objects.create(graph=graph, user=viewer, role="viewer")
    Graph.objects.filter(pk=graph.pk).update(require_passing_tests=True)
    owner = users.get(username=demo.DEMO_USER)
    return {"owner": owner, "editor": editor, "viewer": viewer, "outsider": other_user}


def private_environment(owner: Any, name: str) -> Environment:
    """An environment of ``owner`` alone that answers exactly what the demo cases expect."""
    return Environment.objects.create(
        name=name, owner=owner, visibility=Environment.Visibility.PRIVATE, **local_environment_values()
    )


def shared_environment(name: str) -> Environment:
    return Environment.objects.create(
        name=name, owner=None, visibility=Environment.Visibility.SHARED, **local_environment_values()
    )


def run_suite(api: APIClient, enqueued: list[dict[str, Any]], **body: Any) -> dict[str, Any]:
    """Start a suite run of version 1 and run its cases here, through the task's own body."""
    started = api.post(f"/api/graphs/{GRAPH}/suite-runs/", {"version": 1, **body}, format="json")
    assert started.status_code == 202, started.json()
    for message in list(enqueued):
        run_graph_task.apply(args=message["args"])
    enqueued.clear()
    done = api.get(f"/api/suite-runs/{started.json()['id']}/").json()
    assert done["status"] == "passed", done
    return done


def gate_open(owner: Any) -> bool:
    response = client_for(owner).get(EXPORT)
    assert response.status_code in (200, 409), response.content
    return response.status_code == 200


@pytest.mark.django_db(transaction=True)
def test_a_non_members_pass_in_her_own_private_environment_opens_nothing(
    people: dict[str, Any], enqueued: list[dict[str, Any]]
) -> None:
    """The reported attack: an outsider may run the suite (as she may run the graph), in her own
    environment, and it passes; the version is not green for the gate and the export stays 409."""
    outsider = people["outsider"]
    private_environment(outsider, "bobs-box")
    run_suite(client_for(outsider), enqueued, environment="bobs-box")
    assert not gate_open(people["owner"])
    graph = client_for(people["owner"]).get(f"/api/graphs/{GRAPH}/").json()
    assert graph["last_passing_version"] is None
    assert graph["latest_version"]["tests"]["status"] == "passed"  # the verdict is shown...
    assert graph["latest_version"]["tests"]["gate"] is False  # ...as one the gate does not count
    assert not AuditEvent.objects.filter(action="version.tests_passed").exists()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("who", "opens"), [("outsider", False), ("viewer", False), ("editor", True), ("owner", True)]
)
def test_only_a_pass_started_by_someone_who_may_change_the_graph_opens_the_gate(
    people: dict[str, Any], enqueued: list[dict[str, Any]], who: str, opens: bool
) -> None:
    """Even in the trusted default environment, a verdict counts only when its starter may write."""
    done = run_suite(client_for(people[who]), enqueued, environment="local")
    assert gate_open(people["owner"]) is opens
    opened = AuditEvent.objects.filter(action="version.tests_passed", graph_name=GRAPH)
    if opens:
        (event,) = opened
        assert event.actor == people[who] and event.version_number == 1
        assert event.details["suite_run"] == done["id"] and event.details["environment"] == "local"
    else:
        assert not opened.exists()


@pytest.mark.django_db(transaction=True)
def test_an_editors_pass_in_his_own_private_environment_does_not_open_the_gate(
    people: dict[str, Any], enqueued: list[dict[str, Any]]
) -> None:
    """Whoever owns a private environment may point it anywhere at any time: it is never trusted."""
    private_environment(people["editor"], "eddies-box")
    run_suite(client_for(people["editor"]), enqueued, environment="eddies-box")
    assert not gate_open(people["owner"])


@pytest.mark.django_db(transaction=True)
def test_the_trusted_environments_are_chosen_by_the_editors_and_replace_the_default(
    people: dict[str, Any], enqueued: list[dict[str, Any]]
) -> None:
    shared_environment("staging")
    private_environment(people["editor"], "eddies-box")
    url = f"/api/graphs/{GRAPH}/"
    owner_api, editor_api = client_for(people["owner"]), client_for(people["editor"])
    assert owner_api.get(url).json()["gate_environments"] == []
    for who in ("outsider", "viewer"):
        refused = client_for(people[who]).patch(url, {"gate_environments": ["staging"]}, format="json")
        assert refused.status_code == 403
    private = editor_api.patch(url, {"gate_environments": ["eddies-box"]}, format="json")
    assert private.status_code == 400 and private.json()["issues"][0]["path"] == "gate_environments[0]"
    unknown = editor_api.patch(url, {"gate_environments": ["nowhere"]}, format="json")
    assert unknown.status_code == 400 and unknown.json()["issues"][0]["path"] == "gate_environments[0]"
    assert Graph.objects.get(name=GRAPH).gate_environments == []  # nothing half-saved
    chosen = editor_api.patch(url, {"gate_environments": ["staging"]}, format="json")
    assert chosen.status_code == 200 and chosen.json()["gate_environments"] == ["staging"]
    event = AuditEvent.objects.filter(action="graph.settings", actor=people["editor"]).get()
    assert event.details["changes"]["gate_environments"] == [[], ["staging"]]
    run_suite(owner_api, enqueued, environment="local")  # no longer trusted: staging replaced it
    assert not gate_open(people["owner"])
    run_suite(owner_api, enqueued, environment="staging")
    assert gate_open(people["owner"])
    # a trusted environment made private afterwards stops counting
    Environment.objects.filter(name="staging").update(visibility=Environment.Visibility.PRIVATE)
    assert not gate_open(people["owner"])


@pytest.mark.django_db(transaction=True)
def test_an_editor_removed_from_the_graph_no_longer_opens_it(
    people: dict[str, Any], enqueued: list[dict[str, Any]]
) -> None:
    run_suite(client_for(people["editor"]), enqueued, environment="local")
    assert gate_open(people["owner"])
    GraphMember.objects.filter(user=people["editor"]).update(role="viewer")
    assert not gate_open(people["owner"])


# --- forcing ---------------------------------------------------------------------------------------


def force(api: APIClient, reason: str = REASON, **body: Any) -> Any:
    return api.post(EXPORT, {"force": True, "reason": reason, **body}, format="json")


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("who", "allowed"), [("outsider", False), ("viewer", False), ("editor", True), ("owner", True)]
)
def test_only_those_who_may_change_the_graph_may_force_an_export(
    people: dict[str, Any], who: str, allowed: bool
) -> None:
    response = force(client_for(people[who]), format="json")
    forced = AuditEvent.objects.filter(action="version.export_forced")
    if allowed:
        assert response.status_code == 200 and response.json()["kind"] == "InferenceGraph"
        assert response["Content-Type"].startswith("application/json")
        (event,) = forced
        assert event.actor == people[who] and event.details["reason"] == REASON
        assert event.version_number == 1
    else:
        assert response.status_code == 403 and "force" in response.json()["detail"]
        assert not forced.exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    "reason",
    [
        "",
        "   ",
        "\u200b\u200b\u200b\u200b\u200b\u200b\u200b\u200b\u200b\u200b\u200b\u200b",
        "\u2060\ufeff\u200b\u00a0\u3000\u2028\u202e\u180e\u2066\u2069\u200d\u200c\u034f",
        "x\u200by\u200bz",  # three visible characters among invisible ones
        "ok",
    ],
)
def test_a_forced_export_needs_a_reason_of_visible_characters(people: dict[str, Any], reason: str) -> None:
    response = force(client_for(people["owner"]), reason)
    assert response.status_code == 400 and [i["path"] for i in response.json()["issues"]] == ["reason"]
    assert response.json()["issues"][0]["code"] == "export.reason-required"
    assert not AuditEvent.objects.filter(action="version.export_forced").exists()


@pytest.mark.django_db
def test_the_reason_is_kept_without_its_invisible_characters(people: dict[str, Any]) -> None:
    """Format characters (a right-to-left override, zero-width ones) could make the audit log say
    something else than was typed; they are dropped and runs of spaces become one."""
    response = force(client_for(people["owner"]), "  roll\u200bback \u202eto v1   now\ufeff  ")
    assert response.status_code == 200
    assert AuditEvent.objects.get(action="version.export_forced").details["reason"] == "rollback to v1 now"


@pytest.mark.django_db
def test_a_get_export_never_writes(people: dict[str, Any]) -> None:
    """A cross-site link cannot force an export in someone's name: GET refuses to force."""
    owner_api = client_for(people["owner"])
    before = AuditEvent.objects.count()
    forced = owner_api.get(f"{EXPORT}?force=1&reason=hotfix+for+the+outage")
    assert forced.status_code == 400 and "POST" in forced.json()["detail"]
    assert owner_api.get(EXPORT).status_code == 409
    Graph.objects.filter(name=GRAPH).update(require_passing_tests=False)
    assert owner_api.get(EXPORT).status_code == 200  # an ungated export is a GET, as before
    assert AuditEvent.objects.count() == before


@pytest.mark.django_db
def test_a_session_post_needs_its_csrf_token(people: dict[str, Any]) -> None:
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(people["owner"])
    refused = force(client)
    assert refused.status_code == 403 and "CSRF" in refused.json()["detail"]
    assert not AuditEvent.objects.filter(action="version.export_forced").exists()
    client.get("/")  # the page sets the CSRF cookie
    token = client.cookies["csrftoken"].value
    allowed = client.post(EXPORT, {"force": True, "reason": REASON}, format="json", HTTP_X_CSRFTOKEN=token)
    assert allowed.status_code == 200
    assert AuditEvent.objects.filter(action="version.export_forced").count() == 1


@pytest.mark.django_db
def test_a_post_export_without_force_is_the_gated_export(people: dict[str, Any]) -> None:
    owner_api = client_for(people["owner"])
    refused = owner_api.post(EXPORT, {}, format="json")
    assert refused.status_code == 409 and refused.json()["code"] == "tests_required"
    assert owner_api.post(EXPORT, {"force": True}, format="json").status_code == 400  # no reason
    misspelt = owner_api.post(EXPORT, {"forced": True, "reason": REASON}, format="json")
    assert misspelt.status_code == 400 and "forced" in misspelt.json()["detail"] + str(misspelt.json())
    Graph.objects.filter(name=GRAPH).update(require_passing_tests=False)
    plain = owner_api.post(EXPORT, {"format": "yaml"}, format="json")
    assert plain.status_code == 200 and b"kind: InferenceGraph" in plain.content
    assert not AuditEvent.objects.filter(action__startswith="version.export").exists()
    # an open gate has nothing to force: the flag is moot, nothing is written
    assert force(client_for(people["viewer"])).status_code == 200
    assert not AuditEvent.objects.filter(action="version.export_forced").exists()


@pytest.mark.django_db(transaction=True)
def test_a_post_export_of_a_passing_version_records_the_verdict_that_opened_it(
    people: dict[str, Any], enqueued: list[dict[str, Any]]
) -> None:
    done = run_suite(client_for(people["owner"]), enqueued, environment="local")
    response = client_for(people["viewer"]).post(EXPORT, {}, format="json")
    assert response.status_code == 200
    event = AuditEvent.objects.get(action="version.export")
    assert event.actor == people["viewer"] and event.details["suite_run"] == done["id"]
    assert SuiteRun.objects.get(pk=done["id"]).created_by == people["owner"]
