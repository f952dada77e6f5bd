/// <reference types="vitest/config" />
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";
import { fileURLToPath } from "node:url";

// scripts/build.mjs runs one build per page (IGS_PAGE=editor|list) into dist/ with fixed
// file names (no content hashes), so that Django templates can include
// {% static 'assets/editor.js' %} and {% static 'assets/editor.css' %}.
const page = process.env.IGS_PAGE ?? "editor";
const entry = fileURLToPath(new URL(`./src/${page}/main.tsx`, import.meta.url));

export default defineConfig({
  plugins: [react()],
  base: "./",
  build: {
    outDir: "dist",
    emptyOutDir: process.env.IGS_EMPTY_OUT_DIR !== "0",
    sourcemap: false,
    cssCodeSplit: false,
    chunkSizeWarningLimit: 1500,
    rollupOptions: {
      input: { [page]: entry },
      output: {
        entryFileNames: "assets/[name].js",
        chunkFileNames: `assets/${page}-[name].js`,
        // The page's stylesheet is assets/<page>.css; other assets (the elkjs worker) keep their name.
        assetFileNames: (info) => {
          const names = [...(info.names ?? []), ...(info.originalFileNames ?? [])];
          return names.some((n) => n.endsWith(".css")) ? `assets/${page}.css` : "assets/[name][extname]";
        },
      },
    },
  },
  test: {
    include: ["src/**/*.test.ts"],
    environment: "node",
  },
});
