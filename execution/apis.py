"""REST API of test runs and the condition evaluator (environments: environment_apis)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.pagination import PageNumberPagination
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param, replace_query_param
from rest_framework.views import APIView

from config.exceptions import BadRequest, NotFound, TooDeep
from config.nesting import nesting_exceeds
from config.pagination import paginate, paginated
from config.params import MAX_DB_INT, DbIntegerField, VersionRefField, parse_db_int
from config.types import AuthedRequest as Request
from execution import events, selectors, tracing
from execution.engine.conditions import evaluate_condition
from execution.eventlogs import OwnedEventLog
from execution.models import Run
from execution.serializers import (
    RunEventLogSerializer,
    RunOutputSerializer,
    RunStepOutputSerializer,
    RunSummarySerializer,
)
from execution.services import runs
from graphs import selectors as graph_selectors

# Seconds a client refused an event stream (429) waits: streams end with their runs, or after
# RUN_SSE_MAX_SECONDS; the console reads the stored events (?format=json) meanwhile.
SSE_RETRY_AFTER = 5


def _given(params: Mapping[str, str]) -> dict[str, str]:
    """The query parameters that have a value: ``?version=`` filters nothing, as if absent."""
    return {key: value for key, value in params.items() if value != ""}


class ConditionEvaluateApi(APIView):
    """Evaluate a GJSON condition against a document exactly as KServe's router does."""

    class ConditionEvaluateInput(serializers.Serializer):
        document = serializers.JSONField(
            help_text="The JSON document; a string is taken as the raw request text (it may be invalid JSON)"
        )
        condition = serializers.CharField(allow_blank=True, max_length=10_000, trim_whitespace=False)

    @extend_schema(
        operation_id="conditions_evaluate",
        request=ConditionEvaluateInput,
        responses=inline_serializer(
            "ConditionResult",
            {
                "matches": serializers.BooleanField(),
                "value": serializers.JSONField(allow_null=True),
                "raw": serializers.CharField(allow_null=True),
                "reason": serializers.CharField(allow_null=True),
            },
        ),
    )
    def post(self, request: Request) -> Response:
        """Evaluate a GJSON condition against a JSON document exactly as KServe's router does
        (`gjson.GetBytes(doc, condition).Exists()`), with the value it found.
        """
        data = self.ConditionEvaluateInput(data=request.data)
        data.is_valid(raise_exception=True)
        document: Any = data.validated_data["document"]
        if isinstance(document, str):
            text = document  # already text: evaluate it as sent (it may be invalid JSON on purpose)
            if nesting_exceeds(text):  # the body's own check cannot see into this string
                raise TooDeep("The document", path="document")
        else:
            text = json.dumps(document, separators=(",", ":"), ensure_ascii=False)
        result = evaluate_condition(text, data.validated_data["condition"])
        return Response(
            {"matches": result.matches, "value": result.value, "raw": result.raw, "reason": result.reason}
        )


# --- runs ----------------------------------------------------------------------------------------


def _run_response(run: Run, request: Request, code: int = status.HTTP_200_OK) -> Response:
    run = selectors.run_get(run_id=run.pk, user=request.user)
    response = Response(RunOutputSerializer(run).data, status=code)
    response["Location"] = f"/api/runs/{run.pk}/"
    return response


