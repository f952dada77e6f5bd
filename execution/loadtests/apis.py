"""REST API of load tests: start one for a version, list a graph's, read one, follow its events,
cancel it, and compare two. Thin: each view validates its input's shape and calls one selector or
service."""

from __future__ import annotations

import uuid
from typing import Any

from django.http import StreamingHttpResponse
from drf_spectacular.utils import OpenApiExample, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from config.exceptions import BadRequest, NotFound
from config.pagination import paginate, paginated
from config.params import MAX_DB_INT, DbIntegerField, VersionRef, VersionRefField
from config.types import AuthedRequest as Request
from execution import selectors as run_selectors
from execution.apis import EventStreamRenderer, _given, event_log_page, event_log_response, event_log_schema
from execution.cases.models import GraphCase
from execution.eventschema import LOAD_EVENTS
from execution.loadtests import events as load_events
from execution.loadtests import selectors, services
from execution.loadtests.models import LoadTest
from graphs import selectors as graph_selectors

LOAD_ID = "3c2b1a09-8f7e-4d6c-9b5a-4a3b2c1d0e9f"
_SERIES = {
    "count": 1000,
    "mean_ms": 41.2,
    "min_ms": 30.1,
    "max_ms": 120.4,
    "p50_ms": 40.3,
    "p95_ms": 52.8,
    "p99_ms": 71.0,
    "histogram": [{"from_ms": 30.1, "to_ms": 32.0, "count": 12}],
    "statuses": {"200": 1000},
    "errors": 0,
    "error_rate": 0.0,
}
LOAD_EXAMPLE: dict[str, Any] = {
    "id": LOAD_ID,
    "graph": "face-recognition",
    "version": 4,
    "environment": "local",
    "test_case": None,
    "requests": 1000,
    "concurrency": 16,
    "status": "finished",
    "completed": 1000,
    "errors": 0,
    "summary": {
        "completed": 1000,
        "elapsed_s": 2.61,
        "throughput_rps": 383.1,
        "errors": 0,
        "error_rate": 0.0,
        "graph": _SERIES,
        "steps": {"root/detect": {**_SERIES, "p95_ms": 30.2}},
    },
    "budgets": {
        "passed": False,
        "checks": [{"target": "graph", "budget_ms": 50, "measured_ms": 52.8, "passed": False}],
    },
    "budget_passed": False,
    "request_headers": {"Authorization": "Bearer ***", "Content-Type": "application/json"},
    "secret_header_names": ["Authorization"],
    "error": "",
    "cancel_requested": False,
    "created_by": "alice",
    "created_at": "2026-12-07T20:10:00Z",
    "started_at": "2026-12-07T20:10:00Z",
    "finished_at": "2026-12-07T20:10:03Z",
    "duration_ms": 2702.5,
}


class LoadTestSummarySerializer(serializers.ModelSerializer):
    """A load test without its per-step summary."""

    graph = serializers.CharField(source="graph.name")
    version = serializers.IntegerField(source="version.number")
    environment = serializers.CharField(source="environment_name")
    test_case = serializers.IntegerField(source="test_case_id", allow_null=True)
    created_by = serializers.CharField(source="created_by.username")

    class Meta:
        model = LoadTest
        fields = [
            "id",
            "graph",
            "version",
            "environment",
            "test_case",
            "requests",
            "concurrency",
            "status",
            "completed",
            "errors",
            "budget_passed",
            "error",
            "cancel_requested",
            "created_by",
            "created_at",
            "started_at",
            "finished_at",
            "duration_ms",
        ]


class LoadTestSerializer(LoadTestSummarySerializer):
    summary = serializers.JSONField(
        help_text="completed, elapsed_s, throughput_rps, errors, error_rate, graph and steps "
        "({'node/step': …}), each with count, mean/min/max, p50/p95/p99 (ms), histogram, statuses, "
        "errors, error_rate"
    )
    budgets = serializers.JSONField(
        help_text="The graph's latency budgets judged: passed (null: none), checks [{target, "
        "budget_ms, measured_ms, passed}]"
    )
    request_headers = serializers.DictField(
        child=serializers.CharField(),
        help_text="The headers every request sends, secret values redacted (`Bearer ***`)",
    )
    secret_header_names = serializers.ListField(
        child=serializers.CharField(),
        help_text="The headers sent with values kept in Redis for the worker, never stored or shown",
    )

    class Meta(LoadTestSummarySerializer.Meta):
        fields = [
            *LoadTestSummarySerializer.Meta.fields,
            "request_headers",
            "secret_header_names",
            "summary",
            "budgets",
        ]


def _load_response(load: LoadTest, request: Request, code: int = status.HTTP_200_OK) -> Response:
    load = selectors.load_get(load_id=load.pk, user=request.user)
    response = Response(LoadTestSerializer(load).data, status=code)
    response["Location"] = f"/api/load-tests/{load.pk}/"
    return response


