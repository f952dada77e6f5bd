"""What a graph meets on a given KServe release, and what changes for it between two releases.

:func:`release_issues` is validation's view: a field the release's CRD does not have is an error
naming the release (its API server would drop it), and a behaviour of the release this graph runs
into (a Splitter that drops requests, a condition whose unmet answer is 500, gjson v1.14.4's
conditions) is a warning saying what that release does.

:func:`upgrade_changes` is the upgrade report's static half: every rule of
:mod:`graphs.language.releases` that changes how *this* graph answers between release ``a`` and release
``b`` (either direction), with the release where it changed. Pure.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

from .issues import ERROR, WARNING, Issue, format_path, position_of
from .model import Manifest, Node, PathKey, Step
from .releases import MASTER, Release

__all__ = ["Change", "release_issues", "upgrade_changes"]

_LEGACY_GJSON_MARKS: Final = ("@dig", "~")


@dataclass(frozen=True, slots=True)
class Change:
    """One behaviour of a graph that differs between two releases.

    ``code`` is stable; ``release`` is the release where the behaviour changed; ``before`` and
    ``after`` say what the older and the newer of the two releases do; ``message`` is the one-line
    summary; ``node``/``step`` locate it (None: the whole graph).
    """

    code: str
    release: str
    message: str
    before: str
    after: str
    node: str | None = None
    step: int | None = None
    step_name: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "release": self.release,
            "message": self.message,
            "before": self.before,
            "after": self.after,
            "node": self.node,
            "step": self.step,
            "step_name": self.step_name,
        }


@dataclass(frozen=True, slots=True)
class _Where:
    node: str
    step: int
    step_name: str | None


def _steps(manifest: Manifest) -> Iterator[tuple[Node, Step]]:
    for node in manifest.spec.nodes.values():
        for step in node.steps:
            yield node, step


def _raw_steps(manifest: Manifest) -> Iterator[tuple[str, int, dict[str, Any]]]:
    spec = manifest.document.get("spec")
    nodes = spec.get("nodes") if isinstance(spec, dict) else None
    if not isinstance(nodes, dict):
        return
    for name, node in nodes.items():
        steps = node.get("steps") if isinstance(node, dict) else None
        for index, step in enumerate(steps if isinstance(steps, list) else []):
            if isinstance(step, dict):
                yield name, index, step


def _arrived(field: str, *, step: bool) -> str:
    from .releases import RELEASES

    for release in RELEASES:
        if field in (release.step_fields if step else release.spec_fields):
            return release.name
    return MASTER.name


def _splitter_total(node: Node) -> int | None:
    if node.router_type != "Splitter" or not node.steps or any(s.weight is None for s in node.steps):
        return None
    return sum(s.weight or 0 for s in node.steps)


def _never_chosen(node: Node, draws: int) -> list[Step]:
    """The routes of a Splitter that a draw in ``0..draws-1`` never reaches (weight > 0)."""
    out: list[Step] = []
    start = 0
    for step in node.steps:
        weight = step.weight or 0
        if weight > 0 and start >= draws:
            out.append(step)
        start += weight
    return out


def _drops(release: Release, node: Node) -> float:
    """The share of requests a Splitter draws no route for on ``release`` (the router crashes on
    them before v0.19, answers 500 after)."""
    total = _splitter_total(node)
    if total is None:
        return 0.0
    return max(0, release.splitter_draws - total) / release.splitter_draws


def _legacy_condition(step: Step) -> bool:
    return bool(step.condition) and any(mark in (step.condition or "") for mark in _LEGACY_GJSON_MARKS)


def release_issues(manifest: Manifest, release: Release) -> list[Issue]:
    """What validation adds for ``release``: errors for fields its CRD lacks, warnings for its
    behaviours this graph runs into. Nothing for the newest release."""
    issues: list[Issue] = []

    def add(code: str, severity: str, message: str, path: PathKey, step: Step | None = None) -> None:
        node = path[2] if len(path) > 2 and isinstance(path[2], str) else None
        line, column = position_of(manifest.positions, path) or (None, None)
        issues.append(
            Issue(
                code=code,
                severity=severity,  # type: ignore[arg-type]
                message=message,
                node=node,
                step=path[4] if len(path) > 4 and isinstance(path[4], int) else None,
                step_name=(step.name or None) if step is not None else None,
                path=format_path(path),
                line=line,
                column=column,
            )
        )

    spec = manifest.document.get("spec")
    for key in spec if isinstance(spec, dict) else ():
        if key in MASTER.spec_fields and key not in release.spec_fields:
            add(
                "release.unknown-field",
                ERROR,
                f"spec.{key} is not in KServe {release.name}'s InferenceGraph CRD (it arrived in "
                f"{_arrived(key, step=False)}): {release.name}'s API server drops it",
                ("spec", key),
            )
    steps = {(node.name, step.index): step for node, step in _steps(manifest)}
    for node_name, index, raw in _raw_steps(manifest):
        for key in raw:
            if key in MASTER.step_fields and key not in release.step_fields:
                add(
                    "release.unknown-field",
                    ERROR,
                    f"{key} is not in KServe {release.name}'s InferenceGraph CRD (it arrived in "
                    f"{_arrived(key, step=True)}): {release.name}'s API server drops it and the router "
                    "ignores it",
                    ("spec", "nodes", node_name, "steps", index, key),
                    steps.get((node_name, index)),
                )
    for node in manifest.spec.nodes.values():
        path: PathKey = ("spec", "nodes", node.name)
        share = _drops(release, node)
        if share > 0 and release.splitter_draw == "0-100" and _splitter_total(node) == 100:
            add(
                "release.splitter-drops",
                WARNING,
                f"on KServe {release.name} this Splitter draws 0 to 100: a draw of 100 finds no route and "
                "the router crashes on that request, so about 1 in 101 requests gets no answer "
                "(v0.13 to v0.18; fixed in v0.19.0)",
                path,
            )
        for step in _never_chosen(node, release.splitter_draws) if node.router_type == "Splitter" else []:
            add(
                "release.splitter-never-chosen",
                WARNING,
                f"on KServe {release.name} the Splitter draws 0 to {release.splitter_draws - 1}: step "
                f"{step.label}'s range starts past it, so it is never chosen",
                (*path, "steps", step.index),
                step,
            )
        for step in node.steps:
            spath: PathKey = (*path, "steps", step.index, "condition")
            if node.router_type == "Sequence" and step.condition and release.unmet_condition_status != 200:
                add(
                    "release.unmet-condition-500",
                    WARNING,
                    f"on KServe {release.name}, when this condition is not met the Sequence stops and "
                    f"answers {release.unmet_condition_status} with the previous step's response "
                    "(200 from v0.15.1)",
                    spath,
                    step,
                )
            if release.legacy_gjson and _legacy_condition(step):
                add(
                    "release.gjson-v1.14",
                    WARNING,
                    f"KServe {release.name} evaluates conditions with gjson v1.14.4: there is no @dig, and "
                    "~null, ~* and ~false compare Go's Result.Bool() with the word after the ~",
                    spath,
                    step,
                )
    return issues


def upgrade_changes(manifest: Manifest, a: Release, b: Release) -> list[Change]:
    """Every rule-known behaviour of ``manifest`` that differs between ``a`` and ``b``."""
    old, new = (a, b) if a.order <= b.order else (b, a)
    changes: list[Change] = []
    if old is new:
        return changes

    def when(attribute: str) -> str:
        changed = old.first_with(attribute, getattr(new, attribute))
        return changed.name if changed is not None else new.name

    for node, step in _steps(manifest):
        where = _Where(node.name, step.index, step.name or None)
        if (
            node.router_type == "Sequence"
            and step.condition
            and old.unmet_condition_status != new.unmet_condition_status
        ):
            changes.append(
                Change(
                    "unmet-condition-status",
                    "v0.15.1",
                    f'step {step.label} of Sequence "{node.name}": when its condition is not met the Sequence '
                    f"answers {new.unmet_condition_status} instead of {old.unmet_condition_status} (v0.15.1)",
                    f"{old.unmet_condition_status} with the previous step's response",
                    f"{new.unmet_condition_status} with the previous step's response",
                    node=where.node,
                    step=where.step,
                    step_name=where.step_name,
                )
            )
        if step.map_predictions_to_instances and old.map_predictions != new.map_predictions:
            changes.append(
                Change(
                    "map-predictions",
                    "v0.16.0",
                    f'step {step.label} of "{node.name}": mapPredictionsToInstances is applied from v0.16.0 '
                    '(a request with a non-empty predictions array is sent as {"instances": …})',
                    "ignored: the request is sent as it is",
                    "the predictions are sent as instances, every other key dropped",
                    node=where.node,
                    step=where.step,
                    step_name=where.step_name,
                )
            )
        if (_legacy_condition(step)) and old.legacy_gjson != new.legacy_gjson:
            changes.append(
                Change(
                    "gjson-version",
                    "v0.12.0",
                    f'step {step.label} of "{node.name}": its condition {step.condition!r} uses @dig or ~, '
                    "which gjson v1.14.4 (v0.11) evaluates differently from v1.17 and later (v0.12.0)",
                    "gjson v1.14.4: no @dig; ~ compares Result.Bool()",
                    "gjson v1.17+: @dig; ~true, ~false, ~null, ~* as documented",
                    node=where.node,
                    step=where.step,
                    step_name=where.step_name,
                )
            )
    for node in manifest.spec.nodes.values():
        if node.router_type != "Splitter":
            continue
        before, after = _drops(old, node), _drops(new, node)
        crash_before, crash_after = old.splitter_no_route_crashes, new.splitter_no_route_crashes
        if before != after or (before > 0 and crash_before != crash_after):
            changes.append(
                Change(
                    "splitter-no-route",
                    when("splitter_draw") if before != after else "v0.19.0",
                    f'Splitter "{node.name}" {_drop_text(node, old)} on {old.name}; '
                    f"{_drop_text(node, new)} on {new.name}"
                    + (
                        " (this Splitter drops about 1 in 101 requests on v0.13 to v0.18)"
                        if _splitter_total(node) == 100
                        else ""
                    ),
                    _drop_text(node, old),
                    _drop_text(node, new),
                    node=node.name,
                )
            )
        never_old = [s.label for s in _never_chosen(node, old.splitter_draws)]
        never_new = [s.label for s in _never_chosen(node, new.splitter_draws)]
        if never_old != never_new:
            changes.append(
                Change(
                    "splitter-unreachable-route",
                    when("splitter_draw"),
                    f'Splitter "{node.name}": step {", ".join(never_old or never_new)} is never chosen on '
                    f"{(old if never_old else new).name} (the draw is 0 to {(old if never_old else new).splitter_draws - 1})",
                    f"never chosen: {', '.join(never_old) or 'none'}",
                    f"never chosen: {', '.join(never_new) or 'none'}",
                    node=node.name,
                )
            )
    if manifest.spec.router_timeouts is not None and old.router_timeouts != new.router_timeouts:
        changes.append(
            Change(
                "router-timeouts",
                "v0.16.0",
                "spec.routerTimeouts is applied from v0.16.0 (serviceClient bounds each step call; "
                "serverRead/serverWrite/serverIdle the router's server)",
                "ignored (no step timeout; the server's 60/60/180 s from v0.13)",
                "applied",
            )
        )
    if old.header_matching != new.header_matching:
        changes.append(
            Change(
                "header-patterns",
                "v0.12.0",
                "router.headers.propagate entries become Go regular expressions (v0.12.0): before, only "
                "exact canonical header names propagate, and Content-Type: application/json is always added",
                "exact header names; Content-Type always added (a propagated one gets a second value)",
                "RE2 patterns matched unanchored; Content-Type added only when absent",
            )
        )
    if old.readyz != new.readyz:
        changes.append(
            Change(
                "readyz",
                "v0.15.0",
                "GET /readyz answers 200 without running the graph from v0.15.0; before, it runs the graph "
                "like any other path",
                "runs the graph",
                "200, empty body",
            )
        )
    if old.bad_url_crashes != new.bad_url_crashes and any(s.service_url for _, s in _steps(manifest)):
        changes.append(
            Change(
                "bad-url",
                "v0.12.0",
                "a step URL that does not parse crashes the v0.11 router on that request (no answer); "
                "from v0.12.0 it answers 500 with the parse error",
                "no answer",
                "500 with the parse error",
            )
        )
    return changes


def _drop_text(node: Node, release: Release) -> str:
    share = _drops(release, node)
    if share == 0:
        return "always finds a route"
    outcome = "gets no answer (the router crashes)" if release.splitter_no_route_crashes else "answers 500"
    return f"draws no route for about {share:.1%} of requests, which {outcome}"
