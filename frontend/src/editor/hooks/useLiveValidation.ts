import { useEffect, useRef, useState } from "react";
import type { Api } from "../../api";
import type { Issue, JsonObject } from "../../graph/types";

const VALIDATE_DELAY_MS = 500;

/**
 * Live validation: the server checks the working copy's manifest a moment after the last edit
 * (the server decides; the local checks are the fallback while it cannot be reached). An answer
 * that arrives after a newer edit is dropped.
 */
export function useLiveValidation(api: Api, manifestJson: string, enabled: boolean) {
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
        const result = await api.validate(JSON.parse(manifestJson) as JsonObject);
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
  }, [api, manifestJson, enabled]);

  return { serverIssues, setServerIssues, validationFailed, checking };
}
