// Builds each page bundle on its own, so that each page needs exactly one JS and one CSS
// file with a fixed name: assets/<page>.js and assets/<page>.css (no shared chunk whose
// name or existence could change). Lazily loaded code (elkjs) gets its own fixed-name chunk.
import { build } from "vite";

const pages = ["editor", "list", "environments"];
for (const [i, page] of pages.entries()) {
  process.env.IGS_PAGE = page;
  process.env.IGS_EMPTY_OUT_DIR = i === 0 ? "1" : "0";
  await build({ configFile: new URL("../vite.config.ts", import.meta.url).pathname, logLevel: "warn" });
  console.log(`built ${page}`);
}
