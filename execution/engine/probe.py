"""Probe the model servers an environment calls: readiness, protocol, and v2 metadata.

KServe's model servers answer two protocols (docs/architecture.md, "Test connection"):

- v1: ``GET /v1/models/{name}`` -> ``{"name", "ready"}`` (steps POST to ``…/v1/models/{name}:predict``);
- v2 (Open Inference Protocol): ``GET /v2/models/{name}/ready`` (200 when ready) and
  ``GET /v2/models/{name}`` -> ``{"name", "versions", "platform", "inputs", "outputs"}`` (steps POST
  to ``…/v2/models/{name}[/versions/{v}]/infer``).

The protocol is read from the step URL's path when it names one; any other URL is tried as v2 and
then as v1 at its origin, with the service name as the model. Every request goes through the client
it is given (the project's one outbound client, with the URL guard and the response cap); nothing
here opens a connection of its own, reads a setting or stores anything.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import httpx

from execution.engine.transport.http import ResponseTooLarge, find_os_error
from execution.engine.transport.urlguard import BlockedUrl

__all__ = ["ProbeResult", "ProbeTarget", "model_endpoint", "probe_all", "probe_service"]

Protocol = Literal["v1", "v2", "unknown"]

_V1_PATH: Final = re.compile(r"^(?P<base>.*)/v1/models/(?P<model>[^/:]+)(?::[a-z]+)?/?$")
_V2_PATH: Final = re.compile(
    r"^(?P<base>.*)/v2/models/(?P<model>[^/]+)(?:/versions/(?P<version>[^/]+))?(?:/infer|/ready)?/?$"
)


@dataclass(frozen=True, slots=True)
class ProbeTarget:
    """One service to probe: its serviceName and the URL a step would POST to."""

    service: str
    url: str


@dataclass(slots=True)
class ProbeResult:
    """What a probe found. ``error`` is None when the server answered as a model server; otherwise
    ``{"kind", "message"}`` with kind one of ``blocked``, ``refused``, ``unresolved``, ``timeout``,
    ``too-large``, ``not-a-model-server``, ``transport``, ``bad-url``."""

    service: str
    url: str
    protocol: Protocol = "unknown"
    model: str | None = None
    ready: bool = False
    platform: str | None = None
    versions: list[str] | None = None
    inputs: list[dict[str, Any]] | None = None
    outputs: list[dict[str, Any]] | None = None
    latency_ms: float | None = None
    error: dict[str, str] | None = None
    checked: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "service": self.service,
            "url": self.url,
            "protocol": self.protocol,
            "model": self.model,
            "ready": self.ready,
            "platform": self.platform,
            "versions": self.versions,
            "inputs": self.inputs,
            "outputs": self.outputs,
            "latency_ms": self.latency_ms,
            "error": self.error,
            "checked": self.checked,
        }


class _Failed(Exception):
    """A probe request got no usable answer; ``kind`` and the message go to the result."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def model_endpoint(url: str, service: str) -> tuple[Protocol, str, str, str | None]:
    """``(protocol, base, model, version)`` of a step URL.

    A path ending in ``/v1/models/{m}[:verb]`` is v1 and one ending in
    ``/v2/models/{m}[/versions/{v}][/infer]`` v2, with ``base`` what precedes it; any other URL is
    ``unknown`` with its origin as the base and ``service`` as the model.
    """
    parts = httpx.URL(url)
    path = parts.path
    origin = str(parts.copy_with(path="/", query=None, fragment=None)).rstrip("/")
    if m := _V2_PATH.match(path):
        return "v2", origin + m["base"], m["model"], m["version"]
    if m := _V1_PATH.match(path):
        return "v1", origin + m["base"], m["model"], None
    return "unknown", origin, service, None


def _describe(exc: BaseException, url: str) -> _Failed:
    """The kind and a clear message for a request that failed without an answer."""
    if isinstance(exc, BlockedUrl):
        return _Failed("blocked", f"blocked by the environment's URL guard: {exc.reason}")
    if isinstance(exc, ResponseTooLarge):
        return _Failed("too-large", f"the answer of {url} is larger than {exc.limit} bytes")
    if isinstance(exc, TimeoutError | httpx.TimeoutException):
        return _Failed("timeout", f"{url} did not answer in time")
    if isinstance(exc, httpx.InvalidURL):
        return _Failed("bad-url", f"{url} cannot be requested: {exc}")
    if isinstance(exc, httpx.ConnectError) and "no such host" in str(exc):
        return _Failed("unresolved", f"{url}: {exc}")
    os_error = find_os_error(exc)
    if isinstance(os_error, ConnectionRefusedError) or (
        isinstance(exc, httpx.ConnectError) and "refused" in str(exc).lower()
    ):
        return _Failed("refused", f"{url}: connection refused (is the model server running?)")
    return _Failed("transport", f"{url}: {exc or type(exc).__name__}")


async def _get(client: httpx.AsyncClient, url: str, checked: list[dict[str, Any]]) -> tuple[int, Any]:
    """GET ``url``; its status and JSON body (None when the body is not JSON). Raises _Failed."""
    try:
        response = await client.get(url, headers={"Accept": "application/json"})
    except (BlockedUrl, ResponseTooLarge, TimeoutError, httpx.HTTPError, httpx.InvalidURL, OSError) as exc:
        failed = _describe(exc, url)
        checked.append({"url": url, "error": failed.message})
        raise failed from None
    try:
        body: Any = json.loads(response.content) if response.content else None
    except ValueError:
        body = None
    checked.append({"url": url, "status": response.status_code})
    return response.status_code, body


