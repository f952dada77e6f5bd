import { useEffect, useState } from "react";
import type { Notice } from "../types";

const NOTICE_MS = 6000;

/** The editor's toast: success and info notices go away by themselves, errors stay until dismissed. */
export function useNotice() {
  const [notice, setNotice] = useState<Notice | null>(null);
  useEffect(() => {
    if (!notice || notice.kind === "error") return;
    const t = setTimeout(() => setNotice(null), NOTICE_MS);
    return () => clearTimeout(t);
  }, [notice]);
  return [notice, setNotice] as const;
}
