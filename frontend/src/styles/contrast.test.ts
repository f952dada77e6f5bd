/**
 * Helper text meets WCAG AA: the grey of `--muted` and `--text-2` has a
 * contrast of at least 4.5:1 on every background the panels use, and so do the status colours on
 * white and on their soft backgrounds (WCAG 2.x, 1.4.3).
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const css = readFileSync(join(dirname(fileURLToPath(import.meta.url)), "base.css"), "utf8");

function variable(name: string): string {
  const m = css.match(new RegExp(`--${name}:\\s*(#[0-9a-fA-F]{6})`));
  if (!m) throw new Error(`--${name} not found in base.css`);
  return m[1];
}

/** Relative luminance, WCAG 2.x. */
function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255).map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

describe("helper text contrast", () => {
  it("computes known contrasts", () => {
    expect(contrast("#000000", "#ffffff")).toBeCloseTo(21, 5);
    expect(contrast("#777777", "#ffffff")).toBeCloseTo(4.48, 2);
  });
  for (const [text, bg] of [
    ["error", "error-soft"],
    ["ok", "ok-soft"],
    ["warning", "warning-soft"],
    ["error", "panel"],
    ["ok", "panel"],
    ["warning", "panel"],
  ]) {
    it(`status text --${text} on --${bg} reaches 4.5:1`, () => {
      expect(contrast(variable(text), variable(bg))).toBeGreaterThanOrEqual(4.5);
    });
  }
  for (const text of ["muted", "text-2"]) {
    for (const bg of ["panel", "panel-2", "bg"]) {
      it(`--${text} on --${bg} reaches 4.5:1`, () => {
        expect(contrast(variable(text), variable(bg))).toBeGreaterThanOrEqual(4.5);
      });
    }
  }
});
