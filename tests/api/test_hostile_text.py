"""Hostile text at every way in: YAML alias bombs measured in bytes, lone surrogates, NUL
characters, unknown YAML tags and duplicate JSON keys are each a 400 that says where; never a 500,
never a stored row."""

from __future__ import annotations

import json
import tracemalloc
import uuid
from typing import Any

import pytest
from rest_framework.test import APIClient

from execution.models import Environment, GraphCase, Run
from graphs.models import Graph, GraphVersion

pytestmark = pytest.mark.django_db

MB = 1024 * 1024

SEQUENCE = {
    "apiVersion": "serving.kserve.io/v1alpha1",
    "kind": "InferenceGraph",
    "metadata": {"name": "pets"},
    "spec": {"nodes": {"root": {"routerType": "Sequence", "steps": [{"serviceName": "cat"}]}}},
}


@pytest.fixture
def graph(api: APIClient) -> Graph:
    response = api.post("/api/graphs/", {"manifest": SEQUENCE}, format="json")
    assert response.status_code == 201, response.content[:300]
    return Graph.objects.get(name="pets")


def only_issue(response: Any) -> dict[str, Any]:
    body = response.json()
    assert body["issues"], body
    return dict(body["issues"][0])


# --- YAML aliases are counted in bytes once expanded ----------------------------------------------


def alias_bomb_test_file(copies: int) -> str:
    big = "x" * 32 * 1024
    lines = [
        "apiVersion: tests.inferencegraph.studio/v1alpha1",
        "kind: InferenceGraphTest",
        "graph: pets",
        "cases:",
        "- name: bomb",
        f"  description: &big {big}",
        "  request:",
        "    payload:",
        "      instances:",
    ]
    lines += ["      - *big"] * copies
    lines += ["  expectations: [{status: 200}]"]
    return "\n".join(lines) + "\n"


def test_a_39_kib_test_file_aliasing_32_kib_2000_times_is_400_with_bounded_memory(
    api: APIClient, graph: Graph
) -> None:
    text = alias_bomb_test_file(2000)
    assert len(text) < 64 * 1024
    tracemalloc.start()
    response = api.post("/api/graphs/pets/tests/import/", text.encode(), content_type="application/yaml")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert response.status_code == 400, response.content[:300]
    issue = only_issue(response)
    assert issue["code"] == "load.too-large-expanded", issue
    assert "STUDIO_MAX_MANIFEST_BYTES" in issue["message"] and "alias" in issue["message"]
    assert issue["line"] and issue["column"]
    assert not GraphCase.objects.exists()
    assert peak < 20 * MB, f"peak {peak / MB:.0f} MB"


def test_a_test_file_that_reuses_an_anchor_a_few_times_still_imports(api: APIClient, graph: Graph) -> None:
    response = api.post(
        "/api/graphs/pets/tests/import/",
        alias_bomb_test_file(3).encode(),
        content_type="application/yaml",
    )
    assert response.status_code == 201, response.content[:300]
    assert GraphCase.objects.get().document["request"]["payload"]["instances"][2] == "x" * 32 * 1024


def alias_bomb_graph(copies: int) -> str:
    big = "x" * 32 * 1024
    lines = [
        "apiVersion: serving.kserve.io/v1alpha1",
        "kind: InferenceGraph",
        "metadata:",
        "  name: bomb",
        "  annotations:",
        f"    big: &big {big}",
        "spec:",
        "  nodes:",
        "    root:",
        "      routerType: Sequence",
        "      steps:",
    ]
    lines += [f"      - {{serviceName: s{i}, data: *big}}" for i in range(copies)]
    return "\n".join(lines) + "\n"


