"""Which suite runs the export gate believes: the one rule, read for many graphs at once.

A suite run's verdict opens a graph's export gate (``graphs.services.export_gate``) only when

- it ran every case in one environment the graph trusts: one of the graph's
  ``gate_environments`` (chosen by those who may change the graph's settings), or the system's
  default environment when the graph names none, and that environment is shared now. A private
  environment never counts, whoever owns it: its owner may point it at any server at any time
  without anyone else seeing, while a shared one is changed by staff only (and audited); and
- it was started by someone who may change the graph now: its owner, an editor, a superuser
  (``graphs.access.can_edit``). Anyone signed in may run a graph's suite, as anyone may run the
  graph; an outsider's or a viewer's verdict is shown but opens nothing, and a removed editor's
  verdicts stop counting.

As GitHub's required status checks trust a check only from the app that is expected to report
it, the gate trusts a verdict only from where and whom the graph's editors chose.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from execution.models import Environment
from graphs.errors import GraphRefused
from graphs.language import issue_dict
from graphs.models import Graph, GraphMember
from graphs.suitestate import Memo


@dataclass(frozen=True)
class GateTrust:
    """Whom and where one graph's gate trusts, as ids."""

    writers: frozenset[int]  # the owner and the editors (superusers are asked of the row)
    environments: frozenset[int]  # the trusted environments that are shared now

    def counts(
        self, *, starter_id: int | None, starter_is_superuser: bool, environment_id: int | None
    ) -> bool:
        """Whether a suite run started by ``starter_id`` in ``environment_id`` may open the gate."""
        if environment_id is None or environment_id not in self.environments:
            return False
        return starter_is_superuser or (starter_id is not None and starter_id in self.writers)


def prime_trust(graph_ids: Iterable[int], memo: Memo) -> None:
    """Each graph's :class:`GateTrust` into ``memo`` (key ``("trust", graph id)``), from three
    queries for the lot: the graphs, their editors, the shared environments they may trust."""
    missing = {pk for pk in graph_ids if ("trust", pk) not in memo}
    if not missing:
        return
    graphs = list(Graph.objects.filter(pk__in=missing).values_list("pk", "owner_id", "gate_environments"))
    writers: dict[int, set[int]] = {pk: {owner_id} for pk, owner_id, _ in graphs}
    editors = GraphMember.objects.filter(graph_id__in=missing, role=GraphMember.Role.EDITOR)
    for graph_id, user_id in editors.values_list("graph_id", "user_id"):
        writers[graph_id].add(user_id)
    named = {pk for _, _, chosen in graphs for pk in _ids(chosen)}
    shared = Environment.objects.filter(visibility=Environment.Visibility.SHARED)
    usable = dict(shared.filter(pk__in=named).values_list("pk", "system")) if named else {}
    system = frozenset(shared.filter(system=True).values_list("pk", flat=True))
    for pk, _, chosen in graphs:
        ids = _ids(chosen)
        trusted = frozenset(i for i in ids if i in usable) if ids else system
        memo["trust", pk] = GateTrust(writers=frozenset(writers[pk]), environments=trusted)


def trust_of(graph_id: int, memo: Memo) -> GateTrust:
    prime_trust([graph_id], memo)
    trust = memo.get(("trust", graph_id))
    return trust if isinstance(trust, GateTrust) else GateTrust(frozenset(), frozenset())


def _ids(value: Any) -> list[int]:
    return (
        [i for i in value if isinstance(i, int) and not isinstance(i, bool)]
        if isinstance(value, list)
        else []
    )


def environment_ids(names: Sequence[str]) -> list[int]:
    """The ids of the shared environments ``names``, in order, each once, for a graph's
    ``gate_environments``. Raises GraphRefused (400) naming every one that does not exist or is
    private."""
    found = {e.name: e for e in Environment.objects.filter(name__in=list(names))}
    issues = []
    ids: list[int] = []
    for i, name in enumerate(names):
        environment = found.get(name)
        if environment is None or environment.visibility != Environment.Visibility.SHARED:
            # One answer for missing and private: another user's private environment is not disclosed.
            issues.append(issue_dict("graph.gate-environment", f"{name!r} is not a shared environment", path=f"gate_environments[{i}]"))  # fmt: skip
        elif environment.pk not in ids:
            ids.append(environment.pk)
    if issues:
        raise GraphRefused(
            "The export gate trusts shared environments only (a private one may point anywhere): "
            + "; ".join(i["message"] for i in issues)
            + ".",
            issues=issues,
        )
    return ids


def environment_names(graph: Graph) -> list[str]:
    """The names of the environments ``graph`` chose to trust, in its order (deleted ones left out)."""
    ids = _ids(graph.gate_environments)
    names = dict(Environment.objects.filter(pk__in=ids).values_list("pk", "name")) if ids else {}
    return [names[i] for i in ids if i in names]
