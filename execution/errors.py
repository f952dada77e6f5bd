"""What the execution app's services and selectors refuse, named for what went wrong, not for a status.

Each is an ``ApplicationError`` of the kind of answer it calls for (as ``graphs/errors.py``), so the
API's one error shape (``config/exceptions.py``) answers it without a view or service knowing.
"""

from __future__ import annotations

from config.exceptions import BadRequest, Conflict, Forbidden, NotFound, TooManyRequests
from graphs.language import issue_dict


class InvalidInput(BadRequest):
    """What was asked for cannot be done as given: an environment's fields or name, a run's
    headers, a test case or file, an environment that was deleted."""


class NotPermitted(Forbidden):
    """The user may see the thing but not do this to it (change an environment, share it, cancel
    someone else's run)."""


class StateConflict(Conflict):
    """The request contradicts what is stored now: an Idempotency-Key used for another request, a
    name another case has, a case deleted meanwhile, a run without a response yet."""


class StaleTestCase(StateConflict):
    """A test case edited from a revision that is no longer its latest (``If-Match: "r{n}"``):
    someone changed it meanwhile and nothing was saved. The 409 carries the revision the client
    sent, the current one and the case as it is now, so the editor can show theirs beside its own."""

    def __init__(self, pk: int, base_revision: int, current: dict[str, object]) -> None:
        revision = current["revision"]
        super().__init__(
            f"Test case {pk} was changed by someone else since revision {base_revision} (it is at "
            f"revision {revision} now). Nothing was saved; review their version and save again on top "
            f"of revision {revision}.",
            issues=[
                issue_dict("test_case.stale", f"stale revision {base_revision}, the latest is {revision}")
            ],
            extra={"base_revision": base_revision, "revision": revision, "current": current},
        )


class NoSuchThing(NotFound):
    """No environment, run or test case with that id or name that the user may see."""


class TooManyInFlight(TooManyRequests):
    """The user already has as many runs (or suite runs) queued or running as one user may
    (``RUN_MAX_IN_FLIGHT_PER_USER``, ``SUITE_MAX_IN_FLIGHT_PER_USER``): 429 with Retry-After."""
