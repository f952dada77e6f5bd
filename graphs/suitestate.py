"""What the graph store knows about its versions' tests, without importing the app that runs them.

``graphs`` never imports ``execution``; the execution app registers a provider at start-up
(``ExecutionConfig.ready``) and the serializers and the export gate ask it. Without one (the
graph store on its own), no version has tests and none has passed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from graphs.errors import GraphRefused
from graphs.models import Graph, GraphVersion

Memo = dict[Any, Any]


class TestStateProvider(Protocol):
    """``memo`` is a dict the caller keeps for one request, for the provider's own caching."""

    def version_tests(self, version: GraphVersion, memo: Memo) -> dict[str, Any] | None: ...

    def last_passing_version(self, graph: Graph, memo: Memo) -> int | None: ...

    def prime(self, versions: Sequence[GraphVersion], graphs: Sequence[Graph], memo: Memo) -> None: ...

    def gate_verdict(self, graph: Graph, version: GraphVersion) -> dict[str, Any] | None: ...

    def gate_environment_ids(self, names: Sequence[str]) -> list[int]: ...

    def gate_environment_names(self, graph: Graph) -> list[str]: ...


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
    current cases, whether the export gate trusts it), or None."""
    return _provider.version_tests(version, memo) if _provider is not None else None


def last_passing_version(graph: Graph, memo: Memo) -> int | None:
    """The highest version whose latest trusted verdict on the current cases is a pass."""
    return _provider.last_passing_version(graph, memo) if _provider is not None else None


def gate_verdict(graph: Graph, version: GraphVersion) -> dict[str, Any] | None:
    """The passing suite run that opens ``graph``'s export gate for ``version`` (``suite_run``,
    ``environment``, ``started_by``), or None: the latest verdict on the graph's current cases
    among the suite runs the gate trusts (execution/suites/gate.py has the rule) is not a pass."""
    return _provider.gate_verdict(graph, version) if _provider is not None else None


def version_passed(graph: Graph, version: GraphVersion) -> bool:
    return gate_verdict(graph, version) is not None


def gate_environment_ids(names: Sequence[str]) -> list[int]:
    """The ids of the environments ``names`` for a graph's ``gate_environments``; raises
    GraphRefused (400) for one that is not a shared environment. Without a provider only an
    empty list is accepted (there are no environments)."""
    if _provider is not None:
        return _provider.gate_environment_ids(names)
    if names:
        raise GraphRefused("There are no environments to trust here.")
    return []


def gate_environment_names(graph: Graph) -> list[str]:
    """The names of the environments whose verdicts ``graph``'s gate trusts ([]: the default one)."""
    return _provider.gate_environment_names(graph) if _provider is not None else []
