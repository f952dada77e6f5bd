// The size of a page's initial bundle from Vite's build output: the entry chunk and every chunk
// it imports statically, transitively (bytes of minified code, before compression). Chunks only
// reached through dynamic import() are counted apart as loaded on demand.
export function initialBytes(outputs, page) {
  const chunks = new Map(outputs.filter((o) => o.type === "chunk").map((c) => [c.fileName, c]));
  const entry = [...chunks.values()].find((c) => c.isEntry && c.name === page);
  if (!entry) throw new Error(`no entry chunk named ${page} in the build output`);
  const seen = new Set();
  const visit = (name) => {
    if (seen.has(name)) return;
    seen.add(name);
    for (const dep of chunks.get(name)?.imports ?? []) visit(dep);
  };
  visit(entry.fileName);
  const size = (c) => Buffer.byteLength(c.code, "utf8");
  let bytes = 0;
  let lazy = 0;
  for (const [name, c] of chunks) {
    if (seen.has(name)) bytes += size(c);
    else lazy += size(c);
  }
  return { bytes, chunks: seen.size, lazy };
}
