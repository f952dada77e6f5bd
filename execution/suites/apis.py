"""REST API of suite runs: start one for a version, list, read, cancel, follow its events, and
compare two (or start both and compare). Thin: each view validates its input's shape and calls
one selector or service."""

from __future__ import annotations

import uuid
from typing import Any

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    extend_schema,
    extend_schema_field,
    inline_serializer,
)
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
from execution.eventschema import SUITE_EVENTS
from execution.models import Environment
from execution.suites import events as suite_events
from execution.suites import pairs, selectors, services
from execution.suites.models import SuiteCaseResult, SuiteRun
from graphs import selectors as graph_selectors
from graphs.language import issue_dict
from graphs.language.releases import UnknownRelease, get_release
from graphs.models import Graph, GraphVersion

RUN_ID = "7b0f6a4e-3f0e-4a4b-9d55-0c1e2f3a4b5c"
SUITE_ID = "5f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f"
COUNTS_EXAMPLE = {"total": 3, "passed": 2, "failed": 1, "error": 0, "cancelled": 0, "finished": 3}
FAILURE_EXAMPLE = {
    "index": 1,
    "kind": "path",
    "passed": False,
    "message": "predictions.0.label: expected 'cat', got 'dog'",
    "expected": "cat",
    "actual": "dog",
    "diff": [{"op": "replace", "path": "", "a": "cat", "b": "dog"}],
}
SUITE_EXAMPLE: dict[str, Any] = {
    "id": SUITE_ID,
    "graph": "animal-switch",
    "version": 3,
    "environment": "local",
    "status": "failed",
    "counts": COUNTS_EXAMPLE,
    "cases_digest": "9c1185a5c5e9fc54612808977ee8f548b2258d31c3e3a1b2a4a1e8f2b7d3c0aa",
    "concurrency": 8,
    "created_by": "alice",
    "created_at": "2026-11-30T22:10:00Z",
    "started_at": "2026-11-30T22:10:00Z",
    "finished_at": "2026-11-30T22:10:02Z",
    "duration_ms": 1843.2,
    "budgets": {
        "passed": True,
        "checks": [{"target": "graph", "budget_ms": 250.0, "measured_ms": 41.5, "passed": True}],
    },
    "results": [
        {
            "case": 12,
            "name": "a cat goes to the cat model",
            "outcome": "failed",
            "run": RUN_ID,
            "status_code": 200,
            "duration_ms": 41.5,
            "failures": [FAILURE_EXAMPLE],
            "error": None,
        }
    ],
}


class SuiteCaseResultSerializer(serializers.ModelSerializer):
    case = serializers.IntegerField(source="case_ref", help_text="The test case's id")
    run = serializers.UUIDField(source="run_id", allow_null=True, help_text="The run that carried it")
    failures = serializers.ListField(
        child=serializers.JSONField(),
        help_text="Each failed expectation: index, kind, message, expected, actual, diff",
    )

    class Meta:
        model = SuiteCaseResult
        fields = ["case", "name", "outcome", "run", "status_code", "duration_ms", "failures", "error"]


class SuiteRunSummarySerializer(serializers.ModelSerializer):
    """A suite run without its per-case results."""

    graph = serializers.CharField(source="graph.name")
    version = serializers.IntegerField(source="version.number")
    environment = serializers.SerializerMethodField()
    counts = serializers.SerializerMethodField()
    created_by = serializers.CharField(source="created_by.username")

    class Meta:
        model = SuiteRun
        fields = [
            "id",
            "graph",
            "version",
            "environment",
            "kserve_version",
            "status",
            "counts",
            "cases_digest",
            "concurrency",
            "cancel_requested",
            "created_by",
            "created_at",
            "started_at",
            "finished_at",
            "duration_ms",
            "budgets",
        ]

    def get_environment(self, obj: SuiteRun) -> str | None:
        return obj.environment_name or None

    @extend_schema_field(
        inline_serializer(
            "SuiteCounts",
            {
                k: serializers.IntegerField()
                for k in ("total", "passed", "failed", "error", "cancelled", "finished")
            },
        )
    )
    def get_counts(self, obj: SuiteRun) -> dict[str, int]:
        return obj.counts()


class SuiteRunSerializer(SuiteRunSummarySerializer):
    results = SuiteCaseResultSerializer(many=True, read_only=True)

    class Meta(SuiteRunSummarySerializer.Meta):
        fields = [*SuiteRunSummarySerializer.Meta.fields, "results"]


def _suite_response(suite: SuiteRun, request: Request, code: int = status.HTTP_200_OK) -> Response:
    suite = selectors.suite_get(suite_id=suite.pk, user=request.user)
    response = Response(SuiteRunSerializer(suite).data, status=code)
    response["Location"] = f"/api/suite-runs/{suite.pk}/"
    return response


