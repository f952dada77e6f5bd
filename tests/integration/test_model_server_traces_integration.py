"""The demo's real model server (models/server.py, .venv-models) started with an OTLP endpoint, a
real OTLP/HTTP receiver on loopback, and a studio run (API, Redis, Celery worker, engine) whose step
calls that server: the server's span for the step's request is a child of the studio's step span,
in the run's trace; with the environment's trace propagation off it starts a trace of its own."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import KeyValue
from rest_framework.test import APIClient
from runhelpers import wait_for_run

from execution.devtools import demo
from execution.models import Environment
from graphs import services as graph_services

pytestmark = [pytest.mark.integration, pytest.mark.models, pytest.mark.django_db(transaction=True)]

SERVER_KIND = 2  # OTLP's SPAN_KIND_SERVER
MODEL_SERVICE = "studio-demo-models"  # models.server.SERVICE_NAME (that module lives in .venv-models)


@dataclass(frozen=True)
class ReceivedSpan:
    """One span as the model server exported it, with its resource's service.name."""

    service: str
    trace_id: str
    span_id: str
    parent_span_id: str
    name: str
    kind: int
    attributes: dict[str, Any]


def _values(attributes: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in attributes:
        assert isinstance(item, KeyValue)
        kind = item.value.WhichOneof("value")
        out[item.key] = getattr(item.value, kind) if kind else None
    return out


class OtlpReceiver(ThreadingHTTPServer):
    """A small OTLP/HTTP (protobuf) trace receiver: POST /v1/traces, the spans kept decoded."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _OtlpHandler)
        self.spans: list[ReceivedSpan] = []
        self.paths: list[str] = []
        self.changed = threading.Condition()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def add(self, path: str, request: ExportTraceServiceRequest) -> None:
        with self.changed:
            self.paths.append(path)
            for resource_spans in request.resource_spans:
                service = str(_values(resource_spans.resource.attributes).get("service.name"))
                for scope_spans in resource_spans.scope_spans:
                    self.spans.extend(
                        ReceivedSpan(
                            service,
                            span.trace_id.hex(),
                            span.span_id.hex(),
                            span.parent_span_id.hex(),
                            span.name,
                            span.kind,
                            _values(span.attributes),
                        )
                        for span in scope_spans.spans
                    )
            self.changed.notify_all()

    def wait_for(self, match: Callable[[ReceivedSpan], bool], timeout: float = 20) -> ReceivedSpan:
        """The one span ``match`` accepts, once it has arrived."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while not (found := [span for span in self.spans if match(span)]):
                left = deadline - time.monotonic()
                if left <= 0:
                    names = sorted({f"{span.name} {span.attributes.get('url.path')}" for span in self.spans})
                    raise AssertionError(f"no such span arrived in {timeout} s; received: {names}")
                self.changed.wait(left)
        (span,) = found
        return span


class _OtlpHandler(BaseHTTPRequestHandler):
    server: OtlpReceiver

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        self.server.add(self.path, request)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def receiver() -> Iterator[OtlpReceiver]:
    server = OtlpReceiver()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def traced_models(receiver: OtlpReceiver, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """models/server.py told where to export its spans by the standard variable alone."""
    from modelkit import model_server

    env = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
        "OTEL_BSP_SCHEDULE_DELAY": "100",  # the SDK's batch delay (ms): spans arrive soon after
    }
    log: Path = tmp_path_factory.mktemp("traced-models") / "server.log"
    with model_server(log, env=env) as url:
        yield url


def run_through(api: APIClient, user: Any, url: str, model: str, *, propagation: bool) -> str:
    """A one-step graph calling ``model`` on the model server, run on the astronaut's photo in an
    environment with trace propagation on or off; the run's id once it succeeded."""
    graph = f"traced-{model}"
    graph_services.graph_create(
        owner=user,
        manifest={
            "apiVersion": "serving.kserve.io/v1alpha1",
            "kind": "InferenceGraph",
            "metadata": {"name": graph},
            "spec": {
                "nodes": {
                    "root": {
                        "routerType": "Sequence",
                        "steps": [{"name": "detect", "serviceUrl": f"{url}/v1/models/{model}:predict"}],
                    }
                }
            },
        },
    )
    Environment.objects.create(
        name="models-env",
        url_template="http://x/{name}",
        allow_loopback=True,
        visibility="shared",
        trace_propagation=propagation,
    )
    response = api.post(
        f"/api/graphs/{graph}/runs/",
        {"payload": demo.photo_request(), "environment": "models-env"},
        format="json",
    )
    assert response.status_code == 202, response.json()
    run = wait_for_run(response.json()["id"], timeout=60)
    assert run.status == "succeeded", run.error
    return str(run.pk)


def studio_step_span(api: APIClient, run_id: str) -> dict[str, Any]:
    """The studio's span of the run's one step call (from its trace, as the worker exports it)."""
    response = api.get(f"/api/runs/{run_id}/trace/")
    assert response.status_code == 200
    (resource,) = response.json()["resourceSpans"]
    (scope,) = resource["scopeSpans"]
    (step,) = [span for span in scope["spans"] if span["name"] == "step root/detect"]
    return dict(step)


def predict_span_of(model: str) -> Callable[[ReceivedSpan], bool]:
    """The model server's SERVER span of a predict request for ``model``."""
    path = f"/v1/models/{model}:predict"
    return lambda span: span.kind == SERVER_KIND and span.attributes.get("url.path") == path


def test_the_model_servers_span_is_a_child_of_the_studios_step_span(
    worker: Any, api: APIClient, user: Any, traced_models: str, receiver: OtlpReceiver
) -> None:
    run_id = run_through(api, user, traced_models, "face-detector", propagation=True)
    step = studio_step_span(api, run_id)
    trace_id = run_id.replace("-", "")
    assert step["traceId"] == trace_id

    served = receiver.wait_for(predict_span_of("face-detector"))
    assert served.service == MODEL_SERVICE
    assert served.attributes["http.request.method"] == "POST"
    assert served.attributes["http.response.status_code"] == 200
    assert served.trace_id == trace_id, "the model server's span is not in the run's trace"
    assert served.parent_span_id == step["spanId"], "the model server's span is not under the step's"
    assert "/v1/traces" in receiver.paths

    # What FastAPI does inside that request (the endpoint that called the model) nests under it.
    inner = [span for span in receiver.spans if span.parent_span_id == served.span_id]
    assert "fastapi.endpoint" in {span.name for span in inner}
    assert {span.trace_id for span in inner} == {trace_id}


def test_without_trace_propagation_the_model_server_starts_its_own_trace(
    worker: Any, api: APIClient, user: Any, traced_models: str, receiver: OtlpReceiver
) -> None:
    run_id = run_through(api, user, traced_models, "cat-face-detector", propagation=False)
    step = studio_step_span(api, run_id)  # the run still has its trace

    served = receiver.wait_for(predict_span_of("cat-face-detector"))
    assert served.service == MODEL_SERVICE
    assert served.parent_span_id == "", "the model server's span has a parent the studio did not send"
    assert served.trace_id != run_id.replace("-", "")
    assert served.trace_id != step["traceId"]
