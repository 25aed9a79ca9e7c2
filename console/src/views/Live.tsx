import { useEffect, useState } from "preact/hooks";
import { ApiError, api } from "../api.js";
import { ago, when } from "../format.js";
import { sessionHref } from "../router.js";
import { Inert } from "../text.js";
import type { Live, PendingAsk } from "../types.js";
import { Steps } from "./Timeline.js";

type Decision = "allow-once" | "allow-always" | "deny";

/**
 * Runs in progress on every instance, their steps streaming in (Server-Sent Events from the
 * server, which reads them from the database), and the approval asks waiting for a human —
 * answered here through the same request any API client uses.
 */
export function LiveView() {
  const [live, setLive] = useState<Live | undefined>(undefined);
  const [connected, setConnected] = useState(false);
  useEffect(() => {
    const source = new EventSource("/v1/live/events");
    source.addEventListener("live", (e) => {
      setLive(JSON.parse((e as MessageEvent<string>).data) as Live);
      setConnected(true);
    });
    source.addEventListener("error", () => setConnected(source.readyState === EventSource.OPEN));
    return () => source.close();
  }, []);

  return (
    <section>
      <h1>
        Live <span class={connected ? "pill good" : "pill plain"}>{connected ? "streaming" : "connecting…"}</span>
      </h1>
      {live === undefined ? (
        <p class="loading">Loading…</p>
      ) : (
        <>
          <h2>Waiting for a human</h2>
          {live.approvals.length === 0 ? (
            <p class="empty">No approval asks waiting.</p>
          ) : (
            <ul class="asks" data-testid="asks">
              {live.approvals.map((a) => (
                <Ask key={`${a.runId}/${a.toolCallId}`} ask={a} />
              ))}
            </ul>
          )}
          <h2>Runs in progress</h2>
          {live.runs.length === 0 ? (
            <p class="empty">No run in progress.</p>
          ) : (
            live.runs.map((run) => (
              <article key={run.runId} class="run live-run" data-testid="live-run" data-run={run.runId}>
                <header>
                  <h3>
                    <a href={sessionHref(run.sessionId)}>
                      <Inert text={run.title ?? run.sessionId} />
                    </a>
                  </h3>
                  {run.depth > 0 && <span class="pill plain">sub-agent, depth {run.depth}</span>}
                  <span>{run.principal === null ? <span class="dim">—</span> : <Inert text={run.principal} />}</span>
                  <span class="dim" title={when(run.startedAt)}>
                    started {ago(run.startedAt)}
                  </span>
                  <span class="dim">
                    on <Inert text={run.instance} />
                  </span>
                </header>
                <Steps steps={run.steps} total={Date.now() - Date.parse(run.startedAt)} />
              </article>
            ))
          )}
        </>
      )}
    </section>
  );
}

function Ask({ ask }: { ask: PendingAsk }) {
  const [sent, setSent] = useState<Decision | undefined>(undefined);
  const [error, setError] = useState("");
  const answer = async (decision: Decision) => {
    setError("");
    try {
      await api(`/v1/runs/${encodeURIComponent(ask.runId)}/approvals/${encodeURIComponent(ask.toolCallId)}`, {
        method: "POST",
        body: { decision },
      });
      setSent(decision);
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "The answer was not sent.");
    }
  };
  const titled = ask.title !== `Allow ${ask.toolName}?`;
  return (
    <li class="ask" data-testid="ask">
      <div class="ask-head">
        Allow{" "}
        <strong>
          <Inert text={ask.toolName} />
        </strong>
        ?
        {titled && (
          <>
            {" "}
            <Inert class="title" text={ask.title} />
          </>
        )}
      </div>
      {ask.description !== null && (
        <p class="description">
          <Inert text={ask.description} />
        </p>
      )}
      {ask.input.length > 0 && (
        <dl class="input" data-testid="ask-input">
          {ask.input.map((field) => (
            <div key={field.name} class="field" data-field={field.name}>
              <dt>
                <Inert text={field.name} />
              </dt>
              <dd>
                <pre>
                  <Inert text={field.text} />
                </pre>
              </dd>
            </div>
          ))}
        </dl>
      )}
      {ask.rule !== null && (
        <p class="dim">
          Asked by the rule <Inert class="rule" text={ask.rule} />
        </p>
      )}
      {ask.always.length > 0 && (
        <p class="always" data-testid="ask-always">
          "Allow always" adds, for the rest of this session:{" "}
          {ask.always.map((rule) => (
            <code key={rule} class="rule">
              <Inert text={rule} />
            </code>
          ))}
        </p>
      )}
      <div class="dim">
        asked {ago(ask.askedAt)} in <a href={sessionHref(ask.sessionId)}>a session</a> · run <Inert text={ask.runId} />{" "}
        on <Inert text={ask.instance} />
      </div>
      {sent ? (
        <p class="sent">Answered: {sent}</p>
      ) : (
        <div class="buttons">
          <button type="button" onClick={() => void answer("allow-once")}>
            Allow once
          </button>
          {ask.always.length > 0 && (
            <button type="button" onClick={() => void answer("allow-always")}>
              Allow always (this session)
            </button>
          )}
          <button type="button" class="danger" onClick={() => void answer("deny")}>
            Deny
          </button>
        </div>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </li>
  );
}
