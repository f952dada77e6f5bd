"""Saved test cases through the REST API: CRUD under the graph, issues pinned to the expectation,
secrets redacted, the editor rule, test files in and out, and "save run as test"."""

from __future__ import annotations

import copy
import uuid
from typing import Any

import pytest
import yaml
from rest_framework.test import APIClient

from execution.casecore import load_suite
from execution.models import GraphCase, Run, RunEvent
from execution.services import environments
from graphs.models import AuditEvent, Graph, GraphMember

pytestmark = pytest.mark.django_db

PETS = {
    "apiVersion": "serving.kserve.io/v1alpha1",
    "kind": "InferenceGraph",
    "metadata": {"name": "pets"},
    "spec": {
        "nodes": {
            "root": {
                "routerType": "Switch",
                "steps": [
                    {"name": "cat", "serviceName": "cat", "condition": '[@this].#(animal=="cat")'},
                    {"name": "dog", "serviceName": "dog", "condition": '[@this].#(animal=="dog")'},
                ],
            }
        }
    },
}

CASE = {
    "name": "cat",
    "description": "a cat goes to the cat model",
    "request": {
        "payload": {"animal": "cat"},
        "headers": {"Authorization": "Bearer s3cret", "X-Request-Id": "t-1"},
    },
    "seed": 3,
    "expectations": [
        {"status": 200},
        {"route": "root", "took": "cat"},
        {"path": "says", "step": "root/cat", "equals": "meow"},
    ],
}

URL = "/api/graphs/pets/tests/"


@pytest.fixture
def graph(api: APIClient) -> Graph:
    response = api.post("/api/graphs/", {"manifest": PETS}, format="json")
    assert response.status_code == 201, response.data
    return Graph.objects.get(name="pets")


def test_anonymous_requests_are_refused(anon: APIClient, graph: Graph) -> None:
    for method, url in [
        ("get", URL),
        ("post", URL),
        ("get", f"{URL}1/"),
        ("put", f"{URL}1/"),
        ("delete", f"{URL}1/"),
        ("get", f"{URL}export/"),
        ("post", f"{URL}import/"),
        ("post", f"/api/runs/{uuid.uuid4()}/save-as-test/"),
    ]:
        assert getattr(anon, method)(url).status_code in (401, 403), (method, url)


def test_a_case_is_created_listed_read_with_its_secret_headers_redacted(api: APIClient, graph: Graph) -> None:
    response = api.post(URL, CASE, format="json")
    assert response.status_code == 201, response.data
    body = response.json()
    assert {k: body[k] for k in ("graph", "name", "description", "created_by")} == {
        "graph": "pets",
        "name": "cat",
        "description": "a cat goes to the cat model",
        "created_by": "alice",
    }
    assert body["document"]["request"]["headers"] == {"Authorization": "Bearer ***", "X-Request-Id": "t-1"}
    assert body["document"]["expectations"] == CASE["expectations"]
    stored = GraphCase.objects.get(graph=graph, name="cat")
    assert "s3cret" not in str(stored.document)
    listed = api.get(URL).json()
    assert listed["count"] == 1 and listed["results"][0]["id"] == body["id"]
    assert api.get(f"{URL}{body['id']}/").json() == body
    assert AuditEvent.objects.filter(action="test_case.create", graph_name="pets").count() == 1


def test_a_malformed_expectation_is_refused_with_issues_pinned_to_it(api: APIClient, graph: Graph) -> None:
    bad = copy.deepcopy(CASE)
    bad["expectations"] += [
        {"path": "says", "matches": "(unclosed"},
        {"path": "x", "gt": 1, "lt": 2},
        {"colour": 1},
    ]
    response = api.post(URL, bad, format="json")
    assert response.status_code == 400
    issues = response.json()["issues"]
    assert [(i["code"], i.get("expectation"), i.get("field"), i["path"]) for i in issues] == [
        ("expectation.regex", 3, "matches", "expectations[3].matches"),
        ("expectation.operator", 4, "path", "expectations[4].path"),
        ("expectation.kind", 5, None, "expectations[5]"),
    ]
    assert all(i["severity"] == "error" and i["case_name"] == "cat" for i in issues)
    assert not GraphCase.objects.exists()