def test_a_graph_import_whose_aliases_expand_past_the_byte_limit_is_400_with_bounded_memory(
    api: APIClient,
) -> None:
    text = alias_bomb_graph(900)
    assert len(text) < 70 * 1024
    tracemalloc.start()
    response = api.post("/api/graphs/import/", text.encode(), content_type="application/yaml")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert response.status_code == 400, response.content[:300]
    issue = only_issue(response)
    assert issue["code"] == "load.too-large-expanded", issue
    assert "max_bytes" in issue["message"] and "alias" in issue["message"]
    assert issue["line"] and issue["column"]
    assert not Graph.objects.exists() and not GraphVersion.objects.exists()
    assert peak < 20 * MB, f"peak {peak / MB:.0f} MB"


def test_a_graph_import_reusing_an_anchor_a_few_times_still_imports(api: APIClient) -> None:
    response = api.post("/api/graphs/import/", alias_bomb_graph(3).encode(), content_type="application/yaml")
    assert response.status_code in (200, 201), response.content[:300]
    assert GraphVersion.objects.get().manifest["spec"]["nodes"]["root"]["steps"][2]["data"] == "x" * 32 * 1024


# --- lone surrogates and NUL characters in JSON bodies --------------------------------------------


def test_a_lone_surrogate_in_an_annotation_is_400_with_its_path_line_and_column(api: APIClient) -> None:
    body = '{"manifest": {"metadata": {"annotations": {"a": "ok", "b": "\\ud800"}}}}'
    response = api.post("/api/validate/", body, content_type="application/json")
    assert response.status_code == 400, response.content[:300]
    issue = only_issue(response)
    assert issue["code"] == "request.unstorable-text"
    assert issue["path"] == "manifest.metadata.annotations.b"
    assert (issue["line"], issue["column"]) == (1, 60)
    assert "surrogate" in issue["message"]


def test_a_surrogate_pair_is_a_character_and_is_accepted(api: APIClient) -> None:
    body = '{"document": "{\\"a\\": \\"\\ud83d\\ude00\\"}", "condition": "a"}'
    response = api.post("/api/conditions/evaluate/", body, content_type="application/json")
    assert response.status_code == 200, response.content[:300]
    assert response.json()["value"] == "\U0001f600"


def test_a_nul_in_a_test_case_name_or_description_is_400_naming_the_field(
    api: APIClient, graph: Graph
) -> None:
    for field in ("name", "description"):
        case = {"name": "cat", "description": "d", "expectations": [{"status": 200}], field: "a\u0000b"}
        response = api.post("/api/graphs/pets/tests/", json.dumps(case), content_type="application/json")
        assert response.status_code == 400, response.content[:300]
        issue = only_issue(response)
        assert issue["code"] == "request.unstorable-text" and issue["path"] == field
        assert "NUL" in issue["message"] and issue["line"] == 1
    assert not GraphCase.objects.exists()


def test_a_nul_in_a_run_payload_is_400_and_no_run_is_stored(api: APIClient, graph: Graph) -> None:
    body = json.dumps({"payload": {"instances": ["a\u0000"]}})
    response = api.post("/api/graphs/pets/runs/", body, content_type="application/json")
    assert response.status_code == 400, response.content[:300]
    assert only_issue(response)["path"] == "payload.instances[0]"
    assert not Run.objects.exists()


def test_a_nul_or_a_surrogate_in_a_key_is_400(api: APIClient) -> None:
    for key in ("\\u0000", "\\udfff"):
        body = '{"manifest": {"metadata": {"annotations": {"' + key + '": "x"}}}}'
        response = api.post("/api/validate/", body, content_type="application/json")
        assert response.status_code == 400, response.content[:300]
        assert only_issue(response)["path"] == "manifest.metadata.annotations"