def _version(graph: Graph, number: VersionRef, field: str) -> GraphVersion:
    """The graph's version ``number`` (or ``latest``); a number it does not have is a bad request (400) here."""
    try:
        return graph_selectors.version_get(graph=graph, number=number)
    except NotFound as exc:
        raise BadRequest(
            exc.detail,
            issues=[issue_dict("suite.version-unknown", exc.detail, path=field)],
        ) from None


def _environment(ref: str | None, request: Request) -> Environment | None:
    return run_selectors.environment_find(ref=ref, user=request.user) if ref else None


class SuiteRunListCreateApi(APIView):
    class SuiteRunInput(serializers.Serializer):
        version = VersionRefField(help_text="The version to test: a number or `latest`")
        environment = serializers.CharField(
            required=False,
            max_length=63,
            help_text="Id or name: every case runs there. Default: each case in its own, else `local`",
        )
        cases = serializers.ListField(
            child=serializers.IntegerField(min_value=1, max_value=MAX_DB_INT),
            required=False,
            help_text="Ids of the cases to run; default: all of the graph's cases",
        )

    class FilterSerializer(serializers.Serializer):
        version = DbIntegerField(required=False, help_text="Only this version's suite runs")

    @extend_schema(
        operation_id="graphs_suite_runs_list",
        parameters=[FilterSerializer],
        responses=paginated(SuiteRunSummarySerializer),
    )
    def get(self, request: Request, name: str) -> Response:
        """The graph's suite runs, newest first, as summaries (counts, no per-case results)."""
        filters = self.FilterSerializer(data=_given(request.query_params))
        filters.is_valid(raise_exception=True)
        graph = graph_selectors.graph_get(name=name, user=request.user)
        qs = selectors.suite_list(graph=graph, user=request.user, **filters.validated_data)
        return paginate(request, self, qs.select_related("created_by"), SuiteRunSummarySerializer)

    @extend_schema(
        operation_id="graphs_suite_runs_create",
        request=SuiteRunInput,
        responses={202: SuiteRunSerializer},
        examples=[
            OpenApiExample("Every case", value={"version": 3, "environment": "local"}, request_only=True),
            OpenApiExample("Two cases", value={"version": 3, "cases": [12, 15]}, request_only=True),
            OpenApiExample("Started", value=SUITE_EXAMPLE, response_only=True, status_codes=["202"]),
        ],
    )
    def post(self, request: Request, name: str) -> Response:
        """Run the graph's test cases (all, or `cases`) against a version: each case becomes a run
        on the workers, a few at a time. Answers 202 at once; follow the events or poll the suite
        run. 409 when the graph has no cases; 400 for an unknown version, environment or case id;
        429 (with Retry-After) when you have `SUITE_MAX_IN_FLIGHT_PER_USER` suite runs in flight."""
        data = self.SuiteRunInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        graph = graph_selectors.graph_get(name=name, user=request.user)
        version = _version(graph, values["version"], "version")
        suite = services.suite_start(
            graph=graph,
            version=version,
            user=request.user,
            environment=_environment(values.get("environment"), request),
            case_ids=values.get("cases"),
            slots=1,  # one user's fair share of the workers (SUITE_MAX_IN_FLIGHT_PER_USER)
        )
        return _suite_response(suite, request, status.HTTP_202_ACCEPTED)


class SuiteRunDetailApi(APIView):
    @extend_schema(
        operation_id="suite_runs_retrieve",
        responses=SuiteRunSerializer,
        examples=[OpenApiExample("A failed suite run", value=SUITE_EXAMPLE, response_only=True)],
    )
    def get(self, request: Request, suite_id: uuid.UUID) -> Response:
        """A suite run: status, counts, duration, and each case's outcome with its run and every
        failed expectation (expected, actual, JSON diff)."""
        return Response(SuiteRunSerializer(selectors.suite_get(suite_id=suite_id, user=request.user)).data)


class SuiteRunCancelApi(APIView):
    @extend_schema(operation_id="suite_runs_cancel", request=None, responses={202: SuiteRunSerializer})
    def post(self, request: Request, suite_id: uuid.UUID) -> Response:
        """Cancel a suite run (202): pending cases are dropped and running ones cancelled; it ends
        `cancelled`, and `counts.finished` says how many cases finished before. Its starter, staff,
        or anyone who may save the graph."""
        suite = selectors.suite_get(suite_id=suite_id, user=request.user, with_results=False)
        suite = services.suite_cancel(suite=suite, user=request.user)
        return _suite_response(suite, request, status.HTTP_202_ACCEPTED)


