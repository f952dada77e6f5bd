"""The KServe releases whose InferenceGraph router the studio reproduces, and what differs between them.

Pure data: every release names its router build (releases that ship the same ``cmd/router`` share
one), and each behaviour that changed from one release to the next is a switch on :class:`Release`.
The engine reads the switches of the release it runs as; validation and export read its CRD
knowledge; the upgrade report compares two releases switch by switch.

``master`` is KServe's development branch, byte-identical in the router to v0.19.0 and v0.20.0, and
the newest release: the default everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Final, Literal

__all__ = [
    "DEFAULT_RELEASE",
    "MASTER",
    "RELEASES",
    "RELEASE_CHOICES",
    "Release",
    "UnknownRelease",
    "get_release",
    "release_names",
    "releases_between",
]

HeaderMatching = Literal["exact", "re2"]
SplitterDraw = Literal["0-98", "0-100", "0-99"]


@dataclass(frozen=True, slots=True)
class Release:
    """One router as KServe shipped it; ``name`` is its canonical tag, ``aliases`` the other tags
    that ship the very same router (``main.go``, ``router_error.go`` and the gjson pin).

    Switches (each says how this release behaves; docs/router-semantics.md, "Per release"):

    - ``header_matching``: ``exact`` — ``PROPAGATE_HEADERS`` entries are canonical header names
      compared for equality (v0.11); ``re2`` — Go regexps matched unanchored (v0.12 on).
    - ``content_type_always_added``: ``Content-Type: application/json`` is added to every step call,
      so a propagated Content-Type gets a second value (v0.11); later only when there is none.
    - ``splitter_draw``: the range the Splitter draws from: ``0-98`` (math/rand, v0.11 to v0.12: a
      route starting at 99 is never chosen), ``0-100`` (crypto/rand, v0.13 to v0.18: with weights
      summing to 100, a draw of 100 finds no route), ``0-99`` (v0.19 on).
    - ``splitter_no_route_crashes``: a draw that finds no route panics the handler, and the
      connection closes without an answer (before v0.19); later a 500 names it.
    - ``bad_url_crashes``: a step URL that does not parse panics the handler (v0.11).
    - ``unmet_condition_status``: what a Sequence whose step condition is not met answers with the
      previous response: 500 (to v0.15.0), 200 (v0.15.1 on).
    - ``readyz``: ``GET /readyz`` answers 200 without running the graph (v0.15 on); before, every
      path runs the graph.
    - ``server_timeouts``: the router's ``http.Server`` has read/write/idle timeouts (60/60/180 s,
      v0.13 on); before, none.
    - ``router_timeouts``: ``spec.routerTimeouts`` exists and is applied (v0.16 on).
    - ``map_predictions``: the Sequence step field ``mapPredictionsToInstances`` exists and is
      applied (v0.16 on).
    - ``gjson``: the gjson version conditions are evaluated with; ``v1.14.4`` lacks ``@dig``, reads
      every ``~`` operand as Go's ``Result.Bool()`` and ends a modifier's argument at the first ``|``.
    - ``spec_fields`` / ``step_fields``: the fields of ``spec`` and of a step in this release's
      InferenceGraph CRD (``config/crd``): a field outside them is not part of the release's API.
    - ``istio_https_probe``: https steps are first checked against a local Istio sidecar
      (v0.15 on; not reproduced: the engine always keeps https).
    """

    name: str
    aliases: tuple[str, ...]
    order: int
    oracle: str  # the folder of this router's reference build (shared/oracle/releases/<oracle>), "" = master
    gjson: str
    header_matching: HeaderMatching
    content_type_always_added: bool
    splitter_draw: SplitterDraw
    splitter_no_route_crashes: bool
    bad_url_crashes: bool
    unmet_condition_status: int
    readyz: bool
    server_timeouts: bool
    router_timeouts: bool
    map_predictions: bool
    istio_https_probe: bool
    spec_fields: frozenset[str]
    step_fields: frozenset[str]

    @property
    def tags(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)

    @property
    def label(self) -> str:
        """``v0.13.1 (also v0.13.0, v0.14.0, v0.14.1)``: the release and the ones it stands for."""
        return f"{self.name} (also {', '.join(self.aliases)})" if self.aliases else self.name

    @property
    def legacy_gjson(self) -> bool:
        return self.gjson == "v1.14.4"

    @property
    def splitter_draws(self) -> int:
        """How many values the Splitter draws from (99, 101 or 100)."""
        return {"0-98": 99, "0-100": 101, "0-99": 100}[self.splitter_draw]

    def first_with(self, attribute: str, value: object = True) -> Release | None:
        """The oldest release from this one on whose ``attribute`` is ``value`` (None: none)."""
        return next((r for r in RELEASES if r.order >= self.order and getattr(r, attribute) == value), None)


V0_11: Final = Release(
    name="v0.11.2",
    aliases=("v0.11.1",),
    order=0,
    oracle="v0.11.2",
    gjson="v1.14.4",
    header_matching="exact",
    content_type_always_added=True,
    splitter_draw="0-98",
    splitter_no_route_crashes=True,
    bad_url_crashes=True,
    unmet_condition_status=500,
    readyz=False,
    server_timeouts=False,
    router_timeouts=False,
    map_predictions=False,
    istio_https_probe=False,
    spec_fields=frozenset({"affinity", "nodes", "resources"}),
    step_fields=frozenset(
        {"condition", "data", "dependency", "name", "nodeName", "serviceName", "serviceUrl", "weight"}
    ),
)
V0_12: Final = replace(
    V0_11,
    name="v0.12.1",
    aliases=("v0.12.0",),
    order=1,
    oracle="v0.12.1",
    gjson="v1.17.0",
    header_matching="re2",
    content_type_always_added=False,
    bad_url_crashes=False,
    spec_fields=V0_11.spec_fields | {"maxReplicas", "minReplicas", "scaleMetric", "scaleTarget", "timeout"},
)
V0_13: Final = replace(
    V0_12,
    name="v0.13.1",
    aliases=("v0.13.0",),
    order=2,
    oracle="v0.13.1",
    splitter_draw="0-100",
    server_timeouts=True,
)
# v0.14 has v0.13's router code; only the gjson pin differs (v1.17.3: how modifier output encodes
# a few strings). It keeps an entry of its own so that it is checked against its own build.
V0_14: Final = replace(
    V0_13, name="v0.14.1", aliases=("v0.14.0",), order=3, oracle="v0.14.1", gjson="v1.17.3"
)
V0_15: Final = replace(
    V0_14,
    name="v0.15.2",
    aliases=("v0.15.1",),
    order=4,
    oracle="v0.15.2",
    gjson="v1.18.0",
    readyz=True,
    istio_https_probe=True,
    unmet_condition_status=200,
    spec_fields=V0_14.spec_fields | {"nodeName", "nodeSelector", "serviceAccountName", "tolerations"},
)
V0_16: Final = replace(
    V0_15,
    name="v0.16.0",
    aliases=("v0.17.0", "v0.17.1", "v0.18.0", "v0.18.1"),
    order=5,
    oracle="v0.16.0",
    router_timeouts=True,
    map_predictions=True,
    spec_fields=V0_15.spec_fields | {"routerTimeouts"},
    step_fields=V0_15.step_fields | {"mapPredictionsToInstances"},
)
MASTER: Final = replace(
    V0_16,
    name="master",
    aliases=("v0.19.0", "v0.20.0"),
    order=6,
    oracle="",
    splitter_draw="0-99",
    splitter_no_route_crashes=False,
)

# Oldest first.
RELEASES: Final[tuple[Release, ...]] = (V0_11, V0_12, V0_13, V0_14, V0_15, V0_16, MASTER)
DEFAULT_RELEASE: Final = RELEASES[-1]
_BY_TAG: Final = {tag: release for release in RELEASES for tag in release.tags}
# For model fields and command options: canonical names, newest first (the default first).
RELEASE_CHOICES: Final = tuple((r.name, r.label) for r in reversed(RELEASES))


class UnknownRelease(ValueError):
    """A release name the studio does not know; the message lists the known ones."""


def release_names() -> tuple[str, ...]:
    """Every accepted tag: canonical names and aliases, oldest first."""
    return tuple(tag for release in RELEASES for tag in release.tags)


def get_release(name: str | None) -> Release:
    """The release called ``name`` (a canonical name or an alias, with or without the ``v``);
    None or ``""`` is the default (the newest)."""
    if not name:
        return DEFAULT_RELEASE
    key = name.strip()
    if key not in _BY_TAG and not key.startswith("v") and key[:1].isdigit():
        key = "v" + key
    try:
        return _BY_TAG[key]
    except KeyError:
        raise UnknownRelease(
            f"unknown KServe release {name!r}: choose one of {', '.join(release_names())}"
        ) from None


def releases_between(a: Release, b: Release) -> Iterable[Release]:
    """The releases after ``a`` up to and including ``b`` (``a`` older than ``b``), oldest first."""
    return [r for r in RELEASES if a.order < r.order <= b.order]
