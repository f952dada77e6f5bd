"""What the execution app's services and selectors refuse, named for what went wrong, not for a status.

Each is an ``ApplicationError`` of the kind of answer it calls for (as ``graphs/errors.py``), so the
API's one error shape (``config/exceptions.py``) answers it without a view or service knowing.
"""

from __future__ import annotations

from config.exceptions import BadRequest, Conflict, Forbidden, NotFound


class InvalidInput(BadRequest):
    """What was asked for cannot be done as given: an environment's fields or name, a run's
    headers, a test case or file, an environment that was deleted."""


class NotPermitted(Forbidden):
    """The user may see the thing but not do this to it (change an environment, share it, cancel
    someone else's run)."""


class StateConflict(Conflict):
    """The request contradicts what is stored now: an Idempotency-Key used for another request, a
    name another case has, a case deleted meanwhile, a run without a response yet."""


class NoSuchThing(NotFound):
    """No environment, run or test case with that id or name that the user may see."""
