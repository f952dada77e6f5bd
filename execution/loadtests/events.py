"""The event log of a load test: persisted, numbered and published like a run's
(``execution.eventlogs``), on the channel ``load_test:{id}``, and streamed the same way.

Event types (their data, declared in ``execution.eventschema.LOAD_EVENTS``): ``load.queued``,
``load.started``, ``load.progress`` (about twice a second) and the final ``load.finished``.
"""

from __future__ import annotations

from typing import Final

from execution.eventlogs import OwnedEventLog
from execution.eventschema import LOAD_EVENTS
from execution.loadtests.models import LoadTest, LoadTestEvent

FINAL_EVENT: Final = LOAD_EVENTS.terminal
LOG: Final = OwnedEventLog(LoadTest, LoadTestEvent, FINAL_EVENT, "load-event-hub")

emit_many = LOG.emit_many
emit = LOG.emit
stored_after = LOG.stored_after
is_finished = LOG.is_finished
open_stream = LOG.open_stream