def test_an_expectation_naming_a_step_the_latest_version_lacks_is_refused(
    api: APIClient, graph: Graph
) -> None:
    bad = copy.deepcopy(CASE)
    bad["expectations"] = [
        {"step": "root/horse", "status": 200},
        {"route": "nowhere", "took": None},
        {"status": 200},
    ]
    response = api.post(URL, bad, format="json")
    assert response.status_code == 400
    assert [(i["code"], i["expectation"], i["message"]) for i in response.json()["issues"]] == [
        ("expectation.reference", 0, "node 'root' has no step 'horse' (its steps: cat, dog)"),
        ("expectation.reference", 1, "this version of the graph has no node 'nowhere'"),
    ]
    assert not GraphCase.objects.exists()
    assert api.post(URL, ["not", "an", "object"], format="json").status_code == 400


def test_only_the_owner_and_editors_change_cases_everyone_reads_them(
    api: APIClient, bob_api: APIClient, graph: Graph, other_user: Any
) -> None:
    case_id = api.post(URL, CASE, format="json").json()["id"]
    other = {**CASE, "name": "dog"}
    assert bob_api.post(URL, other, format="json").status_code == 403
    assert bob_api.put(f"{URL}{case_id}/", other, format="json").status_code == 403
    assert bob_api.delete(f"{URL}{case_id}/").status_code == 403
    assert (
        bob_api.post(
            f"{URL}import/", b"kind: InferenceGraphTest", content_type="application/yaml"
        ).status_code
        == 403
    )
    assert bob_api.get(URL).json()["count"] == 1
    assert list(GraphCase.objects.values_list("name", flat=True)) == ["cat"]
    GraphMember.objects.create(graph=graph, user=other_user, role=GraphMember.Role.EDITOR)
    assert bob_api.post(URL, other, format="json").status_code == 201


def test_update_rename_conflict_and_delete(api: APIClient, graph: Graph) -> None:
    first = api.post(URL, CASE, format="json").json()
    second = api.post(URL, {**CASE, "name": "dog", "expectations": []}, format="json").json()
    assert api.post(URL, CASE, format="json").status_code == 409
    response = api.put(f"{URL}{second['id']}/", {**CASE, "name": "cat"}, format="json")
    assert response.status_code == 409
    assert response.json()["issues"][0]["code"] == "case.duplicate-name"
    response = api.put(
        f"{URL}{second['id']}/", {"name": "fish", "expectations": [{"status": 404}]}, format="json"
    )
    assert response.status_code == 200
    assert response.json()["document"] == {"name": "fish", "expectations": [{"status": 404}]}
    assert api.delete(f"{URL}{first['id']}/").status_code == 204
    assert api.get(f"{URL}{first['id']}/").status_code == 404
    assert sorted(GraphCase.objects.values_list("name", flat=True)) == ["fish"]
    assert api.get("/api/graphs/pets/tests/99999999/").status_code == 404


def test_export_then_import_round_trips_the_cases(api: APIClient, graph: Graph) -> None:
    api.post(URL, CASE, format="json")
    api.post(
        URL, {"name": "dog", "request": {"raw": "not json", "content_type": "text/plain"}}, format="json"
    )
    response = api.get(f"{URL}export/")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/yaml"
    text = response.content.decode()
    suite = load_suite(text)
    assert suite.graph == "pets" and [c.name for c in suite.cases] == ["cat", "dog"]
    assert yaml.safe_load(text)["kind"] == "InferenceGraphTest"

    GraphCase.objects.all().delete()
    response = api.post(f"{URL}import/", text.encode(), content_type="application/yaml")
    assert response.status_code == 201, response.data
    assert response.json()["count"] == 2
    assert api.get(f"{URL}export/").content.decode() == text


