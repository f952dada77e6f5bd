"""What happens when a suite run's case has run: the run task calls :func:`case_run_ended`.

It judges the case and moves its suite run along (``execution.suites.services.suite_run_ended``).
The thread that ran a suite's case also runs the next case it starts, at once and without a round
trip through the broker: the next case's run is queued and claimed for this thread in the
transaction that records the verdict of the case before it. The thread then judges that one and
goes on, so a suite run's slot passes from case to case in the same thread. It stops chaining (the
next case is sent to the broker instead) once the worker is asked to stop, or after
``CHAIN_SECONDS`` in one task: the task's message stays unacknowledged while the chain runs
(``acks_late``), and must be acknowledged well before the broker would redeliver it.
"""

from __future__ import annotations

import threading
import time
import uuid

from execution.services import worker
from execution.suites import services

# Longest a worker thread goes on running a suite's next cases after its task (seconds); far below
# the Redis transport's visibility timeout (an hour), after which an unacknowledged message is
# delivered again (harmless, as every receipt is, but wasted).
CHAIN_SECONDS = 600.0
STOPPING = threading.Event()


def stop_chaining() -> None:
    """A stopping worker starts no more runs in its own threads: the next cases go to the broker."""
    STOPPING.set()


def case_run_ended(run_id: uuid.UUID | str, *, seconds: float = CHAIN_SECONDS) -> int:
    """After run ``run_id`` ended (or was not claimed, or is about to be tried again): if it is a
    suite run's case, judge it and move the suite run along; while this thread may, run the case
    it started (and claimed) next here, and repeat. Returns how many runs were run here (0 for a
    run of no suite run). Idempotent."""
    began = time.monotonic()
    ran = 0
    while True:
        take = not STOPPING.is_set() and time.monotonic() - began < seconds
        _, run = services.suite_run_ended(run_id=run_id, take=take)
        if run is None:
            return ran
        # As the run task does once it has claimed a run; nobody has this run open yet (it was
        # created a moment ago, in this thread's write): its events are stored in fewer writes.
        worker.run_claimed(run, quiet=True)
        ran += 1
        run_id = str(run.pk)
