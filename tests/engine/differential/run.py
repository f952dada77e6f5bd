"""One differential run: generate the cases, compare them a few at a time, classify, report."""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from graphs.language.releases import DEFAULT_RELEASE, Release
from tests.engine.differential.conditions import ConditionDivergence, check_conditions
from tests.engine.differential.generator import Case, deviation_cases, normal_cases
from tests.engine.differential.harness import ORACLE_DIR, Comparison, Environment, compare_case, oracle_binary
from tests.engine.differential.report import (
    DivergenceClass,
    classify,
    condition_table,
    shrink,
    table,
    write_artifacts,
)
from tests.engine.differential.stepserver import RefusedPort, StepServer

__all__ = ["ARTIFACTS", "DEFAULT_REQUESTS", "DEFAULT_SEED", "RunResult", "run"]

DEFAULT_SEED: Final = 20261130
# The CI size: the brief's floor of 2,000 requests, a few minutes on a loaded 2-core machine.
DEFAULT_REQUESTS: Final = 2000
ARTIFACTS: Final = Path(__file__).resolve().parents[3] / "test-artifacts" / "differential"
# Graphs compared at once: each holds one oracle process and one engine server; more than a few
# only queue up for the two cores.
DEFAULT_WORKERS: Final = 4


@dataclass(slots=True)
class RunResult:
    """Every comparison of a run, its divergence classes and the table that describes them."""

    comparisons: list[Comparison]
    classes: list[DivergenceClass]
    conditions: list[ConditionDivergence]
    seconds: float
    report: str = ""
    sent: int = field(default=0)

    def of_kind(self, kind: str) -> list[Comparison]:
        return [c for c in self.comparisons if c.case.kind == kind]


def run(
    seed: int = DEFAULT_SEED,
    requests: int = DEFAULT_REQUESTS,
    *,
    workers: int = DEFAULT_WORKERS,
    deviations: bool = True,
    shrink_budget: int = 40,
    artifacts: Path | None = ARTIFACTS,
    oracle_dir: Path = ORACLE_DIR,
    release: Release = DEFAULT_RELEASE,
) -> RunResult:
    """Compare the engine with KServe's router on ``requests`` generated requests (plus the
    deviation set); shrink one example per divergence class with up to ``shrink_budget`` probes
    and write them under ``artifacts`` (None: write nothing). The engine runs as ``release`` and is
    compared with that release's build (:func:`~tests.engine.differential.harness.oracle_binary`);
    the conditions are checked against Go's gjson once, with the newest release (the others use
    the same evaluator, or v1.14.4's three differences, which only the router build can show).
    """
    started = time.monotonic()
    conditions = check_conditions(oracle_dir / "gjson") if release == DEFAULT_RELEASE else []
    suspects = frozenset(d.condition for d in conditions if d.condition is not None)
    cases: list[Case] = normal_cases(seed, requests)
    if deviations:
        cases += deviation_cases(seed)
    with StepServer() as steps, RefusedPort() as refused:
        env = Environment(oracle_binary(release, oracle_dir), steps.host, refused.host, seed, release)
        with ThreadPoolExecutor(max_workers=workers) as pool:
            comparisons = [
                c for batch in pool.map(lambda case: compare_case(case, env), cases) for c in batch
            ]
        classes = classify(comparisons, suspects)

        def probe(case: Case) -> Comparison | None:
            return compare_case(case, env)[0]

        for cls in classes:
            assert cls.example is not None
            cls.example = shrink(cls.example, probe, shrink_budget, suspects)
    if artifacts is not None:
        write_artifacts(classes, artifacts)
    sent = sum(c.sent for c in comparisons)
    result = RunResult(comparisons, classes, conditions, time.monotonic() - started, sent=sent)
    result.report = (
        condition_table(conditions)
        + "\n\n"
        + table(classes, comparisons, sent)
        + f"\n\n{result.seconds:.1f} s, seed {seed}, KServe {release.label}"
    )
    return result


def requests_from_env(default: int = DEFAULT_REQUESTS) -> int:
    """``DIFF_REQUESTS`` (the long run: ``DIFF_REQUESTS=20000``), else ``default``."""
    return int(os.environ.get("DIFF_REQUESTS", default))
