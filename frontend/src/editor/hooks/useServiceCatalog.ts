/**
 * The studio's catalog of services (`GET /api/services/`) for the palette, listed again whenever the
 * window regains focus (a graph saved or an environment changed in another tab shows up on return).
 * Null until the first answer; a failed listing keeps the last one (the palette still offers the
 * graph's own services and the environments' maps).
 */
import { useEffect, useState } from "react";
import type { Api, ServiceCatalog } from "../../api";

export function useServiceCatalog(api: Api): ServiceCatalog | null {
  const [catalog, setCatalog] = useState<ServiceCatalog | null>(null);
  useEffect(() => {
    let cancelled = false;
    const refresh = () => {
      api
        .listServices()
        .then((answer) => {
          if (!cancelled) setCatalog(answer);
        })
        .catch(() => undefined);
    };
    refresh();
    window.addEventListener("focus", refresh);
    return () => {
      cancelled = true;
      window.removeEventListener("focus", refresh);
    };
  }, [api]);
  return catalog;
}
