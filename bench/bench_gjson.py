"""Benchmark of the router's condition check: ``ValidBytes(doc) && GetBytes(doc, cond).Exists()``.

Run: ``python bench/bench_gjson.py``. Builds a 1 KB and a 1 MB inference request
(``{"instances":[{modelId,label,score,text}...],"decision_picker":...}``), times typical KServe
conditions with :func:`execution.engine.conditions.condition_exists` (the engine's hot path) and
prints the best of several runs in microseconds, plus the ratio to ``json.loads`` of the same
document measured in the same process (the cost of merely parsing it with CPython's C decoder).
Prints figures only; it asserts nothing about time.
"""

from __future__ import annotations

import json
import random
import sys
import timeit
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from execution.engine.conditions import condition_exists

CONDITIONS = [
    "[@this].#(decision_picker==ERROR)",  # KServe's e2e Switch idiom (wraps the whole request)
    'instances.#(modelId=="2")',  # first element matches: stops early
    'instances.#(label=="zebra")',  # no element matches: visits every row
    "decision_picker",  # a key after a big array: skips the array
]
REPEATS = 5  # best of: the machine is shared


def build(size: int) -> bytes:
    """A request of about ``size`` bytes with the picker after the instances."""
    rng = random.Random(1)
    rows: list[dict[str, object]] = []
    while True:
        rows.append(
            {
                "modelId": str(rng.randint(0, 9)),
                "label": rng.choice(["cat", "dog"]),
                "score": [rng.random(), rng.random()],
                "text": "x" * rng.randint(5, 40),
            }
        )
        doc = json.dumps({"instances": rows, "decision_picker": "ERROR"}).encode()
        if len(doc) >= size:
            return doc


def best(fn: Callable[[], object], number: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=REPEATS)) / number


def main() -> None:
    for size, number in ((1024, 500), (1024 * 1024, 3)):
        doc = build(size)
        base = best(partial(json.loads, doc), number)
        print(f"document {len(doc)} bytes; json.loads {base * 1e6:.1f} us")
        for cond in CONDITIONS:
            t = best(partial(condition_exists, doc, cond), number)
            print(f"  {cond:38} {t * 1e6:10.1f} us  ({t / base:5.1f} x json.loads)")


if __name__ == "__main__":
    main()
