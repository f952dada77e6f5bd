/** Short labels the cards print; the full text goes in a tooltip beside them. */

/**
 * How many characters of a condition a step row prints: the condition line has about 196 px
 * beside its "if" tag, and a character of its 10.5 px monospace font is 6.3 px wide (both
 * measured in headless Chromium), so 31 fit; 30 keeps a margin for other fonts.
 */
export const CONDITION_CHARS = 30;

/** `text` cut to `max` characters (the last one an ellipsis) when longer; else unchanged. */
export function shorten(text: string, max: number = CONDITION_CHARS): string {
  const chars = Array.from(text);
  if (chars.length <= max) return text;
  return `${chars.slice(0, Math.max(1, max - 1)).join("")}…`;
}
