"""``make bench``: run every benchmark in turn; each prints its own table of ratios and goals.

Benchmarks measure, they do not assert: the machines are shared and noisy, so each figure is a
ratio against a baseline measured in the same run. A benchmark that cannot run (say, no Chromium
for the editor benchmark) is reported and the others go on.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Each entry: the script and its arguments. The runs benchmark is measured twice, as its goals are
# set: on SQLite with ``make run``'s defaults, and on PostgreSQL with two worker processes.
BENCHMARKS = [
    ("bench_spec.py",),
    ("bench_engine.py",),
    ("bench_hop_cost.py",),
    ("bench_load.py",),
    ("bench_gjson.py",),
    ("bench_graphtests.py",),
    ("bench_runs.py",),
    ("bench_runs.py", "--db", "postgres", "--workers", "2", "--suite-cases", "0"),
    ("bench_scale.py",),
    ("bench_editor.py",),
    ("bench_real_models.py",),
]


def main() -> int:
    failed = []
    for script, *arguments in BENCHMARKS:
        name = " ".join([script, *arguments])
        print(f"\n=== {name}", flush=True)
        started = time.monotonic()
        result = subprocess.run(
            [sys.executable, str(HERE / script), *arguments], cwd=HERE.parent, check=False
        )
        print(
            f"=== {name}: {'done' if result.returncode == 0 else 'FAILED'} in {time.monotonic() - started:.0f} s"
        )
        if result.returncode != 0:
            failed.append(name)
    if failed:
        print(f"\nBenchmarks that could not run: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
