"""Preparing a graph's stored cases to run in this process (``testgraph NAME``): the version's
manifest, and the cases grouped by the environment each one runs in, with its engine config."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from django.conf import settings

from execution.casecore import CaseDocumentError, CaseRequest, ParsedCase, parse_case
from execution.cases import secrets
from execution.cases.limits import judge_limits
from execution.cases.models import GraphCase
from execution.engine import EngineConfig
from execution.errors import InvalidInput, NoSuchThing
from execution.models import Environment
from execution.services import environments
from graphs import language
from graphs import services as graph_services
from graphs.models import Graph, GraphVersion


@dataclass(frozen=True)
class EnvironmentGroup:
    """Cases that run in one environment; ``indices`` place them in the suite's order."""

    environment: str
    config: EngineConfig
    cases: list[ParsedCase] = field(default_factory=list)
    indices: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class PreparedSuite:
    graph: Graph
    version: GraphVersion
    manifest: language.Manifest
    groups: list[EnvironmentGroup]
    notes: list[str]
    count: int


def environment_named(name: str | None, cache: dict[str | None, Environment]) -> Environment | None:
    """The environment a case names (None: the system default), looked up once per ``cache``;
    None when there is no such environment."""
    if name not in cache:
        if name is None:
            cache[None], _ = environments.ensure_local_environment()
        else:
            found = Environment.objects.filter(name=name).first()
            if found is None:
                return None
            cache[name] = found
    return cache[name]


def _environment(name: str | None, cache: dict[str | None, Environment]) -> Environment:
    found = environment_named(name, cache)
    if found is None:
        raise InvalidInput(f"There is no environment {name!r}.")
    return found


def without_redacted(
    case: ParsedCase, notes: list[str], also_secret: Collection[str] | None = None
) -> ParsedCase:
    """Secret headers are stored redacted; sending ``Bearer ***`` would only mislead the model, so
    they are left out (as a run leaves them out when their real values are gone). ``also_secret``:
    the names environments mark secret (default: read now, ``secrets.secret_header_names``)."""
    names = secrets.secret_header_names() if also_secret is None else also_secret
    kept: list[tuple[str, str]] = []
    for name, value in case.request.headers:
        if secrets.is_redacted(name, value, names):
            notes.append(f"case {case.name!r}: header {name} is stored redacted and is not sent")
        else:
            kept.append((name, value))
    if len(kept) == len(case.request.headers):
        return case
    request = CaseRequest(body=case.request.body, content_type=case.request.content_type, headers=tuple(kept))
    return dataclasses.replace(case, request=request)


def stored_version(*, graph_name: str, number: int | None = None) -> tuple[Graph, GraphVersion]:
    """Graph ``graph_name`` (with its owner) and its version ``number`` (default: the latest), for
    the command line; NoSuchThing names which one does not exist."""
    graph = Graph.objects.select_related("latest_version", "owner").filter(name=graph_name).first()
    if graph is None:
        raise NoSuchThing(f"There is no graph named {graph_name!r}.")
    version = graph.latest_version if number is None else graph.versions.filter(number=number).first()
    if version is None:
        raise NoSuchThing(
            f"Graph {graph_name!r} has no version {number if number is not None else ''}".rstrip() + "."
        )
    return graph, version


def prepare_stored_suite(
    *,
    graph_name: str,
    number: int | None = None,
    environment: str | None = None,
    case_names: Sequence[str] = (),
) -> PreparedSuite:
    """The stored cases of ``graph_name`` (all, or those named) against version ``number`` (default:
    the latest), each in ``environment`` if given, else in its own, else in the system default.

    Raises NotFound for an unknown graph or version, InvalidInput for an unknown environment or case
    name, a version KServe would reject, or a stored case that no longer parses.
    """
    graph, version = stored_version(graph_name=graph_name, number=number)
    graph_services.ensure_deployable(graph, version, before="running it")
    rows = list(GraphCase.objects.filter(graph=graph).order_by("name"))
    if case_names:
        unknown = sorted(set(case_names) - {row.name for row in rows})
        if unknown:
            raise InvalidInput(
                f"Graph {graph_name!r} has no test case named {', '.join(map(repr, unknown))}."
            )
        rows = [row for row in rows if row.name in case_names]
    notes: list[str] = []
    cache: dict[str | None, Environment] = {}
    groups: dict[str, EnvironmentGroup] = {}
    secret_names = secrets.secret_header_names()
    for index, row in enumerate(rows):
        try:
            case = without_redacted(parse_case(row.document, limits=judge_limits()), notes, secret_names)
        except CaseDocumentError as exc:
            raise InvalidInput(f"Stored test case {row.name!r} no longer reads: {exc}") from None
        env = _environment(environment or case.environment, cache)
        if env.name not in groups:
            config = environments.engine_config(
                environments.environment_config(env),
                graph_namespace=graph.namespace,
                redact=tuple(env.secret_headers or ()),
            )
            # Whole step responses in the trace, so that `path` expectations on a step see all of it.
            config = dataclasses.replace(config, body_cap=settings.RUN_MAX_RESPONSE_BYTES)
            groups[env.name] = EnvironmentGroup(environment=env.name, config=config)
        groups[env.name].cases.append(case)
        groups[env.name].indices.append(index)
    manifest = language.parse(version.manifest)
    return PreparedSuite(graph, version, manifest, list(groups.values()), notes, len(rows))


def version_manifest(*, graph_name: str, number: int) -> language.Manifest:
    """Version ``number`` of ``graph_name`` as a manifest; NotFound when there is none,
    NotDeployable (422) for one KServe would reject."""
    graph = Graph.objects.filter(name=graph_name).first()
    version = graph.versions.filter(number=number).first() if graph is not None else None
    if graph is None or version is None:
        raise NoSuchThing(f"Graph {graph_name!r} has no version {number}.")
    graph_services.ensure_deployable(graph, version, before="running it")
    return language.parse(version.manifest)
