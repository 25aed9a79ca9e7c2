import { useEffect, useState } from "preact/hooks";
import { ApiError, api } from "../api.js";
import { Inert, jsonText } from "../text.js";
import type { Configuration } from "../types.js";

type Row = Record<string, unknown>;
const str = (v: unknown) => (v === undefined || v === null ? "" : typeof v === "string" ? v : jsonText(v));

/**
 * The effective configuration: plugins with their registrations, command hooks, permission
 * rules, and the settings with where each came from — secrets masked by the server, as
 * `gatehouse config` masks them.
 */
export function ConfigView({ admin }: { admin: boolean }) {
  const [config, setConfig] = useState<Configuration | undefined>(undefined);
  const [error, setError] = useState("");
  useEffect(() => {
    if (!admin) return;
    api<Configuration>("/v1/config")
      .then(setConfig)
      .catch((e: unknown) => setError(e instanceof ApiError ? e.message : "Could not load the configuration."));
  }, [admin]);

  if (!admin) return <p class="empty">Only an admin key may see the configuration.</p>;
  if (error)
    return (
      <p class="error" role="alert">
        {error}
      </p>
    );
  if (!config) return <p class="loading">Loading…</p>;
  return (
    <section>
      <h1>Configuration</h1>
      <h2>Plugins</h2>
      {config.plugins.length === 0 ? (
        <p class="empty">No plugins.</p>
      ) : (
        <table class="grid" data-testid="plugins">
          <thead>
            <tr>
              <th>Plugin</th>
              <th>Status</th>
              <th>Source</th>
              <th>Conversation</th>
              <th>Registrations</th>
            </tr>
          </thead>
          <tbody>
            {config.plugins.map((p: Row) => (
              <tr key={str(p.id)}>
                <td>
                  <Inert text={str(p.id)} />
                  {p.version !== undefined && <Inert class="sub" text={str(p.version)} />}
                </td>
                <td>{str(p.status)}</td>
                <td>
                  <Inert text={str(p.source)} />
                </td>
                <td>{p.conversationAccess === true ? "granted" : p.conversationAccess === false ? "no" : ""}</td>
                <td>
                  <ul class="plain">
                    {((p.registrations as Row[] | undefined) ?? []).map((r, i) => (
                      <li key={i}>
                        <Inert text={str(r.hook)} /> · priority {str(r.priority)} · fails {str(r.failure)}
                      </li>
                    ))}
                    {((p.refused as Row[] | undefined) ?? []).map((r, i) => (
                      <li key={`r${i}`} class="bad">
                        refused <Inert text={str(r.hook)} />: <Inert text={str(r.message)} />
                      </li>
                    ))}
                  </ul>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {(config.pluginProblems ?? []).map((line, i) => (
        <p key={i} class="bad">
          <Inert text={line} />
        </p>
      ))}

      <h2>Command hooks</h2>
      {config.commandHooks.length === 0 ? (
        <p class="empty">No command hooks configured.</p>
      ) : (
        <table class="grid" data-testid="command-hooks">
          <thead>
            <tr>
              <th>Event</th>
              <th>Matcher</th>
              <th>Source</th>
              <th>Dialect</th>
              <th>Command or URL</th>
              <th>Timeout</th>
            </tr>
          </thead>
          <tbody>
            {config.commandHooks.map((h: Row, i) => (
              <tr key={i}>
                <td>
                  <Inert text={str(h.nativeEvent ?? h.event)} />
                </td>
                <td>
                  <Inert text={str(h.matcher) || "*"} />
                </td>
                <td>
                  <Inert text={`${str(h.source)} (${str(h.file)})`} />
                </td>
                <td>{str(h.dialect)}</td>
                <td>
                  <code>
                    <Inert
                      text={[str(h.command ?? h.url), ...((h.args as unknown[] | undefined) ?? []).map(str)].join(" ")}
                    />
                  </code>
                </td>
                <td>{h.timeoutMs === undefined ? "" : `${Number(h.timeoutMs) / 1000} s`}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}

      <h2>Permission rules</h2>
      {config.permissions.rules.length === 0 ? (
        <p class="empty" data-testid="permissions">
          <Inert text={config.permissions.note ?? "none configured"} />
        </p>
      ) : (
        <table class="grid" data-testid="permissions">
          <tbody>
            {config.permissions.rules.map((r: Row, i) => (
              <tr key={i}>
                {Object.entries(r).map(([k, v]) => (
                  <td key={k}>
                    <span class="dim">{k}</span> <Inert text={str(v)} />
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      )}

      <h2>Settings</h2>
      {config.settings === null ? (
        <p class="empty">This service was not opened from a project.</p>
      ) : (
        <table class="grid" data-testid="settings">
          <tbody>
            {Object.entries(config.settings).map(([k, v]) => {
              const setting =
                v !== null && typeof v === "object" && "from" in v
                  ? (v as { value?: unknown; from: unknown })
                  : undefined;
              return (
                <tr key={k}>
                  <th>{k}</th>
                  <td>
                    <pre>
                      <Inert text={str(setting ? (setting.value ?? v) : v)} />
                    </pre>
                  </td>
                  <td class="dim">{setting ? <Inert text={str(setting.from)} /> : null}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}
