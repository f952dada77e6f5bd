"""What a worker does after each run's task: move the run's suite run along (``execution.suites``).

A signal handler rather than a call in the run task: the suite services queue runs, so the run
task's module may not import them (the layers of pyproject.toml's import contracts).

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
from typing import Any

from celery import Task
from celery.signals import task_postrun, worker_shutting_down

RUN_TASK = "execution.run_graph"
# Longest a worker thread goes on running a suite's next cases after its task (seconds); far below
# the Redis transport's visibility timeout (an hour), after which an unacknowledged message is
# delivered again (harmless, as every receipt is, but wasted).
CHAIN_SECONDS = 600.0
STOPPING = threading.Event()


@worker_shutting_down.connect
def stop_chaining(**_: Any) -> None:
    """A stopping worker starts no more runs in its own threads: the next cases go to the broker."""
    STOPPING.set()


@task_postrun.connect
def advance_suite_after_run(task: Task | None = None, args: Any = None, **_: Any) -> None:
    """After a run's task (done, not claimed, or about to be retried): judge the run's case and
    start the next one, if the run belongs to a suite run, and run that one in this thread (and
    so on). Idempotent; a failure here is logged by Celery, and the reaper's pass moves the suite
    run along instead."""
    if task is not None and task.name == RUN_TASK and args:
        run_suite_chain(str(args[0]))


def run_suite_chain(run_id: str, *, seconds: float = CHAIN_SECONDS) -> int:
    """Move the suite run of the ended run ``run_id`` along; while this thread may, run the case
    it started (and claimed) next here, and repeat. Returns how many runs were run here."""
    # Imported here: the suite services import the run services, which import this package.
    from execution.services.worker import run_claimed
    from execution.suites.services import suite_run_ended

    began = time.monotonic()
    ran = 0
    while True:
        take = not STOPPING.is_set() and time.monotonic() - began < seconds
        _, run = suite_run_ended(run_id=run_id, take=take)
        if run is None:
            return ran
        # As the run task does once it has claimed a run; nobody has this run open yet (it was
        # created a moment ago, in this thread's write): its events are stored in fewer writes.
        run_claimed(run, quiet=True)
        ran += 1
        run_id = str(run.pk)
