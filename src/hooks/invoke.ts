import type { HookName } from "./catalog.js";
import { deadlineQueue } from "./deadlines.js";
import type { Registration } from "./registry.js";
import type { Channel, RunContext, Trigger } from "./run-context.js";
import type { HookContext } from "./types.js";

/**
 * One handler's `ctx`: the run context's fields copied (so logging or spreading ctx shows
 * them) and a signal created only if the handler asks for it.
 */
export class HandlerContext implements HookContext {
  readonly sessionId: string;
  readonly sessionKey: string;
  readonly runId: string;
  readonly parentRunId: string | undefined;
  readonly parentSessionId: string | undefined;
  readonly agentId: string;
  readonly depth: number;
  readonly trigger: Trigger;
  readonly channel: Channel;
  readonly jobId: string | undefined;
  readonly traceparent: string;
  readonly hook: HookName;
  readonly pluginId: string;
  #run: RunContext;
  #controller: AbortController | undefined;
  #signal: AbortSignal | undefined;

  constructor(run: RunContext, hook: HookName, pluginId: string) {
    this.sessionId = run.sessionId;
    this.sessionKey = run.sessionKey;
    this.runId = run.runId;
    this.parentRunId = run.parentRunId;
    this.parentSessionId = run.parentSessionId;
    this.agentId = run.agentId;
    this.depth = run.depth;
    this.trigger = run.trigger;
    this.channel = run.channel;
    this.jobId = run.jobId;
    this.traceparent = run.traceparent;
    this.hook = hook;
    this.pluginId = pluginId;
    this.#run = run;
  }

  get signal(): AbortSignal {
    if (this.#signal === undefined) {
      this.#controller = new AbortController();
      const run = this.#run.signal;
      this.#signal = run ? AbortSignal.any([run, this.#controller.signal]) : this.#controller.signal;
    }
    return this.#signal;
  }

  /** Called on timeout: the handler's signal aborts so it can stop its work. */
  timedOut(ms: number): void {
    this.#controller?.abort(new DOMException(`hook handler timed out after ${ms} ms`, "TimeoutError"));
  }
}

export type Invocation =
  | { readonly status: "ok"; readonly value: unknown }
  | { readonly status: "threw"; readonly error: unknown }
  | { readonly status: "timeout" };

const TIMEOUT: Invocation = Object.freeze({ status: "timeout" });

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === "object" || typeof value === "function") &&
    typeof (value as { then?: unknown }).then === "function"
  );
}

/**
 * Calls one handler under its timeout. A synchronous answer returns synchronously (no
 * promise, no deadline). A late answer after the timeout is dropped.
 */
export function invoke(registration: Registration, event: unknown, run: RunContext): Invocation | Promise<Invocation> {
  const ctx = new HandlerContext(run, registration.hook, registration.pluginId);
  let value: unknown;
  try {
    value = registration.handler(event, ctx);
  } catch (error) {
    return { status: "threw", error };
  }
  if (!isThenable(value)) return { status: "ok", value };
  const { timeoutMs } = registration;
  const queue = deadlineQueue(timeoutMs);
  return new Promise<Invocation>((resolve) => {
    const deadline = queue.add(() => {
      ctx.timedOut(timeoutMs);
      resolve(TIMEOUT);
    });
    value.then(
      (v) => {
        if (queue.settle(deadline)) resolve({ status: "ok", value: v });
      },
      (error: unknown) => {
        if (queue.settle(deadline)) resolve({ status: "threw", error });
      },
    );
  });
}
