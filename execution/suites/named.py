"""Starting a suite run by names, for the command line (``testgraph NAME --workers``)."""

from __future__ import annotations

from collections.abc import Sequence

from django.contrib.auth.models import User

from execution.cases.local import stored_version
from execution.cases.models import GraphCase
from execution.errors import InvalidInput
from execution.models import Environment
from execution.suites.models import SuiteRun
from execution.suites.services import suite_start


def suite_start_named(
    *,
    graph_name: str,
    number: int | None = None,
    environment: str | None = None,
    case_names: Sequence[str] = (),
    username: str | None = None,
    concurrency: int | None = None,
) -> SuiteRun:
    """:func:`suite_start` by names, for the command line (``testgraph NAME --workers``): the
    version (default: the latest), the environment, the cases and the user it is recorded as
    (default: the graph's owner). NotFound or BadRequest name what does not exist."""
    graph, version = stored_version(graph_name=graph_name, number=number)
    user = graph.owner if username is None else User.objects.filter(username=username).first()
    if user is None:
        raise InvalidInput(f"There is no user {username!r}.")
    where = None
    if environment is not None:
        where = Environment.objects.filter(name=environment).first()
        if where is None:
            raise InvalidInput(f"There is no environment {environment!r}.")
    case_ids = None
    if case_names:
        known = dict(GraphCase.objects.filter(graph=graph, name__in=case_names).values_list("name", "pk"))
        unknown = sorted(set(case_names) - set(known))
        if unknown:
            raise InvalidInput(
                f"Graph {graph_name!r} has no test case named {', '.join(map(repr, unknown))}."
            )
        case_ids = list(known.values())
    return suite_start(  # an operator's command: not held to a web user's fair share (slots=0)
        graph=graph, version=version, user=user, environment=where, case_ids=case_ids, concurrency=concurrency
    )
