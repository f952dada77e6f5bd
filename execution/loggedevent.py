"""The abstract row of a persisted event log (:class:`LoggedEvent`), which a run's, a suite run's and
a load test's events derive from.

It lives apart from the ``execution.models`` package, which registers all of the app's models (the
suites', load tests' and test cases' too): the event models of ``execution/suites/models.py`` and
``execution/loadtests/models.py`` derive from it without importing the package that imports them.
"""

from __future__ import annotations

from typing import Any, ClassVar

from django.db import models


class LoggedEvent(models.Model):
    """One event of a persisted event log (a run's, a suite run's), numbered by ``seq`` from 1 per
    owner; ``execution.events`` writes, publishes and streams them. ``OWNER`` names the foreign key
    to the owner, which is also the prefix of the Redis channel its streams listen on."""

    OWNER: ClassVar[str]

    seq = models.PositiveIntegerField()
    type = models.CharField(max_length=40)
    data = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return f"{self.owner_key}:{self.seq} {self.type}"

    @property
    def owner_key(self) -> str:
        return str(getattr(self, f"{self.OWNER}_id"))

    def channel(self) -> str:
        return f"{self.OWNER}:{self.owner_key}"

    def payload(self) -> dict[str, Any]:
        """The JSON of the event, as published and as sent in an SSE ``data:`` line."""
        return {
            self.OWNER: self.owner_key,
            "seq": self.seq,
            "type": self.type,
            "created_at": self.created_at.isoformat() if self.created_at else None,
            "data": self.data,
        }
