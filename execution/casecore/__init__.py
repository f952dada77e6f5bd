"""The case core: a graph's cases (requests with expectations), judged against what a version did.

Pure Python (the engine, ``graphs.language``, PyYAML, RE2); no Django, DRF or Celery, so the
``testgraph FILE`` command and the Celery side share one implementation. Read a test document
(``load_suite``), run it in-process (``run_suite``) or judge a stored run (``evaluate_case``),
report it (``junit_xml``), write a case from a run (``case_document_from_run``), and compare two
runs of one request step by step (``compare_runs``, for regressions between versions).
"""

from .capture import case_document_from_run
from .compare import RouteChange, RunComparison, StepComparison, compare_runs
from .evaluate import (
    CaseResult,
    ExpectationResult,
    Observed,
    evaluate_case,
    evaluate_expectation,
    observed_from_result,
    reference_problems,
    resolve_step,
)
from .jsondiff import DiffEntry, json_diff, json_equal, json_subset
from .junit import junit_xml
from .limits import (
    CASE_BUDGET_SETTING,
    DEFAULT_LIMITS,
    SUITE_BUDGET_SETTING,
    Budget,
    BudgetExceeded,
    Limits,
    case_budget,
)
from .loader import MAX_BYTES, MAX_CASES, MAX_EXPECTATIONS, load_suite, parse_case, suite_from_document
from .model import (
    API_VERSION,
    KIND,
    OPERATORS,
    BodyExpectation,
    CaseDocumentError,
    CaseIssue,
    CaseRequest,
    Expectation,
    LatencyExpectation,
    ParsedCase,
    ParsedSuite,
    PathExpectation,
    RouteExpectation,
    StatusExpectation,
    StepExpectation,
)
from .runner import DEFAULT_CONCURRENCY, run_case, run_suite, run_suite_sync

__all__ = [
    "API_VERSION",
    "CASE_BUDGET_SETTING",
    "DEFAULT_CONCURRENCY",
    "DEFAULT_LIMITS",
    "KIND",
    "MAX_BYTES",
    "MAX_CASES",
    "MAX_EXPECTATIONS",
    "OPERATORS",
    "SUITE_BUDGET_SETTING",
    "BodyExpectation",
    "Budget",
    "BudgetExceeded",
    "CaseDocumentError",
    "CaseIssue",
    "CaseRequest",
    "CaseResult",
    "DiffEntry",
    "Expectation",
    "ExpectationResult",
    "LatencyExpectation",
    "Limits",
    "Observed",
    "ParsedCase",
    "ParsedSuite",
    "PathExpectation",
    "RouteChange",
    "RouteExpectation",
    "RunComparison",
    "StatusExpectation",
    "StepComparison",
    "StepExpectation",
    "case_budget",
    "case_document_from_run",
    "compare_runs",
    "evaluate_case",
    "evaluate_expectation",
    "json_diff",
    "json_equal",
    "json_subset",
    "junit_xml",
    "load_suite",
    "observed_from_result",
    "parse_case",
    "reference_problems",
    "resolve_step",
    "run_case",
    "run_suite",
    "run_suite_sync",
    "suite_from_document",
]
