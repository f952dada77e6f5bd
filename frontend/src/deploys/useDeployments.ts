/**
 * A graph's deployments, read with `?refresh=1` (the studio reads each live target's branch head,
 * so drift shows) when the editor opens and after each deploy or import: what is live where, and
 * the live deployment whose file was changed outside the studio, if any.
 */
import { useCallback, useEffect, useState } from "react";
import type { Api, Deployment } from "../api";
import { errorText } from "../common/ui";

export function useDeployments(api: Api, graph: string, enabled: boolean) {
  const [deployments, setDeployments] = useState<Deployment[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [checking, setChecking] = useState(false);

  const reload = useCallback(async () => {
    if (!graph) return;
    setChecking(true);
    try {
      const page = await api.listDeployments(graph, true);
      setDeployments(page.results);
      setError(null);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setChecking(false);
    }
  }, [api, graph]);

  useEffect(() => {
    if (enabled) void reload();
  }, [enabled, reload]);

  const live = deployments.filter((d) => d.live);
  const drift = live.find((d) => d.drift) ?? null;
  return { deployments, live, drift, error, checking, reload };
}
