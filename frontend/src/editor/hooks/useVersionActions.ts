import { ApiError, contentTypeFor, downloadBlob, type Api, type Version } from "../../api";
import { describeApiError, errorText } from "../../common/ui";
import { buildCompare } from "../compare";
import type { Busy, Confirm, Notice, View } from "../types";

interface VersionActionsOptions {
  api: Api;
  graphName: string;
  /** The version the working copy is based on. */
  base: number | null;
  dirty: boolean;
  view: View;
  /** Shows a saved version or a comparison on the canvas (null: back to the working copy). */
  showView: (view: View) => void;
  /** Makes a version from the server the working copy. */
  loadVersion: (version: Version | null) => void;
  onVersionsChanged: () => void;
  onCompared: () => void;
  setBusy: (busy: Busy) => void;
  setNotice: (notice: Notice) => void;
  setConfirm: (confirm: Confirm) => void;
  /** An export the test gate refused (409 `tests_required`): the editor asks for a reason. */
  onTestsRequired?: (refusal: { version: number; format: "yaml" | "json"; detail: string; lastPassing: number | null }) => void;
}

/** What the History panel, the view banners and Export/Import do with saved versions. */
export function useVersionActions({ api, graphName, base, dirty, view, showView, loadVersion, onVersionsChanged, onCompared, setBusy, setNotice, setConfirm, onTestsRequired }: VersionActionsOptions) {
  /** Shows version `n` read-only; false when it could not be loaded (the notice says why). */
  const viewVersion = async (n: number): Promise<boolean> => {
    setBusy("view");
    try {
      showView({ kind: "version", version: await api.getVersion(graphName, n) });
      return true;
    } catch (err) {
      setNotice({ kind: "error", text: `Could not open version ${n}: ${errorText(err)}` });
      return false;
    } finally {
      setBusy(null);
    }
  };

  const compareVersions = async (from: number, to: number) => {
    setBusy("compare");
    try {
      const [a, b, diff] = await Promise.all([api.getVersion(graphName, from), api.getVersion(graphName, to), api.diff(graphName, from, to).catch(() => null)]);
      showView({ kind: "compare", cmp: buildCompare(a, b, diff) });
      onCompared();
    } catch (err) {
      setNotice({ kind: "error", text: `Could not compare: ${errorText(err)}` });
    } finally {
      setBusy(null);
    }
  };

  const rollback = (n: number) => {
    setConfirm({
      title: `Roll back to version ${n}`,
      body: `This saves a new version with the content of version ${n}.${dirty ? " Your unsaved changes on the canvas will be replaced." : ""}`,
      confirmLabel: `Create version from v${n}`,
      danger: dirty,
      action: async () => {
        setBusy("rollback");
        try {
          const version = await api.rollback(graphName, n, base);
          loadVersion(version);
          onVersionsChanged();
          setNotice({ kind: "ok", text: `Rolled back: version ${version.number} has the content of version ${n}.` });
        } catch (err) {
          setNotice({ kind: "error", text: `Roll back failed: ${describeApiError(err)}` });
          if (err instanceof ApiError && err.status === 409) onVersionsChanged(); // show what was saved since
        } finally {
          setBusy(null);
        }
      },
    });
  };

  const exportAs = async (format: "yaml" | "json") => {
    const n = view?.kind === "version" ? view.version.number : view?.kind === "compare" ? view.cmp.to.number : base;
    if (!n) {
      setNotice({ kind: "error", text: "Save the graph first: export works on saved versions." });
      return;
    }
    setBusy("export");
    try {
      const blob = await api.exportVersion(graphName, n, format);
      downloadBlob(blob, `${graphName}-v${n}.${format}`);
      setNotice({ kind: "ok", text: `Exported version ${n} as ${format.toUpperCase()}.${dirty && !view ? " Unsaved changes are not included." : ""}` });
    } catch (err) {
      if (onTestsRequired && err instanceof ApiError && err.status === 409 && err.body?.code === "tests_required") {
        const last = err.body.last_passing_version;
        onTestsRequired({ version: n, format, detail: typeof err.body.detail === "string" ? err.body.detail : "", lastPassing: typeof last === "number" ? last : null });
        return;
      }
      setNotice({ kind: "error", text: `Export failed: ${describeApiError(err)}` });
    } finally {
      setBusy(null);
    }
  };

  /** Import replaces the canvas: with unsaved changes it asks before the file picker opens. */
  const startImport = (pick: () => void) => {
    if (!dirty) {
      pick();
      return;
    }
    setConfirm({
      title: "Import a file as a new version",
      body: "The file becomes a new version and replaces what is on the canvas. Your unsaved changes will be lost.",
      confirmLabel: "Choose file",
      danger: true,
      action: pick,
    });
  };

  const importFile = async (file: File, done: () => void) => {
    setBusy("import");
    try {
      const text = await file.text();
      const result = await api.importText(text, contentTypeFor(file.name, text), { graph: graphName, base });
      const version = result.graphs[0]?.version ?? (await api.getGraph(graphName)).latest_version;
      loadVersion(version);
      onVersionsChanged();
      setNotice({ kind: version?.valid === false ? "info" : "ok", text: `Imported ${file.name} as version ${version?.number ?? "?"}.${version?.valid === false ? " It has errors; see Problems." : ""}` });
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) {
        setNotice({ kind: "error", text: "The graph changed on the server since you opened it. Save or reload first, then import again." });
      } else {
        setNotice({ kind: "error", text: `Import failed: ${describeApiError(err)}` });
      }
    } finally {
      setBusy(null);
      done();
    }
  };

  return { viewVersion, compareVersions, rollback, exportAs, startImport, importFile };
}
