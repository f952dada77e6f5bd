"""A suite run in this process judged against its graph's latency budgets, as a recorded suite run
is (``execution.suites.latency``): each case's answer is one sample of the whole graph, each of
its step calls one sample of that step. Only counts are kept, never the cases' answers."""

from __future__ import annotations

from typing import Any

from execution.engine.load import LoadStats, step_key
from graphs.language.budgets import Budgets, judge

from .evaluate import CaseResult

__all__ = ["CaseLatencies"]


class CaseLatencies:
    def __init__(self) -> None:
        self.stats = LoadStats()

    def add(self, case: CaseResult) -> None:
        """One case's latencies (nothing when it did not run: no answer, no sample)."""
        result = case.result
        if result is None or case.duration_ms is None:
            return
        self.stats.add_request(float(case.duration_ms), case.status)
        for event in result.trace:
            if event.type == "step.finished":
                self.stats.add_step(
                    step_key(event.node, event.step_name, event.step_index),
                    float(event.data.get("duration_ms") or 0.0),
                    event.data.get("status"),
                    str(event.data.get("outcome")),
                )

    def verdict(self, budgets: Budgets) -> dict[str, Any]:
        """``{passed, checks}`` of ``budgets`` against the cases added (``{}`` for no budgets)."""
        return {} if budgets.empty else judge(budgets, self.stats.summary(0.0))
