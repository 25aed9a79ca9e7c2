import { type Invocation, invoke } from "../invoke.js";
import type { Registration } from "../registry.js";
import { type Dispatch, errorDetail } from "./shared.js";

function settle(d: Dispatch, registration: Registration, invocation: Invocation): void {
  if (invocation.status === "ok") return;
  d.failures.report(
    registration,
    invocation.status,
    invocation.status === "threw" ? errorDetail(invocation.error) : "",
    false,
  );
}

/** All handlers start at once; results are ignored, failures logged. */
export async function dispatchObserve(d: Dispatch): Promise<void> {
  const pending: Promise<void>[] = [];
  for (const registration of d.registrations) {
    const invocation = invoke(registration, d.event, d.run);
    if (invocation instanceof Promise) pending.push(invocation.then((i) => settle(d, registration, i)));
    else settle(d, registration, invocation);
  }
  if (pending.length) await Promise.all(pending);
}

/**
 * Observers the run does not wait for (model call events). A slow observer must not slow
 * the run or grow memory without bound: dispatches queue behind a concurrency limit and are
 * dropped, with a warning, when the queue is full.
 */
export class DetachedQueue {
  private running = 0;
  private readonly waiting: Dispatch[] = [];
  private idle: (() => void)[] = [];

  constructor(
    private readonly concurrency = 16,
    private readonly capacity = 256,
  ) {}

  push(d: Dispatch): void {
    if (this.running < this.concurrency) this.start(d);
    else if (this.waiting.length < this.capacity) this.waiting.push(d);
    else d.failures.warn(`hook ${d.hook}: background queue full (${this.capacity}); event dropped`);
  }

  /** Resolves when every queued and running dispatch has finished. */
  drain(): Promise<void> {
    if (this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private start(d: Dispatch): void {
    this.running++;
    void dispatchObserve(d).finally(() => {
      this.running--;
      const next = this.waiting.shift();
      if (next) this.start(next);
      else if (this.running === 0) {
        const idle = this.idle;
        this.idle = [];
        for (const resolve of idle) resolve();
      }
    });
  }
}
