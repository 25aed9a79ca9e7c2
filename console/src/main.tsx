import "./style.css";
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, setCsrf, whenSignedOut } from "./api.js";
import { useRoute } from "./router.js";
import { Inert } from "./text.js";
import type { Me } from "./types.js";
import { AuditView } from "./views/Audit.js";
import { ConfigView } from "./views/Config.js";
import { LiveView } from "./views/Live.js";
import { LoginView } from "./views/Login.js";
import { SessionView } from "./views/Session.js";
import { SessionsView } from "./views/Sessions.js";

type Identity = { principal: string; admin: boolean };

function App() {
  const [me, setMe] = useState<Identity | null | undefined>(undefined);
  const [keyRequired, setKeyRequired] = useState(true);
  const route = useRoute();

  const check = async () => {
    const answer = await api<Me>("/console/me");
    if (answer.authenticated && answer.principal !== undefined && answer.csrf !== undefined) {
      setCsrf(answer.csrf);
      setMe({ principal: answer.principal, admin: answer.admin === true });
    } else {
      setKeyRequired(answer.keyRequired !== false);
      setMe(null);
    }
  };
  const [unreachable, setUnreachable] = useState(false);
  useEffect(() => {
    whenSignedOut(() => setMe(null));
    check().catch(() => setUnreachable(true));
  }, []);

  if (unreachable)
    return (
      <p class="error" role="alert">
        The server does not answer. Reload the page once it runs again.
      </p>
    );
  if (me === undefined) return <p class="loading">Loading…</p>;
  if (me === null) return <LoginView keyRequired={keyRequired} onLogin={check} />;

  const logout = async () => {
    await api("/console/logout", { method: "POST" }).catch(() => undefined);
    setMe(null);
    await check();
  };
  const nav = [
    ["sessions", "#/sessions", "Sessions"],
    ["audit", "#/audit", "Audit"],
    ["live", "#/live", "Live"],
    ["config", "#/config", "Configuration"],
  ] as const;
  const active = route.view === "session" ? "sessions" : route.view;
  return (
    <div class="shell">
      <header class="top">
        <a class="brand" href="#/sessions">
          Gatehouse
        </a>
        <nav>
          {nav.map(([view, href, label]) => (
            <a
              key={view}
              href={href}
              class={active === view ? "active" : ""}
              aria-current={active === view ? "page" : undefined}
            >
              {label}
            </a>
          ))}
        </nav>
        <span class="who" data-testid="principal">
          <Inert text={me.principal} />
          {me.admin ? <span class="badge">admin</span> : null}
        </span>
        <button type="button" class="link" onClick={logout}>
          Log out
        </button>
      </header>
      <main>
        {route.view === "sessions" && <SessionsView admin={me.admin} />}
        {route.view === "session" && route.id !== undefined && <SessionView id={route.id} />}
        {route.view === "audit" && <AuditView admin={me.admin} params={route.params} />}
        {route.view === "live" && <LiveView />}
        {route.view === "config" && <ConfigView admin={me.admin} />}
      </main>
    </div>
  );
}

const root = document.getElementById("app");
if (root) {
  root.textContent = "";
  render(<App />, root);
}
