"""The models of the ``execution`` app, by job: environments (``environments``), runs with their
trace and event log (``runs``), and the graph tests' models, which live beside their code
(``execution/cases``, ``execution/suites``, ``execution/loadtests``) and are imported here so
that Django registers them with this app."""

from execution.cases.models import GraphCase
from execution.loadtests.models import LoadTest, LoadTestEvent
from execution.loggedevent import LoggedEvent
from execution.models.environments import DEFAULT_STEP_TIMEOUT, Environment
from execution.models.runs import Run, RunEvent, RunStep
from execution.suites.models import SuiteCaseResult, SuiteEvent, SuiteRun

__all__ = [
    "DEFAULT_STEP_TIMEOUT",
    "Environment",
    "GraphCase",
    "LoadTest",
    "LoadTestEvent",
    "LoggedEvent",
    "Run",
    "RunEvent",
    "RunStep",
    "SuiteCaseResult",
    "SuiteEvent",
    "SuiteRun",
]
