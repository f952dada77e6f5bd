/**
 * The "Run" tab: the request form (payload with saved samples, environment, extra headers, the
 * Run button) above the live console of the run being shown. All state lives in the
 * `RunController` the editor owns; this component only draws it.
 */
import { useEffect, useRef, useState } from "react";
import type { Selection } from "../../graph/selection";
import { Spinner } from "../../common/ui";
import type { RunController } from "./useRunController";
import { RunConsole, type SaveAsCase } from "./RunConsole";
import { FailureList } from "../../suites/SuiteSection";
import type { CaseResult } from "../../suites/suite";

/** The result of a suite case whose run the console shows. */
export type CaseFailures = CaseResult;
import { prettyJson } from "./prettyJson";
import { CloseIcon, RunIcon } from "../../common/icons";
// The run chunk's styles, in cascade order: the panel and console, the runs dialog, the marks the
// run draws on the canvas, the images, the waterfall.
import "./run.css";
import "./runs-dialog.css";
import "./run-marks.css";
import "./run-images.css";
import "./waterfall.css";
import type { Api, ProbeResult } from "../../api";
import { TestConnection } from "../../environments/TestConnection";
import { ImagePicker } from "./RunImages";
import type { Sample } from "./samples";
import { takesImages } from "./images";

type ProbeProps = { api: Api; services: string[]; onProbed?: (results: ProbeResult[], environment: string) => void };

export function RunPanel({
  ctl,
  versionLabel,
  selection,
  onSelectStep,
  saveAsCase,
  caseFailures,
  probe,
  metadataSamples = [],
}: {
  ctl: RunController;
  /** Sample v2 requests built from the probed services' input metadata (Test connection). */
  metadataSamples?: Sample[];
  /** Test connection beside the environment picker: the API and the serviceNames the graph calls. */
  probe?: ProbeProps;
  /** What the Run button runs, e.g. "version 3" or "version 3 (after saving)". */
  versionLabel: string;
  selection: Selection;
  onSelectStep: (node: string, index: number) => void;
  saveAsCase?: SaveAsCase;
  /** A suite case's failed expectations, shown above its run. */
  caseFailures?: CaseFailures | null;
}) {
  const failures = caseFailures && caseFailures.run === ctl.console.runId ? caseFailures : null;
  return (
    <div className="run-panel">
      {failures && (
        <section className="case-failures" aria-label="Failed expectations">
          <h3 className="case-failures-title">
            Test case “{failures.name}”: {failures.outcome}
            {failures.failures.length > 0 && ` (${failures.failures.length} expectation${failures.failures.length === 1 ? "" : "s"} failed)`}
          </h3>
          <FailureList failures={failures.failures} error={failures.error} />
        </section>
      )}
      <RunForm ctl={ctl} versionLabel={versionLabel} probe={probe} metadataSamples={metadataSamples} />
      <RunConsole ctl={ctl} selection={selection} onSelectStep={onSelectStep} saveAsCase={saveAsCase} />
    </div>
  );
}

