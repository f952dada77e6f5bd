"""Deploying through Git against real Git servers on loopback: a bare repository over file://,
``git daemon`` (git://, receive-pack enabled) and ``git http-backend`` behind a CGI server with
basic auth; the API's pushes go through the real Celery worker, and a real ``git clone`` checks
what was pushed."""

from __future__ import annotations

import copy
import json
from io import StringIO
from typing import Any

import pytest
from cryptography.fernet import Fernet
from django.core.management import call_command
from django.db import connection
from gitservers import GitServers, free_port, git

from deploys import gitops, services
from deploys.errors import UnreadableCredentials
from deploys.models import Deployment, DeployTarget
from graphs import services as graph_services
from graphs.models import AuditEvent, GraphMember, GraphVersion

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

PATH = "graphs/default/model-chainer.yaml"


def client_for(user: Any) -> Any:
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    client = APIClient()
    token, _ = Token.objects.get_or_create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def make_target(api: Any, url: str, **fields: Any) -> dict[str, Any]:
    body = {"name": fields.pop("name", "prod"), "url": url, "allow_hosts": ["127.0.0.1"], **fields}
    response = api.post("/api/deploy-targets/", body, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def deploy(api: Any, version: int | str = 1, target: str = "prod", **body: Any) -> Any:
    return api.post(
        f"/api/graphs/model-chainer/versions/{version}/deploy/", {"target": target, **body}, format="json"
    )


def exported(api: Any, version: int) -> str:
    response = api.get(f"/api/graphs/model-chainer/versions/{version}/export/")
    assert response.status_code == 200
    return response.content.decode()


def save_v2(user: Any, manifest: dict[str, Any]) -> None:
    changed = copy.deepcopy(manifest)
    changed["spec"]["nodes"]["root"]["steps"][0]["serviceName"] = "sklearn-iris-v2"
    graph = graph_services.Graph.objects.get(name="model-chainer")
    graph_services.graph_version_create(
        graph=graph, manifest=changed, layout={}, author=user, message="Second", base_version=None
    )


def stored_secret(pk: int) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT secret FROM deploys_deploytarget WHERE id = %s", [pk])
        return str(cursor.fetchone()[0])


def hand_edited(servers: GitServers, text: str) -> str:
    return text.replace("serviceName: xgboost-iris", "serviceName: xgboost-iris-tuned")


@pytest.mark.parametrize("transport", ["file", "git", "http"])
def test_deploy_pushes_exactly_the_export_and_is_live(
    transport: str, servers: GitServers, deploy_worker: Any, api: Any, graph: Any
) -> None:
    url = {"file": servers.file_url, "git": servers.git_url, "http": servers.http_url}[transport]("deploys")
    credentials = {"username": servers.username, "password": servers.password}
    target = make_target(
        api, url, credentials=credentials, author_name="Studio Bot", author_email="bot@example.org"
    )
    stored = stored_secret(target["id"])
    assert stored.startswith("fernet:") and servers.password not in stored  # http: basic auth with it

    response = deploy(api, 1, message="First rollout")

    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["status"] == "pushed" and body["live"] is True
    assert body["graph"] == "model-chainer" and body["version"] == 1 and body["target"] == "prod"
    assert body["branch"] == "main" and body["path"] == PATH and body["mode"] == "commit"
    assert body["gate"] == {"required": False, "verdict": "not-required"}
    assert body["created_by"] == "alice"
    assert servers.read("deploys", PATH) == exported(api, 1)
    assert servers.head("deploys") == body["commit"]
    clone = servers.clone("deploys")
    log = git("log", "-1", "--format=%an <%ae>%n%B", cwd=clone)
    assert log.startswith("Studio Bot <bot@example.org>\nDeploy model-chainer v1 to prod")
    assert "First rollout" in log and "Version author: alice" in log and "Suite: no suite run" in log
    listed = api.get("/api/graphs/model-chainer/deployments/?refresh=1").json()["results"]
    assert [(d["version"], d["live"], d["drift"]) for d in listed] == [(1, True, False)]
    live = api.get("/api/deployments/live/").json()["results"]
    assert [(d["graph"], d["version"], d["commit"]) for d in live] == [("model-chainer", 1, body["commit"])]


def test_redeploy_supersedes_and_review_mode_pushes_a_branch(
    servers: GitServers, deploy_worker: Any, api: Any, user: Any, graph: Any, manifest: dict[str, Any]
) -> None:
    make_target(api, servers.file_url("deploys"))
    first = deploy(api, 1).json()
    save_v2(user, manifest)

    second = deploy(api, 2)

    assert second.status_code == 201, second.json()
    assert servers.read("deploys", PATH) == exported(api, 2)
    assert servers.log("deploys")[:2] == [
        "Deploy model-chainer v2 to prod",
        "Deploy model-chainer v1 to prod",
    ]
    statuses = {
        d["id"]: d["status"] for d in api.get("/api/graphs/model-chainer/deployments/").json()["results"]
    }
    assert statuses == {first["id"]: "superseded", second.json()["id"]: "pushed"}

    make_target(api, servers.file_url("deploys"), name="review", mode="review")
    head_before = servers.head("deploys")
    review = deploy(api, 1, target="review")

    assert review.status_code == 201, review.json()
    assert review.json()["status"] == "review" and review.json()["live"] is False
    assert review.json()["branch"] == "studio/model-chainer-v1"
    assert servers.head("deploys") == head_before  # main untouched
    assert servers.read("deploys", PATH, branch="studio/model-chainer-v1") == exported(api, 1)


def test_hand_edit_shows_as_drift_and_imports_as_a_new_version(
    servers: GitServers, deploy_worker: Any, api: Any, graph: Any
) -> None:
    make_target(api, servers.git_url("deploys"))
    deployed = deploy(api, 1).json()
    edited = hand_edited(servers, exported(api, 1))
    hand_head = servers.hand_edit("deploys", PATH, edited, message="Tune the second model")

    listed = api.get("/api/graphs/model-chainer/deployments/?refresh=1").json()["results"]

    assert listed[0]["id"] == deployed["id"] and listed[0]["drift"] is True
    assert listed[0]["drift_commit"] == {
        "commit": hand_head,
        "author": "Hand Editor <hand@example.org>",
        "message": "Tune the second model",
    }
    changed = json.dumps(listed[0]["diff"])
    assert "xgboost-iris-tuned" in changed

    imported = api.post(f"/api/graphs/model-chainer/deployments/{deployed['id']}/import-drift/")

    assert imported.status_code == 201, imported.json()
    version = imported.json()
    assert version["number"] == 2
    assert version["message"].startswith("Tune the second model")
    assert "Hand Editor <hand@example.org>" in version["message"] and hand_head[:7] in version["message"]
    assert version["manifest"]["spec"]["nodes"]["root"]["steps"][1]["serviceName"] == "xgboost-iris-tuned"
    listed = api.get("/api/graphs/model-chainer/deployments/?refresh=1").json()["results"]
    assert [(d["version"], d["status"], d["drift"], d["commit"]) for d in listed] == [
        (2, "pushed", False, hand_head),
        (1, "superseded", False, deployed["commit"]),
    ]
    assert AuditEvent.objects.filter(action="deployment.import_drift").count() == 1


def test_deploying_over_a_hand_edit_answers_409_with_the_diff(
    servers: GitServers, deploy_worker: Any, api: Any, user: Any, graph: Any, manifest: dict[str, Any]
) -> None:
    make_target(api, servers.file_url("deploys"))
    deploy(api, 1)
    hand_head = servers.hand_edit("deploys", PATH, hand_edited(servers, exported(api, 1)))
    save_v2(user, manifest)

    response = deploy(api, 2)

    assert response.status_code == 409, response.json()
    body = response.json()
    assert body["code"] == "drift" and "changed outside the studio" in body["detail"]
    assert "xgboost-iris-tuned" in json.dumps(body["diff"])
    assert body["deployment"]["status"] == "failed"
    assert servers.head("deploys") == hand_head  # nothing overwritten


def test_a_branch_that_moves_during_the_push_is_retried_once_then_reported(
    servers: GitServers, deploy_worker: Any, api: Any, graph: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_target(api, servers.git_url("deploys"))
    real_fetch = gitops._fetch_head
    moves = {"left": 1}

    def fetch_then_someone_pushes(remote: Any, branch: str) -> Any:
        fetched = real_fetch(remote, branch)
        if moves["left"] > 0:
            moves["left"] -= 1
            servers.hand_edit("deploys", "README.md", f"changed {moves}\n", message="Unrelated change")
        return fetched

    monkeypatch.setattr(gitops, "_fetch_head", fetch_then_someone_pushes)

    response = deploy(api, 1)

    assert response.status_code == 201, response.json()
    assert servers.log("deploys")[:2] == ["Deploy model-chainer v1 to prod", "Unrelated change"]
    assert servers.read("deploys", PATH) == exported(api, 1)

    moves["left"] = 10
    again = deploy(api, 1)

    assert again.status_code == 502, again.json()
    assert again.json()["code"] == "moved" and "moved" in again.json()["detail"]


def test_git_failures_are_named(servers: GitServers, deploy_worker: Any, api: Any, graph: Any) -> None:
    servers.reject_pushes("deploys", "main is protected: open a pull request")
    make_target(api, servers.git_url("deploys"), name="rejecting")
    rejected = deploy(api, 1, target="rejecting")
    assert rejected.status_code == 502, rejected.json()
    assert rejected.json()["code"] == "rejected" and "pre-receive hook declined" in rejected.json()["detail"]

    make_target(
        api,
        servers.http_url("deploys"),
        name="wrong-token",
        credentials={"username": "deployer", "password": "nope"},
    )
    wrong = deploy(api, 1, target="wrong-token")
    assert wrong.status_code == 502 and wrong.json()["code"] == "auth", wrong.json()
    assert "nope" not in json.dumps(wrong.json())

    make_target(api, f"git://127.0.0.1:{free_port()}/deploys.git", name="down")
    down = deploy(api, 1, target="down")
    assert down.status_code == 502 and down.json()["code"] == "network", down.json()

    make_target(api, servers.git_url("missing"), name="missing")
    missing = deploy(api, 1, target="missing")
    assert missing.status_code == 502 and missing.json()["code"] == "not-found", missing.json()
    failed = Deployment.objects.filter(status="failed").count()
    assert failed == 4


def test_forbidden_hosts_are_refused_before_anything_is_sent(
    servers: GitServers, deploy_worker: Any, api: Any, graph: Any, tmp_path: Any
) -> None:
    make_target(api, servers.git_url("deploys"), name="loopback", allow_hosts=[])
    response = deploy(api, 1, target="loopback")
    assert response.status_code == 400 and response.json()["code"] == "forbidden", response.json()
    assert "loopback" in response.json()["detail"] and "allow_hosts" in response.json()["detail"]

    make_target(api, f"file://{tmp_path}/elsewhere.git", name="outside")
    outside = deploy(api, 1, target="outside")
    assert outside.status_code == 400 and "DEPLOY_FILE_ROOTS" in outside.json()["detail"]
    assert not Deployment.objects.exists()
    assert servers.log("deploys") == ["Start"]


def test_the_gate_applies_and_forcing_needs_an_editor_and_a_reason(
    servers: GitServers, deploy_worker: Any, api: Any, graph: Any, other_user: Any
) -> None:
    make_target(api, servers.file_url("deploys"), visibility="private")
    graph_services.graph_settings_update(graph=graph, actor=graph.owner, require_passing_tests=True)

    closed = deploy(api, 1)
    assert closed.status_code == 409 and closed.json()["code"] == "tests_required", closed.json()
    short = deploy(api, 1, force=True, reason="x")
    assert short.status_code == 400

    forced = deploy(api, 1, force=True, reason="hotfix for the outage")

    assert forced.status_code == 201, forced.json()
    assert forced.json()["gate"] == {"required": True, "verdict": "forced", "reason": "hotfix for the outage"}
    body = git("--git-dir", str(servers.root / "deploys.git"), "log", "-1", "--format=%B")
    assert "Gate: forced: hotfix for the outage" in body
    assert AuditEvent.objects.filter(action="version.deploy_forced", graph_name="model-chainer").count() == 1


def test_non_members_and_viewers_may_not_deploy(
    servers: GitServers, deploy_worker: Any, api: Any, graph: Any, other_user: Any, bob_api: Any
) -> None:
    make_target(api, servers.file_url("deploys"), name="alices")
    shared = client_for(graph.owner)
    graph.owner.is_staff = True
    graph.owner.save()
    make_target(shared, servers.file_url("deploys"), name="shared", visibility="shared")

    not_member = deploy(bob_api, 1, target="shared")
    assert not_member.status_code == 403, not_member.json()
    graph_services.graph_member_add(
        graph=graph, user=other_user, actor=graph.owner, role=GraphMember.Role.VIEWER
    )
    viewer = deploy(bob_api, 1, target="shared")
    assert viewer.status_code == 403 and "editor" in viewer.json()["detail"]
    private = deploy(bob_api, 1, target="alices")
    assert private.status_code == 400 and "no deploy target" in private.json()["detail"]
    assert bob_api.get("/api/deploy-targets/").json()["count"] == 1  # the shared one only
    assert not Deployment.objects.exists()

    graph_services.graph_member_add(
        graph=graph, user=other_user, actor=graph.owner, role=GraphMember.Role.EDITOR
    )
    editor = deploy(bob_api, 1, target="shared")
    assert editor.status_code == 201, editor.json()
    assert editor.json()["created_by"] == "bob"


def test_deploy_command(servers: GitServers, deploy_settings: None, graph: Any, api: Any) -> None:
    make_target(
        api,
        servers.http_url("deploys"),
        credentials={"username": servers.username, "password": servers.password},
    )
    out = StringIO()

    call_command("deploy", "model-chainer", "--version", "1", "--target", "prod", stdout=out)

    body = json.loads(out.getvalue())
    assert body["status"] == "pushed" and body["commit"] == servers.head("deploys")
    assert servers.read("deploys", PATH) == exported(api, 1)

    servers.hand_edit("deploys", PATH, hand_edited(servers, exported(api, 1)))
    err = StringIO()
    with pytest.raises(SystemExit) as exit_info:
        call_command("deploy", "model-chainer", "--target", "prod", stdout=StringIO(), stderr=err)
    assert exit_info.value.code == 1
    assert "drift" in err.getvalue() and "xgboost-iris-tuned" in err.getvalue()
    with pytest.raises(SystemExit) as bad:
        call_command("deploy", "model-chainer", "--target", "nowhere", stdout=StringIO(), stderr=StringIO())
    assert bad.value.code == 2


UNREADABLE = ("'prod'", "enter the credentials again", "STUDIO_ENCRYPTION_KEYS")


def test_credentials_the_keys_cannot_read_fail_with_what_to_do(
    servers: GitServers, deploy_settings: None, api: Any, graph: Any, settings: Any
) -> None:
    settings.STUDIO_ENCRYPTION_KEYS = [Fernet.generate_key().decode()]
    credentials = {"username": servers.username, "password": servers.password}
    target = make_target(api, servers.http_url("deploys"), credentials=credentials)
    call_command("deploy", "model-chainer", "--target", "prod", stdout=StringIO())
    settings.STUDIO_ENCRYPTION_KEYS = [Fernet.generate_key().decode()]  # the old key is gone

    response = deploy(api, 1)

    assert response.status_code == 409, response.json()
    body = response.json()
    assert body["code"] == "credentials"
    assert all(words in body["detail"] for words in UNREADABLE), body["detail"]
    assert "Traceback" not in response.content.decode() and "InvalidToken" not in response.content.decode()
    assert Deployment.objects.count() == 1 and len(servers.log("deploys")) == 2
    listed = api.get("/api/graphs/model-chainer/deployments/?refresh=1")
    assert listed.status_code == 200
    assert all(words in listed.json()["results"][0]["error"] for words in UNREADABLE)
    err = StringIO()
    with pytest.raises(SystemExit) as exit_info:
        call_command("deploy", "model-chainer", "--target", "prod", stdout=StringIO(), stderr=err)
    assert exit_info.value.code == 2 and "enter the credentials again" in err.getvalue()

    again = api.patch(f"/api/deploy-targets/{target['id']}/", {"credentials": credentials}, format="json")
    assert again.status_code == 200
    listed = api.get("/api/graphs/model-chainer/deployments/?refresh=1").json()["results"]
    assert listed[0]["error"] == "" and listed[0]["drift"] is False


def test_a_push_whose_credentials_became_unreadable_fails_named(
    servers: GitServers, deploy_settings: None, api: Any, user: Any, graph: Any, settings: Any
) -> None:
    settings.STUDIO_ENCRYPTION_KEYS = [Fernet.generate_key().decode()]
    make_target(
        api,
        servers.http_url("deploys"),
        credentials={"username": servers.username, "password": servers.password},
    )
    started = services.deploy_start(
        graph=graph,
        version=GraphVersion.objects.get(graph=graph, number=1),
        target=DeployTarget.objects.get(name="prod"),
        actor=user,
        enqueue=False,
    )
    settings.STUDIO_ENCRYPTION_KEYS = [Fernet.generate_key().decode()]

    failed = services.deployment_push(started.pk)

    assert failed.status == Deployment.Status.FAILED and failed.error_kind == "credentials"
    assert all(words in failed.error for words in UNREADABLE), failed.error
    with pytest.raises(UnreadableCredentials):
        services.raise_for_failure(failed, {})
    assert servers.log("deploys") == ["Start"]
