"""The graph store's REST contract (docs/architecture.md, "Public contracts")."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest
from rest_framework.test import APIClient

from graphs.models import AuditEvent, Graph, GraphMember, GraphVersion

pytestmark = pytest.mark.django_db

VERSION_FIELDS = {
    "number",
    "manifest",
    "layout",
    "spec_hash",
    "message",
    "author",
    "created_at",
    "parent",
    "valid",
    "issues",
    "tests",  # the latest suite run of the version (null before any)
}


def create(api: APIClient, manifest: dict[str, Any], **extra: Any) -> Any:
    return api.post("/api/graphs/", {"manifest": manifest, **extra}, format="json")


def test_anonymous_requests_are_refused_everywhere(anon: APIClient, api: APIClient, manifest: dict) -> None:
    create(api, manifest)
    for method, url in [
        ("get", "/api/graphs/"),
        ("post", "/api/graphs/"),
        ("get", "/api/graphs/model-chainer/"),
        ("get", "/api/graphs/model-chainer/versions/"),
        ("post", "/api/validate/"),
        ("get", "/api/graphs/model-chainer/versions/1/export/"),
        ("get", "/api/schema/"),
        ("post", "/api/conditions/evaluate/"),
    ]:
        response = getattr(anon, method)(url)
        assert response.status_code in (401, 403), (method, url, response.status_code)


def test_create_returns_graph_with_version_1_and_etag(api: APIClient, manifest: dict) -> None:
    response = create(api, manifest, description="iris chain", message="first", layout={"nodes": {}})
    assert response.status_code == 201, response.data
    body = response.json()
    assert set(body) >= {
        "name",
        "namespace",
        "description",
        "owner",
        "created_at",
        "updated_at",
        "latest_version",
    }
    assert body["name"] == "model-chainer" and body["owner"] == "alice"
    assert set(body["latest_version"]) == VERSION_FIELDS
    assert body["latest_version"]["number"] == 1
    assert body["latest_version"]["valid"] is True
    assert body["latest_version"]["spec_hash"].startswith("sha256:")
    assert response["ETag"] == '"v1"'


def test_create_with_only_a_name_starts_an_empty_root_sequence(api: APIClient) -> None:
    response = api.post("/api/graphs/", {"name": "blank"}, format="json")
    assert response.status_code == 201
    manifest = response.json()["latest_version"]["manifest"]
    assert manifest["metadata"]["name"] == "blank"
    assert manifest["spec"]["nodes"]["root"]["routerType"] == "Sequence"


@pytest.mark.parametrize("name", ["Abc-123", "4abc", "-abc", "abc-", "abc.123", "abc 123"])
def test_a_name_kserve_rejects_is_refused_with_its_message(api: APIClient, manifest: dict, name: str) -> None:
    manifest["metadata"]["name"] = name
    response = create(api, manifest)
    assert response.status_code == 400
    issue = response.json()["issues"][0]
    assert issue["code"] == "webhook.name-format"
    assert "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?'" in issue["message"]
    assert not Graph.objects.exists()


def test_a_body_that_is_not_json_is_a_400_with_issues(api: APIClient) -> None:
    response = api.post("/api/graphs/", "{not json", content_type="application/json")
    assert response.status_code == 400
    assert response.json()["issues"][0]["code"] == "request.parse-error"
    assert "line 1" in response.json()["detail"]


def test_a_manifest_that_is_not_an_object_is_refused(api: APIClient) -> None:
    response = api.post("/api/graphs/", {"name": "x", "manifest": [1, 2]}, format="json")
    assert response.status_code == 400
    assert response.json()["issues"][0]["path"] == "manifest"


def test_duplicate_name_is_refused(api: APIClient, manifest: dict) -> None:
    assert create(api, manifest).status_code == 201
    response = create(api, manifest)
    assert response.status_code == 400
    assert "already exists" in response.json()["detail"]
    assert GraphVersion.objects.count() == 1


@pytest.mark.parametrize(
    ("mutate", "code"),
    [
        (lambda m: m["spec"]["nodes"]["root"].update(routerType="Chain"), "schema.enum"),
        (
            lambda m: m["spec"]["nodes"]["root"].update(
                routerType="Splitter",
                steps=[{"serviceName": "a", "weight": 80}, {"serviceName": "b", "weight": 30}],
            ),
            "webhook.weight-sum",
        ),
        (
            lambda m: m["spec"]["nodes"]["root"]["steps"][0].update(serviceUrl="http://x"),
            "webhook.multiple-targets",
        ),
    ],
)
def test_manifest_kserve_rejects_is_saved_invalid_with_the_issues_validate_reports(
    api: APIClient, manifest: dict, mutate: Any, code: str
) -> None:
    mutate(manifest)
    response = create(api, manifest)
    assert response.status_code == 201
    version = response.json()["latest_version"]
    assert version["valid"] is False
    codes = [i["code"] for i in version["issues"] if i["severity"] == "error"]
    assert code in codes, version["issues"]
    validated = api.post("/api/validate/", {"manifest": manifest}, format="json").json()
    assert validated == {"valid": False, "issues": version["issues"]}


def test_validate_reports_valid_manifest(api: APIClient, manifest: dict) -> None:
    response = api.post("/api/validate/", {"manifest": manifest}, format="json")
    assert response.status_code == 200
    assert response.json()["valid"] is True


def test_list_is_paginated_and_searchable(api: APIClient, manifest: dict) -> None:
    create(api, manifest)
    api.post("/api/graphs/", {"name": "other", "description": "faces"}, format="json")
    body = api.get("/api/graphs/").json()
    assert set(body) == {"count", "next", "previous", "results"}
    assert [g["name"] for g in body["results"]] == ["model-chainer", "other"]
    assert [g["name"] for g in api.get("/api/graphs/?search=face").json()["results"]] == ["other"]


def save(api: APIClient, name: str, manifest: dict, base: int | None, **extra: Any) -> Any:
    headers = {"HTTP_IF_MATCH": f'"v{base}"'} if base is not None else {}
    return api.post(
        f"/api/graphs/{name}/versions/", {"manifest": manifest, **extra}, format="json", **headers
    )


def test_save_appends_a_version_with_parent_and_etag(api: APIClient, manifest: dict) -> None:
    create(api, manifest)
    manifest["spec"]["nodes"]["root"]["steps"].append({"name": "third", "serviceUrl": "http://m/3"})
    response = save(
        api, "model-chainer", manifest, 1, message="add third", layout={"nodes": {"root": {"x": 1}}}
    )
    assert response.status_code == 201
    body = response.json()
    assert body["number"] == 2 and body["parent"] == 1 and body["message"] == "add third"
    assert body["layout"] == {"nodes": {"root": {"x": 1}}}
    assert response["ETag"] == '"v2"'
    assert api.get("/api/graphs/model-chainer/")["ETag"] == '"v2"'


def test_saving_an_unchanged_manifest_returns_the_latest_version(api: APIClient, manifest: dict) -> None:
    create(api, manifest)
    response = save(api, "model-chainer", manifest, 1)
    assert response.status_code == 200
    assert response.json()["number"] == 1
    assert GraphVersion.objects.count() == 1


def test_base_version_in_body_works_like_if_match(api: APIClient, manifest: dict) -> None:
    create(api, manifest)
    manifest["spec"]["nodes"]["root"]["steps"].pop()
    assert save(api, "model-chainer", manifest, None, base_version=1).status_code == 201
    manifest["spec"]["nodes"]["root"]["steps"][0]["name"] = "renamed"
    stale = save(api, "model-chainer", manifest, None, base_version=1)
    assert stale.status_code == 409


def test_stale_save_is_409_with_latest_number_and_diff_and_nothing_saved(
    api: APIClient, bob_api: APIClient, manifest: dict, other_user: Any
) -> None:
    create(api, manifest)
    api.post("/api/graphs/model-chainer/members/", {"user": "bob"}, format="json")
    theirs = copy.deepcopy(manifest)
    theirs["spec"]["nodes"]["root"]["steps"].append({"name": "bobs", "serviceUrl": "http://m/b"})
    assert save(bob_api, "model-chainer", theirs, 1).status_code == 201
    mine = copy.deepcopy(manifest)
    mine["spec"]["nodes"]["root"]["steps"][0]["dependency"] = "Hard"
    response = save(api, "model-chainer", mine, 1)
    assert response.status_code == 409
    body = response.json()
    assert body["latest_version"] == 2
    assert body["latest"]["number"] == 2
    assert body["diff"]["nodes"]["changed"][0]["node"] == "root"
    assert "detail" in body
    assert GraphVersion.objects.count() == 2
    # Saving again on top of the latest works: nothing the client sent is lost.
    assert save(api, "model-chainer", mine, 2).status_code == 201


def test_renaming_through_a_save_is_refused(api: APIClient, manifest: dict) -> None:
    create(api, manifest)
    manifest["metadata"]["name"] = "new-name"
    response = save(api, "model-chainer", manifest, 1)
    assert response.status_code == 400
    assert GraphVersion.objects.count() == 1


def test_malformed_if_match_is_400(api: APIClient, manifest: dict) -> None:
    create(api, manifest)
    response = api.post(
        "/api/graphs/model-chainer/versions/", {"manifest": manifest}, format="json", HTTP_IF_MATCH="banana"
    )
    assert response.status_code == 400


def test_history_lists_versions_newest_first_without_manifests(api: APIClient, manifest: dict) -> None:
    create(api, manifest, message="one")
    manifest["spec"]["nodes"]["root"]["steps"].pop()
    save(api, "model-chainer", manifest, 1, message="two")
    body = api.get("/api/graphs/model-chainer/versions/").json()
    assert body["count"] == 2
    assert [(v["number"], v["message"], v["author"]) for v in body["results"]] == [
        (2, "two", "alice"),
        (1, "one", "alice"),
    ]
    assert "manifest" not in body["results"][0]
    detail = api.get("/api/graphs/model-chainer/versions/1/").json()
    assert set(detail) == VERSION_FIELDS
    assert len(detail["manifest"]["spec"]["nodes"]["root"]["steps"]) == 2


def test_unknown_graph_and_version_are_404_with_detail(api: APIClient, manifest: dict) -> None:
    assert api.get("/api/graphs/nope/").status_code == 404
    create(api, manifest)
    response = api.get("/api/graphs/model-chainer/versions/7/")
    assert response.status_code == 404
    assert "no version 7" in response.json()["detail"]


def test_rollback_creates_a_new_version_with_the_old_content(api: APIClient, manifest: dict) -> None:
    create(api, manifest)
    original = copy.deepcopy(manifest)
    manifest["spec"]["nodes"]["root"]["steps"].pop()
    save(api, "model-chainer", manifest, 1)
    response = api.post("/api/graphs/model-chainer/versions/1/rollback/")
    assert response.status_code == 201
    body = response.json()
    assert body["number"] == 3 and body["parent"] == 1
    v1 = api.get("/api/graphs/model-chainer/versions/1/").json()
    assert body["manifest"] == v1["manifest"] and body["spec_hash"] == v1["spec_hash"]
    assert body["manifest"]["spec"] == original["spec"]


def _three_versions(api: APIClient, manifest: dict) -> None:
    """v1 (two steps), v2 (one step), v3 (v2 plus a third step)."""
    create(api, manifest)
    manifest["spec"]["nodes"]["root"]["steps"].pop()
    assert save(api, "model-chainer", manifest, 1).status_code == 201
    manifest["spec"]["nodes"]["root"]["steps"].append({"name": "third", "serviceUrl": "http://m/3"})
    assert save(api, "model-chainer", manifest, 2).status_code == 201


@pytest.mark.parametrize("how", ["if-match", "body"])
def test_a_stale_rollback_is_409_with_the_diff_and_reverts_nothing(
    api: APIClient, manifest: dict, how: str
) -> None:
    """A rollback decided while looking at v2 must not silently revert v3, saved since."""
    _three_versions(api, manifest)
    url = "/api/graphs/model-chainer/versions/1/rollback/"
    response = (
        api.post(url, {}, format="json", HTTP_IF_MATCH='"v2"')
        if how == "if-match"
        else api.post(url, {"base_version": 2}, format="json")
    )
    assert response.status_code == 409, response.json()
    body = response.json()
    assert (body["latest_version"], body["base_version"], body["latest"]["number"]) == (3, 2, 3)
    assert body["diff"]["nodes"]["changed"][0]["node"] == "root"
    assert GraphVersion.objects.count() == 3
    assert api.get("/api/graphs/model-chainer/")["ETag"] == '"v3"'
    assert not AuditEvent.objects.filter(action="version.rollback").exists()


def test_a_rollback_on_top_of_the_latest_version_succeeds(api: APIClient, manifest: dict) -> None:
    _three_versions(api, manifest)
    response = api.post("/api/graphs/model-chainer/versions/1/rollback/", HTTP_IF_MATCH='"v3"')
    assert response.status_code == 201 and response.json()["number"] == 4
    assert response["ETag"] == '"v4"'
    assert AuditEvent.objects.filter(action="version.rollback", version_number=4).exists()


@pytest.mark.parametrize("if_match", ["banana", '"v' + "9" * 25 + '"', '"v²"'])
def test_a_rollback_with_a_malformed_precondition_is_400(
    api: APIClient, manifest: dict, if_match: str
) -> None:
    _three_versions(api, manifest)
    response = api.post("/api/graphs/model-chainer/versions/1/rollback/", HTTP_IF_MATCH=if_match)
    assert response.status_code == 400
    assert GraphVersion.objects.count() == 3


def test_diff_reports_changed_steps(api: APIClient, manifest: dict) -> None:
    create(api, manifest)
    manifest["spec"]["nodes"]["root"]["steps"][1]["data"] = "$response"
    manifest["spec"]["nodes"]["extra"] = {"routerType": "Ensemble", "steps": [{"serviceName": "a"}]}
    save(api, "model-chainer", manifest, 1)
    body = api.get("/api/graphs/model-chainer/diff/?from=1&to=2").json()
    assert body["from"] == 1 and body["to"] == 2
    assert body["nodes"]["added"] == ["extra"]
    changed = body["nodes"]["changed"][0]
    assert changed["node"] == "root"
    assert api.get("/api/graphs/model-chainer/diff/?from=1&to=1").json()["nodes"]["changed"] == []
    assert api.get("/api/graphs/model-chainer/diff/?from=1").status_code == 400


def test_only_owner_and_editors_may_write(
    api: APIClient, bob_api: APIClient, manifest: dict, other_user: Any
) -> None:
    create(api, manifest)
    assert bob_api.get("/api/graphs/model-chainer/").status_code == 200  # everyone reads
    manifest["spec"]["nodes"]["root"]["steps"].pop()
    assert save(bob_api, "model-chainer", manifest, 1).status_code == 403
    assert bob_api.post("/api/graphs/model-chainer/versions/1/rollback/").status_code == 403
    assert bob_api.delete("/api/graphs/model-chainer/").status_code == 403
    assert (
        bob_api.post("/api/graphs/model-chainer/members/", {"user": "bob"}, format="json").status_code == 403
    )
    assert GraphVersion.objects.count() == 1
    assert api.post("/api/graphs/model-chainer/members/", {"user": "bob"}, format="json").status_code == 201
    assert save(bob_api, "model-chainer", manifest, 1).status_code == 201
    assert bob_api.delete("/api/graphs/model-chainer/").status_code == 403  # editors do not archive
    assert api.delete("/api/graphs/model-chainer/members/bob/").status_code == 204
    assert bob_api.post("/api/graphs/model-chainer/versions/1/rollback/").status_code == 403


def test_list_filters_read_yes_and_no_words_and_refuse_anything_else_naming_the_parameter(
    api: APIClient, manifest: dict
) -> None:
    create(api, manifest)
    api.delete("/api/graphs/model-chainer/")
    for query, count in (("archived=true", 1), ("archived=yes", 1), ("archived=0", 0), ("archived=", 0)):
        assert api.get(f"/api/graphs/?{query}").json()["count"] == count, query
    response = api.get("/api/graphs/?archived=maybe")
    assert response.status_code == 400
    [issue] = response.json()["issues"]
    assert issue["path"] == "archived"
    assert api.get("/api/graphs/?search=" + "m" * 500).status_code == 200  # a long search is cut, not refused


def test_diff_needs_both_version_numbers_and_names_the_missing_one(api: APIClient, manifest: dict) -> None:
    create(api, manifest)
    response = api.get("/api/graphs/model-chainer/diff/?from=1")
    assert response.status_code == 400
    assert [issue["path"] for issue in response.json()["issues"]] == ["to"]


def test_archive_hides_graph_from_list_but_keeps_it_readable(api: APIClient, manifest: dict) -> None:
    create(api, manifest)
    assert api.delete("/api/graphs/model-chainer/").status_code == 204
    assert api.get("/api/graphs/").json()["count"] == 0
    assert [g["name"] for g in api.get("/api/graphs/?archived=1").json()["results"]] == ["model-chainer"]
    assert api.get("/api/graphs/model-chainer/").json()["archived"] is True
    assert api.post("/api/graphs/model-chainer/restore/").status_code == 200
    assert api.get("/api/graphs/").json()["count"] == 1


def test_audit_log_records_who_changed_what(api: APIClient, manifest: dict) -> None:
    create(api, manifest)
    actions = [
        (e["action"], e["actor"]) for e in api.get("/api/graphs/model-chainer/audit/").json()["results"]
    ]
    assert ("graph.create", "alice") in actions and ("version.create", "alice") in actions


@pytest.mark.parametrize("page", ["/api/docs/", "/api/redoc/"])
def test_openapi_docs_are_served_from_our_own_static_files(api: APIClient, user: Any, page: str) -> None:
    """Swagger UI and ReDoc load nothing from a CDN: the pages work offline, pinned to our version."""
    assert api.get("/api/schema/?format=json").status_code == 200
    client = APIClient()
    client.force_login(user)
    response = client.get(page)
    assert response.status_code == 200
    html = response.content.decode()
    assert "/static/drf_spectacular_sidecar/" in html
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html), "the page loads something from elsewhere"
    asset = re.search(r"""/static/drf_spectacular_sidecar/[^"' ]+\.js""", html)
    assert asset is not None and client.get(asset.group(0)).status_code == 200


