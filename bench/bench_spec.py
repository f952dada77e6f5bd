"""Benchmark of the graph language core: export (YAML) and import (load + parse + validate).

Run: ``python bench/bench_spec.py``. Builds graphs of 50 and 500 nodes (a root Sequence fanning out
to Switch/Ensemble/Splitter/Sequence nodes with four steps each), times each operation several
times and prints the medians and the 500/50 ratio. Goals: 500 nodes under 100 ms for each
operation, ratio ≤ 12 (about linear). Prints figures only; it asserts nothing about time.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import yaml

from graphs.language import export_yaml, has_errors, manifest_from_document, parse, validate

ROUTERS = ("Switch", "Ensemble", "Splitter", "Sequence")
REPEATS = 15  # medians: the machine is shared, single runs are noisy


def build(nodes: int) -> dict[str, Any]:
    """A valid graph of ``nodes`` nodes (root included), 4 steps per node."""
    graph: dict[str, Any] = {}
    children = [f"node-{i}" for i in range(1, nodes)]
    root_steps = [{"name": f"call-{name}", "nodeName": name, "dependency": "Hard"} for name in children]
    graph["root"] = {"routerType": "Sequence", "steps": root_steps}
    for index, name in enumerate(children):
        router = ROUTERS[index % len(ROUTERS)]
        steps = []
        for step in range(4):
            entry: dict[str, Any] = {"name": f"s{step}", "serviceName": f"model-{index}-{step}"}
            if router == "Switch":
                entry["condition"] = f'[@this].#(route=="{step}")'
            elif router == "Splitter":
                entry["weight"] = 25
            elif router == "Sequence" and step > 0:
                entry["data"] = "$response"
            steps.append(entry)
        graph[name] = {"routerType": router, "steps": steps}
    return {
        "apiVersion": "serving.kserve.io/v1alpha1",
        "kind": "InferenceGraph",
        "metadata": {"name": f"bench-{nodes}", "namespace": "bench"},
        "spec": {"nodes": graph, "routerTimeouts": {"serverWrite": 120}},
    }


def median_ms(operation: Callable[[], object]) -> float:
    operation()  # warm-up
    samples = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        operation()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def main() -> None:
    print(f"PyYAML {yaml.__version__}, libyaml: {yaml.__with_libyaml__}; median of {REPEATS} runs")
    results: dict[int, dict[str, float]] = {}
    for size in (50, 500):
        manifest = manifest_from_document(build(size))
        text = export_yaml(manifest)
        assert not has_errors(validate(parse(text)))  # the benchmark measures a valid graph

        results[size] = {
            "export yaml": median_ms(lambda m=manifest: export_yaml(m)),
            "import (load+parse+validate)": median_ms(lambda t=text: validate(parse(t))),
            "  of which validate": median_ms(lambda m=manifest: validate(m)),
        }
        print(f"{size} nodes: {len(text):,} bytes of YAML")
    print()
    print(f"{'operation':<32}{'50 nodes':>12}{'500 nodes':>12}{'ratio':>8}")
    for operation in results[50]:
        small, large = results[50][operation], results[500][operation]
        print(f"{operation:<32}{small:>10.2f}ms{large:>10.2f}ms{large / small:>8.1f}")


if __name__ == "__main__":
    main()
