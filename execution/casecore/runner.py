"""Running cases through the engine: one case, or a suite with bounded concurrency, in-process.

The engine gets its config and HTTP client from the caller, as always; each case gets a random
source of its own (seeded when the case has a ``seed``, so its Splitter draws repeat).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Sequence
from typing import Final

import httpx

from execution.engine import EngineConfig, make_client, run_graph
from graphs.language.model import Manifest

from .cause import failure_cause
from .evaluate import CaseResult, evaluate_case, observed_from_result
from .limits import DEFAULT_LIMITS, Budget, Limits, case_budget
from .model import ParsedCase

__all__ = ["DEFAULT_CONCURRENCY", "run_case", "run_suite", "run_suite_sync"]

# Cases in flight at once in-process: enough to overlap the model servers' latency, few enough
# that a suite does not look like a load test to the servers it calls.
DEFAULT_CONCURRENCY: Final = 8

CaseCallback = Callable[[int, CaseResult], None]


async def run_case(
    manifest: Manifest,
    case: ParsedCase,
    *,
    config: EngineConfig,
    client: httpx.AsyncClient,
    clock: Callable[[], float] = time.time,
    keep_result: bool = True,
    limits: Limits = DEFAULT_LIMITS,
    budget: Callable[[], Budget | str] | None = None,
) -> CaseResult:
    """Send the case's request through ``manifest`` and judge its expectations.

    A graph failure is a result like any other (the expectations decide); only an exception from
    the engine itself (a defect) makes the outcome ``error``. With ``keep_result`` the engine's
    answer and trace stay in ``CaseResult.result`` (a suite of large bodies may not want that).
    ``budget``: called once the graph has answered, the CPU time its judging may take (default:
    ``limits.case_seconds``), or why it is not judged at all (a suite's budget is spent: see
    :func:`~.limits.case_budget`).
    """
    rng = random.Random(case.seed) if case.seed is not None else random.SystemRandom()
    try:
        result = await run_graph(
            manifest,
            case.request.body,
            case.request.headers,
            config=config,
            client=client,
            rng=rng,
            clock=clock,
        )
    except Exception as exc:  # the report must go on for the other cases; the cause is shown
        return CaseResult(name=case.name, outcome="error", error=f"{type(exc).__name__}: {exc}")
    allowed = budget() if budget is not None else None
    if isinstance(allowed, str):
        return CaseResult(
            name=case.name, outcome="error", error=allowed, status=result.status, cause=failure_cause(result)
        )
    verdict = evaluate_case(case, observed_from_result(result), manifest, limits=limits, budget=allowed)
    return CaseResult(
        error=verdict.error,
        name=verdict.name,
        outcome=verdict.outcome,
        expectations=verdict.expectations,
        status=verdict.status,
        duration_ms=verdict.duration_ms,
        result=result if keep_result else None,
        cause=failure_cause(result) if verdict.outcome != "passed" else None,
    )


async def run_suite(
    manifest: Manifest,
    cases: Sequence[ParsedCase],
    *,
    config: EngineConfig,
    client: httpx.AsyncClient,
    concurrency: int = DEFAULT_CONCURRENCY,
    on_case: CaseCallback | None = None,
    clock: Callable[[], float] = time.time,
    keep_results: bool = True,
    limits: Limits = DEFAULT_LIMITS,
) -> list[CaseResult]:
    """Run ``cases`` with at most ``concurrency`` in flight; results in the cases' order.

    ``on_case(index, result)`` is called as each case finishes (in the order they finish). Judging
    takes at most ``limits.case_seconds`` of CPU per case and ``limits.suite_seconds`` in all; the
    cases past that are errors saying so.
    """
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    gate = asyncio.Semaphore(concurrency)
    spent = 0.0  # CPU seconds judging took so far (the judging of one case never awaits)
    budgets: list[Budget] = []

    def budget() -> Budget | str:
        nonlocal spent
        spent += sum(b.used for b in budgets)  # the cases judged since the last one
        budgets.clear()
        allowed = case_budget(limits, spent)
        if isinstance(allowed, Budget):
            budgets.append(allowed)
        return allowed

    async def one(i: int, case: ParsedCase) -> CaseResult:
        async with gate:
            result = await run_case(
                manifest,
                case,
                config=config,
                client=client,
                clock=clock,
                keep_result=keep_results,
                limits=limits,
                budget=budget,
            )
        if on_case is not None:
            on_case(i, result)
        return result

    return list(await asyncio.gather(*(one(i, case) for i, case in enumerate(cases))))


def run_suite_sync(
    manifest: Manifest,
    cases: Sequence[ParsedCase],
    *,
    config: EngineConfig,
    concurrency: int = DEFAULT_CONCURRENCY,
    on_case: CaseCallback | None = None,
    keep_results: bool = True,
    limits: Limits = DEFAULT_LIMITS,
) -> list[CaseResult]:
    """:func:`run_suite` on a fresh event loop with a client made from ``config`` (closed after)."""

    async def main() -> list[CaseResult]:
        async with make_client(max_response_bytes=config.max_response_bytes, guard=config.guard) as client:
            return await run_suite(
                manifest,
                cases,
                config=config,
                client=client,
                concurrency=concurrency,
                on_case=on_case,
                keep_results=keep_results,
                limits=limits,
            )

    return asyncio.run(main())
