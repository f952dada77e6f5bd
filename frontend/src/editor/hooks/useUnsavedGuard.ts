import { useEffect } from "react";

/** With unsaved changes the browser asks before leaving the page, and the tab title starts with ●. */
export function useUnsavedGuard(dirty: boolean, graphName: string) {
  useEffect(() => {
    if (!dirty) return;
    const onBeforeUnload = (e: BeforeUnloadEvent) => {
      e.preventDefault();
      e.returnValue = "";
    };
    window.addEventListener("beforeunload", onBeforeUnload);
    return () => window.removeEventListener("beforeunload", onBeforeUnload);
  }, [dirty]);

  useEffect(() => {
    document.title = `${dirty ? "● " : ""}${graphName} · Inference Graph Studio`;
  }, [dirty, graphName]);
}
