import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";

export type Trigger = "user" | "api" | "cron" | "subagent";
export type Channel = "cli" | "http" | "api";

/**
 * Who is running: carried by AsyncLocalStorage through every await, timer and spawned
 * promise of a run, and the only source of a hook's `ctx` identity fields. Frozen, so a
 * handler or a child run cannot change what its parent sees.
 */
export interface RunContext {
  readonly sessionId: string;
  readonly sessionKey: string;
  readonly runId: string;
  readonly parentRunId?: string;
  readonly parentSessionId?: string;
  readonly agentId: string;
  /** 0 for a top-level run, parent depth + 1 for a sub-agent. */
  readonly depth: number;
  readonly trigger: Trigger;
  readonly channel: Channel;
  readonly jobId?: string;
  /** W3C trace context (`00-<trace id>-<span id>-01`); a child keeps the trace id. */
  readonly traceparent: string;
  /** Aborted when the run is cancelled; every handler's `ctx.signal` follows it. */
  readonly signal?: AbortSignal;
}

const storage = new AsyncLocalStorage<RunContext>();

/** Context seen by hooks that fire outside any run (e.g. `gatehouse hooks test`). */
export const NO_RUN: RunContext = Object.freeze({
  sessionId: "",
  sessionKey: "",
  runId: "",
  agentId: "",
  depth: 0,
  trigger: "api",
  channel: "api",
  traceparent: "",
});

export function currentRunContext(): RunContext | undefined {
  return storage.getStore();
}

/**
 * Runs `fn` outside any run: for what outlives the run that happened to start it (a timer shared
 * by every run), which would otherwise keep that run's context, and all it reaches, alive.
 */
export function outsideAnyRun<T>(fn: () => T): T {
  return storage.exit(fn);
}

export function runWithContext<T>(context: RunContext, fn: () => T): T {
  return storage.run(Object.isFrozen(context) ? context : Object.freeze({ ...context }), fn);
}

// randomUUID draws from a pooled buffer: far cheaper per run than two randomBytes calls. Its
// fixed version/variant digits are harmless in W3C ids, which only need to be unique.
const randomHex = (length: number) => randomUUID().replaceAll("-", "").slice(0, length);

export function newTraceparent(traceId: string = randomHex(32)): string {
  return `00-${traceId}-${randomHex(16)}-01`;
}

/** A child run's context: same trace, its own span, depth + 1, the parent's ids recorded. */
export function childRunContext(
  parent: RunContext,
  child: Pick<RunContext, "sessionId" | "sessionKey" | "runId" | "agentId"> & Partial<RunContext>,
): RunContext {
  const traceId = parent.traceparent.split("-")[1];
  return Object.freeze({
    trigger: "subagent" as const,
    channel: parent.channel,
    ...(parent.jobId === undefined ? {} : { jobId: parent.jobId }),
    ...(parent.signal === undefined ? {} : { signal: parent.signal }),
    ...child,
    parentRunId: parent.runId,
    parentSessionId: parent.sessionId,
    depth: parent.depth + 1,
    traceparent: newTraceparent(traceId),
  });
}
