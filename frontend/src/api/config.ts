/** The settings Django gives each page (`StudioConfig`), and how the page reads them. */

export interface StudioConfig {
  apiBase: string;
  user: string;
  csrfToken: string;
  logoutUrl: string;
  graph?: string;
  version?: number | null;
  /** The environments page: staff may share environments and change the system default. */
  isStaff?: boolean;
  /** The tokens page: this site's address (scheme and host), for the ready `curl` line. */
  siteUrl?: string;
  /** The password sign-in form (the editor signs in again there when the session ended). */
  loginUrl?: string;
}

/** What `Api.signIn` found: signed in, or why not (a sentence to show). */
export type SignInResult = { ok: true } | { ok: false; message: string };

/** Reads the JSON that Django's `json_script` filter put in `<script id="studio-config">`. */
export function readConfig(): StudioConfig {
  const el = document.getElementById("studio-config");
  const parsed = el?.textContent ? (JSON.parse(el.textContent) as Partial<StudioConfig>) : {};
  return {
    apiBase: parsed.apiBase ?? "/api/",
    user: parsed.user ?? "",
    csrfToken: parsed.csrfToken ?? "",
    logoutUrl: parsed.logoutUrl ?? "/logout/",
    graph: parsed.graph,
    version: parsed.version ?? null,
    isStaff: parsed.isStaff ?? false,
    siteUrl: parsed.siteUrl,
  };
}
