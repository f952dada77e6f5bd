/**
 * Expected against actual as diff tools show them: the expected value's lines marked "-" (what the
 * run should have had, shown as removed), the actual value's lines marked "+" (what it had
 * instead, shown as added). Lines both sides share are kept once, unmarked, in place.
 */
export interface SideLine {
  sign: "-" | "+" | " ";
  text: string;
}

/** The JSON text of a value; `undefined` (a missing value) reads "(absent)". */
export function jsonText(value: unknown): string {
  return value === undefined ? "(absent)" : (JSON.stringify(value, null, 2) ?? String(value));
}

/** Most lines compared line by line; longer values are shown whole, one side after the other. */
const MAX_LINES = 400;

export function diffSides(expected: unknown, actual: unknown): SideLine[] {
  const a = jsonText(expected).split("\n");
  const b = jsonText(actual).split("\n");
  if (a.length > MAX_LINES || b.length > MAX_LINES) {
    return [...a.map((text) => ({ sign: "-" as const, text })), ...b.map((text) => ({ sign: "+" as const, text }))];
  }
  // Longest common subsequence of lines (bounded by MAX_LINES² cells).
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const out: SideLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push({ sign: " ", text: a[i] });
      i++;
      j++;
    } else if (lcs[i + 1][j] >= lcs[i][j + 1]) {
      out.push({ sign: "-", text: a[i++] });
    } else {
      out.push({ sign: "+", text: b[j++] });
    }
  }
  while (i < a.length) out.push({ sign: "-", text: a[i++] });
  while (j < b.length) out.push({ sign: "+", text: b[j++] });
  return out;
}
