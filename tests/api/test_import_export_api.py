"""Import and export through the REST API and the two management commands."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.test import APIClient

from graphs.models import Graph, GraphVersion

pytestmark = pytest.mark.django_db

SEQUENCE_YAML = """\
apiVersion: serving.kserve.io/v1alpha1
kind: InferenceGraph
metadata:
  name: model-chainer
  annotations:
    serving.kserve.io/deploymentMode: Standard
spec:
  nodes:
    root:
      routerType: Sequence
      steps:
      - serviceName: sklearn-iris
        name: sklearn-iris
      - serviceName: xgboost-iris
        name: xgboost-iris
        data: $request
  routerTimeouts:
    serverRead: 300
    serviceClient: 150
"""


def post_yaml(api: APIClient, text: str, query: str = "", **headers: Any) -> Any:
    return api.post(
        f"/api/graphs/import/{query}", data=text.encode(), content_type="application/yaml", **headers
    )


def test_import_creates_a_graph_and_export_gives_the_same_document(api: APIClient) -> None:
    response = post_yaml(api, SEQUENCE_YAML)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["graphs"][0]["graph"] == "model-chainer"
    assert body["graphs"][0]["version"]["number"] == 1
    exported = api.get("/api/graphs/model-chainer/versions/1/export/?format=yaml")
    assert exported.status_code == 200
    assert exported["Content-Type"].startswith("application/yaml")
    text = exported.content.decode()
    assert text.startswith("# ")
    assert "model-chainer" in text.splitlines()[0] and "version 1" in text.splitlines()[0]
    assert yaml.safe_load(text) == yaml.safe_load(SEQUENCE_YAML)
    as_json = api.get("/api/graphs/model-chainer/versions/1/export/?format=json")
    assert as_json["Content-Type"] == "application/json"
    assert json.loads(as_json.content) == yaml.safe_load(SEQUENCE_YAML)


def test_export_rejects_unknown_format(api: APIClient) -> None:
    post_yaml(api, SEQUENCE_YAML)
    assert api.get("/api/graphs/model-chainer/versions/1/export/?format=xml").status_code == 400


def test_broken_yaml_is_400_with_line_and_column(api: APIClient) -> None:
    response = post_yaml(api, "apiVersion: x\nkind: [unclosed\nspec: {}\n")
    assert response.status_code == 400
    issue = response.json()["issues"][0]
    assert issue["line"] >= 2 and issue["column"] >= 1
    assert not Graph.objects.exists()


def test_a_document_that_is_not_an_inferencegraph_names_what_was_found(api: APIClient) -> None:
    response = post_yaml(api, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n")
    assert response.status_code == 400
    assert "Deployment" in response.json()["detail"]


def test_multi_document_import_creates_every_graph_or_none(api: APIClient) -> None:
    second = SEQUENCE_YAML.replace("model-chainer", "second-chain")
    response = post_yaml(api, SEQUENCE_YAML + "---\n" + second)
    assert response.status_code == 201
    assert sorted(g["graph"] for g in response.json()["graphs"]) == ["model-chainer", "second-chain"]
    # a stream where one name is taken imports nothing
    third = SEQUENCE_YAML.replace("model-chainer", "third-chain")
    assert post_yaml(api, third + "---\n" + SEQUENCE_YAML).status_code == 400
    assert not Graph.objects.filter(name="third-chain").exists()


def test_import_a_kubectl_list(api: APIClient) -> None:
    doc = yaml.safe_load(SEQUENCE_YAML)
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": [doc]})
    response = api.post("/api/graphs/import/", data=text, content_type="application/json")
    assert response.status_code == 201
    assert response.json()["graphs"][0]["graph"] == "model-chainer"


def test_a_manifest_with_errors_is_imported_as_an_invalid_version_and_export_is_422(api: APIClient) -> None:
    broken = SEQUENCE_YAML.replace("routerType: Sequence", "routerType: Splitter")
    response = post_yaml(api, broken)
    assert response.status_code == 201
    version = response.json()["graphs"][0]["version"]
    assert version["valid"] is False
    weight_issues = [i for i in version["issues"] if i["code"] == "webhook.weight-missing"]
    assert weight_issues and weight_issues[0]["node"] == "root"
    exported = api.get("/api/graphs/model-chainer/versions/1/export/")
    assert exported.status_code == 422
    assert exported.json()["issues"]


def test_unknown_and_legacy_fields_are_kept_and_warned_about(api: APIClient) -> None:
    text = SEQUENCE_YAML.replace("  nodes:\n", "  color: blue\n  nodes:\n")
    response = post_yaml(api, text)
    assert response.status_code == 201
    issues = response.json()["issues"]
    unknown = [i for i in issues if i["severity"] == "warning" and "color" in i.get("path", "")]
    assert unknown and unknown[0]["line"] == 8
    stored = GraphVersion.objects.get().manifest
    assert stored["spec"]["color"] == "blue"  # kept in the stored document
    exported = yaml.safe_load(api.get("/api/graphs/model-chainer/versions/1/export/").content)
    assert "color" not in exported["spec"]  # never in a deployable export


def test_import_as_new_version_of_existing_graph_honours_if_match(api: APIClient) -> None:
    post_yaml(api, SEQUENCE_YAML)
    changed = SEQUENCE_YAML.replace("serverRead: 300", "serverRead: 200")
    assert post_yaml(api, changed, "?graph=model-chainer", HTTP_IF_MATCH='"v1"').status_code == 201
    again = changed.replace("serverRead: 200", "serverRead: 100")
    stale = post_yaml(api, again, "?graph=model-chainer", HTTP_IF_MATCH='"v1"')
    assert stale.status_code == 409
    assert stale.json()["latest_version"] == 2
    assert GraphVersion.objects.count() == 2


def test_import_size_limit_is_413_naming_the_limit(api: APIClient, settings: Any) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    response = post_yaml(api, SEQUENCE_YAML + "#" * 2000)
    assert response.status_code == 413
    assert "1000 bytes" in response.json()["detail"]


def stream_of(count: int, prefix: str = "g") -> str:
    return "---\n".join(SEQUENCE_YAML.replace("model-chainer", f"{prefix}-{i}") for i in range(count))


def test_an_import_over_the_document_limit_is_413_naming_the_limit(api: APIClient, settings: Any) -> None:
    settings.STUDIO_MAX_IMPORT_DOCUMENTS = 3
    assert post_yaml(api, stream_of(3)).status_code == 201
    response = post_yaml(api, stream_of(4, "more"))
    assert response.status_code == 413
    assert "4 documents" in response.json()["detail"] and "limit of 3" in response.json()["detail"]
    assert response.json()["issues"][0]["code"] == "import.too-many-documents"
    assert not Graph.objects.filter(name__startswith="more-").exists()


@pytest.mark.django_db(transaction=True)
def test_each_document_is_committed_on_its_own(api: APIClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """No transaction spans the stream: a long import never holds the database's write lock."""
    from django.db import connection

    from graphs import services

    depths: list[int] = []
    create = services.graph_create

    def recording(**kwargs: Any) -> Any:
        depths.append(len(connection.atomic_blocks))
        return create(**kwargs)

    monkeypatch.setattr(services, "graph_create", recording)
    assert post_yaml(api, stream_of(3)).status_code == 201
    assert depths == [0, 0, 0]
    assert Graph.objects.filter(name__startswith="g-").count() == 3


