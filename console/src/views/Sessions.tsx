import { useEffect, useState } from "preact/hooks";
import { ApiError, api, query } from "../api.js";
import { ago, when } from "../format.js";
import { sessionHref } from "../router.js";
import { Inert } from "../text.js";
import type { SessionItem, SessionList } from "../types.js";

const PAGE = 50;

/** Sessions with their figures; search, filter by principal and by blocks; admins see everyone's. */
export function SessionsView({ admin }: { admin: boolean }) {
  const [q, setQ] = useState("");
  const [principal, setPrincipal] = useState("");
  const [blocked, setBlocked] = useState<"" | "true" | "false">("");
  const [scope, setScope] = useState<"all" | "mine">(admin ? "all" : "mine");
  const [rows, setRows] = useState<SessionItem[] | undefined>(undefined);
  const [more, setMore] = useState(false);
  const [error, setError] = useState("");
  const [applied, setApplied] = useState({ q: "", principal: "" });

  const load = async (offset: number) => {
    setError("");
    try {
      const page = await api<SessionList>(
        `/v1/sessions${query({ scope, q: applied.q, principal: applied.principal, blocked, limit: PAGE, offset })}`,
      );
      setRows((before) => (offset === 0 ? page.data : [...(before ?? []), ...page.data]));
      setMore(page.more);
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Could not load the sessions.");
    }
  };
  useEffect(() => {
    void load(0);
  }, [scope, blocked, applied]);

  return (
    <section>
      <h1>Sessions</h1>
      <form
        class="filters"
        aria-label="Search sessions"
        onSubmit={(e) => {
          e.preventDefault();
          setApplied({ q, principal });
        }}
      >
        <input
          type="search"
          name="q"
          aria-label="Search title, id or key"
          placeholder="Search title, id or key"
          value={q}
          onInput={(e) => setQ(e.currentTarget.value)}
        />
        {admin && (
          <input
            name="principal"
            aria-label="Principal"
            placeholder="Principal"
            value={principal}
            onInput={(e) => setPrincipal(e.currentTarget.value)}
          />
        )}
        <select
          name="blocked"
          aria-label="Blocks"
          value={blocked}
          onChange={(e) => setBlocked(e.currentTarget.value as "" | "true" | "false")}
        >
          <option value="">With or without blocks</option>
          <option value="true">With blocks</option>
          <option value="false">Without blocks</option>
        </select>
        {admin && (
          <select
            name="scope"
            aria-label="Whose sessions"
            value={scope}
            onChange={(e) => setScope(e.currentTarget.value as "all" | "mine")}
          >
            <option value="all">Everyone's sessions</option>
            <option value="mine">My sessions</option>
          </select>
        )}
        <button type="submit">Search</button>
      </form>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {rows === undefined ? (
        <p class="loading">Loading…</p>
      ) : rows.length === 0 ? (
        <p class="empty">No sessions.</p>
      ) : (
        <table class="grid cards" data-testid="sessions">
          <thead>
            <tr>
              <th>Title</th>
              <th>Principal</th>
              <th>Last activity</th>
              <th class="num">Runs</th>
              <th class="num">Blocks</th>
              <th class="num">Size</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((s) => (
              <tr key={s.id}>
                <td>
                  <a href={sessionHref(s.id)}>
                    <Inert text={s.title ?? s.key ?? s.id} />
                  </a>
                  {s.title !== null && <Inert class="sub" text={s.id} />}
                </td>
                <td data-label="principal">
                  {s.principal === null ? <span class="dim">outside serve</span> : <Inert text={s.principal} />}
                </td>
                <td data-label="last activity" title={when(s.lastActivityAt)}>
                  {ago(s.lastActivityAt)}
                </td>
                <td class="num" data-label="runs">
                  {s.runs}
                </td>
                <td class={s.blocks > 0 ? "num bad" : "num"} data-label="blocks">
                  {s.blocks}
                </td>
                <td class="num" data-label="size">
                  {s.messages} msg
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {more && rows && (
        <button type="button" onClick={() => void load(rows.length)}>
          More
        </button>
      )}
    </section>
  );
}
