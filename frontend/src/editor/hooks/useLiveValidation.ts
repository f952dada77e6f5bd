import { useEffect, useRef, useState } from "react";
import type { Api, ServiceContracts } from "../../api";
import type { Issue, JsonObject } from "../../graph/types";

const VALIDATE_DELAY_MS = 500;

/**
 * Live validation: the server checks the working copy's manifest a moment after the last edit
 * (the server decides; the local checks are the fallback while it cannot be reached). An answer
 * that arrives after a newer edit is dropped. `services` (what the last Test connection found)
 * makes the edge-contract warnings precise; a new probe checks again. `kserveVersion` (the release of
 * the environment chosen for runs) adds that release's CRD checks; choosing another checks again.
 */
export function useLiveValidation(api: Api, manifestJson: string, enabled: boolean, services?: ServiceContracts, kserveVersion?: string) {
  const [serverIssues, setServerIssues] = useState<Issue[] | null>(null);
  const [validationFailed, setValidationFailed] = useState(false);
  const [checking, setChecking] = useState(false);
  const seqRef = useRef(0);

  useEffect(() => {
    if (!enabled) return;
    const seq = ++seqRef.current;
    setChecking(true);
    const t = setTimeout(async () => {
      try {
        const result = await api.validate(JSON.parse(manifestJson) as JsonObject, services, kserveVersion);
        if (seq !== seqRef.current) return;
        setServerIssues(Array.isArray(result.issues) ? result.issues : []);
        setValidationFailed(false);
      } catch {
        if (seq !== seqRef.current) return;
        setServerIssues(null);
        setValidationFailed(true);
      } finally {
        if (seq === seqRef.current) setChecking(false);
      }
    }, VALIDATE_DELAY_MS);
    return () => clearTimeout(t);
  }, [api, manifestJson, enabled, services, kserveVersion]);

  return { serverIssues, setServerIssues, validationFailed, checking };
}
