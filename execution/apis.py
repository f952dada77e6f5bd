"""REST API of test runs, environments and the condition evaluator."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema, inline_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from config.exceptions import BadRequest, NotFound, TooDeep
from config.nesting import nesting_exceeds
from config.pagination import paginate, paginated
from config.params import MAX_DB_INT, DbIntegerField, parse_db_int
from config.types import AuthedRequest as Request
from execution import events, selectors
from execution.engine.conditions import evaluate_condition
from execution.models import Environment, Run
from execution.serializers import (
    EnvironmentOutputSerializer,
    RunEventLogSerializer,
    RunOutputSerializer,
    RunSummarySerializer,
)
from execution.services import environments, runs
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


# --- environments --------------------------------------------------------------------------------


class _StringMapField(serializers.DictField):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(child=serializers.CharField(max_length=2000), **kwargs)


class EnvironmentInput(serializers.Serializer):
    name = serializers.RegexField(r"^[A-Za-z0-9][-A-Za-z0-9_.]*$", max_length=63)
    description = serializers.CharField(required=False, allow_blank=True, max_length=10_000)
    service_urls = _StringMapField(required=False)
    url_template = serializers.CharField(required=False, max_length=500)
    namespace = serializers.CharField(required=False, allow_blank=True, max_length=63)
    # Blank entries pass here so that the service explains why it refuses them.
    propagate_headers = serializers.ListField(
        child=serializers.CharField(max_length=500, allow_blank=True, trim_whitespace=False),
        required=False,
        max_length=100,
    )
    step_timeout = serializers.FloatField(required=False, min_value=0.001)
    deadline = serializers.FloatField(required=False, min_value=0.001)
    allow_hosts = serializers.ListField(
        child=serializers.CharField(max_length=253), required=False, max_length=100
    )
    allow_networks = serializers.ListField(
        child=serializers.CharField(max_length=64), required=False, max_length=100
    )
    allow_loopback = serializers.BooleanField(required=False)
    allow_private = serializers.BooleanField(required=False)
    visibility = serializers.ChoiceField(
        choices=Environment.Visibility.choices,
        required=False,
        help_text="private (default): only you (and staff) see and use it; shared (staff only): everyone",
    )
    secret_headers = serializers.ListField(
        child=serializers.CharField(max_length=200), required=False, max_length=100
    )

    def validate_secret_headers(self, value: list[str]) -> list[str]:
        return [name.lower() for name in value]  # HTTP header names are case-insensitive


class EnvironmentListCreateApi(APIView):
    @extend_schema(operation_id="environments_list", responses=paginated(EnvironmentOutputSerializer))
    def get(self, request: Request) -> Response:
        """The environments you may use for test runs: yours, the shared ones and the system's
        default (`local`).
        """
        return paginate(
            request, self, selectors.environment_list(user=request.user), EnvironmentOutputSerializer
        )

    @extend_schema(
        operation_id="environments_create",
        request=EnvironmentInput,
        responses={201: EnvironmentOutputSerializer},
    )
    def post(self, request: Request) -> Response:
        """Create an environment: where test runs send their step calls (service map, URL template),
        which client headers they propagate, their timeouts, and the private or loopback networks
        they may reach. Private to you unless staff shares it.
        """
        data = EnvironmentInput(data=request.data)
        data.is_valid(raise_exception=True)
        environment = environments.environment_create(owner=request.user, **data.validated_data)
        return Response(EnvironmentOutputSerializer(environment).data, status=status.HTTP_201_CREATED)


class EnvironmentDetailApi(APIView):
    @extend_schema(operation_id="environments_retrieve", responses=EnvironmentOutputSerializer)
    def get(self, request: Request, pk: int) -> Response:
        """One environment you may use, with its service map, header patterns, timeouts and networks."""
        return Response(EnvironmentOutputSerializer(selectors.environment_get(pk=pk, user=request.user)).data)

    @extend_schema(
        operation_id="environments_update",
        request=EnvironmentInput(partial=True),
        responses=EnvironmentOutputSerializer,
    )
    def patch(self, request: Request, pk: int) -> Response:
        """Change an environment. The owner (while private) or staff; every change is audited."""
        data = EnvironmentInput(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        environment = selectors.environment_get(pk=pk, user=request.user)
        environment = environments.environment_update(
            environment=environment, actor=request.user, **data.validated_data
        )
        return Response(EnvironmentOutputSerializer(environment).data)

    @extend_schema(operation_id="environments_destroy", responses={204: None})
    def delete(self, request: Request, pk: int) -> Response:
        """Delete an environment. The owner (while private) or staff; the system's default cannot be
        deleted.
        """
        environment = selectors.environment_get(pk=pk, user=request.user)
        environments.environment_delete(environment=environment, actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ServiceCatalogEntry(serializers.Serializer):
    name = serializers.CharField(help_text="A serviceName")
    graph_count = serializers.IntegerField(
        help_text="How many graphs (not archived) call it in their latest version"
    )
    environments = serializers.ListField(
        child=serializers.CharField(), help_text="The environments you may use that map it to a URL"
    )


class ServiceCatalogOutput(serializers.Serializer):
    services = ServiceCatalogEntry(many=True, help_text="The most used first, then by name")
    truncated = serializers.BooleanField(
        help_text=f"More names are known than the {selectors.SERVICE_CATALOG_LIMIT} answered"
    )


SERVICE_CATALOG_EXAMPLE = {
    "services": [
        {"name": "classifier", "graph_count": 3, "environments": ["staging"]},
        {"name": "summarizer", "graph_count": 1, "environments": []},
        {"name": "translator", "graph_count": 0, "environments": ["staging"]},
    ],
    "truncated": False,
}


class ServiceCatalogApi(APIView):
    @extend_schema(
        operation_id="services_list",
        responses=ServiceCatalogOutput,
        examples=[OpenApiExample("Three services", value=SERVICE_CATALOG_EXAMPLE, response_only=True)],
    )
    def get(self, request: Request) -> Response:
        """The services the studio knows, for the editor's palette: the serviceNames the latest
        versions of the graphs (not archived) call, with how many graphs call each, and those mapped
        in the service maps of the environments you may use, with which environments map each. The
        most used first, at most 500.
        """
        catalog = selectors.service_catalog(user=request.user)
        return Response(ServiceCatalogOutput(catalog).data)


# --- runs ----------------------------------------------------------------------------------------


def _run_response(run: Run, request: Request, code: int = status.HTTP_200_OK) -> Response:
    run = selectors.run_get(run_id=run.pk, user=request.user)
    response = Response(RunOutputSerializer(run).data, status=code)
    response["Location"] = f"/api/runs/{run.pk}/"
    return response


class RunListCreateApi(APIView):
    class Input(serializers.Serializer):
        version = serializers.IntegerField(required=False, min_value=1)
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
        request return the same run.
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


class RunRerunApi(APIView):
    @extend_schema(operation_id="runs_rerun", request=None, responses={202: RunOutputSerializer})
    def post(self, request: Request, run_id: uuid.UUID) -> Response:
        """Run the same request on the same version and environment again, as a new run (202).
        Redacted secret headers are not resent by another user.
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


