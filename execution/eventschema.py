"""Every event type a run writes, declared once: names, fields, field types, the terminal one.

The engine (``execution/engine/``) emits the trace events; the web process, the worker and the
reaper write the lifecycle events (queued, started, cancel, run.finished, …). Each event is stored
as a ``RunEvent`` row and then sent unchanged: over Server-Sent Events while the run goes on, and
as JSON for a replay (``GET /api/runs/{id}/events/?format=json``). The console folds both through
the same reducer, so the stored events are the only truth about a run.

This module is the declaration the rest follows:

- ``execution/engine/trace.py`` takes its list of event types from :data:`RUN_EVENTS`;
- the SSE stream ends after the family's terminal event (:func:`EventFamily.terminal`);
- ``scripts/export_event_types.py`` turns it into ``frontend/src/generated/events.ts`` (the event
  names the browser subscribes to, and one TypeScript interface per event's ``data``); a test fails
  when the committed file differs from what this declaration generates.

Another family of events (a suite run's, say) is declared the same way: an :class:`EventFamily`
with its own events, added to :data:`FAMILIES`.

Pure Python: no Django, so the engine and the export script may import it.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "BOOL",
    "FAMILIES",
    "FLOAT",
    "INT",
    "JSON",
    "LOAD_EVENTS",
    "RUN_EVENTS",
    "RUN_EVENT_TYPES",
    "STR",
    "SUITE_EVENTS",
    "EventFamily",
    "EventType",
    "Field",
    "Shape",
    "Type",
    "list_of",
    "nullable",
    "one_of",
    "shape",
]


from execution.eventfields import (
    BOOL,
    FLOAT,
    INT,
    JSON,
    STR,
    STR_PAIRS,
    EventFamily,
    EventType,
    Field,
    Shape,
    Type,
    list_of,
    nullable,
    one_of,
    shape,
)

# --- the run's shapes ----------------------------------------------------------------------------

BODY_VIEW: Final = Shape(
    "BodyView",
    "At most the trace's cap of a body's bytes, as text (UTF-8) or base64, with its real size.",
    (
        Field("body", STR, "the body (or its first bytes)"),
        Field("encoding", one_of("utf-8", "base64"), "how `body` is written"),
        Field("size", INT, "the body's real size in bytes"),
        Field("truncated", BOOL, "whether `body` holds only the first bytes"),
    ),
)

CONDITION: Final = Shape(
    "ConditionData",
    "A GJSON condition and what it evaluated to on the previous response.",
    (
        Field("condition", STR, "the condition as written in the graph"),
        Field("matches", BOOL, "whether it matched"),
        Field("raw", nullable(STR), "the value the path found (cut to a few hundred characters)"),
        Field("reason", nullable(STR), "why it did not match, when known"),
    ),
)

SWITCH_CONDITION: Final = Shape(
    "SwitchCondition",
    "One step's condition of a Switch node and its result.",
    (
        Field("index", INT, "the step's index"),
        Field("name", nullable(STR), "the step's name"),
    ),
    base=CONDITION,
)

RESPONSE: Final = Shape(
    "RunResponse",
    "The graph's answer exactly as `GET /api/runs/{id}/` shows it under `response`.",
    (
        Field("status_code", nullable(INT), "the HTTP status"),
        Field("content_type", nullable(STR), "the response's Content-Type"),
        Field("body", JSON, "the JSON value for a JSON body, else the text (or base64)"),
        Field("encoding", one_of("utf-8", "base64"), "how a text `body` is written"),
        Field("size", nullable(INT), "the body's real size in bytes"),
        Field("truncated", BOOL, "whether only the first bytes were kept"),
        Field("note", STR, "why a JSON body is shown as text", optional=True),
    ),
)

OUTCOME: Final = one_of("ok", "http-error", "error", "cancelled", "timeout")
RUN_STATUS: Final = one_of("queued", "running", "succeeded", "failed", "cancelled")

# Where a trace event happened; the worker adds these to the data of every event the engine emits.
TRACE_WHERE: Final = (
    Field("attempt", INT, "the attempt (1, 2, …) that emitted it"),
    Field(
        "call_id",
        STR,
        "short and unique in a run: a node invocation `root` or `<node>#<n>` (`node1#1`), "
        "a step call `<node invocation>/<index>` (`root/1`, `node1#1/0`)",
    ),
    Field(
        "parent_call_id",
        nullable(STR),
        "the `nodeName` step that led into this node (None at the root): the calls' nesting",
    ),
    Field("node", nullable(STR), "the node"),
    Field("step_index", nullable(INT), "the step's index in its node"),
    Field("step_name", nullable(STR), "the step's name"),
    Field("target", nullable(STR), "the URL (or node) the step calls"),
    Field("at", FLOAT, "when, in seconds since the epoch"),
)

_ATTEMPT = Field("attempt", INT, "the attempt it concerns")

RUN_EVENTS: Final = EventFamily(
    name="run",
    doc="A test run's events, on the channel `run:{id}` and at `/api/runs/{id}/events/`.",
    shapes=(BODY_VIEW, CONDITION, SWITCH_CONDITION, RESPONSE),
    common=TRACE_WHERE,
    common_sources=("engine",),
    events=(
        EventType(
            "run.queued",
            "The run was stored and waits for a worker.",
            "web",
            (
                Field("graph", STR, "the graph's name"),
                Field("version", INT, "the version run"),
                Field("environment", STR, "the environment's name"),
                Field("seed", INT, "the seed of the Splitter draws"),
                Field("rerun_of", nullable(STR), "the run this one repeats"),
                Field(
                    "kserve_version",
                    STR,
                    "the KServe release whose router runs it (absent on runs made before releases)",
                    optional=True,
                ),
            ),
        ),
        EventType(
            "run.started",
            "A worker claimed the run (again, for a later attempt).",
            "worker",
            (_ATTEMPT, Field("worker", STR, "the worker: its host name and process id")),
        ),
        EventType(
            "run.requeued",
            "The reaper queued the run again (its worker was stopped, or its message was lost).",
            "reaper",
            (
                Field("reason", STR, "why"),
                _ATTEMPT,
                Field("next_attempt", INT, "the attempt that comes next"),
            ),
        ),
        EventType(
            "run.warning",
            "Something the run could not do as asked (secret headers expired, say).",
            "worker",
            (Field("message", STR, "what happened"),),
        ),
        EventType(
            "run.cancel_requested",
            "Someone asked to cancel the running run; `run.finished` follows.",
            "web",
            (Field("by", STR, "who asked"),),
        ),
        EventType(
            "run.worker_stopping",
            "The worker running the run was asked to stop (a deploy, a scale-down).",
            "worker",
            (_ATTEMPT, Field("reason", STR, "the signal or reason")),
        ),
        EventType(
            "node.started",
            "A node begins.",
            "engine",
            (
                Field("router_type", nullable(STR), "Sequence, Switch, Ensemble or Splitter"),
                Field("input", shape(BODY_VIEW), "what the node received"),
                Field("depth", INT, "how many `nodeName` hops lie above it"),
            ),
        ),
        EventType(
            "node.finished",
            "A node ends.",
            "engine",
            (
                Field("status", nullable(INT), "the node's HTTP status (null on error)"),
                Field("outcome", OUTCOME, "how it ended"),
                Field("error", nullable(STR), "the cause of an error"),
                Field("duration_ms", FLOAT, "how long it took"),
                Field("output", shape(BODY_VIEW), "what it answered (absent on error)", optional=True),
            ),
        ),
        EventType(
            "step.started",
            "A step call begins (an HTTP POST, or a `nodeName` step entering its node).",
            "engine",
            (
                Field("kind", one_of("http", "node"), "a URL step or a `nodeName` step"),
                Field("request", shape(BODY_VIEW), "what the step sends"),
                Field("condition", shape(CONDITION), "the Sequence condition let it run", optional=True),
                Field("method", STR, "POST (URL steps)", optional=True),
                Field("url", STR, "where it posts (URL steps)", optional=True),
                Field("headers", STR_PAIRS, "headers sent, secrets as ***", optional=True),
                Field("timeout_s", nullable(FLOAT), "the step's timeout (URL steps)", optional=True),
                Field(
                    "span_id",
                    STR,
                    "the call's span in the run's trace, sent in `traceparent` (URL steps, when "
                    "the environment propagates the trace)",
                    optional=True,
                ),
            ),
        ),
        EventType(
            "step.finished",
            "A step call ends.",
            "engine",
            (
                Field("status", nullable(INT), "the step's HTTP status (null without one)"),
                Field("response", nullable(shape(BODY_VIEW)), "what it answered"),
                Field("content_type", nullable(STR), "the step's own Content-Type"),
                Field("duration_ms", FLOAT, "how long it took"),
                Field("outcome", OUTCOME, "ok (2xx), http-error, error, cancelled or timeout"),
                Field("error", nullable(STR), "the cause of an error"),
                Field("redirects", list_of(STR), "the redirects followed (URL steps)", optional=True),
            ),
        ),
        EventType(
            "step.skipped",
            "A Sequence step that did not run.",
            "engine",
            (
                Field(
                    "reason",
                    one_of(
                        "condition-unmet",
                        "invalid-response",
                        "after-unmet-condition",
                        "after-hard-failure",
                        "after-error",
                    ),
                    "why it did not run",
                ),
                Field("condition", shape(CONDITION), "the condition evaluated", optional=True),
            ),
        ),
        EventType(
            "route.decided",
            "A routing decision on a node (`call_id` is the node's); the fields depend on `router`. "
            "For Sequence and Ensemble, `step_index` (and Ensemble's `step_name`) name the step "
            "concerned.",
            "engine",
            (
                Field("router", one_of("Sequence", "Switch", "Ensemble", "Splitter"), "the router"),
                Field("valid_json", BOOL, "Switch: whether the input is JSON", optional=True),
                Field("conditions", list_of(shape(SWITCH_CONDITION)), "Switch", optional=True),
                Field("chosen", nullable(INT), "Switch, Splitter: the step taken", optional=True),
                Field("draw", INT, "Splitter: the number drawn in [0, 100)", optional=True),
                Field("weights", list_of(nullable(INT)), "Splitter: each step's weight", optional=True),
                Field("cumulative", list_of(INT), "Splitter: the running sums", optional=True),
                Field("decision", STR, "Sequence, Ensemble: stop, hard-failure or error", optional=True),
                Field("reason", STR, "Sequence: why it stopped", optional=True),
                Field("status", INT, "Sequence, Ensemble: a Hard step's HTTP status", optional=True),
                Field("error", STR, "Ensemble: the error that ended the node", optional=True),
                Field("condition", nullable(STR), "Sequence: the condition", optional=True),
                Field("matches", BOOL, "Sequence: whether it matched", optional=True),
                Field("raw", nullable(STR), "Sequence: the value the path found", optional=True),
                Field("evaluated", shape(BODY_VIEW), "Sequence: the response tested", optional=True),
                Field("skipped", list_of(INT), "Sequence: the steps not run", optional=True),
                Field("abandoned", list_of(INT), "Ensemble: the steps given up", optional=True),
            ),
        ),
        EventType(
            "run.finished",
            "The run ended: the last event of a run, with the graph's answer when there is one. The "
            "engine reports it with its own `response` (a body view); the worker stores that report "
            "with the run's `status`, its `attempt` and `response` as the run API shows it.",
            "worker",
            (
                _ATTEMPT,
                Field("status", RUN_STATUS, "the run's status (succeeded, failed, cancelled)"),
                Field("status_code", nullable(INT), "the graph's HTTP status (null without an answer)"),
                Field("content_type", nullable(STR), "the answer's Content-Type"),
                Field("response", nullable(shape(RESPONSE)), "the answer, as the run API shows it"),
                Field("error", STR, "why it failed or was cancelled (empty when it did not)"),
                Field("outcome", OUTCOME, "the engine's outcome", optional=True),
                Field("duration_ms", nullable(FLOAT), "how long the run took"),
                Field("deadline_s", FLOAT, "the graph's deadline", optional=True),
                Field("warnings", list_of(STR), "what the engine could not apply as configured"),
                Field("by", STR, "who cancelled it before it started", optional=True),
            ),
            terminal=True,
            in_trace=True,
        ),
    ),
)

# --- a suite run's events (execution/suites/events.py) --------------------------------------------

SUITE_COUNTS: Final = Shape(
    "SuiteCounts",
    "How many of a suite run's cases have which outcome; `finished` counts those with a verdict.",
    (
        Field("total", INT, "cases in the suite run"),
        Field("passed", INT, "cases whose every expectation held"),
        Field("failed", INT, "cases with an expectation that did not hold"),
        Field("error", INT, "cases that could not run or be judged"),
        Field("cancelled", INT, "cases dropped or stopped by a cancel"),
        Field("finished", INT, "passed + failed + error"),
    ),
)

EXPECTATION_FAILURE: Final = Shape(
    "ExpectationFailure",
    "One expectation of a case that did not hold (execution/graphtests/evaluate.py).",
    (
        Field("index", INT, "its position in the case's expectations"),
        Field("kind", one_of("status", "body", "path", "route", "step", "latency"), "its kind"),
        Field("passed", BOOL, "always false here"),
        Field("message", STR, "what did not hold, in a sentence"),
        Field("expected", JSON, "what the case expected"),
        Field("actual", JSON, "what the graph did"),
        Field("diff", list_of(JSON), "the JSON diff of expected and actual (path, op, expected, actual)"),
    ),
)

CASE_OUTCOME: Final = one_of("passed", "failed", "error", "cancelled")

BUDGET_CHECK: Final = Shape(
    "BudgetCheck",
    "One latency budget against what was measured (graphs/language/budgets.py).",
    (
        Field("target", STR, "`graph`, or the step as `node/step` (its name, else its index)"),
        Field("budget_ms", FLOAT, "the p95 the graph states"),
        Field("measured_ms", nullable(FLOAT), "the p95 measured (null: the step was never called)"),
        Field("passed", nullable(BOOL), "whether it held (null: not measured)"),
    ),
)

BUDGET_VERDICT: Final = Shape(
    "BudgetVerdict",
    "A graph's latency budgets judged on what a suite run measured.",
    (
        Field("passed", nullable(BOOL), "false when any budget was exceeded (null: none was measured)"),
        Field("checks", list_of(shape(BUDGET_CHECK)), "each budget, the graph's first"),
    ),
)

SUITE_EVENTS: Final = EventFamily(
    "suite",
    "A suite run's events: its cases as they start and finish, and its end.",
    (
        EventType(
            "suite.started",
            "The suite run was created with its cases; the first ones are on their way to the workers.",
            "web",
            (Field("total", INT, "cases in the suite run"),),
        ),
        EventType(
            "case.started",
            "A case went to the workers as a run.",
            "worker",
            (
                Field("case", INT, "the test case's id"),
                Field("name", STR, "the test case's name"),
                Field("run", STR, "the id of the run that carries it"),
            ),
        ),
        EventType(
            "case.finished",
            "A case has its verdict (or could not run, or was cancelled).",
            "worker",
            (
                Field("case", INT, "the test case's id"),
                Field("name", STR, "the test case's name"),
                Field("outcome", CASE_OUTCOME, "its verdict"),
                Field("run", nullable(STR), "the run that carried it (null if it never started)"),
                Field("failures", list_of(shape(EXPECTATION_FAILURE)), "the expectations that did not hold"),
                Field("error", nullable(STR), "why it could not run or be judged"),
                Field("duration_ms", nullable(FLOAT), "how long its run took"),
                Field("counts", shape(SUITE_COUNTS), "the suite run's counts after it"),
            ),
        ),
        EventType(
            "suite.finished",
            "The suite run ended: the last event, also after a cancel.",
            "worker",
            (
                Field("status", one_of("passed", "failed", "error", "cancelled"), "the suite run's status"),
                Field("counts", shape(SUITE_COUNTS), "the final counts"),
                Field("duration_ms", nullable(FLOAT), "from its start to its end"),
                Field(
                    "budgets",
                    nullable(shape(BUDGET_VERDICT)),
                    "the graph's latency budgets judged on the cases (null: the graph states none)",
                ),
            ),
            terminal=True,
        ),
    ),
    shapes=(SUITE_COUNTS, EXPECTATION_FAILURE, BUDGET_CHECK, BUDGET_VERDICT),
)

# --- a load test's events (execution/loadtests/events.py) ------------------------------------------

LOAD_PROGRESS: Final = Shape(
    "LoadProgress",
    "How far a load test has come: requests done, errors, elapsed time and the whole graph's latency so far.",
    (
        Field("requests", INT, "requests it is to send"),
        Field("completed", INT, "requests answered (any status)"),
        Field("errors", INT, "answers that were not 2xx"),
        Field("elapsed_s", FLOAT, "seconds since it started"),
        Field("throughput_rps", nullable(FLOAT), "completed requests per second so far"),
        Field("p50_ms", nullable(FLOAT), "the whole graph's median latency so far"),
        Field("p95_ms", nullable(FLOAT), "the whole graph's 95th percentile so far"),
    ),
)

LOAD_STATUS: Final = one_of("finished", "stopped", "cancelled", "failed")

LOAD_EVENTS: Final = EventFamily(
    "load_test",
    "A load test's events: its start on a worker, its progress about twice a second, and its end.",
    (
        EventType(
            "load.queued",
            "The load test was created and sent to the workers.",
            "web",
            (
                Field("requests", INT, "requests it is to send"),
                Field("concurrency", INT, "requests in flight at once"),
            ),
        ),
        EventType(
            "load.started",
            "A worker took the load test and sends its first requests.",
            "worker",
            (Field("worker", STR, "the worker's host name"),),
        ),
        EventType(
            "load.progress",
            "Progress, at most about twice a second while it runs.",
            "worker",
            (Field("progress", shape(LOAD_PROGRESS), "how far it has come"),),
        ),
        EventType(
            "load.finished",
            "The load test ended: the last event (also after a cancel, the time limit or a failure).",
            "worker",
            (
                Field("status", LOAD_STATUS, "how it ended"),
                Field("progress", shape(LOAD_PROGRESS), "the final counts"),
                Field(
                    "budget_passed", nullable(BOOL), "whether the graph's latency budgets held (null: none)"
                ),
                Field("error", nullable(STR), "why it failed"),
            ),
            terminal=True,
        ),
    ),
    shapes=(LOAD_PROGRESS,),
)

# Every family of events the studio stores and streams.
FAMILIES: Final = (RUN_EVENTS, SUITE_EVENTS, LOAD_EVENTS)

# The run event types, in declaration order (the API schema's enum of them).
RUN_EVENT_TYPES: Final = RUN_EVENTS.names
