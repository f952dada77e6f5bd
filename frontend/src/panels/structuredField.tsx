/** Free-form YAML (or JSON) for nested structures: affinity, tolerations, resources extras. */
import { useEffect, useId, useState, type ReactNode } from "react";
import { parse, stringify } from "yaml";
import { isObject } from "../graph/manifest";
import type { Json } from "../graph/types";
import { Field } from "./fields";

export function StructuredField({
  label,
  value,
  onChange,
  help,
  expect,
  readOnly,
}: {
  label: string;
  value: Json | undefined;
  onChange: (value: Json | undefined) => void;
  help?: ReactNode;
  expect: "object" | "array";
  readOnly?: boolean;
}) {
  const id = useId();
  const external = value === undefined ? "" : stringify(value, { lineWidth: 0 }).trimEnd();
  const [draft, setDraft] = useState(external);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setDraft(external);
    setError(null);
  }, [external]);
  const apply = () => {
    if (draft === external) return;
    if (draft.trim() === "") {
      setError(null);
      onChange(undefined);
      return;
    }
    try {
      const parsed = parse(draft) as Json;
      if (expect === "array" ? !Array.isArray(parsed) : !isObject(parsed)) {
        setError(expect === "array" ? "Must be a list." : "Must be a mapping.");
        return;
      }
      setError(null);
      onChange(parsed);
    } catch (err) {
      setError(err instanceof Error ? err.message.split("\n")[0] : String(err));
    }
  };
  return (
    <Field label={label} help={help ?? "YAML or JSON; applied when the field loses focus."} error={error} id={id}>
      <textarea
        id={id}
        className={`input mono textarea${error ? " input-invalid" : ""}`}
        rows={Math.min(10, Math.max(2, draft.split("\n").length))}
        value={draft}
        readOnly={readOnly}
        spellCheck={false}
        onChange={(e) => setDraft(e.target.value)}
        onBlur={apply}
        onKeyDown={(e) => {
          if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) apply();
        }}
      />
    </Field>
  );
}
