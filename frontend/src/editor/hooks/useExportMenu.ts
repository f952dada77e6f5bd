import { useState } from "react";
import { downloadBlob, type Api } from "../../api";
import { exportCurl, TOKEN_VARIABLE } from "../../common/curl";
import type { GateRefusal } from "../../suites/SuiteGate";
import { useExportNote } from "../../suites/useExportNote";
import type { Notice, View } from "../types";

interface ExportMenuOptions {
  api: Api;
  graphName: string;
  view: View;
  base: number | null;
  lockedVersion: number | null;
  /** Downloads the version on the canvas (the version actions' export, which may meet the gate). */
  exportAs: (format: "yaml" | "json") => Promise<void>;
  /** Opens the deploy dialog for a version. */
  deployVersion: (version: number) => void;
  setNotice: (notice: Notice) => void;
}

/**
 * The toolbar's Export menu: open or closed, the note on the exported version's tests, and its
 * items (download as YAML or JSON, copy a curl command, deploy). An export the test gate refused
 * waits in `gate` until the user gives a reason (`forceExport`) or gives up.
 */
export function useExportMenu({ api, graphName, view, base, lockedVersion, exportAs, deployVersion, setNotice }: ExportMenuOptions) {
  const [open, setOpen] = useState(false);
  const [gate, setGate] = useState<GateRefusal | null>(null);
  // The version the menu acts on: the one on the canvas, else the working copy's base.
  const version = view?.kind === "version" ? view.version.number : view?.kind === "compare" ? view.cmp.to.number : base;
  const note = useExportNote(api, graphName, version, open);

  const download = (format: "yaml" | "json") => {
    setOpen(false);
    void exportAs(format);
  };

  const copyCurl = () => {
    setOpen(false);
    if (!version) {
      setNotice({ kind: "error", text: "Save the graph first: export works on saved versions." });
      return;
    }
    const command = exportCurl(window.location.origin, graphName, version, "yaml");
    navigator.clipboard.writeText(command).then(
      () => setNotice({ kind: "ok", text: `Copied a curl command that downloads version ${version} as YAML; it reads your API token from $${TOKEN_VARIABLE} (create one under API tokens).` }),
      () => setNotice({ kind: "info", text: `The browser refused the clipboard; the command: ${command}` }),
    );
  };

  const deploy =
    version !== null && lockedVersion === null
      ? () => {
          setOpen(false);
          deployVersion(version);
        }
      : undefined;

  /** Exports the refused version all the same, with the reason (written to the audit log). */
  const forceExport = async (reason: string) => {
    if (!gate) return;
    downloadBlob(await api.exportVersion(graphName, gate.version, gate.format, { reason }), `${graphName}-v${gate.version}.${gate.format}`);
    setGate(null);
    setNotice({ kind: "ok", text: `Exported version ${gate.version} without passing tests; the reason is in the audit log.` });
  };

  return { open, setOpen, note, download, copyCurl, deploy, gate, setGate, forceExport };
}