def event_log_schema(operation_id: str, log_serializer: type[serializers.Serializer], **extra: Any) -> Any:
    """The OpenAPI description of an event log view (see :func:`event_log_response`): its query,
    the Last-Event-ID header, and the two answers, the stream and the JSON listing."""
    return extend_schema(
        operation_id=operation_id,
        parameters=[
            EventsQuery,
            OpenApiParameter("Last-Event-ID", int, OpenApiParameter.HEADER),
            OpenApiParameter("format", str, enum=["json"], description="the stored events as JSON, at once"),
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
    ``Accept: application/json``): the stored ones after it, as one JSON document, at once."""

    renderer_classes = [JSONRenderer, EventStreamRenderer]

    @event_log_schema("runs_events", RunEventLogSerializer)
    def get(self, request: Request, run_id: uuid.UUID) -> StreamingHttpResponse | Response:
        if not selectors.run_exists(run_id=run_id, user=request.user):
            raise NotFound(f"There is no run {run_id}.")
        return event_log_response(
            request,
            stream=lambda last: events.open_stream(run_id, last, user_id=request.user.pk),
            listing=lambda last: RunEventLogSerializer(_run_event_log(run_id, request, last)).data,
        )


def _run_event_log(run_id: uuid.UUID, request: Request, after: int) -> dict[str, Any]:
    log = selectors.run_event_log(run_id=run_id, user=request.user, after=after)
    return {"run": run_id, "finished": log.finished, "events": [events.event_payload(e) for e in log.events]}


def event_log_response(
    request: Request, *, stream: Callable[[int], Iterator[str]], listing: Callable[[int], Any]
) -> StreamingHttpResponse | Response:
    """The answer of an event log after ``Last-Event-ID`` (the header, or ``?last_event_id=``):
    ``listing(last)`` as JSON for ``?format=json`` (or an Accept that asks for JSON only), else
    ``stream(last)`` as Server-Sent Events; 429 when this process has no stream slot left."""
    header = request.headers.get("Last-Event-ID")
    params = {k: v for k, v in _given(request.query_params).items() if k != "format"}
    filters = EventsQuery(data={"last_event_id": header} if header else params)
    filters.is_valid(raise_exception=True)
    last_event_id = filters.validated_data.get("last_event_id") or 0
    if _wants_json(request):
        request.accepted_renderer = JSONRenderer()  # whatever the Accept header also allowed
        request.accepted_media_type = "application/json"
        return Response(listing(last_event_id))
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
