"""Benchmark of the editor page in headless Chromium: time to interactive and pan frame times.

Run: ``python bench/bench_editor.py [--runs N] [--keep]`` after ``make setup`` (it needs
frontend/dist and /usr/bin/chromium). Standalone: it migrates a throwaway SQLite database under
/tmp, creates one user and the graphs below through the services, starts
``manage.py runserver --noreload`` on a free loopback port (its own process group, stopped at the
end) and drives Debian's Chromium with Playwright.

Graphs: a 20-node baseline, 500 nodes / 600 steps and 1,000 nodes / 1,200 steps. Every node is
on a grid in the saved layout; the nodes form chains fanning out of the root (every node reachable,
every node with at least one step). Each graph is opened three ways: ``fit`` (the Nodes view, no
saved viewport: the editor fits the whole graph, every card on screen), ``zoom 1`` (the Nodes view
with a saved viewport at 100 %, as after a person panned around and saved) and ``flow`` (the Flow
view, the editor's default, which always fits its picture: one box per model, each called node a
group inside its caller's, laid out by elkjs in a web worker).

Measures, per page load (medians over ``--runs`` loads):
- time to interactive: navigation start → the first animation frame in which the cards are
  rendered and measured (no ``visibility: hidden`` node left, the loading message gone, and as
  many ``.router-card`` as nodes, or, when the editor renders only the cards in view, a card
  count that holds for three frames; in the Flow view: laid out, and a ``.flow-box`` count that
  holds for three frames), plus the frame after it: painted, the canvas then answers input;
- pan: the mouse presses on an empty spot of the canvas and drags (8 strokes of 240 px in 24
  moves each) while the page records the intervals between ``requestAnimationFrame`` callbacks;
  p50/p95/max of those intervals, pooled over the runs. At 60 Hz a frame is 16.7 ms, so p95 at the
  goal means no dropped frames for 95 % of frames;
- long tasks (PerformanceObserver ``longtask``, > 50 ms) during load and during panning.

Goals (issue text): 500 nodes interactive ≤ 1.5 s and pan p95 ≤ 16.7 ms; 1,000 nodes pan
p95 ≤ 33 ms. Prints figures and ratios to the baseline; asserts nothing (benchmarks measure, they do not assert: docs/architecture.md).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
VIEWPORT = {"width": 1440, "height": 900}
FRAME_MS = 1000 / 60  # one frame at 60 Hz
# Grid spacing of the saved layout: a card is 300 px wide and about 110-160 px high.
GRID_X, GRID_Y = 360, 220
USER, PASSWORD = "bench", "bench-password-1"

SIZES = [(20, 24), (500, 600), (1000, 1200)]  # (nodes, steps); the first is the baseline
GOALS: dict[int, dict[str, float]] = {
    500: {"tti_ms": 1500.0, "pan_p95_ms": FRAME_MS},
    1000: {"pan_p95_ms": 2 * FRAME_MS},
}

# Installed before the page's own scripts: watches every animation frame from navigation start
# until the canvas is fully drawn, and records long tasks.
READY_JS = """
(() => {
  const bench = (window.__bench = { ready: null, painted: null, cards: 0, longTasks: [] });
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) bench.longTasks.push({ start: e.startTime, duration: e.duration });
    }).observe({ type: "longtask", buffered: true });
  } catch (e) {}
  const expected = () => Number(window.__benchExpected || 0);
  const selector = () => window.__benchSelector || ".router-card";
  // Frames (timestamps) since the card count last changed while the canvas looked complete.
  let streak = [], lastCount = -1;
  const check = () => {
    const now = performance.now();
    const cards = document.querySelectorAll(selector()).length;
    const complete =
      !document.querySelector(".center-message") &&
      !document.querySelector(".flow-canvas:not([data-laid-out])") &&
      cards > 0 &&
      !document.querySelector('.react-flow__node[style*="visibility: hidden"]');
    if (!complete) {
      streak = [];
      lastCount = -1;
    } else {
      if (cards !== lastCount) streak = [];
      streak.push(now);
      lastCount = cards;
      // Every node drawn; or (when the editor draws only the cards in view) the count has held for
      // three frames: ready at the first of them, painted at the second.
      if ((expected() && cards >= expected()) || streak.length >= 3) {
        bench.ready = streak[0];
        bench.cards = cards;
        if (streak.length >= 2) {
          bench.painted = streak[1];
        } else {
          requestAnimationFrame(() => { bench.painted = performance.now(); });
        }
        return;
      }
    }
    requestAnimationFrame(check);
  };
  requestAnimationFrame(check);
})();
"""

PAN_START_JS = """
() => {
  const pan = (window.__pan = { deltas: [], last: 0, on: true, longTasks: [] });
  const tick = (t) => {
    if (!pan.on) return;
    if (pan.last) pan.deltas.push(t - pan.last);
    pan.last = t;
    requestAnimationFrame(tick);
  };
  pan.observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) pan.longTasks.push(e.duration);
  });
  try { pan.observer.observe({ type: "longtask" }); } catch (e) {}
  requestAnimationFrame(tick);
}
"""

PAN_STOP_JS = """
() => new Promise((resolve) => {
  // One more frame so that the last pan update is painted and counted.
  requestAnimationFrame(() => requestAnimationFrame(() => {
    const pan = window.__pan;
    pan.on = false;
    try { pan.observer.disconnect(); } catch (e) {}
    resolve({ deltas: pan.deltas, longTasks: pan.longTasks });
  }));
})
"""

# An empty spot of the canvas (the pane itself under the pointer), so that a drag pans.
EMPTY_SPOT_JS = """
() => {
  const r = document.querySelector(".react-flow__pane").getBoundingClientRect();
  for (let fy = 0.5; fy < 0.95; fy += 0.03) {
    for (let fx = 0.3; fx < 0.9; fx += 0.02) {
      for (const sign of [1, -1]) {
        const x = r.left + r.width * (0.5 + sign * (fx - 0.3)), y = r.top + r.height * (fy - 0.4);
        const el = document.elementFromPoint(x, y);
        if (el && el.classList.contains("react-flow__pane")) return { x, y };
      }
    }
  }
  return null;
}
"""


# ---- the graphs ---------------------------------------------------------------------------------


def build_graph(name: str, nodes: int, steps: int) -> tuple[dict[str, Any], dict[str, Any]]:
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
    manifest = {
        "apiVersion": "serving.kserve.io/v1alpha1",
        "kind": "InferenceGraph",
        "metadata": {"name": name, "namespace": "bench"},
        "spec": {"nodes": graph},
    }
    columns = max(5, round((nodes * GRID_Y / GRID_X) ** 0.5 * 1.6))
    layout = {
        "nodes": {n: {"x": (i % columns) * GRID_X, "y": (i // columns) * GRID_Y} for i, n in enumerate(names)}
    }
    return manifest, layout


@dataclass
class Scenario:
    graph: str
    nodes: int
    steps: int
    view: str  # "fit" or "zoom 1" (the Nodes view) or "flow" (the Flow view)
    tti_ms: list[float] = field(default_factory=list)
    parse_ms: list[float] = field(default_factory=list)  # navigation start → DOMContentLoaded end
    frames: list[float] = field(default_factory=list)
    load_long_tasks: list[float] = field(default_factory=list)
    pan_long_tasks: list[float] = field(default_factory=list)
    cards: int = 0
    # Chromium's own counters (CDP Performance.getMetrics), milliseconds summed over runs.
    load_split: dict[str, float] = field(default_factory=dict)
    pan_split: dict[str, float] = field(default_factory=dict)


SPLIT = {
    "ScriptDuration": "script",
    "RecalcStyleDuration": "style",
    "LayoutDuration": "layout",
    "TaskDuration": "all tasks",
}


def cdp_metrics(cdp: Any) -> dict[str, float]:
    got = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    return {label: got.get(name, 0.0) * 1000 for name, label in SPLIT.items()}


def add_split(total: dict[str, float], before: dict[str, float], after: dict[str, float]) -> None:
    for key in after:
        total[key] = total.get(key, 0.0) + after[key] - before.get(key, 0.0)


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[k]


# ---- the server -----------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def prepare_database(
    env: dict[str, str], sizes: list[tuple[int, int]]
) -> tuple[str, list[tuple[str, int, int, str]]]:
    """Migrates, creates the user and the graphs; returns the session cookie value and the graphs."""
    os.environ.update(env)
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client

    from graphs import services

    call_command("migrate", verbosity=0, interactive=False)
    user = get_user_model().objects.create_user(USER, password=PASSWORD)
    graphs = []
    for nodes, steps in sizes:
        for view in ("fit", "zoom 1"):
            name = f"bench-{nodes}-{'fit' if view == 'fit' else 'zoom'}"
            manifest, layout = build_graph(name, nodes, steps)
            if view != "fit":
                layout["viewport"] = {"x": 40, "y": 40, "zoom": 1}
            graph = services.graph_create(
                owner=user, name=name, manifest=manifest, layout=layout, message="bench"
            )
            assert graph.latest_version is not None
            if graph.latest_version.issues:
                codes = sorted({i["code"] for i in graph.latest_version.issues})
                print(f"  note: {name} has issues {codes}", file=sys.stderr)
            graphs.append((name, nodes, steps, view))
            if view == "fit":
                graphs.append((name, nodes, steps, "flow"))
    client = Client()
    client.force_login(user)
    return client.cookies[settings.SESSION_COOKIE_NAME].value, graphs


def start_server(env: dict[str, str], port: int, log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
            cwd=REPO,
            env={**os.environ, **env},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stopped as a whole
        )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"runserver exited ({proc.returncode}); see {log}:\n{log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/login/", timeout=2) as response:
                if response.status == 200:
                    return proc
        except OSError:
            time.sleep(0.2)
    stop_server(proc)
    raise RuntimeError(f"runserver did not answer within 60 s; see {log}")


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


# ---- the browser ------------------------------------------------------------------------------


def measure(page: Any, base: str, scenario: Scenario) -> None:
    flow = scenario.view == "flow"
    # The editor remembers the view in localStorage (frontend/src/flow/viewPref.ts).
    page.add_init_script(
        f"localStorage.setItem('inference-graph-studio:canvas-view', '{'flow' if flow else 'nodes'}');\n"
        f"window.__benchExpected = {0 if flow else scenario.nodes};\n"
        f"window.__benchSelector = '{'.flow-box' if flow else '.router-card'}';\n{READY_JS}"
    )
    cdp = page.context.new_cdp_session(page)
    cdp.send("Performance.enable")
    page.goto(f"{base}/graphs/{scenario.graph}/", wait_until="commit")
    page.wait_for_function("window.__bench && window.__bench.painted !== null", timeout=120_000, polling=100)
    result = page.evaluate(
        """() => {
          const nav = performance.getEntriesByType("navigation")[0];
          return { ...window.__bench, dcl: nav ? nav.domContentLoadedEventEnd : null };
        }"""
    )
    scenario.tti_ms.append(result["painted"])
    scenario.parse_ms.append(result["dcl"] or float("nan"))
    scenario.cards = result["cards"]
    scenario.load_long_tasks.extend(
        t["duration"] for t in result["longTasks"] if t["start"] <= result["painted"]
    )
    add_split(scenario.load_split, {}, cdp_metrics(cdp))

    # Let the debounced live validation land first: it re-renders every card once.
    page.locator(".valid-chip:not(.checking)").wait_for(timeout=120_000)
    page.wait_for_timeout(300)
    spot = page.evaluate(EMPTY_SPOT_JS)
    if spot is None:
        raise RuntimeError(f"{scenario.graph}: no empty spot on the canvas to start a pan")
    before = cdp_metrics(cdp)
    page.evaluate(PAN_START_JS)
    x, y = spot["x"], spot["y"]
    for dx, dy in [(240, 0), (0, 160), (-240, 0), (0, -160)] * 2:
        page.mouse.move(x, y)
        page.mouse.down()
        page.mouse.move(x + dx, y + dy, steps=24)
        page.mouse.up()
    pan = page.evaluate(PAN_STOP_JS)
    add_split(scenario.pan_split, before, cdp_metrics(cdp))
    scenario.frames.extend(pan["deltas"])
    scenario.pan_long_tasks.extend(pan["longTasks"])


def run(runs: int, keep: bool, sizes: list[tuple[int, int]]) -> list[Scenario]:
    from playwright.sync_api import sync_playwright

    tmp = Path(tempfile.mkdtemp(prefix="studio-bench-editor-"))
    env = {
        "DATABASE_URL": f"sqlite:///{tmp / 'bench.sqlite3'}",
        "DJANGO_DEBUG": "1",
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DJANGO_LOG_LEVEL": "ERROR",
    }
    proc = None
    try:
        print(f"preparing {tmp} …", file=sys.stderr)
        cookie, graphs = prepare_database(env, sizes)
        port = free_port()
        proc = start_server(env, port, tmp / "runserver.log")
        base = f"http://127.0.0.1:{port}"
        scenarios = [Scenario(name, nodes, steps, view) for name, nodes, steps, view in graphs]
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            context = browser.new_context(viewport=VIEWPORT)
            context.add_cookies([{"name": "sessionid", "value": cookie, "url": base}])
            # Warm-up: the first load pays for Chromium's caches and Django's first requests.
            warm = context.new_page()
            measure(warm, base, Scenario(scenarios[0].graph, scenarios[0].nodes, scenarios[0].steps, "fit"))
            warm.close()
            for scenario in scenarios:
                for _ in range(runs):
                    page = context.new_page()
                    try:
                        measure(page, base, scenario)
                    finally:
                        page.close()
                print(f"  measured {scenario.graph}", file=sys.stderr)
            browser.close()
        return scenarios
    finally:
        if proc is not None:
            stop_server(proc)
        if keep:
            print(f"kept {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def report(scenarios: list[Scenario]) -> None:
    base = {s.view: s for s in scenarios if s.nodes == SIZES[0][0]}

    def verdict(value: float, goal: float | None) -> str:
        if goal is None:
            return ""
        return "ok" if value <= goal else "OVER"

    print()
    print("Editor in headless Chromium (software rendering, 1440x900), medians over runs; frames pooled")
    header = (
        f"{'graph':<16} {'view':<7} {'cards':>5} {'DCL ms':>7} {'TTI ms':>7} {'x base':>6} {'goal':>6} "
        f"{'':<4} {'pan p50':>7} {'p95':>6} {'max':>6} {'>16.7':>6} {'goal':>5} {'':<4} {'long tasks load/pan':>20}"
    )
    print(header)
    print("-" * len(header))
    for s in scenarios:
        tti = statistics.median(s.tti_ms)
        dcl = statistics.median(s.parse_ms)
        p50, p95 = percentile(s.frames, 0.5), percentile(s.frames, 0.95)
        worst = max(s.frames) if s.frames else float("nan")
        dropped = sum(1 for d in s.frames if d > FRAME_MS * 1.5) / max(1, len(s.frames))
        goals = GOALS.get(s.nodes, {})
        tti_goal, pan_goal = goals.get("tti_ms"), goals.get("pan_p95_ms")
        ratio = tti / statistics.median(base[s.view].tti_ms) if s.view in base else float("nan")
        long_load = f"{len(s.load_long_tasks)}/{max(s.load_long_tasks, default=0):.0f}ms"
        long_pan = f"{len(s.pan_long_tasks)}/{max(s.pan_long_tasks, default=0):.0f}ms"
        print(
            f"{s.graph:<16} {s.view:<7} {s.cards:>5} {dcl:>7.0f} {tti:>7.0f} {ratio:>6.1f} "
            f"{(f'{tti_goal:.0f}' if tti_goal else '-'):>6} {verdict(tti, tti_goal):<4} "
            f"{p50:>7.1f} {p95:>6.1f} {worst:>6.0f} {dropped:>6.0%} "
            f"{(f'{pan_goal:.1f}' if pan_goal else '-'):>5} {verdict(p95, pan_goal):<4} "
            f"{long_load + ' ' + long_pan:>20}"
        )
    print()
    print("Where the main thread's time goes (Chromium's counters, ms per page load / per pan of 8 strokes):")
    for s in scenarios:
        runs = max(1, len(s.tti_ms))
        load = ", ".join(f"{k} {v / runs:.0f}" for k, v in s.load_split.items())
        pan = ", ".join(f"{k} {v / runs:.0f}" for k, v in s.pan_split.items())
        print(f"  {s.graph:<16} load: {load}")
        print(f"  {'':<16} pan:  {pan}")
    print()
    print("TTI: navigation start -> first painted frame with every card rendered and measured.")
    print("DCL: navigation start -> DOMContentLoaded end (HTML + the editor bundle parsed and run).")
    print(">16.7: share of frames longer than 1.5 frames (dropped frames). Long tasks: count/longest.")


def report_bundles() -> None:
    """The pages' initial bundles as the last frontend build measured them (scripts/build.mjs)."""
    path = REPO / "frontend/dist/bundle-sizes.json"
    if not path.is_file():
        print("Bundle sizes: frontend/dist/bundle-sizes.json missing (rebuild the frontend).")
        return
    sizes = json.loads(path.read_text())
    print("Bundles (minified, before compression; initial = entry + static imports):")
    for page, s in sizes.items():
        mark = "ok" if s["initial_bytes"] <= s["budget_bytes"] else "OVER"
        print(
            f"  {page:<13} initial {s['initial_bytes'] / 1000:7.1f} KB in {s['initial_files']} file(s), "
            f"budget {s['budget_bytes'] / 1000:.0f} KB {mark}; on demand {s['lazy_bytes'] / 1000:.1f} KB"
        )
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="page loads per graph (default 3)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary database and server log")
    parser.add_argument("--max-nodes", type=int, default=1000, help="skip graphs bigger than this")
    args = parser.parse_args()
    missing = [p for p in (REPO / "frontend/dist/assets/editor.js", Path(CHROMIUM)) if not p.exists()]
    if missing:
        sys.exit(f"missing {', '.join(map(str, missing))}: run `make setup` (and apt-get install chromium)")
    sizes = [size for size in SIZES if size[0] <= args.max_nodes]
    report_bundles()
    report(run(args.runs, args.keep, sizes))


if __name__ == "__main__":
    main()
