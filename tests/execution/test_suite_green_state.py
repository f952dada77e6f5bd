"""Which version is green: the verdict of each version's latest finished suite run on the graph's
current cases decides, and the last passing version is the highest such green version (not the
one whose suite run happened to finish last)."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model

from execution.devtools import demo
from graphs import suitestate
from graphs.models import Graph
from tests import suitekit

pytestmark = pytest.mark.django_db

GRAPH = "cat-dog-breed"  # three demo versions


@pytest.fixture
def graph(db: Any, mock_server: Any) -> Graph:
    list(demo.seed())
    return Graph.objects.get(name=GRAPH)


def judged(graph: Graph, number: int, status: str, minutes_ago: int, digest: str | None = None) -> Any:
    demo_user = get_user_model().objects.get(username=demo.DEMO_USER)
    return suitekit.judged(graph, number, status, minutes_ago, user=demo_user, digest=digest)


def test_the_last_passing_version_is_the_highest_green_one(graph: Graph) -> None:
    judged(graph, 3, "passed", minutes_ago=30)
    judged(graph, 1, "passed", minutes_ago=5)  # an older version checked again later
    assert suitestate.last_passing_version(graph, {}) == 3


def test_a_version_whose_latest_verdict_failed_is_not_green(graph: Graph) -> None:
    judged(graph, 3, "passed", minutes_ago=30)
    judged(graph, 3, "failed", minutes_ago=5)
    judged(graph, 1, "passed", minutes_ago=40)
    judged(graph, 1, "cancelled", minutes_ago=1)  # a cancelled run says nothing about the version
    assert suitestate.last_passing_version(graph, {}) == 1
    assert suitestate.version_passed(graph, graph.versions.get(number=3)) is False
    assert suitestate.version_passed(graph, graph.versions.get(number=1)) is True


def test_a_pass_on_another_case_set_does_not_count(graph: Graph) -> None:
    judged(graph, 3, "passed", minutes_ago=5, digest="0" * 64)
    assert suitestate.last_passing_version(graph, {}) is None
    assert suitestate.version_passed(graph, graph.versions.get(number=3)) is False
