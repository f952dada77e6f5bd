/**
 * The API tokens page: create a personal token (named, with an optional expiry), see its key once
 * with a copy button and a ready `curl` line, list the user's tokens and revoke them. The server
 * keeps only a hash of each key, so a key not copied now cannot be shown again.
 */
import { useCallback, useEffect, useRef, useState, type FormEvent } from "react";
import { Api, ApiError, type ApiToken, type ApiTokenCreated, type StudioConfig } from "../api";
import { ConfirmDialog } from "../common/ConfirmDialog";
import { AppHeader, ErrorBanner, Spinner, describeApiError, errorText, formatTime } from "../common/ui";
import { EXPIRY_CHOICES, curlLine, expiryFor, isExpired } from "./tokenForm";

export function TokensApp({ config }: { config: StudioConfig }) {
  const api = useRef(new Api(config)).current;
  const [tokens, setTokens] = useState<ApiToken[]>([]);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const [created, setCreated] = useState<ApiTokenCreated | null>(null);
  const [revoking, setRevoking] = useState<ApiToken | null>(null);
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);

  const load = useCallback(async () => {
    setLoading(true);
    try {
      const all = await api.allPages(await api.listTokens());
      setTokens(all);
    } catch (err) {
      setError(`Could not list your API tokens: ${errorText(err)}`);
    } finally {
      setLoading(false);
    }
  }, [api]);

  useEffect(() => {
    void load();
  }, [load]);

  const revoke = async (token: ApiToken) => {
    setBusy(true);
    try {
      await api.revokeToken(token.id);
      setRevoking(null);
      if (created?.id === token.id) setCreated(null);
      setNotice(`Revoked token ${token.name}: requests with its key are refused from now on.`);
      await load();
    } catch (err) {
      setError(describeApiError(err));
    } finally {
      setBusy(false);
    }
  };

  const now = new Date();
  return (
    <div className="page">
      <AppHeader config={config}>
        <span className="crumb">API tokens</span>
      </AppHeader>
      <main className="list-main">
        <div className="list-toolbar">
          <h1>API tokens</h1>
        </div>
        <p className="env-intro token-intro">
          A token lets a script or another machine use the studio&apos;s API as you: send it as <code className="mono">Authorization: Token &lt;key&gt;</code>. Its key is shown once, when you create it; the studio keeps only a hash of it. Every operation is described in the{" "}
          <a href="/api/docs/">API docs</a>.
        </p>
        <ErrorBanner error={error} onDismiss={() => setError(null)} />
        {notice && (
          <div className="env-notice" role="status">
            {notice}
          </div>
        )}
        <CreateTokenForm
          api={api}
          onCreated={(token) => {
            setCreated(token);
            setNotice(null);
            void load();
          }}
        />
        {created && <CreatedToken token={created} siteUrl={config.siteUrl ?? window.location.origin} onDone={() => setCreated(null)} />}
        <div className="table-wrap">
          <table className="graph-table">
            <thead>
              <tr>
                <th>Name</th>
                <th>Key</th>
                <th>Created</th>
                <th>Last used</th>
                <th>Expires</th>
                <th>
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {tokens.map((token) => (
                <tr key={token.id}>
                  <td>{token.name}</td>
                  <td className="mono small">{token.prefix}…</td>
                  <td className="nowrap">{formatTime(token.created_at)}</td>
                  <td className="nowrap">{token.last_used_at ? formatTime(token.last_used_at) : "Never"}</td>
                  <td className="nowrap">{token.expires_at ? `${isExpired(token.expires_at, now) ? "Expired " : ""}${formatTime(token.expires_at)}` : "Never"}</td>
                  <td className="row-actions">
                    <button type="button" className="btn btn-small btn-danger-ghost" aria-label={`Revoke ${token.name}`} onClick={() => setRevoking(token)}>
                      Revoke
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {loading && (
            <div className="table-status">
              <Spinner /> Loading…
            </div>
          )}
          {!loading && tokens.length === 0 && <div className="table-status empty">No API tokens yet.</div>}
        </div>
      </main>
      <ConfirmDialog open={revoking !== null} title="Revoke API token" confirmLabel="Confirm revoke" busyLabel="Revoking…" busy={busy} onConfirm={() => revoking && void revoke(revoking)} onClose={() => setRevoking(null)}>
        <p>
          Revoke <strong>{revoking?.name}</strong>? Scripts that use its key get 401 from their next request on.
        </p>
      </ConfirmDialog>
    </div>
  );
}

function CreateTokenForm({ api, onCreated }: { api: Api; onCreated: (token: ApiTokenCreated) => void }) {
  const [name, setName] = useState("");
  const [days, setDays] = useState<string>("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const token = await api.createToken({ name: name.trim(), expires_at: expiryFor(days === "" ? null : Number(days), new Date()) });
      setName("");
      onCreated(token);
    } catch (err) {
      setError(err instanceof ApiError ? describeApiError(err) : errorText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="token-form" onSubmit={(e) => void submit(e)} aria-label="New API token">
      <div className="field">
        <label htmlFor="token-name">Name</label>
        <input id="token-name" className="input" value={name} maxLength={100} required placeholder="e.g. ci-pipeline" onChange={(e) => setName(e.target.value)} />
      </div>
      <div className="field">
        <label htmlFor="token-expiry">Expires</label>
        <select id="token-expiry" className="input" value={days} onChange={(e) => setDays(e.target.value)}>
          {EXPIRY_CHOICES.map((choice) => (
            <option key={choice.label} value={choice.days === null ? "" : String(choice.days)}>
              {choice.label}
            </option>
          ))}
        </select>
      </div>
      <button type="submit" className="btn btn-primary" disabled={busy || name.trim() === ""}>
        {busy && <Spinner decorative />}
        Create token
      </button>
      {error && (
        <div className="field-error full" role="alert">
          {error}
        </div>
      )}
    </form>
  );
}

function CreatedToken({ token, siteUrl, onDone }: { token: ApiTokenCreated; siteUrl: string; onDone: () => void }) {
  const [copied, setCopied] = useState<string | null>(null);
  const curl = curlLine(siteUrl, token.key);

  const copy = async (what: string, text: string) => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied(what);
    } catch {
      setCopied(null);
    }
  };

  return (
    <section className="token-created" aria-label="New token key">
      <strong>Token {token.name} created.</strong> Copy its key now: it is shown this once and cannot be read again.
      <div className="token-secret">
        <code className="mono" data-testid="token-key">
          {token.key}
        </code>
        <button type="button" className="btn btn-small" onClick={() => void copy("key", token.key)}>
          Copy key
        </button>
      </div>
      <div className="token-secret">
        <code className="mono" data-testid="token-curl">
          {curl}
        </code>
        <button type="button" className="btn btn-small" onClick={() => void copy("curl", curl)}>
          Copy curl
        </button>
      </div>
      <span role="status">{copied === "key" ? "Key copied." : copied === "curl" ? "Command copied." : ""}</span>{" "}
      <button type="button" className="btn btn-small btn-ghost" onClick={onDone}>
        Done, hide the key
      </button>
    </section>
  );
}
