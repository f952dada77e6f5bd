"""The demo's model server: the real models of :mod:`models.vision` as ``kserve.Model`` subclasses
under KServe's own ``kserve.ModelServer``, the server users deploy as InferenceService predictors.

It answers KServe's v1 protocol (``POST /v1/models/{name}:predict``, readiness at
``/v1/models/{name}``) for every model, and the v2 protocol (metadata at ``/v2/models/{name}``,
readiness at ``/v2/models/{name}/ready``, ``POST /v2/models/{name}/infer``) where a model has tensors
to speak of: the detectors take an ``image`` (BYTES, the encoded file) and answer ``boxes``
(INT32, [faces, 4]).

Run it with the models' own virtualenv (``make models-venv``)::

    .venv-models/bin/python -m models.server --http_port 9020 [--host 127.0.0.1]

KServe's REST server listens on every interface; this one listens on ``--host`` (loopback unless
told otherwise), as a demo on a developer's machine should.

With ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) set it exports its
spans over OTLP/HTTP as ``studio-demo-models``, each request's span a child of the span named in
its W3C ``traceparent`` (the studio's step call): :func:`configure_tracing`.
"""

from __future__ import annotations

import argparse
import base64
import os
import sys
from collections.abc import Callable
from typing import Any, Final

import numpy as np
from kserve import Model, ModelServer
from kserve import model_server as kserve_model_server
from kserve.errors import InvalidInput
from kserve.protocol.infer_type import InferOutput, InferRequest, InferResponse
from kserve.protocol.rest.server import RESTServer

from models import vision

# The tracing service the model server's spans are reported as (OTEL_SERVICE_NAME overrides it).
SERVICE_NAME: Final = "studio-demo-models"
# Either one sends spans; the OTLP exporter reads them itself (the first with /v1/traces appended).
ENDPOINT_VARIABLES: Final = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


class VisionModel(Model):
    """One function of :mod:`models.vision` behind KServe's v1 protocol."""

    def __init__(self, name: str, function: Callable[[Any], dict[str, Any]]) -> None:
        super().__init__(name)
        self.function = function
        self.ready = False

    def load(self) -> bool:
        vision.galleries()  # built once, before the server says it is ready
        self.ready = True
        return self.ready

    def predict(self, payload: Any, headers: dict[str, str] | None = None) -> Any:
        if isinstance(payload, InferRequest):
            return self.infer_v2(payload)
        try:
            return self.function(payload)
        except vision.ModelInputError as exc:
            raise InvalidInput(str(exc)) from exc

    def infer_v2(self, request: InferRequest) -> InferResponse:
        raise InvalidInput(
            f"{self.name} speaks KServe's v1 protocol only: POST /v1/models/{self.name}:predict"
        )


class DetectorModel(VisionModel):
    """A detector also speaks v2: ``image`` (BYTES: an encoded image file, as base64 text in JSON or
    as raw bytes in binary tensor data) in, ``boxes`` (INT32 [faces, 4]: x, y, width, height) out,
    for the first image."""

    def get_input_types(self) -> list[dict[str, Any]]:
        return [{"name": "image", "datatype": "BYTES", "shape": [-1]}]

    def get_output_types(self) -> list[dict[str, Any]]:
        return [{"name": "boxes", "datatype": "INT32", "shape": [-1, 4]}]

    def infer_v2(self, request: InferRequest) -> InferResponse:
        tensor = request.get_input_by_name("image")
        if tensor is None:
            raise InvalidInput(f"{self.name}: the v2 request needs an input named 'image' (BYTES)")
        values = tensor.data if isinstance(tensor.data, list) else list(tensor.as_numpy().ravel())
        if not values:
            raise InvalidInput(f"{self.name}: the 'image' input is empty")
        first = values[0]
        # Binary tensor data arrives as bytes; in JSON, a BYTES element is the file in base64.
        b64 = base64.b64encode(first).decode("ascii") if isinstance(first, bytes) else str(first)
        try:
            answer = self.function({"instances": [{"image": {"b64": b64}}]})
        except vision.ModelInputError as exc:
            raise InvalidInput(str(exc)) from exc
        boxes = np.asarray(
            [face["box"] for face in answer["predictions"][0]["faces"]], dtype=np.int32
        ).reshape(-1, 4)
        output = InferOutput(name="boxes", shape=list(boxes.shape), datatype="INT32")
        output.set_data_from_numpy(boxes, binary_data=False)
        return InferResponse(response_id=request.id or "", model_name=self.name, infer_outputs=[output])


DETECTORS = {"face-detector", "cat-face-detector"}


def build_models() -> list[VisionModel]:
    models = []
    for name, function in vision.MODELS.items():
        model = (DetectorModel if name in DETECTORS else VisionModel)(name, function)
        model.load()
        models.append(model)
    return models


def _listen_on(host: str) -> None:
    """KServe's RESTServer hard-codes 0.0.0.0: make the servers ModelServer builds listen on host."""

    class BoundRESTServer(RESTServer):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.config.host = host

    kserve_model_server.RESTServer = BoundRESTServer  # type: ignore[misc]


def configure_tracing() -> bool:
    """Export the server's spans over OTLP/HTTP when the standard endpoint variable is set.

    KServe's REST server traces nothing itself, but the FastAPI app it serves makes a SERVER span
    per request (and spans for the endpoint and serialization under it) as soon as a global tracer
    provider exists, parented by the request's ``traceparent`` (the API's default propagator is W3C
    trace context): so setting that provider up is all it takes. Without an endpoint (or with
    ``OTEL_SDK_DISABLED=true``) nothing is imported, the provider stays the API's no-op one and
    FastAPI's telemetry stays off: nothing is sent and startup costs nothing more. True when set up.
    """
    if not any(os.environ.get(name) for name in ENDPOINT_VARIABLES):
        return False
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    # Resource.create reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES; given attributes win.
    named = {} if os.environ.get("OTEL_SERVICE_NAME") else {"service.name": SERVICE_NAME}
    provider = TracerProvider(resource=Resource.create(named))
    # Batched on the SDK's own thread: a slow or absent collector never delays an answer. The
    # provider flushes what is left when the process exits.
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    return True


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1", help="the address to listen on (default loopback)")
    parser.add_argument("--http_port", type=int, default=9020)
    options, _ = parser.parse_known_args(argv)
    _listen_on(options.host)
    configure_tracing()
    models = build_models()
    ModelServer(http_port=options.http_port, enable_grpc=False, workers=1).start(models)


if __name__ == "__main__":
    main(sys.argv[1:])
