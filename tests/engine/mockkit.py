"""An ``httpx.MockTransport`` harness for engine unit tests: canned step answers, recorded calls."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from execution.engine import EngineConfig, GraphResult, TraceEvent, run_graph
from graphs.language.model import Manifest

Handler = Callable[[httpx.Request], httpx.Response | Awaitable[httpx.Response]]


def reply(body: Any = None, status: int = 200, *, raw: bytes | None = None, delay: float = 0.0) -> Handler:
    """A handler answering ``body`` as JSON (or ``raw`` bytes) with ``status`` after ``delay``."""
    payload = raw if raw is not None else json.dumps(body).encode()

    async def handle(request: httpx.Request) -> httpx.Response:
        if delay:
            await asyncio.sleep(delay)
        return httpx.Response(status, content=payload, headers={"Content-Type": "application/json"})

    return handle


def echo(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, content=request.content)


@dataclass
class Harness:
    """Routes by full URL (``http://m1.test/``); records every request the engine made."""

    routes: dict[str, Handler] = field(default_factory=dict)
    calls: list[httpx.Request] = field(default_factory=list)
    events: list[TraceEvent] = field(default_factory=list)

    async def _handle(self, request: httpx.Request) -> httpx.Response:
        self.calls.append(request)
        handler = self.routes.get(str(request.url))
        if handler is None:
            return httpx.Response(599, content=b"unrouted")
        result = handler(request)
        if isinstance(result, httpx.Response):
            return result
        return await result

    def called(self, url: str) -> list[httpx.Request]:
        return [c for c in self.calls if str(c.url) == url]

    def bodies(self, url: str) -> list[Any]:
        return [json.loads(c.content) for c in self.called(url)]

    def run(
        self,
        manifest: Manifest,
        body: bytes | Any = b"{}",
        headers: Mapping[str, str | list[str]] | None = None,
        *,
        config: EngineConfig | None = None,
        rng: random.Random | None = None,
        clock: Callable[[], float] | None = None,
    ) -> GraphResult:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()

        async def main() -> GraphResult:
            async with httpx.AsyncClient(transport=httpx.MockTransport(self._handle)) as client:
                kwargs: dict[str, Any] = {}
                if clock is not None:
                    kwargs["clock"] = clock
                return await run_graph(
                    manifest,
                    data,
                    headers or {},
                    config=config or EngineConfig(),
                    client=client,
                    on_event=self.events.append,
                    rng=rng,
                    **kwargs,
                )

        return asyncio.run(main())


def parsed(result: GraphResult) -> Any:
    return json.loads(result.body)


def of_type(result: GraphResult, kind: str) -> list[TraceEvent]:
    return [e for e in result.trace if e.type == kind]


class FixedDraw(random.Random):
    """A Splitter's draws, given in order: ``FixedDraw(10, 70)`` draws 10, then 70."""

    def __init__(self, *draws: int) -> None:
        super().__init__(0)
        self.draws = list(draws)

    def randrange(self, *args: object, **kwargs: object) -> int:  # type: ignore[override]
        return self.draws.pop(0)


# Step URLs of the router-rule tests, and KServe's answer when no Switch condition matches.
M1, M2, M3, M4 = (f"http://m{i}.test/" for i in range(1, 5))
NO_MATCH_BODY = {
    "error": "Failed to process request",
    "cause": "None of the routes matched with the switch condition",
}


def cause(result_body: bytes) -> str:
    """The ``cause`` of KServe's error body."""
    return str(json.loads(result_body)["cause"])