def _tensors(value: Any) -> list[dict[str, Any]] | None:
    """The ``inputs``/``outputs`` of v2 metadata, each ``{name, datatype, shape}``; None if absent."""
    if not isinstance(value, list):
        return None
    out = []
    for item in value:
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            out.append({key: item.get(key) for key in ("name", "datatype", "shape")})
    return out


async def _v2(
    client: httpx.AsyncClient, result: ProbeResult, base: str, model: str, version: str | None
) -> bool:
    """Readiness and metadata as v2; whether the server answered as a v2 model server."""
    prefix = f"{base}/v2/models/{model}" + (f"/versions/{version}" if version else "")
    status, meta = await _get(client, prefix, result.checked)
    if status != 200 or not isinstance(meta, dict) or not ({"inputs", "outputs", "platform"} & set(meta)):
        return False
    result.protocol = "v2"
    result.platform = meta.get("platform") if isinstance(meta.get("platform"), str) else None
    versions = meta.get("versions")
    result.versions = [str(v) for v in versions] if isinstance(versions, list) else None
    result.inputs, result.outputs = _tensors(meta.get("inputs")), _tensors(meta.get("outputs"))
    status, ready = await _get(client, prefix + "/ready", result.checked)
    # Triton answers 200 with no body; KServe's Python server {"name", "ready"}.
    result.ready = status == 200 and not (isinstance(ready, dict) and ready.get("ready") is False)
    return True


async def _v1(client: httpx.AsyncClient, result: ProbeResult, base: str, model: str) -> bool:
    """Readiness as v1; whether the server answered as a v1 model server."""
    status, body = await _get(client, f"{base}/v1/models/{model}", result.checked)
    if not isinstance(body, dict) or "ready" not in body:
        return False
    result.protocol = "v1"
    result.ready = status == 200 and body.get("ready") is True
    return True


async def probe_service(
    client: httpx.AsyncClient,
    target: ProbeTarget,
    *,
    timeout: float,
    clock: Callable[[], float] = time.perf_counter,
) -> ProbeResult:
    """Probe one service within ``timeout`` seconds (all its requests together). Never raises for
    what the server does: every failure is in the result's ``error``."""
    result = ProbeResult(service=target.service, url=target.url)
    started = clock()
    try:
        protocol, base, model, version = model_endpoint(target.url, target.service)
    except (httpx.InvalidURL, ValueError) as exc:
        result.error = {"kind": "bad-url", "message": f"{target.url!r} is not a URL: {exc}"}
        return result
    result.model = model
    try:
        async with asyncio.timeout(timeout):
            answered = False
            if protocol in ("v2", "unknown"):
                answered = await _v2(client, result, base, model, version)
            if not answered and protocol in ("v1", "unknown"):
                answered = await _v1(client, result, base, model)
            if not answered:
                expected = {"v1": "v1 model status", "v2": "v2 model metadata"}.get(
                    protocol, "v1 or v2 model"
                )
                last = result.checked[-1] if result.checked else {}
                result.error = {
                    "kind": "not-a-model-server",
                    "message": f"{last.get('url', base)} answered {last.get('status')}, not a {expected} "
                    f"answer for model {model!r}",
                }
                if protocol != "unknown":
                    result.protocol = protocol
    except _Failed as failed:
        result.error = {"kind": failed.kind, "message": failed.message}
    except TimeoutError:
        result.error = {"kind": "timeout", "message": f"{target.url} did not answer within {timeout:g} s"}
    result.latency_ms = round((clock() - started) * 1000, 1)
    return result


async def probe_all(
    client: httpx.AsyncClient,
    targets: Sequence[ProbeTarget],
    *,
    timeout: float,
    concurrency: int,
    total: float,
    clock: Callable[[], float] = time.perf_counter,
) -> list[ProbeResult]:
    """Probe ``targets`` at most ``concurrency`` at a time, each within ``timeout`` and all within
    ``total`` seconds; a service not probed in time gets a ``timeout`` error. Results in order."""
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(target: ProbeTarget) -> ProbeResult:
        async with gate:
            return await probe_service(client, target, timeout=timeout, clock=clock)

    tasks = [asyncio.create_task(one(target)) for target in targets]
    if tasks:
        await asyncio.wait(tasks, timeout=total)
    results = []
    for target, task in zip(targets, tasks, strict=True):
        if task.done() and not task.cancelled():
            failure = task.exception()
            if failure is None:
                results.append(task.result())
                continue
            # A URL httpx cannot send (probe_service reports every answer and transport error).
            error = {"kind": "transport", "message": f"{target.url}: {failure or type(failure).__name__}"}
        else:
            task.cancel()
            error = {"kind": "timeout", "message": f"not probed: the probe's {total:g} s ran out"}
        results.append(ProbeResult(service=target.service, url=target.url, error=error))
    await asyncio.gather(*tasks, return_exceptions=True)
    return results
