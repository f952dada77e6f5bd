"""The built-in mock model server: deterministic demo models behind KServe's v1 and v2 protocols.

Pure standard library (``http.server.ThreadingHTTPServer``), importable without Django, so tests,
benchmarks and ``python manage.py mockmodels`` all use the same code. Every accepted socket gets
TCP_NODELAY and the server speaks HTTP/1.1 with keep-alive: without Nagle disabled, a keep-alive
request costs ~44 ms of kernel delay instead of ~0.1 ms.

Protocols (KServe's paths):

- v1: ``POST /v1/models/{name}:predict`` with ``{"instances": [...]}`` -> ``{"predictions": [...]}``;
  ``GET /v1/models/{name}`` -> ``{"name", "ready"}``; ``GET /v1/models`` -> ``{"models": [...]}``.
- v2: ``POST /v2/models/{name}/infer`` with ``{"inputs": [{name, shape, datatype, data}]}`` ->
  ``{"model_name", "id", "outputs": [...]}``; ``GET /v2/models/{name}`` metadata,
  ``GET /v2/models/{name}/ready``, ``GET /v2/health/ready`` and ``/v2/health/live``.
- control: ``GET /_mock/config`` and ``PUT /_mock/config/{name}`` (JSON knobs for one model, or
  ``*`` for all); ``GET /_mock/stats`` (request counts per model).

Knobs, per request in the query string or per model in the server-side config (the query wins):
``latency_ms`` (sleep before answering), ``status`` / ``error_status`` (answer with this status and
``{"error": ...}``), ``failure_rate`` (0..1: answer ``error_status`` (default 503) for that share of
requests, decided by ``random.Random(f"{seed}:{model}:{request count}")``, so a replay with the same
seed and order fails the same requests), ``seed``.

The models themselves are :mod:`execution.devtools.demomodels`.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import random
import re
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from execution.devtools.demomodels import MODELS, ModelError

__all__ = ["MockModelServer", "main", "serve_in_thread"]

MAX_BODY_BYTES = 16 * 1024 * 1024  # mock server input cap; demo payloads are tiny
MAX_LATENCY_MS = 600_000  # ten minutes: enough to outlast any step timeout in a test


_SECRET_LOOKING = re.compile(r"(token|secret|key|password|auth|cookie)", re.IGNORECASE)


def _visible_headers(items: Any) -> dict[str, str]:
    """The request headers for ``echo-headers``; secret-looking values as a short SHA-256 digest,
    so a test can check that the real value arrived without the trace keeping it."""
    out: dict[str, str] = {}
    for name, value in items:
        if _SECRET_LOOKING.search(name):
            value = "sha256:" + hashlib.sha256(value.encode("utf-8", "replace")).hexdigest()[:16]
        out[name.lower()] = value
    return out


@dataclass
class Knobs:
    latency_ms: float = 0.0
    error_status: int | None = None
    failure_rate: float = 0.0
    seed: str = "0"

    @classmethod
    def merge(cls, config: dict[str, Any], query: dict[str, list[str]]) -> Knobs:
        raw: dict[str, Any] = dict(config)
        for key, values in query.items():
            raw[key] = values[-1]
        knobs = cls()
        try:
            if "latency_ms" in raw:
                knobs.latency_ms = min(max(float(raw["latency_ms"]), 0.0), MAX_LATENCY_MS)
            status = raw.get("status", raw.get("error_status"))
            if status not in (None, ""):
                knobs.error_status = int(status)
                if not 100 <= knobs.error_status <= 599:
                    raise ValueError("status must be 100..599")
            if "failure_rate" in raw:
                knobs.failure_rate = min(max(float(raw["failure_rate"]), 0.0), 1.0)
            if "seed" in raw:
                knobs.seed = str(raw["seed"])
        except (TypeError, ValueError) as exc:
            raise ModelError(f"bad mock knob: {exc}") from None
        return knobs


@dataclass
class ServerState:
    """Per-model config and request counters; shared by the handler threads under one lock."""

    config: dict[str, dict[str, Any]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next_count(self, model: str) -> int:
        with self.lock:
            self.counts[model] = self.counts.get(model, 0) + 1
            return self.counts[model]

    def config_for(self, model: str) -> dict[str, Any]:
        with self.lock:
            return {**self.config.get("*", {}), **self.config.get(model, {})}


_V1_PREDICT = re.compile(r"^/v1/models/([^/:]+):predict$")
_V1_MODEL = re.compile(r"^/v1/models/([^/:]+)$")
_V2_INFER = re.compile(r"^/v2/models/([^/]+)(?:/versions/[^/]+)?/infer$")
_V2_MODEL = re.compile(r"^/v2/models/([^/]+)(?:/versions/[^/]+)?$")
_V2_MODEL_READY = re.compile(r"^/v2/models/([^/]+)(?:/versions/[^/]+)?/ready$")
_CONFIG = re.compile(r"^/_mock/config/([^/]+)$")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: every answer carries Content-Length
    server_version = "studio-mockmodels/1.0"
    sys_version = ""
    server: MockModelServer

    # -- plumbing -------------------------------------------------------------------------------

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:
            super().log_message(format, *args)

    def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):  # the caller gave up (timeout, cancel)
            self.close_connection = True

    def _json(self, status: int, value: Any) -> None:
        self._send(status, json.dumps(value, separators=(",", ":")).encode())

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY_BYTES:
            raise ModelError(f"request body over {MAX_BODY_BYTES} bytes", 413)
        return self.rfile.read(length) if length > 0 else b""

    # -- routing --------------------------------------------------------------------------------

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if path in ("/", "/v2", "/v2/health/live", "/v2/health/ready"):
            key = "live" if path.endswith("live") else "ready"
            self._json(200, {key: True} if path.startswith("/v2/health") else {"status": "alive"})
        elif path == "/v1/models":
            self._json(200, {"models": sorted(MODELS)})
        elif path == "/_mock/config":
            with self.server.state.lock:
                self._json(200, dict(self.server.state.config))
        elif path == "/_mock/stats":
            with self.server.state.lock:
                self._json(200, dict(self.server.state.counts))
        elif (m := _V1_MODEL.match(path)) or (m := _V2_MODEL_READY.match(path)):
            self._if_model(m.group(1), lambda name: self._json(200, {"name": name, "ready": True}))
        elif m := _V2_MODEL.match(path):
            self._if_model(
                m.group(1),
                lambda name: self._json(
                    200,
                    {
                        "name": name,
                        "versions": ["1"],
                        "platform": "studio-mock",
                        "inputs": [{"name": "input-0", "datatype": "BYTES", "shape": [-1]}],
                        "outputs": [{"name": "output-0", "datatype": "BYTES", "shape": [-1]}],
                    },
                ),
            )
        else:
            self._json(404, {"error": f"no route for GET {path}"})

    def do_PUT(self) -> None:
        path = urlsplit(self.path).path
        m = _CONFIG.match(path)
        if not m:
            self._json(404, {"error": f"no route for PUT {path}"})
            return
        try:
            value = json.loads(self._read_body() or b"{}")
            if not isinstance(value, dict):
                raise ModelError("the config must be a JSON object")
            Knobs.merge(value, {})  # refuse bad values now rather than on every request
        except (ModelError, ValueError) as exc:
            self._json(400, {"error": str(exc)})
            return
        with self.server.state.lock:
            if value:
                self.server.state.config[m.group(1)] = value
            else:
                self.server.state.config.pop(m.group(1), None)
        self._json(200, value)

    def do_POST(self) -> None:
        split = urlsplit(self.path)
        path = split.path
        if m := _V1_PREDICT.match(path):
            self._predict(m.group(1), split.query, v2=False)
        elif m := _V2_INFER.match(path):
            self._predict(m.group(1), split.query, v2=True)
        else:
            try:
                self._read_body()
            except ModelError:
                self.close_connection = True
            self._json(404, {"error": f"no route for POST {path}"})

    def _if_model(self, name: str, then: Callable[[str], None]) -> None:
        if name in MODELS:
            then(name)
        else:
            self._json(404, {"error": f"Model with name {name} does not exist."})

    # -- inference ------------------------------------------------------------------------------

    def _predict(self, name: str, query: str, *, v2: bool) -> None:
        state = self.server.state
        try:
            raw = self._read_body()
            knobs = Knobs.merge(state.config_for(name), parse_qs(query))
        except ModelError as exc:
            self.close_connection = True
            self._json(exc.status, {"error": str(exc)})
            return
        count = state.next_count(name)
        if knobs.latency_ms:
            time.sleep(knobs.latency_ms / 1000)
        if knobs.error_status is not None or knobs.failure_rate > 0.0:
            status = knobs.error_status or 503
            fails = knobs.failure_rate == 0.0 or (
                random.Random(f"{knobs.seed}:{name}:{count}").random() < knobs.failure_rate
            )
            if fails:
                self._json(status, {"error": f"Injected error {status} from {name} (request {count})"})
                return
        if name not in MODELS:
            self._json(404, {"error": f"Model with name {name} does not exist."})
            return
        if name == "always-404":
            self._json(404, {"detail": "Intentional 404 code"})
            return
        if name == "echo-headers":
            self._json(200, {"headers": _visible_headers(self.headers.items())})
            return
        if name == "echo" and not v2:
            self._send(200, raw, self.headers.get("Content-Type") or "application/json")
            return
        try:
            body = json.loads(raw) if raw else None
        except ValueError as exc:
            self._json(400, {"error": f"request body is not JSON: {exc}"})
            return
        try:
            if v2:
                self._json(200, _infer_v2(name, body))
            else:
                handler = MODELS[name]
                assert handler is not None
                self._json(200, handler(body))
        except ModelError as exc:
            self._json(exc.status, {"error": str(exc)})


def _infer_v2(name: str, body: Any) -> dict[str, Any]:
    """A v2 inference: the first input's data become the v1 model's instances; its predictions
    come back as one output tensor (``echo`` returns every input tensor, renamed)."""
    if not isinstance(body, dict) or not isinstance(body.get("inputs"), list) or not body["inputs"]:
        raise ModelError('v2 infer expects {"inputs": [{name, shape, datatype, data}]}')
    first = body["inputs"][0]
    if not isinstance(first, dict) or "data" not in first:
        raise ModelError("each input needs name, shape, datatype and data")
    if name == "echo":
        outputs = [{**i, "name": f"output-{n}"} for n, i in enumerate(body["inputs"]) if isinstance(i, dict)]
    else:
        handler = MODELS[name]
        assert handler is not None
        outputs = [_v2_output(handler({"instances": _v2_items(first["data"])})["predictions"])]
    result: dict[str, Any] = {"model_name": name, "model_version": "1", "outputs": outputs}
    if "id" in body:
        result["id"] = body["id"]
    return result


def _v2_items(data: Any) -> list[Any]:
    """A tensor's data as instances: a BYTES element holding JSON is that JSON value."""
    items = []
    for value in data if isinstance(data, list) else [data]:
        if isinstance(value, str):
            with contextlib.suppress(ValueError):
                value = json.loads(value)
        items.append(value)
    return items