@pytest.mark.parametrize("page", ["/api/docs/", "/api/redoc/"])
def test_openapi_docs_signed_out_lead_to_the_login_page(page: str) -> None:
    response = APIClient().get(page)
    assert (response.status_code, response["Location"]) == (302, f"/login/?next={page}")


def test_session_requests_need_csrf(user: Any, manifest: dict) -> None:
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(user)
    response = client.post("/api/graphs/", {"manifest": manifest}, format="json")
    assert response.status_code == 403
    assert "CSRF" in response.json()["detail"]


def test_a_viewer_reads_and_runs_but_may_not_save_roll_back_or_archive(
    api: APIClient, bob_api: APIClient, manifest: dict, other_user: Any
) -> None:
    create(api, manifest)
    added = api.post("/api/graphs/model-chainer/members/", {"user": "bob", "role": "viewer"}, format="json")
    assert added.status_code == 201 and added.json()["role"] == "viewer"
    assert GraphMember.objects.get(user=other_user).role == "viewer"
    detail = bob_api.get("/api/graphs/model-chainer/").json()
    assert (detail["editors"], detail["viewers"]) == ([], ["bob"])
    changed = copy.deepcopy(manifest)
    changed["spec"]["nodes"]["root"]["steps"].pop()
    assert save(bob_api, "model-chainer", changed, 1).status_code == 403
    assert bob_api.post("/api/graphs/model-chainer/versions/1/rollback/").status_code == 403
    assert bob_api.delete("/api/graphs/model-chainer/").status_code == 403
    imported = bob_api.post(
        "/api/graphs/import/?graph=model-chainer", json.dumps(changed), content_type="application/json"
    )
    assert imported.status_code == 403
    assert GraphVersion.objects.count() == 1 and Graph.objects.get().archived_at is None


