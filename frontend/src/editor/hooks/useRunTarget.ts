import { useState } from "react";
import type { Notice, View } from "../types";

/**
 * Which saved version the Run button runs: the one on the canvas (viewed, compared or locked),
 * else the working copy's base; with unsaved edits it asks first (`pending` holds the question
 * until `answer` is called with a version number or null for "do not run").
 */
export function useRunTarget({ view, lockedVersion, dirty, base, setNotice }: { view: View; lockedVersion: number | null; dirty: boolean; base: number | null; setNotice: (notice: Notice) => void }) {
  const [pending, setPending] = useState<{ resolve: (version: number | null) => void } | null>(null);

  const resolveVersion = (): Promise<number | null> => {
    if (view?.kind === "version") return Promise.resolve(view.version.number);
    if (view?.kind === "compare") return Promise.resolve(view.cmp.to.number);
    if (lockedVersion !== null) return Promise.resolve(lockedVersion);
    if (!dirty) {
      if (base === null) setNotice({ kind: "error", text: "Save the graph first: runs use saved versions." });
      return Promise.resolve(base);
    }
    return new Promise((resolve) => setPending({ resolve }));
  };

  const answer = (version: number | null | Promise<number | null>) => {
    const asked = pending;
    setPending(null);
    void Promise.resolve(version).then((v) => asked?.resolve(v));
  };

  const label = view?.kind === "version" ? `version ${view.version.number}` : view?.kind === "compare" ? `version ${view.cmp.to.number}` : lockedVersion !== null ? `version ${lockedVersion}` : dirty ? `unsaved edits on v${base ?? "?"}` : base !== null ? `version ${base}` : "no saved version";

  return { resolveVersion, label, asking: pending !== null, answer };
}
