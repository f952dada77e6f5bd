"""Reads of saved test cases. Any logged-in user may read a graph, so also its test cases."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db.models import QuerySet

from execution.cases.models import GraphCase
from execution.errors import NoSuchThing
from graphs.models import Graph


def test_case_list(*, graph: Graph, user: User) -> QuerySet[GraphCase]:
    """The graph's cases by name."""
    return GraphCase.objects.filter(graph=graph).select_related("created_by").order_by("name")


def test_case_get(*, graph: Graph, pk: int, user: User) -> GraphCase:
    """Case ``pk`` of ``graph``; NoSuchThing (404) when the graph has no such case."""
    case = GraphCase.objects.filter(graph=graph, pk=pk).select_related("created_by").first()
    if case is None:
        raise NoSuchThing(f"Graph {graph.name!r} has no test case {pk}.")
    return case