function RunForm({ ctl, versionLabel, probe, metadataSamples }: { ctl: RunController; versionLabel: string; probe?: ProbeProps; metadataSamples: Sample[] }) {
  const [sampleName, setSampleName] = useState("");
  const [naming, setNaming] = useState(false);
  const [picked, setPicked] = useState("");
  const nameRef = useRef<HTMLInputElement>(null);

  useEffect(() => {
    if (naming) nameRef.current?.focus();
  }, [naming]);

  const format = () => {
    try {
      ctl.setPayload(prettyJson(JSON.parse(ctl.payload)));
    } catch {
      /* the error is shown under the editor */
    }
  };

  const commitSample = () => {
    const name = sampleName.trim();
    if (!name) return;
    ctl.saveSample(name);
    setPicked(name);
    setSampleName("");
    setNaming(false);
  };

  const setHeader = (i: number, which: 0 | 1, value: string) => {
    const rows = ctl.headers.map((r) => [...r] as [string, string]);
    rows[i][which] = value;
    ctl.setHeaders(rows);
  };

  return (
    <details className="run-form" open>
      <summary>Request</summary>
      <div className="field">
        <div className="field-label-row">
          <label className="label" htmlFor="run-payload">
            Payload (JSON)
          </label>
          <span className="spacer" />
          <button type="button" className="btn btn-ghost btn-tiny" onClick={format} disabled={!!ctl.payloadError} title="Pretty-print the JSON">
            Format
          </button>
        </div>
        <div className="sample-bar">
          <select
            className="input input-small"
            aria-label="Saved payloads"
            value={picked ? `browser:${picked}` : ""}
            onChange={(e) => {
              const value = e.target.value;
              // Options are "graph:<name>", "last" and "browser:<name>"; only the browser's can be deleted.
              if (value === "last") {
                if (ctl.lastPayload !== null) ctl.setPayload(ctl.lastPayload);
                setPicked("");
                return;
              }
              if (value.startsWith("meta:")) {
                const sample = metadataSamples.find((x) => x.name === value.slice(5));
                if (sample) ctl.setPayload(sample.payload);
                setPicked("");
                return;
              }
              if (value.startsWith("graph:")) {
                const sample = ctl.graphSamples.find((x) => x.name === value.slice(6));
                if (sample) ctl.setPayload(sample.payload);
                setPicked("");
                return;
              }
              const name = value.slice("browser:".length);
              setPicked(name);
              const sample = ctl.samples.find((x) => x.name === name);
              if (sample) ctl.setPayload(sample.payload);
            }}
          >
            <option value="">{ctl.samples.length || ctl.graphSamples.length || ctl.lastPayload !== null ? "Saved payloads…" : "No saved payloads"}</option>
            {ctl.graphSamples.length > 0 && (
              <optgroup label="This graph's samples">
                {ctl.graphSamples.map((x) => (
                  <option key={x.name} value={`graph:${x.name}`}>
                    {x.name}
                  </option>
                ))}
              </optgroup>
            )}
            {metadataSamples.length > 0 && (
              <optgroup label="From v2 metadata (Test connection)">
                {metadataSamples.map((x) => (
                  <option key={x.name} value={`meta:${x.name}`}>
                    {x.name}
                  </option>
                ))}
              </optgroup>
            )}
            {ctl.lastPayload !== null && (
              <optgroup label="Last run">
                <option value="last">Last payload used</option>
              </optgroup>
            )}
            {ctl.samples.length > 0 && (
              <optgroup label="Saved in this browser">
                {ctl.samples.map((x) => (
                  <option key={x.name} value={`browser:${x.name}`}>
                    {x.name}
                  </option>
                ))}
              </optgroup>
            )}
          </select>
          <button type="button" className="btn btn-small" onClick={() => setNaming((n) => !n)} disabled={!!ctl.payloadError} aria-expanded={naming}>
            Save payload…
          </button>
          <button
            type="button"
            className="btn btn-small btn-danger-ghost"
            disabled={!picked}
            onClick={() => {
              ctl.deleteSample(picked);
              setPicked("");
            }}
            title={picked ? `Delete the saved payload "${picked}"` : "Pick a saved payload to delete it"}
          >
            Delete
          </button>
        </div>
        {naming && (
          <form
            className="sample-name-row"
            onSubmit={(e) => {
              e.preventDefault();
              commitSample();
            }}
          >
            <input ref={nameRef} className="input input-small" aria-label="Payload name" placeholder="Name, e.g. two dogs" value={sampleName} onChange={(e) => setSampleName(e.target.value)} maxLength={80} />
            <button type="submit" className="btn btn-small btn-primary" disabled={!sampleName.trim()}>
              Save
            </button>
          </form>
        )}
        {takesImages(ctl.payload, ctl.graphSamples) && (
          <ImagePicker
            onPayload={(payload) => {
              ctl.setPayload(payload);
              setPicked("");
            }}
          />
        )}
        <textarea
          id="run-payload"
          className={`textarea mono payload-editor${ctl.payloadError ? " input-invalid" : ""}`}
          spellCheck={false}
          rows={7}
          value={ctl.payload}
          onChange={(e) => ctl.setPayload(e.target.value)}
          aria-invalid={!!ctl.payloadError}
          aria-describedby={ctl.payloadError ? "run-payload-error" : undefined}
        />
        {ctl.payloadError && (
          <p id="run-payload-error" className="field-error">
            {ctl.payloadError}
          </p>
        )}
      </div>
      <div className="field run-env-row">
        <label className="label" htmlFor="run-environment">
          Environment
        </label>
        <select id="run-environment" className="input input-small" value={ctl.environment} onChange={(e) => ctl.setEnvironment(e.target.value)}>
          {!ctl.environments.some((e) => e.name === ctl.environment) && <option value={ctl.environment}>{ctl.environment}</option>}
          {ctl.environments.map((e) => (
            <option key={e.id} value={e.name} title={e.description || e.url_template}>
              {e.name}
            </option>
          ))}
        </select>
        <a className="btn btn-small" href={`/environments/?edit=${encodeURIComponent(ctl.environment)}`} target="_blank" rel="noopener">
          Manage environments<span className="visually-hidden"> (opens in a new tab)</span>
        </a>
        {ctl.environmentsError && <span className="field-warning">Could not list environments: {ctl.environmentsError}</span>}
        {probe && <TestConnection api={probe.api} environmentId={ctl.environments.find((e) => e.name === ctl.environment)?.id ?? null} environmentName={ctl.environment} services={probe.services} onProbed={probe.onProbed} idPrefix="run-probe" key={ctl.environment} />}
      </div>
      <fieldset className="field run-headers">
        <legend className="label">Extra headers</legend>
        {ctl.headers.map(([name, value], i) => (
          <div key={i} className="header-row">
            <input className="input input-small mono" aria-label={`Header ${i + 1} name`} placeholder="Name" value={name} onChange={(e) => setHeader(i, 0, e.target.value)} />
            <input className="input input-small mono" aria-label={`Header ${i + 1} value`} placeholder="Value" value={value} onChange={(e) => setHeader(i, 1, e.target.value)} />
            <button type="button" className="btn btn-ghost btn-tiny" aria-label={`Remove header ${i + 1}`} onClick={() => ctl.setHeaders(ctl.headers.filter((_, j) => j !== i))}>
              <CloseIcon />
            </button>
          </div>
        ))}
        <button type="button" className="btn btn-ghost btn-small" onClick={() => ctl.setHeaders([...ctl.headers, ["", ""]])}>
          + Add header
        </button>
      </fieldset>
      <div className="run-actions">
        <button
          type="button"
          className="btn btn-primary run-button"
          onClick={() => void ctl.start()}
          disabled={ctl.starting || !!ctl.payloadError}
          title={`Run ${versionLabel} (Ctrl+Enter)`}
          aria-keyshortcuts="Control+Enter"
          aria-busy={ctl.starting || undefined}
        >
          {ctl.starting ? <Spinner decorative /> : <RunIcon />}
          Run
        </button>
        <span className="field-help">
          {versionLabel} · <kbd>Ctrl</kbd>+<kbd>Enter</kbd>
        </span>
      </div>
      {ctl.startProblem && (
        <div className="error-banner run-start-error" role="alert">
          <div>
            <div>{ctl.startProblem.message}</div>
            {ctl.startProblem.issues.length > 0 && (
              <ul className="run-issues">
                {ctl.startProblem.issues.slice(0, 8).map((i, k) => (
                  <li key={k}>
                    {i.node ? <span className="mono">{i.node}{typeof i.step === "number" ? `[${i.step}]` : ""}: </span> : null}
                    {i.message}
                  </li>
                ))}
              </ul>
            )}
          </div>
        </div>
      )}
    </details>
  );
}
