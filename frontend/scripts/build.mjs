// Builds each page bundle on its own, so that each page needs exactly one entry JS and one CSS
// file with a fixed name: assets/<page>.js and assets/<page>.css. Lazily loaded code (CodeMirror,
// elkjs, panels not shown at first) gets chunks named assets/<page>-<name>.js.
//
// Then checks each page's initial bundle (its entry chunk plus the chunks it imports statically:
// everything loaded before the page can render, minified, before compression) against its budget
// and fails the build when one is exceeded (docs/architecture.md, "Bundle budgets").
import { writeFileSync } from "node:fs";
import { build } from "vite";
import { initialBytes } from "./bundleSize.mjs";

const BUDGETS = { editor: 600_000, list: 400_000, environments: 400_000, tokens: 400_000, deploytargets: 400_000 };

const pages = ["editor", "list", "environments", "tokens", "deploytargets"];
const over = [];
const report = {};
for (const [i, page] of pages.entries()) {
  process.env.IGS_PAGE = page;
  process.env.IGS_EMPTY_OUT_DIR = i === 0 ? "1" : "0";
  const result = await build({ configFile: new URL("../vite.config.ts", import.meta.url).pathname, logLevel: "warn" });
  const outputs = (Array.isArray(result) ? result : [result]).flatMap((r) => r.output);
  const { bytes, chunks, lazy } = initialBytes(outputs, page);
  const budget = BUDGETS[page];
  report[page] = { initial_bytes: bytes, initial_files: chunks, lazy_bytes: lazy, budget_bytes: budget };
  const kb = (n) => `${(n / 1000).toFixed(1)} KB`;
  console.log(`built ${page}: initial ${kb(bytes)} in ${chunks} file(s) (budget ${kb(budget)}), ${kb(lazy)} loaded on demand`);
  if (bytes > budget) over.push(`${page}: initial bundle ${kb(bytes)} exceeds its budget of ${kb(budget)}`);
}
// Read by bench/bench_editor.py, which prints the sizes beside its figures.
writeFileSync(new URL("../dist/bundle-sizes.json", import.meta.url), JSON.stringify(report, null, 2) + "\n");
if (over.length) {
  console.error(`Bundle budget exceeded:\n  ${over.join("\n  ")}`);
  process.exit(1);
}