class SuiteEventSerializer(serializers.Serializer):
    """One stored suite run event, exactly as an SSE ``data:`` line carries it (``seq`` is the SSE id)."""

    suite = serializers.UUIDField()
    seq = serializers.IntegerField()
    type = serializers.ChoiceField(
        choices=SUITE_EVENTS.names, help_text="declared in execution/eventschema.py"
    )
    created_at = serializers.DateTimeField(allow_null=True)
    data = serializers.JSONField()  # type: ignore[assignment]


class SuiteEventLogSerializer(serializers.Serializer):
    """``GET /api/suite-runs/{id}/events/?format=json``: the stored events in order, and whether
    ``suite.finished`` is among them."""

    suite = serializers.UUIDField()
    finished = serializers.BooleanField(help_text="whether the suite run's terminal event is stored")
    events = SuiteEventSerializer(many=True)
    total = serializers.IntegerField(help_text="how many events the suite run has stored (the last seq)")
    next = serializers.CharField(
        allow_null=True, help_text="the next page (the events after this page's last), null on the last page"
    )


class SuiteRunEventsApi(APIView):
    """The suite run's events as Server-Sent Events, like a run's: the stored ones after
    ``Last-Event-ID`` (header, or ``?last_event_id=``), then live ones, ending after
    ``suite.finished``; with ``?format=json``, a page of the stored ones as one JSON document (as a
    run's: ``after``, ``limit``, ``next``)."""

    renderer_classes = [JSONRenderer, EventStreamRenderer]

    @event_log_schema(
        "suite_runs_events",
        SuiteEventLogSerializer,
        examples=[
            OpenApiExample(
                "A case finished",
                value='id: 4\nevent: case.finished\ndata: {"suite": "' + SUITE_ID + '", "seq": 4, '
                '"type": "case.finished", "created_at": "2026-11-30T22:10:01Z", "data": {"case": 12, '
                '"name": "a cat goes to the cat model", "outcome": "passed", "run": "' + RUN_ID + '", '
                '"failures": [], "error": null, "duration_ms": 41.5, "counts": '
                '{"total": 3, "passed": 1, "failed": 0, "error": 0, "cancelled": 0, "finished": 1}}}\n\n',
                response_only=True,
                status_codes=["200"],
                media_type="text/event-stream",
            )
        ],
    )
    def get(self, request: Request, suite_id: uuid.UUID) -> StreamingHttpResponse | Response:
        """Events: `suite.started` {total}, `case.started` {case, name, run}, `case.finished`
        {case, name, outcome, run, failures, duration_ms, counts}, `suite.finished` {status, counts,
        duration_ms, budgets} (the last one, also after a cancel; budgets: the graph's latency
        budgets judged on the cases, null when it states none)."""
        if not selectors.suite_exists(suite_id=suite_id, user=request.user):
            raise NotFound(f"There is no suite run {suite_id}.")
        return event_log_response(
            request,
            stream=lambda last: suite_events.open_stream(suite_id, last, user_id=request.user.pk),
            listing=lambda last, limit: (
                SuiteEventLogSerializer(
                    {"suite": suite_id, **event_log_page(request, suite_events.LOG, suite_id, last, limit)}
                ).data
            ),
        )


COMPARE_STARTED_EXAMPLE = {
    "a": SUITE_ID,
    "b": "0d9e8f7a-6b5c-4d3e-2f1a-0b9c8d7e6f5a",
    "compare_url": f"/api/suite-runs/compare/?a={SUITE_ID}&b=0d9e8f7a-6b5c-4d3e-2f1a-0b9c8d7e6f5a",
}
_SUMMARY_EXAMPLE = {k: v for k, v in SUITE_EXAMPLE.items() if k != "results"}
COMPARE_EXAMPLE = {
    "a": {**_SUMMARY_EXAMPLE, "version": 2, "status": "passed"},
    "b": _SUMMARY_EXAMPLE,
    "manifest_diff": {"from": 2, "to": 3, "changes": [{"kind": "changed", "path": "spec.nodes.root"}]},
    "cases": [
        {
            "case": 12,
            "name": "a cat goes to the cat model",
            "a": {"outcome": "passed", "run": "1f2e3d4c-5b6a-4978-8695-a4b3c2d1e0f9"},
            "b": {"outcome": "failed", "run": RUN_ID},
            "changed": True,
            "comparison": {
                "same": False,
                "status": [200, 200],
                "duration_ms": [40.1, 41.5],
                "body_diff": [{"op": "replace", "path": "predictions.0.label", "a": "cat", "b": "dog"}],
                "routes": [{"node": "root", "a": ["cat"], "b": ["dog"]}],
                "steps": [
                    {
                        "label": "root/cat",
                        "node": "root",
                        "a": {"status": 200, "outcome": "ok", "duration_ms": 12.0},
                        "b": None,
                        "changed": ["presence"],
                        "request_diff": [],
                        "response_diff": [],
                    }
                ],
            },
        }
    ],
}