class RunListCreateApi(APIView):
    class Input(serializers.Serializer):
        version = VersionRefField(required=False, help_text="A version number or `latest` (the default)")
        payload = serializers.JSONField(help_text="Any JSON value; a string is the raw request body")
        content_type = serializers.CharField(
            required=False, max_length=200, help_text="Of a raw string payload (default: JSON if it parses)"
        )
        headers = serializers.DictField(
            child=serializers.CharField(max_length=8192, allow_blank=True), required=False
        )
        environment = serializers.CharField(
            required=False,
            max_length=63,
            help_text="Id or name of an environment you may use; default: the system's 'local'",
        )
        seed = serializers.IntegerField(required=False, min_value=0, max_value=2**63 - 1)

    class FilterSerializer(serializers.Serializer):
        version = DbIntegerField(required=False)
        status = serializers.ChoiceField(choices=Run.Status.choices, required=False)
        environment = serializers.CharField(
            required=False, trim_whitespace=False, help_text="Environment id or name"
        )

        def validate_environment(self, value: str) -> int | str:
            """An id when it is all digits (then it must fit a database column), else a name."""
            if not (value.isascii() and value.isdigit()):
                return value
            number = parse_db_int(value)
            if number is None:
                raise serializers.ValidationError(
                    f"environment ids go from 0 to {MAX_DB_INT}, got {value[:40]!r}.", code="invalid-number"
                )
            return number

    @extend_schema(
        operation_id="graphs_runs_list",
        parameters=[FilterSerializer],
        responses=paginated(RunSummarySerializer),
    )
    def get(self, request: Request, name: str) -> Response:
        """The graph's test runs, newest first, filtered by version, status or environment."""
        filters = self.FilterSerializer(data=_given(request.query_params))
        filters.is_valid(raise_exception=True)
        graph = graph_selectors.graph_get(name=name, user=request.user, latest_manifest=False)
        qs = selectors.run_list(graph=graph, user=request.user, **filters.validated_data)
        return paginate(request, self, qs, RunSummarySerializer)

    @extend_schema(
        operation_id="graphs_runs_create",
        request=Input,
        parameters=[
            OpenApiParameter(
                "Idempotency-Key",
                str,
                OpenApiParameter.HEADER,
                description="A retried POST with the same key returns the same run",
            )
        ],
        responses={202: RunOutputSerializer},
    )
    def post(self, request: Request, name: str) -> Response:
        """Start a test run of a version (default: the latest) in an environment you may use
        (default: `local`). Answers 202 at once with the queued run; follow it with the event
        stream. A version with errors answers 422. An `Idempotency-Key` header makes a retried
        request return the same run. 429 (with Retry-After) when you have
        `RUN_MAX_IN_FLIGHT_PER_USER` runs queued or running already.
        """
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        graph = graph_selectors.graph_get(name=name, user=request.user)
        if "version" in values:
            version = graph_selectors.version_get(graph=graph, number=values["version"])
        elif graph.latest_version is not None:
            version = graph.latest_version
        else:
            raise NotFound(f"Graph {graph.name!r} has no versions to run.")
        environment = (
            selectors.environment_find(ref=values["environment"], user=request.user)
            if values.get("environment")
            else None
        )
        key = request.headers.get("Idempotency-Key")
        if key is not None and not 0 < len(key) <= 200:
            raise BadRequest("Idempotency-Key must be 1 to 200 characters.")
        run, _ = runs.run_create(
            graph=graph,
            version=version,
            user=request.user,
            payload=values["payload"],
            content_type=values.get("content_type"),
            headers=values.get("headers"),
            environment=environment,
            seed=values.get("seed"),
            idempotency_key=key,
            capped=True,  # one user's fair share of the workers (RUN_MAX_IN_FLIGHT_PER_USER)
        )
        return _run_response(run, request, status.HTTP_202_ACCEPTED)


class RunDetailApi(APIView):
    @extend_schema(operation_id="runs_retrieve", responses=RunOutputSerializer)
    def get(self, request: Request, run_id: uuid.UUID) -> Response:
        """A run: its status, the graph's response (status, content type, body), and the trace of
        every step call (request, response, status, latency, route decisions). Secret request
        headers are redacted.
        """
        return Response(RunOutputSerializer(selectors.run_get(run_id=run_id, user=request.user)).data)


_OTLP_TRACE = inline_serializer(
    "OtlpTrace",
    {
        "resourceSpans": serializers.ListField(
            child=serializers.DictField(),
            help_text="OTLP JSON (ExportTraceServiceRequest): one resource, one scope, the run's spans",
        )
    },
)


class RunTraceApi(APIView):
    @extend_schema(operation_id="runs_trace", responses=_OTLP_TRACE)
    def get(self, request: Request, run_id: uuid.UUID) -> Response:
        """A run's trace as OTLP JSON, loadable into any tracing tool: a span for the run, for each
        node invocation and for each step call, nested as they ran, with the graph, version, node,
        step, target, status, bytes in and out and the route taken as attributes. The trace id is
        the run's id without dashes; a step's span id is the parent id its server received in
        `traceparent`. Derived from the run's stored events, so it is there for every run, also
        one still running (its calls in flight end at the last event, marked unfinished).
        """
        run = selectors.run_get(run_id=run_id, user=request.user, with_steps=False)
        return Response(tracing.run_trace_otlp(run))


