import { useEffect, useState } from "preact/hooks";
import { ApiError, api } from "../api.js";
import { duration, short, tone, when } from "../format.js";
import { auditHref } from "../router.js";
import { Inert, jsonText } from "../text.js";
import type { Message, SessionDetail, Timeline, TimelineRun } from "../types.js";
import { Steps } from "./Timeline.js";

/** A session: its runs on a timeline, then its messages exactly as stored. */
export function SessionView({ id }: { id: string }) {
  const [session, setSession] = useState<SessionDetail | undefined>(undefined);
  const [timeline, setTimeline] = useState<Timeline | undefined>(undefined);
  const [error, setError] = useState("");

  useEffect(() => {
    setSession(undefined);
    setTimeline(undefined);
    setError("");
    const path = `/v1/sessions/${encodeURIComponent(id)}`;
    Promise.all([api<SessionDetail>(path), api<Timeline>(`${path}/timeline`)])
      .then(([s, t]) => {
        setSession(s);
        setTimeline(t);
      })
      .catch((e: unknown) => setError(e instanceof ApiError ? e.message : "Could not load the session."));
  }, [id]);

  if (error)
    return (
      <p class="error" role="alert">
        {error}
      </p>
    );
  if (!session || !timeline) return <p class="loading">Loading…</p>;
  const runSeq = new Map(session.runs.map((r) => [r.id, r.seq]));
  return (
    <section>
      <p class="crumbs">
        <a href="#/sessions">Sessions</a> /
      </p>
      <h1>
        <Inert text={session.title ?? session.key ?? session.id} />
      </h1>
      <dl class="facts">
        <dt>id</dt>
        <dd>
          <Inert text={session.id} />
        </dd>
        {session.key !== null && (
          <>
            <dt>key</dt>
            <dd>
              <Inert text={session.key} />
            </dd>
          </>
        )}
        <dt>principal</dt>
        <dd>{session.principal === null ? "outside serve" : <Inert text={session.principal} />}</dd>
        <dt>created</dt>
        <dd>{when(session.createdAt)}</dd>
        <dt>last activity</dt>
        <dd>{when(session.updatedAt)}</dd>
        <dt>audit</dt>
        <dd>
          <a href={auditHref({ sessionId: session.id })}>this session's decisions</a>
        </dd>
      </dl>

      <h2>Runs</h2>
      {timeline.runs.length === 0 && <p class="empty">No runs.</p>}
      {timeline.runs.map((run) => (
        <article key={run.id} class="run" data-testid={`run-${run.seq}`} data-status={run.status}>
          <header>
            <h3>Run {run.seq}</h3>
            <span class={`pill ${tone(run.status)}`}>{run.status}</span>
            <span>{duration(run.durationMs)}</span>
            <span class="dim">{when(run.startedAt)}</span>
            <span class="dim">
              <Inert text={run.id} />
            </span>
            {!run.recorded && (
              <span class="dim note" data-testid="rebuilt">
                rebuilt from the store (a run outside gatehouse serve): its decisions and tool calls, each untimed
              </span>
            )}
          </header>
          {run.status === "failed" && <Cause run={run} />}
          <Steps steps={run.steps} total={run.durationMs} />
        </article>
      ))}

      <h2>Messages</h2>
      <p class="hint">Exactly as stored: what a gate removed is not here, and never was shown.</p>
      <ol class="messages" data-testid="messages">
        {session.messages.map((m) => (
          <MessageView key={m.id} message={m} run={m.runId === null ? undefined : runSeq.get(m.runId)} />
        ))}
      </ol>
    </section>
  );
}

/** Why a run failed: its error as `gatehouse run --json` gives it, or what the store kept of it. */
function Cause({ run }: { run: TimelineRun }) {
  const { error } = run;
  if (error === null)
    return (
      <p class="cause" data-testid="cause">
        Failed{run.errorKind === undefined ? "" : `: ${run.errorKind}`}
        {run.detail === undefined ? "" : ` (${run.detail})`}
      </p>
    );
  const facts = [
    error.kind,
    error.status === undefined ? undefined : `HTTP ${error.status}`,
    error.attempts === undefined ? undefined : `${error.attempts} attempts`,
    error.retryable ? "may succeed later" : undefined,
  ].filter((fact) => fact !== undefined);
  return (
    <p class="cause" data-testid="cause">
      Failed: <Inert text={error.model === undefined ? error.provider : `${error.provider}:${error.model}`} /> (
      <Inert text={facts.join(", ")} />)
      {error.message !== undefined && (
        <>
          : <Inert class="cause-message" text={error.message} />
        </>
      )}
    </p>
  );
}

function MessageView({ message, run }: { message: Message; run: number | undefined }) {
  return (
    <li class={`message role-${message.role}${message.notice ? " notice" : ""}`} data-seq={message.seq}>
      <header>
        <span class="role">{message.role}</span>
        <span class="dim">#{message.seq}</span>
        {run !== undefined && <span class="dim">run {run}</span>}
        <span class="dim">{when(message.createdAt)}</span>
        {message.notice && (
          <span class="pill bad" data-testid="notice">
            block notice · <Inert text={message.notice.blockedBy} /> · <Inert text={message.notice.hook} />
            {message.notice.category !== undefined && (
              <>
                {" "}
                · <Inert text={message.notice.category} />
              </>
            )}
          </span>
        )}
      </header>
      {message.parts.map((part, i) => (
        <PartView key={i} part={part as Record<string, unknown> & { type: string }} />
      ))}
    </li>
  );
}

function PartView({ part }: { part: Record<string, unknown> & { type: string } }) {
  const text = (v: unknown) => (typeof v === "string" ? v : "");
  switch (part.type) {
    case "text":
      return (
        <div class="part text">
          <Inert text={text(part.text)} />
        </div>
      );
    case "reasoning":
      return (
        <div class="part reasoning">
          <span class="label">reasoning</span>
          <Inert text={text(part.text)} />
        </div>
      );
    case "tool_call":
      return (
        <div class="part tool-call">
          <span class="label">
            tool call <Inert text={text(part.toolName)} /> <span class="dim">{short(text(part.toolCallId))}</span>
          </span>
          <pre>
            <Inert text={jsonText(part.input)} />
          </pre>
        </div>
      );
    case "tool_result":
      return (
        <div class={`part tool-result${part.isError === true ? " is-error" : ""}`}>
          <span class="label">
            result of <Inert text={text(part.toolName)} />
            {part.isError === true && <span class="pill bad">error</span>}
          </span>
          <pre>
            <Inert text={jsonText(part.output)} />
          </pre>
        </div>
      );
    case "image":
    case "file":
      return (
        <div class="part file">
          <span class="label">
            {part.type} <Inert text={text(part.mediaType)} /> ({text(part.data).length} characters of data, not shown)
          </span>
        </div>
      );
    default:
      return (
        <div class="part other">
          <pre>
            <Inert text={jsonText(part)} />
          </pre>
        </div>
      );
  }
}