def test_the_owner_promotes_a_viewer_to_editor_and_back(
    api: APIClient, bob_api: APIClient, manifest: dict, other_user: Any
) -> None:
    create(api, manifest)
    members = "/api/graphs/model-chainer/members/"
    api.post(members, {"user": "bob", "role": "viewer"}, format="json")
    promoted = api.post(members, {"user": "bob", "role": "editor"}, format="json")
    assert promoted.status_code == 201 and promoted.json()["role"] == "editor"
    changed = copy.deepcopy(manifest)
    changed["spec"]["nodes"]["root"]["steps"].pop()
    assert save(bob_api, "model-chainer", changed, 1).status_code == 201
    api.post(members, {"user": "bob", "role": "viewer"}, format="json")
    assert bob_api.post("/api/graphs/model-chainer/versions/1/rollback/").status_code == 403
    assert GraphVersion.objects.count() == 2
    assert [(m["user"], m["role"]) for m in api.get(members).json()] == [("bob", "viewer")]
    roles = [
        e.details for e in AuditEvent.objects.filter(action__in=["member.add", "member.role"]).order_by("id")
    ]
    assert roles == [
        {"user": "bob", "role": "viewer"},
        {"user": "bob", "role": ["viewer", "editor"]},
        {"user": "bob", "role": ["editor", "viewer"]},
    ]


def test_an_unknown_role_is_refused_and_adds_nobody(api: APIClient, manifest: dict, other_user: Any) -> None:
    create(api, manifest)
    for role in ("owner", "admin", "", None, 3):
        response = api.post(
            "/api/graphs/model-chainer/members/", {"user": "bob", "role": role}, format="json"
        )
        assert response.status_code == 400, role
        assert response.json()["issues"][0]["path"] == "role"
    assert not GraphMember.objects.exists()


def test_members_without_a_role_are_editors_and_only_the_owner_manages_members(
    api: APIClient, bob_api: APIClient, manifest: dict, other_user: Any
) -> None:
    create(api, manifest)
    assert api.post("/api/graphs/model-chainer/members/", {"user": "bob"}, format="json").json()["role"] == (
        "editor"
    )
    refused = bob_api.post(
        "/api/graphs/model-chainer/members/", {"user": "bob", "role": "viewer"}, format="json"
    )
    assert refused.status_code == 403  # an editor does not manage members, not even themself
    assert GraphMember.objects.get().role == "editor"