def _release_name(values: dict[str, Any], key: str) -> str | None:
    if not values.get(key):
        return None
    try:
        return get_release(values[key]).name
    except UnknownRelease as exc:
        raise BadRequest(
            str(exc),
            issues=[{"severity": "error", "code": "release.unknown", "path": key, "message": str(exc)}],
        ) from None


class SuiteRunCompareStartApi(APIView):
    class SuiteCompareInput(serializers.Serializer):
        a = VersionRefField(help_text="Version A (the before): a number or `latest`")
        b = VersionRefField(help_text="Version B (the after): a number or `latest`")
        environment = serializers.CharField(required=False, max_length=63, help_text="Id or name")
        kserve_version_a = serializers.CharField(
            required=False,
            max_length=16,
            help_text="Run side A as this KServe release (default: its environment's)",
        )
        kserve_version_b = serializers.CharField(
            required=False,
            max_length=16,
            help_text="Run side B as this KServe release (default: its environment's)",
        )

    @extend_schema(
        operation_id="graphs_suite_runs_compare",
        request=SuiteCompareInput,
        responses={
            202: inline_serializer(
                "SuiteCompareStarted",
                {
                    "a": serializers.UUIDField(),
                    "b": serializers.UUIDField(),
                    "compare_url": serializers.CharField(),
                },
            )
        },
        examples=[
            OpenApiExample(
                "Version 2 against 3", value={"a": 2, "b": 3, "environment": "local"}, request_only=True
            ),
            OpenApiExample(
                "Started", value=COMPARE_STARTED_EXAMPLE, response_only=True, status_codes=["202"]
            ),
        ],
    )
    def post(self, request: Request, name: str) -> Response:
        """Start suite runs of every case on versions `a` and `b` (one seed, so Splitters draw
        alike) and answer 202 with both ids and the URL of their comparison, ready once both end.
        429 (with Retry-After), nothing started, when you may not have two more suite runs in
        flight (`SUITE_MAX_IN_FLIGHT_PER_USER`)."""
        data = self.SuiteCompareInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        graph = graph_selectors.graph_get(name=name, user=request.user)
        a, b = (_version(graph, values[k], k) for k in ("a", "b"))
        releases = (_release_name(values, "kserve_version_a"), _release_name(values, "kserve_version_b"))
        first, second = pairs.suite_start_pair(
            releases=releases,
            graph=graph,
            a=a,
            b=b,
            user=request.user,
            environment=_environment(values.get("environment"), request),
        )
        return Response(
            {
                "a": str(first.pk),
                "b": str(second.pk),
                "compare_url": f"/api/suite-runs/compare/?a={first.pk}&b={second.pk}",
            },
            status=status.HTTP_202_ACCEPTED,
        )


class SuiteRunCompareApi(APIView):
    class FilterSerializer(serializers.Serializer):
        a = serializers.UUIDField(help_text="Suite run A (the before)")
        b = serializers.UUIDField(help_text="Suite run B (the after)")

    @extend_schema(
        operation_id="suite_runs_compare",
        parameters=[FilterSerializer],
        responses={200: OpenApiTypes.OBJECT, 202: OpenApiTypes.OBJECT},
        examples=[
            OpenApiExample("Both finished", value=COMPARE_EXAMPLE, response_only=True, status_codes=["200"]),
            OpenApiExample(
                "Still running",
                value={
                    "status": "pending",
                    "a": _SUMMARY_EXAMPLE,
                    "b": {**_SUMMARY_EXAMPLE, "status": "running"},
                },
                response_only=True,
                status_codes=["202"],
            ),
        ],
    )
    def get(self, request: Request) -> Response:
        """Two suite runs of one graph compared case by case and step by step (status, route,
        latency, each step's request and response as a JSON diff), with the semantic diff of their
        versions. 202 with `status: pending` while either is unfinished."""
        filters = self.FilterSerializer(data=_given(request.query_params))
        filters.is_valid(raise_exception=True)
        a, b = selectors.suite_pair(user=request.user, **filters.validated_data)
        summaries = {"a": SuiteRunSummarySerializer(a).data, "b": SuiteRunSummarySerializer(b).data}
        if not (a.is_terminal and b.is_terminal):
            return Response({"status": "pending", **summaries}, status=status.HTTP_202_ACCEPTED)
        return Response({**summaries, **selectors.suite_compare(a=a, b=b)})
