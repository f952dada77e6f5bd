/**
 * The studio's catalog of services (`GET /api/services/`) for the palette, listed again whenever the
 * window regains focus (a graph saved or an environment changed in another tab shows up on return).
 * Null until the first answer; a failed listing keeps the last one (the palette still offers the
 * graph's own services and the environments' maps).
 */
import { useCallback, useState } from "react";
import type { Api, ServiceCatalog } from "../../api";
import { useRefreshOnFocus } from "../../common/useRefreshOnFocus";

export function useServiceCatalog(api: Api): ServiceCatalog | null {
  const [catalog, setCatalog] = useState<ServiceCatalog | null>(null);
  const load = useCallback(
    (alive: () => boolean) => {
      api
        .listServices()
        .then((answer) => {
          if (alive()) setCatalog(answer);
        })
        .catch(() => undefined);
    },
    [api],
  );
  useRefreshOnFocus(load);
  return catalog;
}
