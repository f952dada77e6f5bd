/**
 * The YAML view, both ways: canvas edits rewrite the text at once; text that parses into a
 * manifest updates the canvas (one `replaceManifest` edit, so undo works); text that does not
 * parse is marked at its line and the canvas keeps the last good document.
 */
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { yaml } from "@codemirror/lang-yaml";
import { bracketMatching, defaultHighlightStyle, foldGutter, indentOnInput, syntaxHighlighting } from "@codemirror/language";
import { lintGutter, setDiagnostics, type Diagnostic } from "@codemirror/lint";
import { Annotation, Compartment, EditorState } from "@codemirror/state";
import { EditorView, drawSelection, highlightActiveLine, highlightActiveLineGutter, keymap, lineNumbers } from "@codemirror/view";
import { useEffect, useMemo, useRef, useState, type RefObject } from "react";
import { toManifest } from "../graph/manifest";
import type { GraphState, Issue, JsonObject } from "../graph/types";
import { issueProblems, lineAt, manifestToYaml, parseManifestText, type TextProblem } from "./yamlText";

/** Text that does not parse: the first problem and its line. */
export interface YamlInvalid {
  line: number;
  message: string;
}

/**
 * What the editor asks the panel before saving: parse typed text now (not after the typing
 * delay). "applied": the text changed the document (save after the next render); "invalid": it
 * does not parse (no save); "same": nothing to apply.
 */
export interface YamlControl {
  flush: () => { status: "same" | "applied" } | { status: "invalid"; invalid: YamlInvalid };
}

const External = Annotation.define<boolean>();
const PARSE_DELAY_MS = 300;

