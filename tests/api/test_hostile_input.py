"""Hostile input: refused with 400 or 413 naming the limit, memory bounded, nothing half-saved.

How fast each refusal is gets measured by ``make reliability`` (bench/reliability.py), not here:
tests check behaviour, never speed.
"""

from __future__ import annotations

import json
import tracemalloc
import uuid
from typing import Any

import pytest
from rest_framework.test import APIClient

from graphs.models import Graph, GraphVersion

pytestmark = pytest.mark.django_db

MB = 1024 * 1024


def assert_refused(response: Any, statuses: tuple[int, ...], limit_words: str) -> None:
    assert response.status_code in statuses, (response.status_code, response.content[:300])
    detail = response.json()["detail"]
    assert limit_words in detail, detail
    assert not Graph.objects.exists() and not GraphVersion.objects.exists()


def test_a_3_mb_json_body_is_413_naming_the_limit(api: APIClient) -> None:
    body = json.dumps({"manifest": {"spec": {"padding": "x" * 3 * MB}}})
    response = api.post("/api/graphs/", body, content_type="application/json")
    assert_refused(response, (413,), "limit of")


def test_a_10_mb_yaml_import_is_413(api: APIClient) -> None:
    text = "apiVersion: serving.kserve.io/v1alpha1\nkind: InferenceGraph\n# " + "y" * 10 * MB
    response = api.post("/api/graphs/import/", text.encode(), content_type="application/yaml")
    assert_refused(response, (413,), "limit of")


def test_billion_laughs_yaml_is_refused_with_bounded_memory(api: APIClient) -> None:
    lines = [
        "apiVersion: serving.kserve.io/v1alpha1",
        "kind: InferenceGraph",
        "metadata: {name: lol}",
        'a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
    ]
    for level in range(1, 10):
        refs = ",".join([f"*a{level - 1}"] * 9)
        lines.append(f"a{level}: &a{level} [{refs}]")
    lines.append("spec: {nodes: {root: {routerType: Sequence, steps: *a9}}}")
    tracemalloc.start()
    response = api.post("/api/graphs/import/", "\n".join(lines).encode(), content_type="application/yaml")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert_refused(response, (400,), "alias")
    assert peak < 50 * MB, f"peak {peak / MB:.0f} MB"


def test_a_100000_node_manifest_is_refused(api: APIClient) -> None:
    nodes = {f"n{i}": {"routerType": "Sequence"} for i in range(100_000)}
    nodes["root"] = {"routerType": "Sequence"}
    text = json.dumps(
        {
            "apiVersion": "serving.kserve.io/v1alpha1",
            "kind": "InferenceGraph",
            "metadata": {"name": "huge"},
            "spec": {"nodes": nodes},
        },
        separators=(",", ":"),
    )
    response = api.post("/api/graphs/import/", text.encode(), content_type="application/json")
    assert_refused(response, (400, 413), "limit")


def test_a_2000_plus_node_manifest_under_the_byte_limit_is_refused_by_the_node_limit(api: APIClient) -> None:
    nodes = {f"n{i}": {"routerType": "Sequence"} for i in range(2_500)}
    nodes["root"] = {"routerType": "Sequence"}
    text = json.dumps(
        {
            "apiVersion": "serving.kserve.io/v1alpha1",
            "kind": "InferenceGraph",
            "metadata": {"name": "wide"},
            "spec": {"nodes": nodes},
        },
        separators=(",", ":"),
    )
    response = api.post("/api/graphs/import/", text.encode(), content_type="application/json")
    assert_refused(response, (400,), "max_graph_nodes")


def test_deeply_nested_json_is_400_not_a_crash(api: APIClient) -> None:
    body = '{"manifest": ' + "[" * 100_000 + "]" * 100_000 + "}"
    response = api.post("/api/graphs/", body, content_type="application/json")
    assert_refused(response, (400,), "nested deeper")


def test_deeply_nested_yaml_is_400(api: APIClient) -> None:
    text = "apiVersion: serving.kserve.io/v1alpha1\nkind: InferenceGraph\nspec: " + "[" * 5000 + "]" * 5000
    response = api.post("/api/graphs/import/", text.encode(), content_type="application/yaml")
    assert_refused(response, (400,), "nesting depth")


