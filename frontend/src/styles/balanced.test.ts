/**
 * Every stylesheet closes each block it opens. The page's stylesheets are built into one file, and
 * a block left open (a merge that drops a `}`) does not fail the build: CSS nesting takes every
 * rule after it, in that file and in the files after it, for a rule inside it, which then matches
 * nothing.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = dirname(dirname(fileURLToPath(import.meta.url)));

/** The line of each block still open at the end of `css` (comments and strings skipped). */
export function unclosedBlocks(css: string): number[] {
  const open: number[] = [];
  let line = 1;
  for (let i = 0; i < css.length; i++) {
    const c = css[i];
    if (c === "\n") line++;
    else if (c === "/" && css[i + 1] === "*") {
      const end = css.indexOf("*/", i + 2);
      const stop = end < 0 ? css.length : end + 2;
      line += (css.slice(i, stop).match(/\n/g) ?? []).length;
      i = stop - 1;
    } else if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < css.length && css[j] !== c && css[j] !== "\n") j += css[j] === "\\" ? 2 : 1;
      i = j;
    } else if (c === "{") open.push(line);
    else if (c === "}") {
      if (open.length === 0) return [-line];
      open.pop();
    }
  }
  return open;
}

describe("stylesheets", () => {
  it("finds a block left open, and a stray closing brace", () => {
    expect(unclosedBlocks(".a {\n  color: red;\n}\n.b {\n  margin: 0;\n/* } */\n.c { content: \"}\"; }\n")).toEqual([4]);
    expect(unclosedBlocks(".a { }\n}\n")).toEqual([-2]);
    expect(unclosedBlocks("@media (width > 1px) {\n  .a { color: red; }\n}\n")).toEqual([]);
  });

  const files = readdirSync(SRC, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".css"));

  it("are found", () => {
    expect(files.length).toBeGreaterThan(5);
  });

  it.each(files.map((f) => [relative(SRC, join(SRC, f))]))("%s closes every block it opens", (file) => {
    expect(unclosedBlocks(readFileSync(join(SRC, file), "utf8")), "the lines of the blocks left open (negative: a } with no block)").toEqual([]);
  });
});
