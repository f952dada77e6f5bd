"""Hostile input: refused with 400 or 413 naming the limit, memory bounded, nothing half-saved.

How fast each refusal is gets measured by ``make reliability`` (bench/reliability.py), not here:
tests check behaviour, never speed.
"""

from __future__ import annotations

import json
import tracemalloc
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