def test_the_json_parser_reads_no_more_than_the_request_limit_whatever_the_headers_say(settings: Any) -> None:
    import io

    from config.parsers import BodyTooLarge, StrictJSONParser

    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000

    class Stream(io.BytesIO):
        asked: list[int] = []

        def read(self, size: int | None = -1) -> bytes:
            self.asked.append(-1 if size is None else size)
            return super().read(size)

    stream = Stream(b'"' + b"x" * 10_000 + b'"')
    with pytest.raises(BodyTooLarge, match="limit of 1000 bytes"):
        StrictJSONParser().parse(stream)
    assert Stream.asked == [1001]
    assert StrictJSONParser().parse(io.BytesIO(b'"' + b"x" * 998 + b'"')) == "x" * 998


@pytest.mark.parametrize(
    ("url", "headers", "where"),
    [
        ("/api/graphs/a%00b/", {}, "url"),
        ("/api/graphs/pets/diff/?from=1%00&to=1", {}, "query.from"),
        ("/api/graphs/?a%00=1", {}, "query"),
        ("/api/graphs/", {"HTTP_X_REQUEST_ID": "abc\x00"}, "header.X-Request-Id"),
        ("/api/graphs/", {"HTTP_COOKIE": "sessionid=abcdefgh\x00"}, "header.Cookie"),
    ],
)
def test_a_nul_in_the_url_the_query_or_a_header_is_400_before_any_lookup(
    api: APIClient, graph: Graph, url: str, headers: dict[str, str], where: str
) -> None:
    """PostgreSQL refuses a NUL in a query parameter (a 500 from any lookup by name, token or
    session key), so it is refused before anything reads the request."""
    response = api.get(url, **headers)  # type: ignore[arg-type]
    assert response.status_code == 400, response.content[:300]
    issue = only_issue(response)
    assert issue["code"] == "request.unstorable-text" and issue["path"] == where, issue
    assert "NUL" in issue["message"]


def test_a_nul_in_a_token_is_400_not_a_failed_lookup(graph: Graph) -> None:
    response = APIClient().get("/api/graphs/", HTTP_AUTHORIZATION="Token abc\x00")
    assert response.status_code == 400, response.content[:300]
    assert only_issue(response)["path"] == "header.Authorization"


# --- duplicate keys in JSON bodies ----------------------------------------------------------------


def test_a_duplicate_key_in_an_environment_is_400_naming_the_key_line_and_column(api: APIClient) -> None:
    body = '{"name": "dup",\n "allow_loopback": false,\n "allow_loopback": true}'
    response = api.post("/api/environments/", body, content_type="application/json")
    assert response.status_code == 400, response.content[:300]
    issue = only_issue(response)
    assert issue["code"] == "request.duplicate-key"
    assert '"allow_loopback"' in issue["message"] and "allow_loopback" in response.json()["detail"]
    assert (issue["line"], issue["column"]) == (3, 2)
    assert not Environment.objects.filter(name="dup").exists()


def test_a_duplicate_key_deep_in_a_body_is_400_with_its_path(api: APIClient) -> None:
    body = '{"manifest": {"spec": {"nodes": {"root": {}, "root": {}}}}}'
    response = api.post("/api/validate/", body, content_type="application/json")
    assert response.status_code == 400, response.content[:300]
    issue = only_issue(response)
    assert issue["path"] == "manifest.spec.nodes.root" and issue["column"] == 46


def test_keys_that_only_look_alike_are_not_duplicates(api: APIClient) -> None:
    body = '{"document": "{}", "condition": "a", "x": {"condition": 1}, "y": [{"a": 1}, {"a": 2}]}'
    response = api.post("/api/conditions/evaluate/", body, content_type="application/json")
    assert response.status_code == 200, response.content[:300]


# --- YAML test files: tags, NUL, surrogates -------------------------------------------------------


TEST_FILE = """\
apiVersion: tests.inferencegraph.studio/v1alpha1
kind: InferenceGraphTest
graph: pets
cases:
- name: {name}
  expectations: [{{status: 200}}]
"""