def test_nan_is_not_json(api: APIClient) -> None:
    response = api.post("/api/validate/", '{"manifest": {"spec": NaN}}', content_type="application/json")
    assert response.status_code == 400


# --- nesting inside strings and stored bodies (security issue #16, items 1 and 9) ------------------
# The request body's depth check skips JSON strings, but some strings are read as JSON later: a
# run's raw payload (a Switch validates it), the condition evaluator's document, a stored response
# shown by the run API. Each must be refused (or shown as text) before any parser recurses.


def deep(levels: int) -> str:
    return "[" * levels + "]" * levels


@pytest.fixture
def runnable(user: Any, manifest: dict[str, Any]) -> Any:
    """A saved graph whose root is a Switch (it reads its input as JSON), and the local environment."""
    from execution.services import environments
    from graphs import services as graph_services

    environments.ensure_local_environment()
    manifest["spec"]["nodes"]["root"] = {
        "routerType": "Switch",
        "steps": [{"serviceName": "echo", "condition": "instances"}],
    }
    return graph_services.graph_create(owner=user, manifest=manifest)


def test_a_condition_document_string_nested_1100_deep_is_400_naming_the_limit(api: APIClient) -> None:
    response = api.post(
        "/api/conditions/evaluate/", {"document": deep(1100), "condition": "@this"}, format="json"
    )
    assert response.status_code == 400, response.content[:300]
    body = response.json()
    assert "nested deeper than 200 levels" in body["detail"] and "document" in body["detail"]
    assert body["issues"][0]["code"] == "request.too-deep" and body["issues"][0]["path"] == "document"


def test_a_condition_document_string_nested_100000_deep_is_400(api: APIClient) -> None:
    response = api.post(
        "/api/conditions/evaluate/", {"document": deep(100_000), "condition": "a"}, format="json"
    )
    assert response.status_code == 400 and "nested deeper" in response.json()["detail"]


def test_a_condition_document_at_the_limit_is_still_evaluated(api: APIClient) -> None:
    response = api.post("/api/conditions/evaluate/", {"document": deep(200), "condition": "0"}, format="json")
    assert response.status_code == 200 and response.json()["matches"] is True


def test_brackets_inside_strings_of_the_document_do_not_count(api: APIClient) -> None:
    document = json.dumps({"text": "[" * 5000})
    response = api.post(
        "/api/conditions/evaluate/", {"document": document, "condition": "text"}, format="json"
    )
    assert response.status_code == 200 and response.json()["matches"] is True


@pytest.mark.parametrize("content_type", [None, "application/json", "text/plain"])
def test_a_run_payload_string_nested_3000_deep_is_400_and_no_run_is_stored(
    api: APIClient, runnable: Any, content_type: str | None
) -> None:
    from execution.models import Run

    request: dict[str, Any] = {"payload": deep(3000)}
    if content_type:
        request["content_type"] = content_type
    response = api.post(f"/api/graphs/{runnable.name}/runs/", request, format="json")
    assert response.status_code == 400, response.content[:300]
    body = response.json()
    assert "payload" in body["detail"] and "nested deeper than 200 levels" in body["detail"]
    assert body["issues"][0]["path"] == "payload"
    assert not Run.objects.exists()


def test_a_run_payload_string_with_brackets_only_inside_its_strings_is_accepted(
    api: APIClient, runnable: Any
) -> None:
    payload = json.dumps({"instances": ["[" * 3000]})
    response = api.post(f"/api/graphs/{runnable.name}/runs/", {"payload": payload}, format="json")
    assert response.status_code == 202, response.content[:300]
    assert response.json()["request"]["body"] == {"instances": ["[" * 3000]}


def test_a_run_whose_stored_response_nests_3000_deep_is_shown_as_text_with_a_note(
    api: APIClient, runnable: Any, user: Any
) -> None:
    from execution.models import Run
    from execution.services import runs

    run, _ = runs.run_create(
        graph=runnable, version=runnable.latest_version, user=user, payload={"instances": [1]}
    )
    Run.objects.filter(pk=run.pk).update(  # what a worker stores when a step answers this body
        status="succeeded",
        response_status=200,
        response_content_type="application/json",
        response_body=deep(3000),
        response_size=6000,
    )
    response = api.get(f"/api/runs/{run.pk}/")
    assert response.status_code == 200, response.content[:300]
    shown = response.json()["response"]
    assert shown["body"] == deep(3000)
    assert "nested deeper than 200 levels" in shown["note"] and "shown as text" in shown["note"]
    assert "note" not in response.json()["request"]


