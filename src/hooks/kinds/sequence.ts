import { AsyncResource } from "node:async_hooks";
import { type Answer, invoke, PENDING, type Status, type Waiter } from "../invoke.js";
import type { Registration } from "../registry.js";
import type { Dispatch } from "./shared.js";

/** What `step` returns to go on to the next handler. */
export const CONTINUE = Symbol("continue");

/**
 * Calls a dispatch's handlers one after another, each under its own timeout. Driven by
 * callbacks rather than `await`: one promise per dispatch (the one returned) instead of
 * three per handler. Synchronous answers are handled in the same loop; asynchronous ones
 * come back through `resume`, from the handler's promise or from its deadline.
 */
export abstract class Sequence<T> implements Waiter {
  private index = 0;
  private settle: ((outcome: T) => void) | undefined = undefined;
  private fail: ((error: unknown) => void) | undefined = undefined;
  private asyncScope: AsyncResource | undefined = undefined;
  private readonly answer: Answer = { status: "ok", value: undefined };

  constructor(protected readonly d: Dispatch) {}

  /** The event the next handler sees (modify hooks chain rewrites into it). */
  protected event(): Readonly<Record<string, unknown>> {
    return this.d.event;
  }

  /** Tool matchers: a registration that does not match is not called. */
  protected skips(_registration: Registration): boolean {
    return false;
  }

  /** One handler's answer (never "cancelled"): the dispatch's outcome, or CONTINUE. */
  protected abstract step(registration: Registration, status: Status, value: unknown): T | typeof CONTINUE;

  /** The outcome when every handler was called. */
  protected abstract end(): T;

  /** The outcome when the run was cancelled while a handler was pending: no later handler is called. */
  protected abstract cancelled(registration: Registration): T;

  run(): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.settle = resolve;
      this.fail = reject;
      this.next();
    });
  }

  scope(): AsyncResource {
    this.asyncScope ??= new AsyncResource("GatehouseHookDispatch");
    return this.asyncScope;
  }

  resume(registration: Registration, status: Status, value: unknown): void {
    let outcome: T | typeof CONTINUE;
    try {
      outcome = status === "cancelled" ? this.cancelled(registration) : this.step(registration, status, value);
    } catch (error) {
      (this.fail as (error: unknown) => void)(error);
      return;
    }
    if (outcome === CONTINUE) this.next();
    else (this.settle as (outcome: T) => void)(outcome);
  }

  private next(): void {
    const { registrations, run } = this.d;
    const { answer } = this;
    try {
      while (this.index < registrations.length) {
        const registration = registrations[this.index++] as Registration;
        if (this.skips(registration)) continue;
        // The answer comes back through `resume`, which calls `next` again.
        if (invoke(registration, this.event(), run, this, answer, this.d.deadlines) === PENDING) return;
        const { status, value } = answer;
        answer.value = undefined;
        const outcome = status === "cancelled" ? this.cancelled(registration) : this.step(registration, status, value);
        if (outcome !== CONTINUE) {
          (this.settle as (outcome: T) => void)(outcome);
          return;
        }
      }
      (this.settle as (outcome: T) => void)(this.end());
    } catch (error) {
      (this.fail as (error: unknown) => void)(error);
    }
  }
}