def _v2_output(predictions: list[Any]) -> dict[str, Any]:
    """Predictions as one tensor: FP32 when all are numbers, else BYTES (objects as JSON text)."""
    numeric = all(isinstance(p, int | float) and not isinstance(p, bool) for p in predictions)
    as_is = numeric or all(isinstance(p, str) for p in predictions)
    return {
        "name": "output-0",
        "shape": [len(predictions)],
        "datatype": "FP32" if numeric else "BYTES",
        "data": predictions if as_is else [json.dumps(p, separators=(",", ":")) for p in predictions],
    }


class MockModelServer(ThreadingHTTPServer):
    """The threaded server. ``server_address`` port 0 picks a free port (read ``port`` after)."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(
        self,
        address: tuple[str, int] = ("127.0.0.1", 0),
        *,
        config: dict[str, dict[str, Any]] | None = None,
        verbose: bool = False,
    ) -> None:
        super().__init__(address, _Handler)
        self.state = ServerState(config=dict(config or {}))
        self.verbose = verbose

    def get_request(self) -> tuple[socket.socket, Any]:
        conn, address = super().get_request()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # see the module docstring
        return conn, address

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        host = self.server_address[0]
        return f"http://{host.decode() if isinstance(host, bytes) else host}:{self.port}"

    def set_config(self, model: str, knobs: dict[str, Any] | None) -> None:
        with self.state.lock:
            if knobs:
                self.state.config[model] = dict(knobs)
            else:
                self.state.config.pop(model, None)


def serve_in_thread(host: str = "127.0.0.1", port: int = 0, **kwargs: Any) -> MockModelServer:
    """Start a server on a daemon thread and return it; stop it with ``shutdown()`` + ``server_close()``."""
    server = MockModelServer((host, port), **kwargs)
    threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.1}, name="mockmodels", daemon=True
    ).start()
    return server


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description="The built-in mock model server (KServe v1 and v2).")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9010)
    parser.add_argument(
        "--config", help="JSON file: {model name or '*': {latency_ms, error_status, failure_rate, seed}}"
    )
    parser.add_argument("--verbose", action="store_true", help="log every request")
    return parser


def run(
    host: str, port: int, config_path: str | None = None, verbose: bool = False, out: Any = sys.stdout
) -> None:
    config: dict[str, dict[str, Any]] = {}
    if config_path:
        with open(config_path, encoding="utf-8") as handle:
            config = json.load(handle)
    server = MockModelServer((host, port), config=config, verbose=verbose)
    print(f"Mock model server on {server.url} (models: {', '.join(sorted(MODELS))})", file=out, flush=True)
    try:
        server.serve_forever(poll_interval=0.5)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    run(args.host, args.port, args.config, args.verbose)


if __name__ == "__main__":
    main()
