import { useState } from "preact/hooks";
import { ApiError, api } from "../api.js";
import type { Login } from "../types.js";

/** Log in with an API key; on the open loopback (no key ever created), without one. */
export function LoginView({ keyRequired, onLogin }: { keyRequired: boolean; onLogin: () => Promise<void> }) {
  const [key, setKey] = useState("");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);

  const login = async (withKey: boolean) => {
    setBusy(true);
    setError("");
    try {
      await api<Login>("/console/login", { method: "POST", body: withKey ? { key } : {} });
      setKey("");
      await onLogin();
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Could not log in.");
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="login">
      <h1>Gatehouse console</h1>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void login(true);
        }}
      >
        <label for="key">API key</label>
        <input
          id="key"
          name="key"
          type="password"
          autocomplete="off"
          placeholder="ghk_…"
          value={key}
          onInput={(e) => setKey(e.currentTarget.value)}
        />
        <button type="submit" disabled={busy || key.trim() === ""}>
          Log in
        </button>
      </form>
      {!keyRequired && (
        <p>
          No API key exists yet and this server listens on loopback only:{" "}
          <button type="button" disabled={busy} onClick={() => void login(false)}>
            Continue as local
          </button>
        </p>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <p class="hint">
        The key is sent once; the console keeps an httpOnly cookie. Create one with{" "}
        <code>gatehouse keys create --principal NAME [--admin]</code>.
      </p>
    </div>
  );
}
