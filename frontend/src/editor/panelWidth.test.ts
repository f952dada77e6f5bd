import { describe, expect, it } from "vitest";
import { CANVAS_MIN, clampWidth, DEFAULT_WIDTH, loadPanelOpen, loadWidth, MIN_WIDTH, savePanelOpen, saveWidth } from "./panelWidth";

function memoryStore() {
  const m = new Map<string, string>();
  return { getItem: (k: string) => m.get(k) ?? null, setItem: (k: string, v: string) => void m.set(k, v) };
}

describe("side panel width", () => {
  it("keeps a width between the minimum and what leaves the canvas its minimum", () => {
    expect(clampWidth(100, 1440)).toBe(MIN_WIDTH);
    expect(clampWidth(600, 1440)).toBe(600);
    expect(clampWidth(5000, 1440)).toBe(1440 - CANVAS_MIN);
    expect(clampWidth(500, 600)).toBe(MIN_WIDTH);
    expect(clampWidth(Number.NaN, 1440)).toBe(DEFAULT_WIDTH);
  });
  it("is remembered per user", () => {
    const store = memoryStore();
    expect(loadWidth(store, "erin")).toBe(DEFAULT_WIDTH);
    saveWidth(store, "erin", 612.4);
    expect(loadWidth(store, "erin")).toBe(612);
    expect(loadWidth(store, "sam")).toBe(DEFAULT_WIDTH);
    expect(loadWidth(null, "erin")).toBe(DEFAULT_WIDTH);
  });
});

describe("whether the side panel is shown", () => {
  it("is shown unless the user folded it away, per user", () => {
    const data = new Map<string, string>();
    const store = { getItem: (k: string) => data.get(k) ?? null, setItem: (k: string, v: string) => void data.set(k, v) };
    expect(loadPanelOpen(store, "erin")).toBe(true);
    savePanelOpen(store, "erin", false);
    expect(loadPanelOpen(store, "erin")).toBe(false);
    expect(loadPanelOpen(store, "demo")).toBe(true);
    savePanelOpen(store, "erin", true);
    expect(loadPanelOpen(store, "erin")).toBe(true);
    expect(loadPanelOpen(null, "erin")).toBe(true);
  });
});