class StepPagination(PageNumberPagination):
    """The lists' pages (``?page=``, 50 a page), and ``?page_size=`` up to 500: a 10,000-step run
    is 20 requests of a few hundred KiB for a client that wants all of it."""

    page_size_query_param = "page_size"
    max_page_size = 500


class RunStepListApi(APIView):
    @extend_schema(
        operation_id="runs_steps_list",
        parameters=[
            OpenApiParameter("page", int, description="the page (from 1)"),
            OpenApiParameter("page_size", int, description="steps a page (default 50, at most 500)"),
        ],
        responses=paginated(RunStepOutputSerializer),
    )
    def get(self, request: Request, run_id: uuid.UUID) -> Response:
        """Every step of a run in trace order (attempt, then the order they began), paged: the
        run's detail embeds only the first ones."""
        if not selectors.run_exists(run_id=run_id, user=request.user):
            raise NotFound(f"There is no run {run_id}.")
        paginator = StepPagination()
        page = paginator.paginate_queryset(selectors.run_steps(run_id=run_id), request, view=self)
        return paginator.get_paginated_response(RunStepOutputSerializer(page, many=True).data)


class RunRerunApi(APIView):
    @extend_schema(operation_id="runs_rerun", request=None, responses={202: RunOutputSerializer})
    def post(self, request: Request, run_id: uuid.UUID) -> Response:
        """Run the same request on the same version and environment again, as a new run (202).
        Redacted secret headers are not resent by another user. 429 as for a new run.
        """
        run = selectors.run_get(run_id=run_id, user=request.user, with_steps=False)
        return _run_response(runs.run_rerun(run=run, user=request.user), request, status.HTTP_202_ACCEPTED)


class RunCancelApi(APIView):
    @extend_schema(operation_id="runs_cancel", request=None, responses={202: RunOutputSerializer})
    def post(self, request: Request, run_id: uuid.UUID) -> Response:
        """Cancel a queued or running run (202); its in-flight step calls are cancelled and it ends
        `cancelled`. The run's starter, staff, or anyone who may save the graph.
        """
        run = selectors.run_get(run_id=run_id, user=request.user, with_steps=False)
        return _run_response(runs.run_cancel(run=run, user=request.user), request, status.HTTP_202_ACCEPTED)


class EventStreamRenderer(BaseRenderer):
    """Lets content negotiation accept ``text/event-stream``; errors are still rendered as JSON."""

    media_type = "text/event-stream"
    format = "sse"
    charset = "utf-8"

    def render(
        self, data: Any, accepted_media_type: str | None = None, renderer_context: Any = None
    ) -> bytes:
        return json.dumps(data).encode() if data is not None else b""


def _wants_json(request: Request) -> bool:
    """``?format=json``, or an Accept header that asks for JSON and not for an event stream."""
    if request.query_params.get("format") == "json":
        return True
    accept = request.headers.get("Accept", "")
    return "application/json" in accept and "text/event-stream" not in accept


class EventsQuery(serializers.Serializer):
    last_event_id = DbIntegerField(
        required=False, help_text="Send the events after this one (the Last-Event-ID header wins)"
    )
    after = DbIntegerField(required=False, help_text="`?format=json`: the same as `last_event_id`")
    limit = serializers.IntegerField(
        required=False,
        min_value=1,
        help_text="`?format=json`: the most events a page holds (default RUN_EVENTS_PAGE_SIZE, "
        "at most RUN_EVENTS_PAGE_MAX)",
    )


def event_log_schema(operation_id: str, log_serializer: type[serializers.Serializer], **extra: Any) -> Any:
    """The OpenAPI description of an event log view (see :func:`event_log_response`): its query,
    the Last-Event-ID header, and the two answers, the stream and the JSON listing."""
    return extend_schema(
        operation_id=operation_id,
        parameters=[
            EventsQuery,
            OpenApiParameter("Last-Event-ID", int, OpenApiParameter.HEADER),
            OpenApiParameter(
                "format",
                str,
                enum=["json"],
                description="the stored events as JSON, a page at a time (see `after`, `limit` and the answer's `next`)",
            ),
        ],
        responses={
            (200, "text/event-stream"): OpenApiTypes.STR,
            (200, "application/json"): log_serializer,
        },
        **extra,
    )