class LoadTestListCreateApi(APIView):
    class LoadTestInput(serializers.Serializer):
        version = VersionRefField(required=False, help_text="A version number or `latest` (the default)")
        environment = serializers.CharField(
            required=False,
            max_length=63,
            help_text="Id or name of an environment you may use; default: the system's 'local'",
        )
        requests = serializers.IntegerField(
            min_value=1, max_value=MAX_DB_INT, help_text="Requests to send (at most LOAD_TEST_MAX_REQUESTS)"
        )
        concurrency = serializers.IntegerField(
            min_value=1,
            max_value=32767,
            help_text="Requests in flight at once (at most LOAD_TEST_MAX_CONCURRENCY)",
        )
        payload = serializers.JSONField(
            required=False, help_text="The request: any JSON value; a string is the raw body"
        )
        content_type = serializers.CharField(required=False, max_length=200)
        headers = serializers.DictField(
            child=serializers.CharField(max_length=8192, allow_blank=True),
            required=False,
            help_text="Request headers every request sends; with test_case, on top of the case's. "
            "Secret ones (all but Content-Type, Accept, tracing ids and the like, plus those the "
            "environment's secret_headers names) are stored and shown redacted, their values kept "
            "in Redis for the worker (RUN_SECRET_HEADERS_TTL) and deleted when the load test ends",
        )
        test_case = serializers.IntegerField(
            required=False,
            min_value=1,
            max_value=MAX_DB_INT,
            help_text="Send this test case's request instead (its redacted headers are left out "
            "unless headers gives their values)",
        )
        seed = serializers.IntegerField(required=False, min_value=0, max_value=2**63 - 1)

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            if ("payload" in attrs) == ("test_case" in attrs):
                raise serializers.ValidationError(
                    {"payload": "give either a payload or a test_case (the request to send), not both"}
                )
            return attrs

    class FilterSerializer(serializers.Serializer):
        version = DbIntegerField(required=False, help_text="Only this version's load tests")

    @extend_schema(
        operation_id="graphs_load_tests_list",
        parameters=[FilterSerializer],
        responses=paginated(LoadTestSummarySerializer),
    )
    def get(self, request: Request, name: str) -> Response:
        """The graph's load tests, newest first, as summaries (no per-step figures)."""
        filters = self.FilterSerializer(data=_given(request.query_params))
        filters.is_valid(raise_exception=True)
        graph = graph_selectors.graph_get(name=name, user=request.user, latest_manifest=False)
        qs = selectors.load_list(graph=graph, user=request.user, **filters.validated_data)
        return paginate(request, self, qs, LoadTestSummarySerializer)

    @extend_schema(
        operation_id="graphs_load_tests_create",
        request=LoadTestInput,
        responses={202: LoadTestSerializer},
        examples=[
            OpenApiExample(
                "1,000 requests, 16 at a time",
                value={"version": 4, "requests": 1000, "concurrency": 16, "payload": {"instances": [[1]]}},
                request_only=True,
            ),
            OpenApiExample("Started", value={**LOAD_EXAMPLE, "status": "queued"}, response_only=True),
        ],
    )
    def post(self, request: Request, name: str) -> Response:
        """Load test a version in an environment: `requests` requests, `concurrency` at a time,
        with `payload` or a saved `test_case`'s request, on the workers. Answers 202 at once;
        follow the events or poll. Secret headers (an Authorization, an API key) are sent with
        every request and stored redacted, as a run's are; should their values expire before a
        worker starts it, the load test fails naming them. 400 past LOAD_TEST_MAX_REQUESTS /
        LOAD_TEST_MAX_CONCURRENCY or for an environment you may not use; 429 (with Retry-After)
        when you have LOAD_TEST_MAX_IN_FLIGHT_PER_USER load tests in flight."""
        data = self.LoadTestInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        graph = graph_selectors.graph_get(name=name, user=request.user)
        version = graph_selectors.version_get(graph=graph, number=values.get("version", "latest"))
        environment = values.get("environment")
        case = None
        if "test_case" in values:
            case = GraphCase.objects.filter(graph=graph, pk=values["test_case"]).first()
            if case is None:
                message = f"Graph {graph.name!r} has no test case {values['test_case']}."
                raise BadRequest(
                    message,
                    issues=[
                        {
                            "severity": "error",
                            "code": "load.case-unknown",
                            "path": "test_case",
                            "message": message,
                        }
                    ],
                )
        load = services.load_test_start(
            graph=graph,
            version=version,
            user=request.user,
            requests=values["requests"],
            concurrency=values["concurrency"],
            environment=run_selectors.environment_find(ref=environment, user=request.user)
            if environment
            else None,
            payload=values.get("payload"),
            content_type=values.get("content_type"),
            headers=values.get("headers"),
            test_case=case,
            seed=values.get("seed"),
        )
        return _load_response(load, request, status.HTTP_202_ACCEPTED)


class LoadTestDetailApi(APIView):
    @extend_schema(
        operation_id="load_tests_retrieve",
        responses=LoadTestSerializer,
        examples=[OpenApiExample("A finished load test", value=LOAD_EXAMPLE, response_only=True)],
    )
    def get(self, request: Request, load_id: uuid.UUID) -> Response:
        """A load test: status, progress, and (once it ran) throughput, error rate by status and
        by step, p50/p95/p99 and a latency histogram for the graph and each step, and its budgets."""
        return Response(LoadTestSerializer(selectors.load_get(load_id=load_id, user=request.user)).data)


