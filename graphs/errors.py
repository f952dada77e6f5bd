"""What the graph store refuses, named for what went wrong rather than for an HTTP status.

Services and selectors raise these; each is an ``ApplicationError`` of the kind of answer it calls
for, so the API's one error shape (``config/exceptions.py``) answers it without a view knowing. The
one exception that needs the API's serializers, ``StaleVersion``, carries domain objects and the
views build its 409 body (``graphs/apis/common.py``).
"""

from __future__ import annotations

from typing import Any

from config.exceptions import BadRequest, Conflict, Forbidden, NotFound, PayloadTooLarge, Unprocessable
from graphs.models import Graph, GraphVersion


class GraphRefused(BadRequest):
    """The request cannot be done as asked: a name KServe rejects or one already taken, a rename,
    an archived graph, an unknown role, a manifest over the reader's limits, nothing to import."""


class NotPermitted(Forbidden):
    """The user may read the graph but not do this to it (not an editor, not the owner)."""


class NoSuchGraph(NotFound):
    """No graph, version or user of that name or number."""


class TokenRefused(BadRequest):
    """A personal API token that cannot be made: an expiry in the past, too many tokens."""


class NoSuchToken(NotFound):
    """No API token of the user with that id (another user's is not disclosed)."""


class ManifestTooLarge(PayloadTooLarge):
    """The text or the number of documents is over the studio's limit."""


class NotDeployable(Unprocessable):
    """The version has errors KServe would reject, so it may be neither exported nor run."""


class VersionNumberTaken(Conflict):
    """Another writer took the next version number first (the row lock did not hold)."""


class StaleVersion(Conflict):
    """A save or rollback from a base that is not the latest version: nothing was saved.

    ``latest`` is the graph's latest version (None for a graph without one), ``changes`` the diff
    from the base to it (None when the graph has no version ``base_version``). The API answers 409
    with both.
    """

    def __init__(
        self, graph: Graph, base_version: int, latest: GraphVersion | None, changes: dict[str, Any] | None
    ) -> None:
        self.graph = graph
        self.base_version = base_version
        self.latest = latest
        self.changes = changes
        latest_number = latest.number if latest else 0
        detail = (
            f"Version {base_version} is not the latest version of {graph.name!r} "
            f"(the latest is {latest_number}): someone saved in between. Nothing was saved; "
            f"review their changes and save again on top of version {latest_number}."
            if changes is not None
            else f"Graph {graph.name!r} has no version {base_version}; the latest is {latest_number}."
        )
        super().__init__(
            detail, extra={"latest_version": latest_number, "base_version": base_version, "diff": changes}
        )


class TestsRequired(Conflict):
    """The graph requires a passing suite run before export and this version has none on the
    current test cases (``graphs.suitestate``)."""

    __test__ = False  # not a pytest class, whatever its name says

    def __init__(self, graph: Graph, version: GraphVersion, last_passing_version: int | None) -> None:
        super().__init__(
            f"Version {version.number} of {graph.name!r} has no passing suite run the export gate trusts "
            "on the current test cases, and the graph requires one before export. Have its owner or an "
            "editor run its suite in a trusted environment, or force the export (POST with force and a "
            "reason; audited).",
            extra={"code": "tests_required", "last_passing_version": last_passing_version},
        )
