"""Run test documents through the real engine over ``httpx.MockTransport`` (canned step answers)."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable, Mapping
from typing import Any

import httpx

from execution.casecore import CaseResult, load_suite, run_suite
from execution.engine import EngineConfig
from graphs import language

Answer = Callable[[httpx.Request], httpx.Response]


def answer(body: Any, status: int = 200) -> Answer:
    def handle(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            status, content=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
        )

    return handle


def echo(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, content=request.content)


def run_cases(
    manifest_yaml: str,
    tests_yaml: str,
    routes: Mapping[str, Answer],
    *,
    clock: Callable[[], float] | None = None,
) -> list[CaseResult]:
    """Every case of ``tests_yaml`` against ``manifest_yaml``; steps answered by ``routes`` (by URL)."""
    manifest = language.parse(manifest_yaml)
    suite = load_suite(tests_yaml)

    def handle(request: httpx.Request) -> httpx.Response:
        handler = routes.get(str(request.url))
        return handler(request) if handler is not None else httpx.Response(599, content=b"unrouted")

    async def main() -> list[CaseResult]:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handle)) as client:
            extra: dict[str, Any] = {"clock": clock} if clock is not None else {}
            return await run_suite(manifest, suite.cases, config=EngineConfig(), client=client, **extra)

    return asyncio.run(main())


def ticking(step_ms: float) -> Callable[[], float]:
    """A clock that advances ``step_ms`` milliseconds on every reading (durations without sleeping)."""
    counter = itertools.count()
    return lambda: next(counter) * step_ms / 1000


def verdicts(result: CaseResult) -> list[bool]:
    return [e.passed for e in result.expectations]