def _api_endpoints_taking_json() -> list[tuple[str, str]]:
    """(method, route) of every /api/ URL whose view accepts a body (POST, PUT or PATCH)."""
    from django.urls import URLPattern, URLResolver, get_resolver

    found: list[tuple[str, str]] = []

    def walk(patterns: list[Any], prefix: str) -> None:
        for item in patterns:
            if isinstance(item, URLResolver):
                walk(item.url_patterns, prefix + str(item.pattern))
            elif isinstance(item, URLPattern):
                route = prefix + str(item.pattern)
                view = getattr(item.callback, "view_class", None)
                if not route.startswith("api/") or view is None:
                    continue
                found.extend((m, route) for m in ("post", "put", "patch") if hasattr(view, m))

    walk(get_resolver().url_patterns, "")
    return found


def test_every_api_endpoint_that_takes_json_answers_4xx_to_a_100000_deep_document(
    api: APIClient, runnable: Any, user: Any, other_user: Any
) -> None:
    """Every body-taking endpoint, fed a 100,000-deep body and the same depth inside string fields."""
    from execution.models import Environment
    from execution.services import runs

    run, _ = runs.run_create(graph=runnable, version=runnable.latest_version, user=user, payload={})
    environment = Environment.objects.create(name="mine", owner=user)
    values = {
        "name": runnable.name,
        "number": "1",
        "pk": str(environment.pk),
        "run_id": str(run.pk),
        "suite_id": str(uuid.uuid4()),  # none: the cancel answers 404 before reading anything
        "load_id": str(uuid.uuid4()),  # none, as the suite run
        "username": other_user.username,
    }
    text = deep(100_000)
    in_strings = {
        key: text
        for key in ("document", "payload", "manifest", "condition", "yaml", "text", "message", "name")
    }
    endpoints = _api_endpoints_taking_json()
    assert len(endpoints) >= 10, endpoints  # the walk found the API
    answers = []
    for method, route in endpoints:
        url = "/" + route
        for key, value in values.items():
            url = (
                url.replace(f"<str:{key}>", value)
                .replace(f"<int:{key}>", value)
                .replace(f"<dbint:{key}>", value)
                .replace(f"<version:{key}>", value)
            )
            url = url.replace(f"<uuid:{key}>", value)
        assert "<" not in url, url
        send = getattr(api, method)
        for body, content_type in (
            (text, "application/json"),
            (json.dumps(in_strings), "application/json"),
            (text, "application/yaml"),
        ):
            response = send(url, body, content_type=content_type)
            answers.append((method.upper(), url, content_type, response.status_code))
    server_errors = [answer for answer in answers if answer[3] >= 500]
    assert not server_errors, server_errors
    # Actions without a body (they never read one) may act; every other endpoint must refuse.
    accepted = [a for a in answers if a[3] < 400 and not a[1].endswith(BODYLESS_ACTIONS)]
    assert not accepted, accepted


BODYLESS_ACTIONS = ("/restore/", "/rollback/", "/rerun/", "/cancel/")


@pytest.mark.parametrize(
    ("text", "exceeds"),
    [
        ("[" * 200, False),  # at the limit
        ("[" * 201, True),
        ("{" * 100 + "[" * 101, True),
        ('"' + "[" * 300 + '"', False),  # inside a string
        ('["\\"' + "[" * 300 + '"]', False),  # an escaped quote does not end the string
        ('["\\\\"' + "[" * 300 + "]", True),  # an escaped backslash does
        ("]]]" + "[" * 201, True),  # stray closers do not buy depth
        ("[]" * 10_000, False),
        ("x" * 10 + "[" * 201, True),  # invalid JSON is counted all the same
    ],
)
def test_nesting_is_counted_outside_strings_only(text: str, exceeds: bool) -> None:
    from config.nesting import nesting_exceeds

    assert nesting_exceeds(text, 200) is exceeds
