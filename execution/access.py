"""Who may see and do what in the execution app: the one place its access rules are written.

Environments: a user sees and uses the shared ones (the system default among them), their own
private ones, and staff all of them; any other environment is answered as if it did not exist,
whether it is read (404) or named for a run (400, as an unknown name is). A private environment is
changed by its owner, a shared one by staff only (everybody's runs may go there).

Runs carry their environment's details (its settings snapshot, the URLs their steps called), so a
run is readable by whoever may see its environment and by nobody else; a run whose environment was
deleted is its starter's (and staff's). A suite run is readable by whoever may read every run it
made and see every environment its cases run in. Whoever started a run or suite run, staff, and
whoever may change its graph (``graphs.access``) may cancel it.

The filters (``*_visible_to``, ``*_hidden_from``) are what selectors query with; the
``access_*`` functions are what services call before they act: they raise the app's errors.
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db.models import Exists, OuterRef, Q

from execution.errors import InvalidInput, NotPermitted
from execution.models import Environment, Run
from execution.suites.models import SuiteCaseResult, SuiteRun
from graphs.access import AnyUser, can_cancel
from graphs.language import issue_dict


def _sees_all(user: AnyUser) -> bool:
    return bool(getattr(user, "is_staff", False) or getattr(user, "is_superuser", False))


# --- environments --------------------------------------------------------------------------------


def environments_usable_by(user: AnyUser) -> Q:
    """The environments ``user`` may see and use, as a filter on Environment."""
    if _sees_all(user):
        return Q()
    return Q(visibility=Environment.Visibility.SHARED) | Q(owner_id=user.pk)


def can_use_environment(environment: Environment, user: AnyUser) -> bool:
    """Whether ``user`` may see ``environment`` and start runs in it (:func:`environments_usable_by`
    for one row)."""
    return (
        _sees_all(user)
        or environment.visibility == Environment.Visibility.SHARED
        or (environment.owner_id is not None and environment.owner_id == user.pk)
    )


def unknown_environment(ref: int | str) -> InvalidInput:
    """The answer for an environment that does not exist, and the same for one the user may not
    see: a private environment's existence is not disclosed (not even its id or name)."""
    return InvalidInput(
        f"There is no environment {ref!r}.",
        issues=[issue_dict("run.environment-unknown", f"no environment {ref!r}", path="environment")],
    )


def access_environment_for_run(user: AnyUser, environment: Environment) -> Environment:
    """``environment`` when ``user`` may start runs in it; InvalidInput (400,
    ``run.environment-unknown``, as for one that does not exist) otherwise."""
    if not can_use_environment(environment, user):
        raise unknown_environment(environment.pk)
    return environment


def access_environment_for_change(user: AnyUser, environment: Environment) -> Environment:
    """``environment`` when ``user`` may change or delete it: staff, or its owner while it is
    private; NotPermitted (403) otherwise. A shared environment (the system's among them) is
    changed by staff only: everybody's runs may go there, so its owner must not be able to point
    it somewhere else afterwards."""
    if _sees_all(user):
        return environment
    if environment.owner_id is not None and environment.owner_id == user.pk:
        if environment.visibility == Environment.Visibility.PRIVATE:
            return environment
        raise NotPermitted(
            f"Environment {environment.name!r} is shared with every user: only staff may change it."
        )
    raise NotPermitted(f"Only the owner of environment {environment.name!r} or staff may change it.")


def environment_hidden_from(user: AnyUser, prefix: str = "") -> Q:
    """Rows whose environment (at ``prefix``, e.g. ``"run__"``) exists and ``user`` may not see:
    :func:`environments_usable_by` negated, for filters that look for what to hide."""
    if _sees_all(user):
        return Q(pk__in=[])
    return (
        Q(**{f"{prefix}environment__isnull": False})
        & ~Q(**{f"{prefix}environment__visibility": Environment.Visibility.SHARED})
        & ~Q(**{f"{prefix}environment__owner_id": user.pk})
    )


# --- runs and suite runs -------------------------------------------------------------------------


def runs_visible_to(user: AnyUser, prefix: str = "") -> Q:
    """The runs ``user`` may read, as a filter on Run (``prefix``: the path to a Run from another
    model, e.g. ``"run__"``): those whose environment ``user`` may see, and those ``user`` started
    whose environment was since deleted. Staff read every run."""
    if _sees_all(user):
        return Q()
    return (
        Q(**{f"{prefix}environment__visibility": Environment.Visibility.SHARED})
        | Q(**{f"{prefix}environment__owner_id": user.pk})
        | Q(**{f"{prefix}environment__isnull": True, f"{prefix}created_by_id": user.pk})
    )


def runs_hidden_from(user: AnyUser, prefix: str = "") -> Q:
    """The runs (at ``prefix``) ``user`` may not read: :func:`runs_visible_to` negated, written
    with joins only (no subquery over every run), for a filter on rows that point at runs."""
    if _sees_all(user):
        return Q(pk__in=[])
    return environment_hidden_from(user, prefix) | (
        Q(**{f"{prefix}environment__isnull": True}) & ~Q(**{f"{prefix}created_by_id": user.pk})
    )


def suites_visible_to(user: AnyUser) -> Q:
    """The suite runs ``user`` may read, as a filter on SuiteRun: neither the suite run's
    environment, nor any case's, nor any case's run is hidden from ``user``. Staff read all."""
    if _sees_all(user):
        return Q()
    hidden_case = SuiteCaseResult.objects.filter(suite=OuterRef("pk")).filter(
        environment_hidden_from(user) | (Q(run__isnull=False) & runs_hidden_from(user, "run__"))
    )
    return ~environment_hidden_from(user) & ~Q(Exists(hidden_case))


def access_run_for_cancel(user: User, run: Run) -> Run:
    """``run`` when ``user`` may cancel it (whoever started it, staff, those who may change its
    graph); NotPermitted (403) otherwise."""
    if not can_cancel(user, graph=run.graph, started_by_id=run.created_by_id):
        raise NotPermitted(
            "Only the person who started the run, the graph's owner or editors, or staff may cancel it."
        )
    return run


def access_suite_for_cancel(user: User, suite: SuiteRun) -> SuiteRun:
    """``suite`` when ``user`` may cancel it (as :func:`access_run_for_cancel`); NotPermitted (403)
    otherwise."""
    if not can_cancel(user, graph=suite.graph, started_by_id=suite.created_by_id):
        raise NotPermitted(
            "Only the person who started the suite run, the graph's owner or editors, or staff may cancel it."
        )
    return suite
