"""The probe's reading of model servers (``execution.engine.probe``), on ``httpx.MockTransport``
answers through the real client factory: where the protocol comes from, what counts as ready, and
the size cap."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from execution.engine.probe import ProbeTarget, model_endpoint, probe_service
from execution.engine.transport.http import make_client


def run(handler: Callable[[httpx.Request], httpx.Response], url: str, **options: Any) -> dict[str, Any]:
    async def main() -> dict[str, Any]:
        client = make_client(transport=httpx.MockTransport(handler), **options)
        try:
            return (await probe_service(client, ProbeTarget("svc", url), timeout=2)).to_dict()
        finally:
            await client.aclose()

    return asyncio.run(main())


def answer(routes: dict[str, tuple[int, Any]]) -> Callable[[httpx.Request], httpx.Response]:
    def handle(request: httpx.Request) -> httpx.Response:
        status, body = routes.get(request.url.path, (404, {"error": "no route"}))
        content = body if isinstance(body, bytes) else json.dumps(body).encode()
        return httpx.Response(status, content=content)

    return handle


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://h/v1/models/iris:predict", ("v1", "http://h", "iris", None)),
        ("http://h:8080/prefix/v2/models/m/versions/2/infer", ("v2", "http://h:8080/prefix", "m", "2")),
        ("http://h/v2/models/m/infer", ("v2", "http://h", "m", None)),
        ("http://h/score?x=1", ("unknown", "http://h", "svc", None)),
    ],
)
def test_the_protocol_and_model_come_from_the_url_path(url: str, expected: tuple[Any, ...]) -> None:
    assert model_endpoint(url, "svc") == expected


def test_a_v2_ready_answer_without_a_body_is_ready_as_triton_answers_it() -> None:
    meta = {"name": "m", "platform": "triton", "inputs": [{"name": "x", "datatype": "FP32", "shape": [1]}]}
    result = run(
        answer({"/v2/models/m": (200, meta), "/v2/models/m/ready": (200, b"")}), "http://h/v2/models/m/infer"
    )
    assert (result["protocol"], result["ready"], result["platform"], result["error"]) == (
        "v2",
        True,
        "triton",
        None,
    )
    assert result["inputs"] == [{"name": "x", "datatype": "FP32", "shape": [1]}] and result["outputs"] is None


def test_a_v2_model_that_is_loading_is_not_ready() -> None:
    routes = {
        "/v2/models/m": (200, {"name": "m", "inputs": []}),
        "/v2/models/m/ready": (503, {"ready": False}),
    }
    result = run(answer(routes), "http://h/v2/models/m/infer")
    assert (result["protocol"], result["ready"], result["error"]) == ("v2", False, None)


def test_a_v1_model_that_says_it_is_not_ready_is_not_ready() -> None:
    result = run(
        answer({"/v1/models/m": (503, {"name": "m", "ready": False})}), "http://h/v1/models/m:predict"
    )
    assert (result["protocol"], result["ready"], result["error"]) == ("v1", False, None)


def test_an_unknown_url_falls_back_from_v2_to_v1() -> None:
    result = run(answer({"/v1/models/svc": (200, {"name": "svc", "ready": True})}), "http://h/predict")
    assert (result["protocol"], result["ready"], result["model"]) == ("v1", True, "svc")
    assert [c["url"] for c in result["checked"]] == ["http://h/v2/models/svc", "http://h/v1/models/svc"]


def test_an_answer_over_the_cap_is_an_error_not_a_crash() -> None:
    big = {"name": "m", "inputs": [{"name": "x" * 5000, "datatype": "FP32", "shape": [1]}]}
    result = run(answer({"/v2/models/m": (200, big)}), "http://h/v2/models/m/infer", max_response_bytes=1000)
    assert result["error"]["kind"] == "too-large" and result["ready"] is False


def test_an_html_page_is_not_a_model_server() -> None:
    result = run(answer({"/v1/models/m": (200, b"<html>hi</html>")}), "http://h/v1/models/m:predict")
    assert result["error"]["kind"] == "not-a-model-server" and result["protocol"] == "v1"


def test_a_service_whose_probe_fails_unexpectedly_is_reported_not_raised() -> None:
    """One broken probe does not take the others down with it."""
    from execution.engine.probe import probe_all

    def handle(request: httpx.Request) -> httpx.Response:
        if request.url.host == "bad":
            raise RuntimeError("boom")
        return httpx.Response(200, json={"name": "m", "ready": True})

    async def main() -> list[Any]:
        client = make_client(transport=httpx.MockTransport(handle))
        try:
            targets = [
                ProbeTarget("bad", "http://bad/v1/models/m:predict"),
                ProbeTarget("ok", "http://ok/v1/models/m:predict"),
            ]
            return [r.to_dict() for r in await probe_all(client, targets, timeout=2, concurrency=2, total=5)]
        finally:
            await client.aclose()

    bad, ok = asyncio.run(main())
    assert bad["error"] == {"kind": "transport", "message": "http://bad/v1/models/m:predict: boom"}
    assert ok["ready"] is True and ok["error"] is None
