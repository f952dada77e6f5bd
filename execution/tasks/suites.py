"""What a worker does after each run's task: move the run's suite run along (``execution.suites``).

A signal handler rather than a call in the run task: the suite services queue runs, so the run
task's module may not import them (the layers of pyproject.toml's import contracts).
"""

from __future__ import annotations

from typing import Any

from celery import Task
from celery.signals import task_postrun

RUN_TASK = "execution.run_graph"


@task_postrun.connect
def advance_suite_after_run(task: Task | None = None, args: Any = None, **_: Any) -> None:
    """After a run's task (done, not claimed, or about to be retried): judge the run's case and
    start the next one, if the run belongs to a suite run. Idempotent; a failure here is logged by
    Celery, and the reaper's pass moves the suite run along instead."""
    if task is not None and task.name == RUN_TASK and args:
        # Imported here: the suite services import the run services, which import this package.
        from execution.suites.services import suite_run_ended

        suite_run_ended(run_id=args[0])
