"""What the graph store knows about its versions' tests, without importing the app that runs them.

``graphs`` never imports ``execution``; the execution app registers a provider at start-up
(``ExecutionConfig.ready``) and the serializers and the export gate ask it. Without one (the
graph store on its own), no version has tests and none has passed.
"""

from __future__ import annotations

from typing import Any, Protocol

from graphs.models import Graph, GraphVersion


class TestStateProvider(Protocol):
    """``memo`` is a dict the caller keeps for one request, for the provider's own caching."""

    def version_tests(self, version: GraphVersion, memo: dict[int, str]) -> dict[str, Any] | None: ...

    def last_passing_version(self, graph: Graph, memo: dict[int, str]) -> int | None: ...

    def version_passed(self, graph: Graph, version: GraphVersion) -> bool: ...


_provider: TestStateProvider | None = None


def register(provider: TestStateProvider) -> None:
    global _provider
    _provider = provider


def version_tests(version: GraphVersion, memo: dict[int, str]) -> dict[str, Any] | None:
    """The latest suite run of ``version`` (status, counts, environment, whether it ran the
    current cases), or None."""
    return _provider.version_tests(version, memo) if _provider is not None else None


def last_passing_version(graph: Graph, memo: dict[int, str]) -> int | None:
    return _provider.last_passing_version(graph, memo) if _provider is not None else None


def version_passed(graph: Graph, version: GraphVersion) -> bool:
    return _provider.version_passed(graph, version) if _provider is not None else False