class LoadTestCancelApi(APIView):
    @extend_schema(operation_id="load_tests_cancel", request=None, responses={202: LoadTestSerializer})
    def post(self, request: Request, load_id: uuid.UUID) -> Response:
        """Cancel a load test (202): a queued one at once; a running one starts no more requests
        and ends `cancelled` with what it measured. Its starter, staff, or anyone who may save the
        graph; idempotent."""
        load = selectors.load_get(load_id=load_id, user=request.user)
        load = services.load_test_cancel(load=load, user=request.user)
        return _load_response(load, request, status.HTTP_202_ACCEPTED)


class LoadEventSerializer(serializers.Serializer):
    """One stored load test event, exactly as an SSE ``data:`` line carries it."""

    load_test = serializers.UUIDField()
    seq = serializers.IntegerField()
    type = serializers.ChoiceField(
        choices=LOAD_EVENTS.names, help_text="declared in execution/eventschema.py"
    )
    created_at = serializers.DateTimeField(allow_null=True)
    data = serializers.JSONField()  # type: ignore[assignment]


class LoadEventLogSerializer(serializers.Serializer):
    load_test = serializers.UUIDField()
    finished = serializers.BooleanField(help_text="whether the load test's terminal event is stored")
    events = LoadEventSerializer(many=True)
    total = serializers.IntegerField(help_text="how many events the load test has stored (the last seq)")
    next = serializers.CharField(allow_null=True, help_text="the next page, null on the last page")


class LoadTestEventsApi(APIView):
    """The load test's events as Server-Sent Events, like a run's (``Last-Event-ID`` resumes),
    ending after ``load.finished``; with ``?format=json``, a page of the stored ones."""

    renderer_classes = [JSONRenderer, EventStreamRenderer]

    @event_log_schema("load_tests_events", LoadEventLogSerializer)
    def get(self, request: Request, load_id: uuid.UUID) -> StreamingHttpResponse | Response:
        """Events: `load.queued` {requests, concurrency}, `load.started` {worker}, `load.progress`
        {progress} about twice a second, `load.finished` {status, progress, budget_passed, error}."""
        if not selectors.load_exists(load_id=load_id, user=request.user):
            raise NotFound(f"There is no load test {load_id}.")
        return event_log_response(
            request,
            stream=lambda last: load_events.open_stream(load_id, last, user_id=request.user.pk),
            listing=lambda last, limit: (
                LoadEventLogSerializer(
                    {"load_test": load_id, **event_log_page(request, load_events.LOG, load_id, last, limit)}
                ).data
            ),
        )


class LoadTestCompareApi(APIView):
    class FilterSerializer(serializers.Serializer):
        a = serializers.UUIDField(help_text="Load test A (the before)")
        b = serializers.UUIDField(help_text="Load test B (the after)")

    @extend_schema(
        operation_id="load_tests_compare",
        parameters=[FilterSerializer],
        responses=inline_serializer(
            "LoadTestComparison",
            {
                "a": LoadTestSummarySerializer(),
                "b": LoadTestSummarySerializer(),
                "comparison": serializers.JSONField(
                    help_text="graph and steps side by side: p50/p95/p99 of each, their change "
                    "(ms, ratio), slower/faster; slower_steps"
                ),
            },
        ),
    )
    def get(self, request: Request) -> Response:
        """Two load tests of one graph side by side (version 3 against version 4): the graph's and
        each step's percentiles, their change, and which steps got slower (p95 up by more than
        10 % and 1 ms)."""
        filters = self.FilterSerializer(data=_given(request.query_params))
        filters.is_valid(raise_exception=True)
        a, b, comparison = selectors.load_compare(user=request.user, **filters.validated_data)
        return Response(
            {
                "a": LoadTestSummarySerializer(a).data,
                "b": LoadTestSummarySerializer(b).data,
                "comparison": comparison,
            }
        )


class BudgetCheckApi(APIView):
    @extend_schema(
        operation_id="graphs_versions_budget_check",
        responses=inline_serializer(
            "BudgetCheck",
            {
                "budgets": serializers.JSONField(help_text="The graph's latency budgets"),
                "measured_by": serializers.UUIDField(
                    allow_null=True,
                    help_text="The load test whose p99s were checked too (the version's newest)",
                ),
                "issues": serializers.ListField(child=serializers.JSONField()),
            },
        ),
    )
    def get(self, request: Request, name: str, number: VersionRef) -> Response:
        """The graph's latency budgets (and the p99s its version's newest finished load test
        measured) against the version's own timeouts: `routerTimeouts` (serverRead, serverWrite,
        serviceClient) and `timeout`, along the critical path (a Sequence adds, an Ensemble takes
        its slowest step, a Switch or Splitter its slowest branch). Warnings pinned to the field."""
        graph = graph_selectors.graph_get(name=name, user=request.user, latest_manifest=False)
        version = graph_selectors.version_get(graph=graph, number=number)
        return Response(services.budget_check(graph=graph, version=version, user=request.user))