export function YamlPanel({
  state,
  issues,
  readOnly,
  visible,
  onManifest,
  onInvalid,
  control,
}: {
  state: GraphState;
  issues: Issue[];
  readOnly: boolean;
  visible: boolean;
  onManifest: (manifest: JsonObject) => void;
  /** The text stopped parsing (its first problem) or parses again (null). */
  onInvalid?: (invalid: YamlInvalid | null) => void;
  control?: RefObject<YamlControl | null>;
}) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const readOnlyConf = useRef(new Compartment());
  const lastJson = useRef<string>("");
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const onManifestRef = useRef(onManifest);
  onManifestRef.current = onManifest;
  const issuesRef = useRef(issues);
  issuesRef.current = issues;
  const [parseProblems, setParseProblemsState] = useState<TextProblem[]>([]);
  const [pending, setPending] = useState(false);
  const problemsRef = useRef<TextProblem[]>([]);
  const onInvalidRef = useRef(onInvalid);
  onInvalidRef.current = onInvalid;
  const invalidOf = (problems: TextProblem[]): YamlInvalid | null => {
    const first = problems[0];
    const text = view.current?.state.doc.toString() ?? "";
    return first ? { line: lineAt(text, first.from), message: first.message } : null;
  };
  const setParseProblems = (problems: TextProblem[]) => {
    const was = problemsRef.current;
    problemsRef.current = problems;
    setParseProblemsState(problems);
    if (was.length || problems.length) onInvalidRef.current?.(invalidOf(problems));
  };

  const manifest = useMemo(() => toManifest(state), [state]);
  const manifestJson = useMemo(() => JSON.stringify(manifest), [manifest]);
  const manifestJsonRef = useRef(manifestJson);
  manifestJsonRef.current = manifestJson;

  const publishDiagnostics = (problems: TextProblem[]) => {
    const v = view.current;
    if (!v) return;
    const text = v.state.doc.toString();
    let all = problems;
    if (!problems.length) {
      const parsed = parseManifestText(text);
      all = parsed.ok ? issueProblems(text, parsed.doc, issuesRef.current) : parsed.problems;
    }
    const len = v.state.doc.length;
    const diagnostics: Diagnostic[] = all.map((p) => ({
      from: Math.min(p.from, len),
      to: Math.min(Math.max(p.to, p.from), len),
      severity: p.severity,
      message: p.message,
    }));
    v.dispatch(setDiagnostics(v.state, diagnostics));
  };

  const parseNow = (): "same" | "applied" | "invalid" => {
    const v = view.current;
    if (!v) return "same";
    setPending(false);
    const parsed = parseManifestText(v.state.doc.toString());
    if (!parsed.ok) {
      setParseProblems(parsed.problems);
      publishDiagnostics(parsed.problems);
      return "invalid";
    }
    setParseProblems([]);
    const json = JSON.stringify(parsed.manifest);
    const changed = json !== manifestJsonRef.current;
    lastJson.current = json;
    onManifestRef.current(parsed.manifest);
    publishDiagnostics([]);
    return changed ? "applied" : "same";
  };

  if (control) {
    control.current = {
      flush: () => {
        let status: "same" | "applied" | "invalid" = problemsRef.current.length ? "invalid" : "same";
        if (timer.current) {
          clearTimeout(timer.current);
          timer.current = null;
          status = parseNow();
        }
        const invalid = status === "invalid" ? invalidOf(problemsRef.current) : null;
        return invalid ? { status: "invalid", invalid } : { status: status === "applied" ? "applied" : "same" };
      },
    };
  }

  useEffect(() => {
    if (!host.current) return;
    const v = new EditorView({
      parent: host.current,
      state: EditorState.create({
        doc: "",
        extensions: [
          lineNumbers(),
          highlightActiveLineGutter(),
          foldGutter(),
          history(),
          drawSelection(),
          indentOnInput(),
          bracketMatching(),
          highlightActiveLine(),
          syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
          yaml(),
          lintGutter(),
          keymap.of([...defaultKeymap, ...historyKeymap, indentWithTab]),
          EditorState.tabSize.of(2),
          EditorView.lineWrapping,
          readOnlyConf.current.of([EditorState.readOnly.of(false), EditorView.editable.of(true)]),
          EditorView.contentAttributes.of({ "aria-label": "YAML manifest" }),
          EditorView.updateListener.of((u) => {
            if (!u.docChanged || u.transactions.some((t) => t.annotation(External))) return;
            setPending(true);
            if (timer.current) clearTimeout(timer.current);
            timer.current = setTimeout(() => {
              timer.current = null;
              parseNow();
            }, PARSE_DELAY_MS);
          }),
        ],
      }),
    });
    view.current = v;
    return () => {
      if (timer.current) clearTimeout(timer.current);
      v.destroy();
      view.current = null;
    };
    // The editor is created once; later changes go through transactions.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  // Canvas → text. Skipped when this document is the one the text just produced, and while the
  // panel is hidden: for a 500-node graph printing the text, re-parsing it for the diagnostics and
  // CodeMirror's DOM update cost about a second of the editor's start (bench/bench_editor.py).
  // Showing the panel catches up.
  useEffect(() => {
    const v = view.current;
    if (!v || !visible) return;
    if (manifestJson === lastJson.current) return;
    lastJson.current = manifestJson;
    if (timer.current) {
      clearTimeout(timer.current);
      timer.current = null;
      setPending(false);
    }
    const text = manifestToYaml(manifest);
    if (text !== v.state.doc.toString()) {
      v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: text }, annotations: External.of(true) });
    }
    setParseProblems([]);
    publishDiagnostics([]);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [manifestJson, visible]);

  useEffect(() => {
    if (visible) publishDiagnostics(parseProblems);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [issues, visible]);

  useEffect(() => {
    view.current?.dispatch({
      effects: readOnlyConf.current.reconfigure([EditorState.readOnly.of(readOnly), EditorView.editable.of(!readOnly)]),
    });
  }, [readOnly]);

  useEffect(() => {
    if (visible) view.current?.requestMeasure();
  }, [visible]);

  const firstProblem = parseProblems[0];
  const line = firstProblem && view.current ? view.current.state.doc.lineAt(Math.min(firstProblem.from, view.current.state.doc.length)).number : null;
  const unmountInvalid = useRef(onInvalid);
  unmountInvalid.current = onInvalid;
  useEffect(() => () => unmountInvalid.current?.(null), []);

  return (
    <div className="yaml-panel">
      <div className="yaml-status" role="status">
        {firstProblem ? (
          <span className="text-error">
            ✕ Line {line}: {firstProblem.message} — the canvas shows the last valid document, and Save waits until the YAML is valid.
          </span>
        ) : pending ? (
          <span className="muted">Parsing…</span>
        ) : (
          <span className="muted">{readOnly ? "Read-only." : "Edits here update the canvas when the YAML is valid."}</span>
        )}
      </div>
      <div className="yaml-editor" ref={host} />
    </div>
  );
}
