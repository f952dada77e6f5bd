/**
 * The "Tests" tab: the graph's saved test cases (docs/graph-tests.md) with add, edit, duplicate
 * and delete, import and export of the YAML test file, the suite run and the comparison of two
 * versions above them. Editing a case opens the case editor (CaseEditor.tsx) in its place.
 */
import { useCallback, useEffect, useRef, useState } from "react";
import { ApiError, downloadBlob, type Api, type Environment, type Run, type TestCaseRow } from "../api";
import { ErrorBanner, Modal, Spinner, describeApiError } from "../common/ui";
import { CaseEditor } from "./CaseEditor";
import { caseForm, type CaseForm } from "./caseForm";
import { copyName, describeExpectation, type CaseIssue } from "./expectations";
import { ProblemBanner } from "./ProblemBanner";
import { SuiteSection } from "./SuiteSection";
import { CompareSection } from "./CompareSection";
import type { CaseComparison } from "./compare";
import type { CaseResult } from "./suite";
import type { SuiteController } from "./useSuiteRun";
import "./suites.css";

/** What the Tests panel needs of the suite: its controller and where it runs. */
export interface SuiteProps {
  controller: SuiteController;
  shownVersion: number | null;
  environments: Environment[];
  defaultEnvironment: string;
  onOpenRun: (result: CaseResult) => void;
  /** A compared case chosen (null: none): version `b` on the canvas with its changed steps. */
  onCompareCase: (c: CaseComparison | null, b: number) => void;
}

