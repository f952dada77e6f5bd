/** Short labels the cards print; the full text goes in a tooltip beside them. */

/**
 * How many characters of a condition a step row prints. A card is 262 px wide (Canvas.tsx), and
 * a row's condition line holds about 36 characters of the 10.5 px monospace font after the "if"
 * tag; 34 leaves room for the ellipsis.
 */
export const CONDITION_CHARS = 34;

/** `text` cut to `max` characters (the last one an ellipsis) when longer; else unchanged. */
export function shorten(text: string, max: number = CONDITION_CHARS): string {
  const chars = Array.from(text);
  if (chars.length <= max) return text;
  return `${chars.slice(0, Math.max(1, max - 1)).join("")}…`;
}
