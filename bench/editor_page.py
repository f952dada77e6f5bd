"""The scripts bench_editor.py runs in the editor page (Playwright ``add_init_script``/``evaluate``)."""

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
  // Below the low-detail threshold the editor mounts no card: its overview layer draws them all
  // into one <canvas> (frontend/src/canvas/LodLayer.tsx), which marks itself drawn (with the count
  // of boxes drawn), and the pane as answering the pointer once its listeners are attached.
  const overview = () => {
    const layer = document.querySelector(".lod-layer[data-drawn]");
    return layer && document.querySelector(".react-flow__pane[data-lod]") ? Number(layer.dataset.boxes) : 0;
  };
  const check = () => {
    const now = performance.now();
    const cards = overview() || document.querySelectorAll(selector()).length;
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
    resolve({ deltas: pan.deltas, longTasks: pan.longTasks, isolated: self.crossOriginIsolated });
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
        // The pane, or the frame of a Flow group (not draggable: a drag on it pans).
        if (el && (el.classList.contains("react-flow__pane") || el.classList.contains("flow-group"))) return { x, y };
      }
    }
  }
  return null;
}
"""

ZOOM_JS = """
() => {
  const m = /scale\\(([0-9.e-]+)\\)/.exec(document.querySelector(".react-flow__viewport").style.transform);
  return m ? Number(m[1]) : null;
}
"""
