import { useEffect, useState, type Dispatch } from "react";
import { ApiError, type Api, type GraphSummary, type Version } from "../../api";
import { errorText } from "../../common/ui";
import { useLatest } from "../../common/useLatest";
import { emptyManifest, fromManifest, toLayout } from "../../graph/manifest";
import type { Action } from "../store";

/**
 * Loads the graph once: its locked version (a read-only page), else its latest version, else an
 * empty manifest for a graph without versions. A missing graph is a load error, not a crash.
 * `loadVersion` makes a version the working copy; the latest one passed is used.
 */
export function useGraphLoader({ api, graphName, lockedVersion, loadVersion, dispatch }: { api: Api; graphName: string; lockedVersion: number | null; loadVersion: (version: Version | null) => void; dispatch: Dispatch<Action> }) {
  const [loading, setLoading] = useState(true);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [graphInfo, setGraphInfo] = useState<GraphSummary | null>(null);
  const load = useLatest(loadVersion);

  useEffect(() => {
    let cancelled = false;
    (async () => {
      try {
        const info = await api.getGraph(graphName);
        if (cancelled) return;
        setGraphInfo(info);
        if (lockedVersion !== null) {
          const v = await api.getVersion(graphName, lockedVersion);
          if (!cancelled) load.current(v);
        } else if (info.latest_version) {
          load.current(info.latest_version);
        } else {
          const manifest = emptyManifest(graphName, info.namespace);
          dispatch({
            type: "load",
            version: { number: 0, manifest, layout: toLayout(fromManifest(manifest, null)), spec_hash: "", message: "", author: "", created_at: "", parent: null, valid: false, issues: [], tests: null },
          });
          load.current(null);
        }
      } catch (err) {
        if (!cancelled) setLoadError(err instanceof ApiError && err.status === 404 ? `There is no graph named "${graphName}".` : `Could not load the graph: ${errorText(err)}`);
      } finally {
        if (!cancelled) setLoading(false);
      }
    })();
    return () => {
      cancelled = true;
    };
  }, [api, graphName, lockedVersion, dispatch, load]);

  return { loading, loadError, graphInfo };
}