export function SuitePanel({ api, graph, shownRun, refreshKey, highlight, suite }: { api: Api; graph: string; shownRun: Run | null; refreshKey: number; highlight: number | null; suite: SuiteProps }) {
  const [rows, setRows] = useState<TestCaseRow[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [editing, setEditing] = useState<CaseForm | null>(null);
  const [said, setSaid] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<TestCaseRow | null>(null);
  const [importing, setImporting] = useState<{ name: string; text: string } | null>(null);
  const [importProblem, setImportProblem] = useState<{ message: string; issues: CaseIssue[] } | null>(null);
  const [versions, setVersions] = useState<number[]>([]);
  const fileRef = useRef<HTMLInputElement>(null);

  useEffect(() => {
    let stale = false;
    api.listVersions(graph).then(
      (page) => !stale && setVersions((Array.isArray(page) ? page : page.results).map((v) => v.number)),
      () => undefined, // the version on screen is still offered
    );
    return () => {
      stale = true;
    };
  }, [api, graph, refreshKey]);

  const p = suite.controller.progress;
  const lastResult = new Map((p?.results ?? []).map((r) => [r.case, r]));

  const load = useCallback(async () => {
    try {
      setRows(await api.listTests(graph));
      setError(null);
    } catch (err) {
      setError(`Could not list the test cases: ${describeApiError(err)}`);
    }
  }, [api, graph]);

  useEffect(() => {
    void load();
  }, [load, refreshKey]);

  const duplicate = async (row: TestCaseRow) => {
    setBusy(`dup-${row.id}`);
    try {
      const copy = await api.createTest(graph, { ...row.document, name: copyName(row.name, (rows ?? []).map((r) => r.name)) });
      setSaid(`Duplicated as “${copy.name}”.`);
      await load();
    } catch (err) {
      setError(describeApiError(err));
    } finally {
      setBusy(null);
    }
  };

  const remove = async (row: TestCaseRow) => {
    setDeleting(null);
    setBusy(`del-${row.id}`);
    try {
      await api.deleteTest(graph, row.id);
      setSaid(`Deleted “${row.name}”.`);
      await load();
    } catch (err) {
      setError(describeApiError(err));
    } finally {
      setBusy(null);
    }
  };

  const exportFile = async () => {
    setBusy("export");
    try {
      downloadBlob(await api.exportTests(graph), `${graph}.tests.yaml`);
    } catch (err) {
      setError(describeApiError(err));
    } finally {
      setBusy(null);
    }
  };

  const importFile = async (mode: "merge" | "replace") => {
    if (!importing) return;
    setBusy("import");
    setImportProblem(null);
    try {
      const result = await api.importTests(graph, importing.text, mode);
      setImporting(null);
      setSaid(`Imported ${result.count} case${result.count === 1 ? "" : "s"} from ${importing.name}.`);
      await load();
    } catch (err) {
      setImportProblem({ message: describeApiError(err), issues: err instanceof ApiError ? (err.issues as CaseIssue[]) : [] });
    } finally {
      setBusy(null);
    }
  };

  if (editing) {
    return (
      <div className="tests-panel">
        <CaseEditor
          api={api}
          graph={graph}
          shownRun={shownRun}
          initial={editing}
          onCancel={() => setEditing(null)}
          onSaved={(row) => {
            setEditing(null);
            setSaid(`Saved “${row.name}”.`);
            void load();
          }}
        />
      </div>
    );
  }

  return (
    <div className="tests-panel">
      <SuiteSection
        suite={suite.controller}
        shownVersion={suite.shownVersion}
        versions={versions}
        environments={suite.environments}
        defaultEnvironment={suite.defaultEnvironment}
        hasCases={!!rows?.length}
        onOpenRun={suite.onOpenRun}
      />
      <CompareSection api={api} graph={graph} versions={versions} environments={suite.environments} hasCases={!!rows?.length} onSelectCase={suite.onCompareCase} />
      <div className="tests-bar">
        <button type="button" className="btn btn-small btn-primary" onClick={() => setEditing(caseForm(null, null))}>
          New test case
        </button>
        <button type="button" className="btn btn-small" onClick={() => fileRef.current?.click()} disabled={busy === "import"}>
          Import…
        </button>
        <button type="button" className="btn btn-small" onClick={() => void exportFile()} disabled={busy === "export" || !rows?.length} aria-busy={busy === "export" || undefined}>
          Export YAML
        </button>
        <input
          ref={fileRef}
          type="file"
          hidden
          accept=".yaml,.yml,application/yaml,text/yaml"
          aria-label="Test file to import"
          onChange={(ev) => {
            const f = ev.target.files?.[0];
            ev.target.value = "";
            if (f) void f.text().then((text) => setImporting({ name: f.name, text }));
          }}
        />
      </div>
      {said && (
        <p className="tests-said small" role="status">
          {said}
        </p>
      )}
      <ErrorBanner error={error} onDismiss={() => setError(null)} />
      {rows === null && !error && <Spinner label="Loading the test cases" />}
      {rows !== null && rows.length === 0 && (
        <p className="empty-note">No test cases yet. Run the graph and use “Save as test case…” in the console, add one here, or import a test file.</p>
      )}
      {rows !== null && rows.length > 0 && (
        <ul className="case-list" aria-label="Test cases">
          {rows.map((row) => {
            const exps = Array.isArray(row.document.expectations) ? (row.document.expectations as unknown[]) : [];
            return (
              <li key={row.id} className={`case-item${highlight === row.id ? " highlight" : ""}`} data-case={row.id}>
                <div className="case-name">
                  {row.name}
                  {lastResult.has(row.id) && p && (
                    <span className={`outcome outcome-chip-${lastResult.get(row.id)!.outcome}`} title={`Its last result: the suite run on v${p.version}`}>
                      {lastResult.get(row.id)!.outcome} on v{p.version}
                    </span>
                  )}
                </div>
                {row.description && <div className="small muted">{row.description}</div>}
                <ul className="case-exps small">
                  {exps.slice(0, 4).map((exp, i) => (
                    <li key={i}>{describeExpectation(exp)}</li>
                  ))}
                  {exps.length > 4 && <li className="muted">and {exps.length - 4} more</li>}
                  {exps.length === 0 && <li className="muted">no expectations</li>}
                </ul>
                <div className="case-actions">
                  <button type="button" className="btn btn-tiny" onClick={() => setEditing(caseForm(row, row.document))} aria-label={`Edit ${row.name}`}>
                    Edit
                  </button>
                  <button type="button" className="btn btn-tiny" onClick={() => void duplicate(row)} disabled={busy === `dup-${row.id}`} aria-label={`Duplicate ${row.name}`}>
                    Duplicate
                  </button>
                  <button type="button" className="btn btn-tiny btn-danger-ghost" onClick={() => setDeleting(row)} disabled={busy === `del-${row.id}`} aria-label={`Delete ${row.name}`}>
                    Delete
                  </button>
                </div>
              </li>
            );
          })}
        </ul>
      )}
      <Modal
        open={deleting !== null}
        title="Delete the test case?"
        onClose={() => setDeleting(null)}
        footer={
          <>
            <button type="button" className="btn" onClick={() => setDeleting(null)}>
              Cancel
            </button>
            <button type="button" className="btn btn-danger" onClick={() => deleting && void remove(deleting)}>
              Delete
            </button>
          </>
        }
      >
        <p>“{deleting?.name}” will be deleted for everyone working on this graph.</p>
      </Modal>
      <Modal
        open={importing !== null}
        title={`Import ${importing?.name ?? "a test file"}`}
        onClose={() => {
          setImporting(null);
          setImportProblem(null);
        }}
        footer={
          <>
            <button type="button" className="btn" onClick={() => setImporting(null)}>
              Cancel
            </button>
            <button type="button" className="btn" onClick={() => void importFile("replace")} disabled={busy === "import"}>
              Replace all cases
            </button>
            <button type="button" className="btn btn-primary" onClick={() => void importFile("merge")} disabled={busy === "import"}>
              Merge
            </button>
          </>
        }
      >
        <p>Merge adds the file's cases and replaces those with the same name; Replace makes the graph's cases exactly the file's. Nothing changes if the file has a problem.</p>
        {importProblem && <ProblemBanner message={importProblem.message} issues={importProblem.issues.slice(0, 20)} />}
      </Modal>
    </div>
  );
}
