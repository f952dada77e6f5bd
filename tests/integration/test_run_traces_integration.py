"""Every run is a trace: the worker sends a W3C ``traceparent`` to every step (per the environment),
``GET /api/runs/{id}/trace/`` answers the run's spans as OTLP JSON, and with an OTLP endpoint
configured the worker exports them over OTLP/HTTP to a real receiver on loopback."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from rest_framework.test import APIClient
from runhelpers import wait_for_run
from stepserver import Reply, StepServer

from execution import tracing
from execution.engine.tracecontext import parse_traceparent
from execution.models import Environment
from graphs import services as graph_services


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def steps() -> Iterator[StepServer]:
    with StepServer() as server:
        server.route("/detect", Reply(json={"predictions": [1]}))
        server.route("/a", Reply(json={"predictions": ["a"]}, delay=0.05))
        server.route("/b", Reply(json={"predictions": ["b"]}, delay=0.05))
        yield server


def make_graph(user: Any, steps: StepServer, name: str = "traced") -> None:
    """A Sequence (detect, then a nodeName step into an Ensemble of two parallel steps)."""
    graph_services.graph_create(
        owner=user,
        manifest={
            "apiVersion": "serving.kserve.io/v1alpha1",
            "kind": "InferenceGraph",
            "metadata": {"name": name},
            "spec": {
                "nodes": {
                    "root": {
                        "routerType": "Sequence",
                        "steps": [
                            {"name": "detect", "serviceUrl": steps.url("/detect")},
                            {"name": "both", "nodeName": "pair"},
                        ],
                    },
                    "pair": {
                        "routerType": "Ensemble",
                        "steps": [
                            {"name": "a", "serviceUrl": steps.url("/a")},
                            {"name": "b", "serviceUrl": steps.url("/b")},
                        ],
                    },
                }
            },
        },
    )


def make_env(name: str = "traced-env", **extra: Any) -> Environment:
    fields = {"visibility": "shared", **extra}
    return Environment.objects.create(
        name=name, url_template="http://x/{name}", allow_loopback=True, **fields
    )


def start(api: APIClient, graph: str, env: str, **body: Any) -> str:
    response = api.post(
        f"/api/graphs/{graph}/runs/",
        {"payload": {"instances": [1]}, "environment": env, **body},
        format="json",
    )
    assert response.status_code == 202, response.json()
    run_id = response.json()["id"]
    assert wait_for_run(run_id).status == "succeeded"
    return str(run_id)


def otlp_spans(body: dict[str, Any]) -> list[dict[str, Any]]:
    (resource,) = body["resourceSpans"]
    (scope,) = resource["scopeSpans"]
    return list(scope["spans"])


def attrs(span: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for item in span["attributes"]:
        (value,) = item["value"].values()
        out[item["key"]] = value
    return out


def test_each_step_receives_a_traceparent_naming_its_own_span_in_the_runs_trace(
    worker: Any, api: APIClient, user: Any, steps: StepServer
) -> None:
    make_graph(user, steps)
    make_env()
    run_id = start(api, "traced", "traced-env")

    response = api.get(f"/api/runs/{run_id}/trace/")
    assert response.status_code == 200
    spans = otlp_spans(response.json())
    trace_id = run_id.replace("-", "")
    assert {span["traceId"] for span in spans} == {trace_id}
    by_call = {attrs(span).get("igs.call_id"): span for span in spans}
    by_id = {span["spanId"]: span for span in spans}
    (run_span,) = [span for span in spans if span["parentSpanId"] == ""]
    assert run_span["name"] == "run traced v1" and run_span["kind"] == 2

    # The tree: run -> root node -> its two steps; the nodeName step -> pair#1 -> its two steps.
    def parent_call(call_id: str) -> Any:
        parent = by_id.get(by_call[call_id]["parentSpanId"])
        return None if parent is None else attrs(parent).get("igs.call_id", "(run)")

    assert parent_call("root") == "(run)"
    assert parent_call("root/0") == parent_call("root/1") == "root"
    assert parent_call("pair#1") == "root/1"
    assert parent_call("pair#1/0") == parent_call("pair#1/1") == "pair#1"
    detect = attrs(by_call["root/0"])
    assert detect["igs.graph"] == "traced" and detect["igs.version"] == "1"
    assert detect["igs.node"] == "root" and detect["igs.step"] == "detect"
    assert detect["igs.target"] == steps.url("/detect") and detect["igs.status"] == "200"
    assert int(detect["igs.bytes_in"]) > 0 and int(detect["igs.bytes_out"]) == len('{"predictions": [1]}')
    assert by_call["root/0"]["kind"] == 3 and by_call["root/0"]["status"]["code"] == 1

    # What each server received is the span of the call that reached it.
    for path, call_id in (("/detect", "root/0"), ("/a", "pair#1/0"), ("/b", "pair#1/1")):
        (received,) = steps.received(path)
        (header,) = received.header("traceparent")
        assert parse_traceparent(header) == (trace_id, by_call[call_id]["spanId"])

    # The Ensemble's two calls overlap in time, and lie within their node's span.
    a, b, pair = by_call["pair#1/0"], by_call["pair#1/1"], by_call["pair#1"]
    assert int(a["startTimeUnixNano"]) < int(b["endTimeUnixNano"])
    assert int(b["startTimeUnixNano"]) < int(a["endTimeUnixNano"])
    for child in (a, b):
        assert int(pair["startTimeUnixNano"]) <= int(child["startTimeUnixNano"])
        assert int(child["endTimeUnixNano"]) <= int(pair["endTimeUnixNano"])

    # The SDK's in-memory exporter gets the same tree.
    exporter = InMemorySpanExporter()
    assert tracing.export_run(run_id, exporter=exporter)
    exported = exporter.get_finished_spans()
    assert len(exported) == len(spans)
    sdk_ids = {span.context.span_id: span for span in exported}
    for span in exported:
        assert span.context.trace_id == int(trace_id, 16)
        if span.parent is None:
            assert span.name == "run traced v1"
        else:
            assert span.parent.span_id in sdk_ids
    sdk_by_call = {(span.attributes or {}).get("igs.call_id"): span for span in exported}

    def sdk_parent(call_id: str) -> int | None:
        parent = sdk_by_call[call_id].parent
        return None if parent is None else parent.span_id

    assert sdk_parent("pair#1/1") == sdk_by_call["pair#1"].context.span_id  # type: ignore[union-attr]
    assert sdk_parent("pair#1") == sdk_by_call["root/1"].context.span_id  # type: ignore[union-attr]


def test_the_trace_is_for_those_who_may_read_the_run(
    worker: Any, api: APIClient, bob_api: APIClient, anon: APIClient, user: Any, steps: StepServer
) -> None:
    make_graph(user, steps)
    make_env(visibility="private", owner=user)  # runs in a private environment are its owner's
    run_id = start(api, "traced", "traced-env")
    assert bob_api.get(f"/api/runs/{run_id}/trace/").status_code == 404
    assert anon.get(f"/api/runs/{run_id}/trace/").status_code in (401, 403)


def test_an_environment_without_trace_propagation_sends_no_traceparent(
    worker: Any, api: APIClient, user: Any, steps: StepServer
) -> None:
    make_graph(user, steps)
    make_env(trace_propagation=False)
    run_id = start(api, "traced", "traced-env")
    for path in ("/detect", "/a", "/b"):
        (received,) = steps.received(path)
        assert received.header("traceparent") == []
    # The run still has its trace, derived from its events.
    assert len(otlp_spans(api.get(f"/api/runs/{run_id}/trace/").json())) == 1 + 2 + 4


def test_a_forwarded_client_traceparent_is_replaced_by_the_step_calls_own(
    worker: Any, api: APIClient, user: Any, steps: StepServer
) -> None:
    make_graph(user, steps)
    make_env(propagate_headers=["^Traceparent$", "^Tracestate$"])
    upstream = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    run_id = start(api, "traced", "traced-env", headers={"traceparent": upstream, "tracestate": "k=v"})
    (received,) = steps.received("/detect")
    (header,) = received.header("traceparent")
    assert parse_traceparent(header) is not None
    assert parse_traceparent(header)[0] == run_id.replace("-", "")  # type: ignore[index]
    assert received.header("tracestate") == []


class _Receiver(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _ReceiverHandler)
        self.posts: list[tuple[str, str, bytes]] = []
        self.arrived = threading.Event()


class _ReceiverHandler(BaseHTTPRequestHandler):
    server: _Receiver

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.posts.append((self.path, self.headers.get("Content-Type", ""), body))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()
        self.server.arrived.set()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[_Receiver]:
    server = _Receiver()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def test_with_an_otlp_endpoint_the_worker_exports_each_finished_run(
    worker: Any,
    api: APIClient,
    user: Any,
    steps: StepServer,
    receiver: _Receiver,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    make_graph(user, steps)
    make_env()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{receiver.server_address[1]}")
    run_id = start(api, "traced", "traced-env")
    assert receiver.arrived.wait(15), "no OTLP export arrived"
    assert tracing.export_idle(15)
    (path, content_type, body) = receiver.posts[-1]
    assert path == "/v1/traces" and content_type == "application/x-protobuf"
    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    spans = [span for rs in request.resource_spans for ss in rs.scope_spans for span in ss.spans]
    assert {span.trace_id.hex() for span in spans} == {run_id.replace("-", "")}
    assert len(spans) == 1 + 2 + 4
    names = {span.name for span in spans}
    assert {"run traced v1", "node root", "node pair", "step root/detect", "step pair/a"} <= names
    service = {
        attr.value.string_value
        for rs in request.resource_spans
        for attr in rs.resource.attributes
        if attr.key == "service.name"
    }
    assert service == {tracing.SERVICE_NAME}


def test_without_an_endpoint_nothing_is_exported(
    worker: Any, api: APIClient, user: Any, steps: StepServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    queued: list[str] = []
    real = tracing.export_run

    def spy(run_id: str, exporter: Any = None) -> bool:
        queued.append(run_id)
        return real(run_id, exporter)

    monkeypatch.setattr(tracing, "export_run", spy)
    make_graph(user, steps)
    make_env()
    start(api, "traced", "traced-env")
    time.sleep(0.2)
    assert tracing.export_idle(5)
    assert queued == []


def test_an_unreachable_otlp_endpoint_fails_the_export_not_the_run(
    worker: Any, api: APIClient, user: Any, steps: StepServer, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    make_graph(user, steps)
    make_env()
    run_id = start(api, "traced", "traced-env")  # no endpoint yet: nothing queued
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{free_port()}")  # nothing listens
    settings.TRACE_EXPORT_TIMEOUT = 1.0
    assert tracing.export_run(run_id) is False
    assert wait_for_run(run_id).status == "succeeded"
