"""The Celery tasks of runs. Each takes ids only and calls one service (docs/architecture.md).

Celery's autodiscovery imports this package; importing it registers both tasks and the handler
that moves a suite run along after each of its runs (:mod:`.suites`). They live in two
modules so that no import goes round in a circle: the services that queue a run import
:mod:`.runs` (the run task and :func:`~execution.tasks.runs.enqueue`), which imports the worker's
service only; the reaper's service imports :mod:`.runs` too, and :mod:`.reaper` imports it.
"""

from execution.tasks import reaper, runs, suites

__all__ = ["reaper", "runs", "suites"]