def test_a_stream_naming_one_graph_twice_imports_nothing(api: APIClient) -> None:
    response = post_yaml(api, stream_of(2) + "---\n" + stream_of(1))
    assert response.status_code == 400 and "g-0" in response.json()["detail"]
    assert not Graph.objects.exists()


def test_empty_import_is_400(api: APIClient) -> None:
    assert post_yaml(api, "").status_code == 400


def test_import_graph_and_export_graph_commands(user: Any, tmp_path: Any) -> None:
    path = tmp_path / "chain.yaml"
    path.write_text(SEQUENCE_YAML)
    out, err = io.StringIO(), io.StringIO()
    call_command("import_graph", str(path), "--message", "from file", stdout=out, stderr=err)
    assert "model-chainer: version 1 created (valid)" in out.getvalue()
    out = io.StringIO()
    call_command("export_graph", "model-chainer", "--format", "json", stdout=out)
    assert json.loads(out.getvalue()) == yaml.safe_load(SEQUENCE_YAML)


def test_import_graph_strict_fails_on_errors_and_reports_lines(user: Any, tmp_path: Any) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(SEQUENCE_YAML.replace("routerType: Sequence", "routerType: Chain"))
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command("import_graph", str(path), "--strict", stdout=io.StringIO(), stderr=err)
    assert f"{path}:10:" in err.getvalue()


def test_import_graph_names_an_unnamed_step_by_its_index_as_rungraph_does(user: Any, tmp_path: Any) -> None:
    path = tmp_path / "unnamed.yaml"
    path.write_text(SEQUENCE_YAML.replace("        name: sklearn-iris\n", "        data: $response\n"))
    err = io.StringIO()
    call_command("import_graph", str(path), stdout=io.StringIO(), stderr=err)
    [line] = [text for text in err.getvalue().splitlines() if "sequence.response-on-first-step" in text]
    assert line.startswith(f"{path}:13:9: warning: [sequence.response-on-first-step] ")
    assert line.endswith(" (node=root step=0)")


def test_import_graph_of_unreadable_file_imports_nothing(user: Any, tmp_path: Any) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("kind: [")
    with pytest.raises(CommandError):
        call_command("import_graph", str(path), stdout=io.StringIO(), stderr=io.StringIO())
    assert not Graph.objects.exists()


def test_importing_a_version_into_someone_elses_graph_is_forbidden(
    api: APIClient, bob_api: APIClient
) -> None:
    post_yaml(api, SEQUENCE_YAML)
    changed = SEQUENCE_YAML.replace("serverRead: 300", "serverRead: 200")
    response = post_yaml(bob_api, changed, "?graph=model-chainer")
    assert response.status_code == 403
    assert GraphVersion.objects.count() == 1


def test_import_into_a_graph_that_does_not_exist_is_404(api: APIClient) -> None:
    response = post_yaml(api, SEQUENCE_YAML, "?graph=nope")
    assert response.status_code == 404
    assert not Graph.objects.exists()
