"""The graphs bench_editor.py opens: one shape for the Nodes view, one for the Flow view.

The Nodes view draws one card per node, so its graphs are counted in nodes: chains fanning out of
the root, every node on a grid in the saved layout. The Flow view draws one box per step and each
called node inline, as a group inside its caller's group; the Nodes graphs' chains are 100 calls
deep, which the Flow view draws as 100 nested frames (a picture far wider than the screen even at
the smallest zoom, with one box in view when fitted). So the Flow view gets a pipeline of the
shape people build, counted in steps: a root Sequence of routing stages (Ensembles and Switches),
each branch a Sequence of models.
"""

from __future__ import annotations

from typing import Any

# Grid spacing of the saved layout: a card is 300 px wide and about 110-160 px high.
GRID_X, GRID_Y = 360, 220


def _manifest(name: str, nodes: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "serving.kserve.io/v1alpha1",
        "kind": "InferenceGraph",
        "metadata": {"name": name, "namespace": "bench"},
        "spec": {"nodes": nodes},
    }


def _grid(names: list[str]) -> dict[str, Any]:
    columns = max(5, round((len(names) * GRID_Y / GRID_X) ** 0.5 * 1.6))
    return {
        "nodes": {n: {"x": (i % columns) * GRID_X, "y": (i // columns) * GRID_Y} for i, n in enumerate(names)}
    }


def nodes_graph(name: str, nodes: int, steps: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """``nodes`` nodes with ``steps`` steps in all: chains fanning out of the root, on a grid.

    The root calls the first node of each chain; every other node calls the next one in its chain;
    the last node of each chain and the first nodes (for the extra steps) call services.
    """
    chains = max(1, nodes // 100)
    names = ["root"] + [f"n{i:04d}" for i in range(1, nodes)]
    children: dict[int, list[int]] = {i: [] for i in range(nodes)}
    for i in range(1, nodes):
        children[0 if i <= chains else i - chains].append(i)
    routers = ("Sequence", "Ensemble", "Switch", "Sequence")
    graph: dict[str, Any] = {}
    for i, node in enumerate(names):
        router = "Sequence" if i == 0 else routers[i % len(routers)]
        node_steps: list[dict[str, Any]] = []
        for c in children[i]:
            step: dict[str, Any] = {"name": f"to-{names[c]}", "nodeName": names[c]}
            if router == "Switch":
                step["condition"] = f'[@this].#(route=="{c}")'
            node_steps.append(step)
        graph[node] = {"routerType": router, "steps": node_steps}
    extra = steps - (nodes - 1)
    leaves = [i for i in range(nodes) if not children[i]]
    targets = leaves + [i for i in range(nodes) if children[i]]
    for k in range(extra):
        i = targets[k % len(targets)]
        router = graph[names[i]]["routerType"]
        step = {"name": f"svc-{k}", "serviceName": f"model-{k}"}
        if router == "Switch":
            step["condition"] = f'[@this].#(route=="svc-{k}")'
        elif router == "Sequence" and graph[names[i]]["steps"]:
            step["data"] = "$response"
        graph[names[i]]["steps"].append(step)
    return _manifest(name, graph), _grid(names)


def _service(k: int, **extra: Any) -> dict[str, Any]:
    return {"name": f"m{k}", "serviceName": f"model-{k}"} | extra


def flow_graph(name: str, steps: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """``steps`` steps (one box each in the Flow view): a root Sequence of routing stages.

    The stages alternate Ensemble (every branch runs, then a merge) and Switch (one branch per
    condition); each branch calls a Sequence of three models. A Switch's branches meet the next
    stage's in one join point in the Flow view. About sqrt(steps / 4) / 2 stages of equal width,
    so that the picture is about as wide as it is high once fitted.
    """
    stages = max(2, round((steps / 4) ** 0.5 / 2))
    per_stage = -(-(steps - stages) // stages)  # each stage's share of the other steps
    nodes: dict[str, Any] = {}
    root: list[dict[str, Any]] = []
    left, model = steps - stages, 0
    for s in range(stages):
        stage = f"stage-{s:02d}"
        switch = s % 2 == 1
        branches: list[dict[str, Any]] = []
        budget = min(per_stage, left)
        while budget >= 2:
            branch = f"{stage}-b{len(branches):02d}"
            width = min(3, budget - 1)
            models = [_service(model + i, **({"data": "$response"} if i else {})) for i in range(width)]
            nodes[branch] = {"routerType": "Sequence", "steps": models}
            call: dict[str, Any] = {"name": branch, "nodeName": branch}
            if switch:
                call["condition"] = f'[@this].#(kind=="{len(branches)}")'
            branches.append(call)
            budget -= 1 + width
            left -= 1 + width
            model += width
        nodes[stage] = {"routerType": "Switch" if switch else "Ensemble", "steps": branches}
        root.append({"name": stage, "nodeName": stage, **({"data": "$response"} if root else {})})
    graph = {"root": {"routerType": "Sequence", "steps": root}, **nodes}
    return _manifest(name, graph), _grid(list(graph))
