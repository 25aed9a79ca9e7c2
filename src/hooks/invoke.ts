import type { AsyncResource } from "node:async_hooks";
import type { HookName } from "./catalog.js";
import type { Deadline, DeadlineQueue, Deadlines } from "./deadlines.js";
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

/** How a handler's call ended; `value` is its answer (ok) or what it threw (threw). */
export type Status = "ok" | "threw" | "timeout" | "cancelled";

/** What `invoke` returns when the handler answered with a promise: the answer comes later. */
export const PENDING = Symbol("pending");

/**
 * Where a late answer goes. Dispatches are callback-driven rather than `await`-driven: a
 * promise (and, with AsyncLocalStorage active, an async-hook call) per handler was most of
 * what a dispatch cost.
 */
export interface Waiter {
  /** Called exactly once per PENDING invocation: with the handler's answer, or with a timeout. */
  resume(registration: Registration, status: Status, value: unknown): void;
  /**
   * The dispatch's async context. Deadlines share one timer per duration, and that timer runs
   * in whatever context armed it: a timeout (the handler's abort listeners and everything the
   * dispatch does next) must run in its own dispatch's context instead.
   */
  scope(): AsyncResource;
}

/** A handler that answered with a promise: its deadline, and where its answer goes. */
class PendingCall implements Deadline {
  settled = false;
  at = 0;
  ms = 0;
  queue: DeadlineQueue | undefined = undefined;

  constructor(
    private readonly deadlines: Deadlines,
    private registration: Registration | undefined,
    private ctx: HandlerContext | undefined,
    private waiter: Waiter | undefined,
    private scope: AsyncResource | undefined,
  ) {}

  expire(): void {
    (this.scope as AsyncResource).runInAsyncScope(this.timedOut, this);
  }

  private timedOut(): void {
    const registration = this.registration as Registration;
    (this.ctx as HandlerContext).timedOut(registration.timeoutMs);
    (this.waiter as Waiter).resume(registration, "timeout", undefined);
  }

  /** The handler's run was cancelled: stop waiting for it (its signal already aborted with the run's). */
  cancel(): void {
    (this.scope as AsyncResource).runInAsyncScope(this.cancelled, this);
  }

  private cancelled(): void {
    (this.waiter as Waiter).resume(this.registration as Registration, "cancelled", undefined);
  }

  belongsTo(runId: string): boolean {
    return this.ctx?.runId === runId;
  }

  answer(status: Status, value: unknown): void {
    const { registration, waiter } = this;
    if (this.deadlines.settle(this)) (waiter as Waiter).resume(registration as Registration, status, value);
  }

  release(): void {
    this.registration = undefined;
    this.ctx = undefined;
    this.waiter = undefined;
    this.scope = undefined;
  }
}

/** A synchronous answer of `invoke`: reused, read at once by the caller. */
export interface Answer {
  status: Status;
  value: unknown;
}

/**
 * Calls one handler under its timeout. A synchronous answer is written to `answer` (no
 * deadline). An asynchronous one returns PENDING and reaches `waiter.resume` later, at most
 * once: the answer, or a timeout (its `ctx.signal` aborted, and a late answer dropped).
 */
export function invoke(
  registration: Registration,
  event: unknown,
  run: RunContext,
  waiter: Waiter,
  answer: Answer,
  deadlines: Deadlines,
): typeof PENDING | undefined {
  const ctx = new HandlerContext(run, registration.hook, registration.pluginId);
  let value: unknown;
  try {
    value = registration.handler(event, ctx);
  } catch (error) {
    answer.status = "threw";
    answer.value = error;
    return undefined;
  }
  let then: unknown;
  if (value !== null && (typeof value === "object" || typeof value === "function")) {
    try {
      then = (value as { then?: unknown }).then;
    } catch (error) {
      answer.status = "threw";
      answer.value = error;
      return undefined;
    }
  }
  if (typeof then !== "function") {
    answer.status = "ok";
    answer.value = value;
    return undefined;
  }
  // Cancelled while the handler was starting: nothing will cancel it later, so stop now.
  if (run.signal?.aborted) {
    answer.status = "cancelled";
    answer.value = undefined;
    return undefined;
  }
  const call = new PendingCall(deadlines, registration, ctx, waiter, waiter.scope());
  deadlines.start(call, registration.timeoutMs);
  try {
    then.call(
      value,
      (v: unknown) => call.answer("ok", v),
      (error: unknown) => call.answer("threw", error),
    );
  } catch (error) {
    // A thenable whose `then` throws is a handler that threw.
    deadlines.settle(call);
    answer.status = "threw";
    answer.value = error;
    return undefined;
  }
  return PENDING;
}
