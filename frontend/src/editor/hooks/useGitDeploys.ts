import { useState } from "react";
import type { Api, Version } from "../../api";
import { errorText } from "../../common/ui";
import { useDeployments } from "../../deploys/useDeployments";
import type { Notice } from "../types";

interface GitDeploysOptions {
  api: Api;
  graphName: string;
  loaded: boolean;
  dirty: boolean;
  lockedVersion: number | null;
  /** Makes a version from the server the working copy (back from any view). */
  editVersion: (version: Version) => void;
  onVersionsChanged: () => void;
  setNotice: (notice: Notice) => void;
}

/**
 * Deploys through Git in the editor: what is live where (`deploys`), the version the deploy
 * dialog is open for (`deployOf`), and importing a change made in Git (drift) as a new version,
 * which becomes the working copy unless the user has unsaved edits.
 */
export function useGitDeploys({ api, graphName, loaded, dirty, lockedVersion, editVersion, onVersionsChanged, setNotice }: GitDeploysOptions) {
  const deploys = useDeployments(api, graphName, loaded);
  const [deployOf, setDeployOf] = useState<number | null>(null);

  const importDrift = async () => {
    if (!deploys.drift) return;
    try {
      const version = await api.importDrift(graphName, deploys.drift.id);
      onVersionsChanged();
      await deploys.reload();
      if (!dirty && lockedVersion === null) {
        editVersion(version);
        setNotice({ kind: "ok", text: `Imported the change made in Git as version ${version.number}.` });
      } else {
        setNotice({ kind: "ok", text: `Imported the change made in Git as version ${version.number}; your canvas still shows what you were editing.` });
      }
    } catch (err) {
      setNotice({ kind: "error", text: `Import failed: ${errorText(err)}` });
    }
  };

  /** A deploy went out: the history and what is live are read again. */
  const onDeployed = () => {
    onVersionsChanged();
    void deploys.reload();
  };

  return { deploys, deployOf, setDeployOf, importDrift, onDeployed };
}
