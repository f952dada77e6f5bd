/**
 * How the client talks to the server: the only code that calls `fetch` (docs/architecture.md, "The
 * frontend"). Session auth with the CSRF token from the page's `studio-config`; every failure
 * becomes an `ApiError` carrying the server's `{detail, issues}` body. `Api` (src/api.ts) adds the
 * endpoints on top.
 */
import type { SignInResult, StudioConfig } from "./config";
import { ApiError } from "./errors";
import type { Page } from "./types";

/** What one request sends besides its method and path: the query, and a body (raw or as JSON). */
export interface RequestOptions {
  query?: Record<string, string | number | undefined>;
  body?: BodyInit;
  json?: unknown;
  headers?: Record<string, string>;
}

const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

export class ApiTransport {
  readonly config: StudioConfig;

  constructor(config: StudioConfig) {
    this.config = config;
  }

  protected url(path: string, query?: Record<string, string | number | undefined>): string {
    const base = this.config.apiBase.endsWith("/") ? this.config.apiBase : `${this.config.apiBase}/`;
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== "") params.set(k, String(v));
    const qs = params.toString();
    return `${base}${path}${qs ? `?${qs}` : ""}`;
  }

  /**
   * Signs in again with the password form (`/login/`) after the session ended, without leaving
   * the page. Django rotates the CSRF token on sign-in: the new one is read from its cookie.
   */
  async signIn(username: string, password: string): Promise<SignInResult> {
    const form = new URLSearchParams({ username, password, csrfmiddlewaretoken: this.config.csrfToken });
    let response: Response;
    try {
      response = await fetch(this.config.loginUrl ?? "/login/", {
        method: "POST",
        body: form,
        credentials: "same-origin",
        redirect: "manual",
        headers: { "X-CSRFToken": this.config.csrfToken },
      });
    } catch (err) {
      return { ok: false, message: `The server did not answer: ${err instanceof Error ? err.message : String(err)}` };
    }
    // Signed in: the form answers with a redirect (opaque to a `manual` fetch).
    if (response.type === "opaqueredirect" || (response.status >= 300 && response.status < 400)) {
      this.refreshCsrfToken();
      return { ok: true };
    }
    if (response.status === 429) return { ok: false, message: "Too many failed sign-in attempts. Wait a few minutes and try again." };
    if (response.status === 403) return { ok: false, message: "This server does not take passwords here: sign in on the sign-in page (a new tab), then try again." };
    return { ok: false, message: "The user name or password is not right." };
  }

  /** Takes the CSRF token from its cookie (after signing in here or on another tab). */
  refreshCsrfToken(): void {
    const match = /(?:^|;\s*)csrftoken=([^;]+)/.exec(document.cookie);
    if (match) this.config.csrfToken = decodeURIComponent(match[1]);
  }

  /** One request; returns the Response for 2xx, throws ApiError otherwise. */
  async raw(method: string, path: string, init: RequestOptions = {}): Promise<Response> {
    const headers: Record<string, string> = { Accept: "application/json", ...init.headers };
    let body = init.body;
    if (init.json !== undefined) {
      headers["Content-Type"] = "application/json";
      body = JSON.stringify(init.json);
    }
    if (!SAFE.has(method)) headers["X-CSRFToken"] = this.config.csrfToken;
    let response: Response;
    try {
      response = await fetch(this.url(path, init.query), { method, headers, body, credentials: "same-origin" });
    } catch (err) {
      throw new ApiError(0, `Network error: ${err instanceof Error ? err.message : String(err)}`, null);
    }
    if (!response.ok) {
      let parsed: ApiError["body"];
      const text = await response.text();
      try {
        parsed = JSON.parse(text) as ApiError["body"];
      } catch {
        parsed = null;
      }
      // A non-JSON body (an HTML or plain-text error page) is summarised by its first line.
      const firstLine = text.trim().split("\n")[0]?.slice(0, 200) ?? "";
      const detail = typeof parsed?.detail === "string" ? parsed.detail : (response.headers.get("Content-Type") ?? "").includes("html") ? response.statusText : firstLine || response.statusText;
      throw new ApiError(response.status, `${response.status}: ${detail}`, parsed);
    }
    return response;
  }

  protected async json<T>(method: string, path: string, init: RequestOptions = {}): Promise<T> {
    const response = await this.raw(method, path, init);
    if (response.status === 204) return undefined as T;
    return (await response.json()) as T;
  }

  /** Every row of a paginated list: `first`'s, then each next page's, in order. */
  async allPages<T>(first: Page<T>): Promise<T[]> {
    const rows = [...first.results];
    let page = first;
    while (page.next) {
      page = await this.nextPage<T>(page.next);
      rows.push(...page.results);
    }
    return rows;
  }

  /** Follows a `next` link of a paginated list (an absolute or root-relative URL). */
  async nextPage<T>(next: string): Promise<Page<T>> {
    const url = new URL(next, window.location.href);
    const rel = url.pathname.startsWith(this.config.apiBase) ? url.pathname.slice(this.config.apiBase.length) : url.pathname;
    return this.json("GET", rel, { query: Object.fromEntries(url.searchParams) });
  }
}
