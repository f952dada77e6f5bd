"""What the graph store knows about its versions' tests, without importing the app that runs them.

``graphs`` never imports ``execution``; the execution app registers a provider at start-up
(``ExecutionConfig.ready``) and the serializers and the export gate ask it. Without one (the
graph store on its own), no version has tests and none has passed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from graphs.models import Graph, GraphVersion

Memo = dict[Any, Any]


class TestStateProvider(Protocol):
    """``memo`` is a dict the caller keeps for one request, for the provider's own caching."""

    def version_tests(self, version: GraphVersion, memo: Memo) -> dict[str, Any] | None: ...

    def last_passing_version(self, graph: Graph, memo: Memo) -> int | None: ...

    def prime(self, versions: Sequence[GraphVersion], graphs: Sequence[Graph], memo: Memo) -> None: ...

    def version_passed(self, graph: Graph, version: GraphVersion) -> bool: ...


_provider: TestStateProvider | None = None


def register(provider: TestStateProvider) -> None:
    global _provider
    _provider = provider


def prime(*, versions: Sequence[GraphVersion] = (), graphs: Sequence[Graph] = (), memo: Memo) -> None:
    """Answer in ``memo``, with a few queries for the whole list, what :func:`version_tests` will be
    asked of ``versions`` and :func:`last_passing_version` of ``graphs`` (a page of a list): a
    list then costs the same queries whatever its length."""
    if _provider is not None and (versions or graphs):
        _provider.prime(versions, graphs, memo)


def version_tests(version: GraphVersion, memo: Memo) -> dict[str, Any] | None:
    """The latest suite run of ``version`` (status, counts, environment, whether it ran the
    current cases), or None."""
    return _provider.version_tests(version, memo) if _provider is not None else None


def last_passing_version(graph: Graph, memo: Memo) -> int | None:
    return _provider.last_passing_version(graph, memo) if _provider is not None else None


def version_passed(graph: Graph, version: GraphVersion) -> bool:
    return _provider.version_passed(graph, version) if _provider is not None else False
