import { AsyncResource } from "node:async_hooks";
import { type Answer, invoke, PENDING, type Status, type Waiter } from "../invoke.js";
import type { Registration } from "../registry.js";
import { type Dispatch, errorDetail } from "./shared.js";

/** All handlers start at once; results are ignored, failures logged. */
export function dispatchObserve(d: Dispatch): Promise<void> {
  return new Promise<void>((resolve, reject) => new Observers(d, resolve, reject).start());
}

/** Counts the handlers still running; callback-driven like `Sequence`, one promise per dispatch. */
class Observers implements Waiter {
  private pending = 0;
  private asyncScope: AsyncResource | undefined;
  private readonly answer: Answer = { status: "ok", value: undefined };

  constructor(
    private readonly d: Dispatch,
    private readonly done: () => void,
    private readonly fail: (error: unknown) => void,
  ) {}

  start(): void {
    const { d } = this;
    try {
      // Held at one until every handler has started, so an answer that comes back during the
      // loop cannot finish the dispatch early.
      this.pending = 1;
      for (const registration of d.registrations) {
        this.pending++;
        if (invoke(registration, d.event, d.run, this, this.answer, d.deadlines) !== PENDING)
          this.resume(registration, this.answer.status, this.answer.value);
      }
    } catch (error) {
      this.fail(error);
    }
    this.release();
  }

  scope(): AsyncResource {
    this.asyncScope ??= new AsyncResource("GatehouseHookDispatch");
    return this.asyncScope;
  }

  resume(registration: Registration, status: Status, value: unknown): void {
    if (status !== "ok") {
      try {
        this.d.failures.report(registration, status, status === "threw" ? errorDetail(value) : "", false);
      } catch (error) {
        this.fail(error);
      }
    }
    this.release();
  }

  private release(): void {
    if (--this.pending === 0) this.done();
  }
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