def test_import_merges_or_replaces_and_an_invalid_file_changes_nothing(api: APIClient, graph: Graph) -> None:
    api.post(URL, CASE, format="json")
    api.post(URL, {**CASE, "name": "old"}, format="json")
    file = "kind: InferenceGraphTest\ngraph: pets\ncases:\n- name: cat\n  expectations: [{status: 404}]\n- name: new\n"
    assert api.post(f"{URL}import/", file.encode(), content_type="application/yaml").status_code == 201
    assert sorted(GraphCase.objects.values_list("name", flat=True)) == ["cat", "new", "old"]
    assert GraphCase.objects.get(name="cat").document["expectations"] == [{"status": 404}]
    response = api.post(f"{URL}import/?mode=replace", file.encode(), content_type="application/yaml")
    assert response.status_code == 201
    assert sorted(GraphCase.objects.values_list("name", flat=True)) == ["cat", "new"]

    before = list(GraphCase.objects.order_by("name").values_list("name", "document"))
    broken = file.replace("{status: 404}", "{status: 404}, {step: root/horse, status: 200}")
    response = api.post(f"{URL}import/", broken.encode(), content_type="application/yaml")
    assert response.status_code == 400
    assert response.json()["issues"][0]["path"] == "cases[0].expectations[1]"
    response = api.post(
        f"{URL}import/",
        b"kind: InferenceGraphTest\ngraph: pets\ncases:\n- {name: a, seed: x}\n",
        content_type="application/yaml",
    )
    assert response.status_code == 400
    assert [(i["code"], i["line"], i["column"]) for i in response.json()["issues"]] == [("case.seed", 4, 13)]
    other = file.replace("graph: pets", "graph: birds")
    assert api.post(f"{URL}import/", other.encode(), content_type="application/yaml").status_code == 400
    assert (
        api.post(f"{URL}import/?mode=wipe", file.encode(), content_type="application/yaml").status_code == 400
    )
    assert list(GraphCase.objects.order_by("name").values_list("name", "document")) == before


def _finished_run(graph: Graph, user: Any, **fields: Any) -> Run:
    version = graph.latest_version
    assert version is not None
    values: dict[str, Any] = {
        "status": Run.Status.SUCCEEDED,
        "response_status": 200,
        "response_body": '{"says":"woof","id":4}',
        "response_content_type": "application/json",
        **fields,
    }
    run = Run.objects.create(
        graph=graph,
        version=version,
        environment=environments.ensure_local_environment()[0],  # shared: every user reads the run
        environment_name="local",
        request_body='{"animal":"dog"}',
        request_content_type="application/json",
        request_headers={"Authorization": "Bearer ***", "X-Request-Id": "r-9"},
        seed=11,
        attempt=2,
        created_by=user,
        **values,
    )
    route = {"router": "Switch", "chosen": 1, "node": "root", "step_index": None, "call_id": "root"}
    RunEvent.objects.create(run=run, seq=1, type="route.decided", data={**route, "attempt": 1, "chosen": 0})
    RunEvent.objects.create(run=run, seq=2, type="route.decided", data={**route, "attempt": 2})
    return run


def test_save_run_as_test_writes_status_body_subset_and_routes_of_the_last_attempt(
    api: APIClient, graph: Graph, user: Any
) -> None:
    run = _finished_run(graph, user)
    response = api.post(f"/api/runs/{run.pk}/save-as-test/", {"name": "dog photo"}, format="json")
    assert response.status_code == 201, response.data
    document = response.json()["document"]
    assert document == {
        "name": "dog photo",
        "description": f"Saved from run {run.pk} of version 1.",
        "request": {
            "payload": {"animal": "dog"},
            "content_type": "application/json",
            "headers": {"Authorization": "Bearer ***", "X-Request-Id": "r-9"},
        },
        "seed": 11,
        "environment": "local",
        "expectations": [
            {"status": 200},
            {"body": {"says": "woof", "id": 4}, "match": "subset"},
            {"route": "root", "took": "dog"},
        ],
    }
    assert GraphCase.objects.get(name="dog photo").graph == graph
    unnamed = api.post(f"/api/runs/{run.pk}/save-as-test/", {}, format="json")
    assert unnamed.status_code == 201 and unnamed.json()["name"] == f"run {str(run.pk)[:8]}"