@pytest.mark.parametrize(
    ("name", "code", "column"),
    [
        ("!foo bar", "load.tag", 9),
        ("!!python/object:os.system x", "load.tag", 9),
        ("!!set {a, b}", "load.tag", 9),
        ('"a\\0b"', "load.unstorable-text", 9),
        ('"a\\x00b"', "load.unstorable-text", 9),
    ],
)
def test_a_test_file_with_an_unknown_tag_or_a_nul_is_400_with_line_and_column(
    api: APIClient, graph: Graph, name: str, code: str, column: int
) -> None:
    text = TEST_FILE.format(name=name)
    response = api.post("/api/graphs/pets/tests/import/", text.encode(), content_type="application/yaml")
    assert response.status_code == 400, response.content[:300]
    issue = only_issue(response)
    assert issue["code"] == code, issue
    assert (issue["line"], issue["column"]) == (5, column), issue
    assert not GraphCase.objects.exists()


def test_a_graph_import_with_a_nul_in_yaml_or_json_is_400_with_line_and_column(api: APIClient) -> None:
    yaml_text = 'apiVersion: serving.kserve.io/v1alpha1\nkind: InferenceGraph\nmetadata:\n  name: n\n  annotations:\n    a: "\\0"\n'
    json_text = json.dumps({**SEQUENCE, "metadata": {"name": "n", "annotations": {"a": "\u0000"}}})
    for text in (yaml_text, json_text):
        response = api.post("/api/graphs/import/", text.encode(), content_type="application/yaml")
        assert response.status_code == 400, response.content[:300]
        issue = only_issue(response)
        assert issue["code"] == "load.unstorable-text", issue
        assert issue["path"] == "metadata.annotations.a", issue
    assert not Graph.objects.exists()


def _api_endpoints_taking_json() -> list[tuple[str, str]]:
    from tests.api.test_hostile_input import _api_endpoints_taking_json as walk

    return walk()


def test_every_api_endpoint_answers_400_never_500_to_unstorable_text_and_duplicate_keys(
    api: APIClient, graph: Graph, user: Any, other_user: Any
) -> None:
    """Every body-taking endpoint, fed a lone surrogate, a NUL and a duplicate key in its fields."""
    from execution.services import environments, runs

    environments.ensure_local_environment()
    assert graph.latest_version is not None
    run, _ = runs.run_create(graph=graph, version=graph.latest_version, user=user, payload={})
    environment = Environment.objects.create(name="mine", owner=user)
    case = GraphCase.objects.create(
        graph=graph, name="c", document={"name": "c", "expectations": []}, created_by=user
    )
    values = {
        "name": graph.name,
        "number": "1",
        "pk": str(environment.pk),
        "id": str(case.pk),
        "case_id": str(case.pk),
        "run_id": str(run.pk),
        "suite_id": str(uuid.uuid4()),
        "username": other_user.username,
    }
    keys = ("document", "payload", "manifest", "condition", "message", "name", "description", "raw")
    bodies = [
        "{" + ", ".join(f'"{key}": "\\ud800"' for key in keys) + "}",
        "{" + ", ".join(f'"{key}": "a\\u0000"' for key in keys) + "}",
        "{" + ", ".join(f'"{key}": "a", "{key}": "b"' for key in keys) + "}",
    ]
    answers = []
    for method, route in _api_endpoints_taking_json():
        url = "/" + route
        for key, value in values.items():
            for converter in ("str", "int", "dbint", "uuid"):
                url = url.replace(f"<{converter}:{key}>", value)
        if "<" in url:
            continue
        for body in bodies:
            response = getattr(api, method)(url, body, content_type="application/json")
            answers.append((method.upper(), url, body[:20], response.status_code))
    assert len(answers) >= 30, answers
    assert not [a for a in answers if a[3] >= 500], answers
    assert not [a for a in answers if a[3] < 400 and not a[1].endswith(BODYLESS_ACTIONS)], answers


BODYLESS_ACTIONS = ("/restore/", "/rollback/", "/rerun/", "/cancel/")
