"""The Celery tasks. Each takes ids only and calls services (docs/architecture.md).

Celery's autodiscovery imports this package; importing it registers the tasks and the worker's
shutdown handlers. Tasks sit above every service and import them; no service imports a task:
runs are sent by the run task's registered name (``execution.services.dispatch``).
"""

from execution.tasks import loadtests, reaper, runs

__all__ = ["loadtests", "reaper", "runs"]