def test_save_as_test_refuses_unfinished_runs_strangers_and_truncated_bodies(
    api: APIClient, bob_api: APIClient, graph: Graph, user: Any
) -> None:
    queued = _finished_run(graph, user, status=Run.Status.QUEUED, response_status=None, response_body=None)
    response = api.post(f"/api/runs/{queued.pk}/save-as-test/", {}, format="json")
    assert response.status_code == 409
    assert "has no response yet" in response.json()["detail"]
    run = _finished_run(graph, user, response_truncated=True)
    assert bob_api.post(f"/api/runs/{run.pk}/save-as-test/", {}, format="json").status_code == 403
    assert api.post(f"/api/runs/{uuid.uuid4()}/save-as-test/", {}, format="json").status_code == 404
    assert not GraphCase.objects.exists()
    response = api.post(f"/api/runs/{run.pk}/save-as-test/", {"name": "big"}, format="json")
    assert [e for e in response.json()["document"]["expectations"] if "body" in e] == []


def test_the_schema_documents_the_test_endpoints_with_examples(api: APIClient) -> None:
    schema = yaml.safe_load(api.get("/api/schema/").content)
    paths = schema["paths"]
    for path in (
        "/api/graphs/{name}/tests/",
        "/api/graphs/{name}/tests/{id}/",
        "/api/graphs/{name}/tests/export/",
        "/api/graphs/{name}/tests/import/",
        "/api/runs/{run_id}/save-as-test/",
    ):
        assert path in paths, path
    create = paths["/api/graphs/{name}/tests/"]["post"]
    assert "examples" in create["requestBody"]["content"]["application/json"]


def test_hostile_inputs_get_a_clear_4xx_and_nothing_is_stored(api: APIClient, graph: Graph) -> None:
    """10,000 cases in one file, a 10 MB expectation; a catastrophic regex is stored (RE2 evaluates
    it in linear time, see tests/graphtests) and nothing else is."""
    many = "kind: InferenceGraphTest\ngraph: pets\ncases:\n" + "".join(
        f"- name: c{i}\n" for i in range(10_000)
    )
    response = api.post(f"{URL}import/", many.encode(), content_type="application/yaml")
    assert response.status_code == 400
    assert [i["code"] for i in response.json()["issues"]] == ["suite.too-many-cases"]

    huge = {**CASE, "expectations": [{"path": "says", "equals": "x" * (10 * 1024 * 1024)}]}
    response = api.post(URL, huge, format="json")
    assert response.status_code == 413
    assert not GraphCase.objects.exists()

    regex = {**CASE, "expectations": [{"path": "says", "matches": "^(a+)+$"}]}
    assert api.post(URL, regex, format="json").status_code == 201
    assert list(GraphCase.objects.values_list("name", flat=True)) == ["cat"]


def test_save_as_test_previews_without_saving_and_records_only_the_kept_expectations(
    api: APIClient, graph: Graph, user: Any
) -> None:
    """The editor's dialog: a preview lists what would be recorded (nothing is stored); the save
    then records the expectations the user kept, checked like any case."""
    run = _finished_run(graph, user)
    preview = api.post(f"/api/runs/{run.pk}/save-as-test/", {"name": "dog", "preview": True}, format="json")
    assert preview.status_code == 200, preview.data
    assert preview.json()["document"]["expectations"] == [
        {"status": 200},
        {"body": {"says": "woof", "id": 4}, "match": "subset"},
        {"route": "root", "took": "dog"},
    ]
    assert preview.json()["document"]["name"] == "dog"
    assert not GraphCase.objects.exists()

    kept = [{"status": 200}, {"route": "root", "took": "dog"}]
    response = api.post(
        f"/api/runs/{run.pk}/save-as-test/", {"name": "dog", "expectations": kept}, format="json"
    )
    assert response.status_code == 201, response.data
    assert GraphCase.objects.get(name="dog").document["expectations"] == kept

    bad = api.post(
        f"/api/runs/{run.pk}/save-as-test/",
        {"name": "dog 2", "expectations": [{"route": "nowhere", "took": "x"}]},
        format="json",
    )
    assert bad.status_code == 400
    assert bad.json()["issues"][0]["expectation"] == 0
    not_a_list = api.post(
        f"/api/runs/{run.pk}/save-as-test/", {"expectations": {"status": 200}}, format="json"
    )
    assert not_a_list.status_code == 400 and "expectations" in str(not_a_list.json())
    assert list(GraphCase.objects.values_list("name", flat=True)) == ["dog"]