class RunEventsApi(APIView):
    """The run's events as Server-Sent Events: the stored ones after ``Last-Event-ID`` (header, or
    ``?last_event_id=``), then live ones, ending after ``run.finished``. With ``?format=json`` (or
    ``Accept: application/json``): a page of the stored ones after it (or after ``?after=``), at most
    ``?limit=``, as one JSON document, with the URL of the next page in ``next``."""

    renderer_classes = [JSONRenderer, EventStreamRenderer]

    @event_log_schema("runs_events", RunEventLogSerializer)
    def get(self, request: Request, run_id: uuid.UUID) -> StreamingHttpResponse | Response:
        if not selectors.run_exists(run_id=run_id, user=request.user):
            raise NotFound(f"There is no run {run_id}.")
        return event_log_response(
            request,
            stream=lambda last: events.open_stream(run_id, last, user_id=request.user.pk),
            listing=lambda last, limit: (
                RunEventLogSerializer(_run_event_log(run_id, request, last, limit)).data
            ),
        )


def _run_event_log(run_id: uuid.UUID, request: Request, after: int, limit: int | None) -> dict[str, Any]:
    log = selectors.run_event_log(run_id=run_id, user=request.user, after=after, limit=limit)
    return {
        "run": run_id,
        "finished": log.finished,
        "events": [events.event_payload(e) for e in log.events],
        "total": log.total,
        "next": next_page_url(request, log.events[-1].seq) if log.more else None,
    }


def next_page_url(request: Request, last_seq: int) -> str:
    """The URL of the event page after ``last_seq``: this one's, with ``after`` moved on."""
    url = remove_query_param(request.build_absolute_uri(), "last_event_id")
    return replace_query_param(url, "after", last_seq)


def event_log_page(
    request: Request, log: OwnedEventLog[Any], owner_id: uuid.UUID, after: int, limit: int | None
) -> dict[str, Any]:
    """One page of a suite run's or load test's stored events after ``after`` (as a run's:
    ``next`` moves on), with whether it has finished and how many it stored."""
    size = selectors.page_size(limit)
    page = list(log.stored_after(owner_id, after, limit=size + 1))
    return {
        "finished": log.is_finished(owner_id),
        "events": [event.payload() for event in page[:size]],
        "total": log.total(owner_id),
        "next": next_page_url(request, page[size - 1].seq) if len(page) > size else None,
    }


def event_log_response(
    request: Request,
    *,
    stream: Callable[[int], Iterator[str]],
    listing: Callable[[int, int | None], Any],
) -> StreamingHttpResponse | Response:
    """The answer of an event log after ``Last-Event-ID`` (the header, or ``?last_event_id=``, or
    ``?after=``): ``listing(last, limit)``, one page, as JSON for ``?format=json`` (or an Accept that
    asks for JSON only), else ``stream(last)`` as Server-Sent Events; 429 when this process has no
    stream slot left."""
    header = request.headers.get("Last-Event-ID")
    params = {k: v for k, v in _given(request.query_params).items() if k != "format"}
    filters = EventsQuery(data={**params, "last_event_id": header} if header else params)
    filters.is_valid(raise_exception=True)
    values = filters.validated_data
    last_event_id = values.get("last_event_id") or values.get("after") or 0
    if _wants_json(request):
        request.accepted_renderer = JSONRenderer()  # whatever the Accept header also allowed
        request.accepted_media_type = "application/json"
        return Response(listing(last_event_id, values.get("limit")))
    try:
        content = stream(last_event_id)
    except events.StreamLimitReached as exc:
        raise exceptions.Throttled(
            wait=SSE_RETRY_AFTER, detail=f"Too many event streams: {exc}. Close one and try again."
        ) from exc
    response = StreamingHttpResponse(content, content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # nginx: do not buffer the stream
    return response
