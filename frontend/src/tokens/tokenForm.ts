/** Pure helpers of the API tokens page: the expiry a choice means, and the ready `curl` line. */

/** The expiry choices offered: days from now, or none (the token works until revoked). */
export const EXPIRY_CHOICES: readonly { label: string; days: number | null }[] = [
  { label: "Never", days: null },
  { label: "7 days", days: 7 },
  { label: "30 days", days: 30 },
  { label: "90 days", days: 90 },
  { label: "1 year", days: 365 },
];

/** The `expires_at` the API takes for `days` from `now` (ISO 8601, UTC), or null for none. */
export function expiryFor(days: number | null, now: Date): string | null {
  if (days === null) return null;
  return new Date(now.getTime() + days * 86_400_000).toISOString();
}

/**
 * A shell command that lists the user's graphs with `key`: single quotes keep the shell from
 * reading anything inside (a key holds only URL-safe characters; the site URL is quoted the same way).
 */
export function curlLine(siteUrl: string, key: string): string {
  const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
  const base = siteUrl.replace(/\/+$/, "");
  return `curl -H ${quote(`Authorization: Token ${key}`)} ${quote(`${base}/api/graphs/`)}`;
}

/** Whether a token with this `expires_at` has expired at `now`. */
export function isExpired(expiresAt: string | null | undefined, now: Date): boolean {
  return expiresAt != null && new Date(expiresAt).getTime() <= now.getTime();
}
