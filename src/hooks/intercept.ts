import type { HookName } from "./catalog.js";
import type { HookLogger } from "./kinds/shared.js";
import type { RunContext } from "./run-context.js";
import { describeError, sanitizeLogLine } from "./sanitize.js";

/**
 * One dispatch as interceptors see it: the hook, the event as handlers got it (frozen), the run
 * it fired in, and when. The same object is passed to `call`, `result`, `error` and `done` of
 * every interceptor, so one can key its own per-dispatch state on it (a WeakMap).
 */
export interface Interception {
  readonly hook: HookName;
  readonly event: Readonly<Record<string, unknown>>;
  readonly run: RunContext;
  /** `performance.now()` at the call. */
  readonly startedAt: number;
  /** Handlers registered for the hook at the call (0 when the hook was emitted only for interceptors). */
  readonly handlers: number;
}

/**
 * The engine's one extension point, after tapable's interceptors: `call` when a hook fires
 * (before any handler runs), `result` with what the dispatch returned (the merged result, a
 * gate's outcome, a claim; undefined for observers), `error` if the dispatch itself threw,
 * `done` after either. Audit, metrics, tracing and the guarantee harness's timeline are built
 * on it.
 *
 * Unlike tapable's, `result` and `done` may return a promise: for the asynchronous kinds the
 * caller resumes only after it settles (an audit record is written before the run acts on the
 * verdict). An interceptor that throws is logged and ignored: it observes, it never decides.
 */
export interface HookInterceptor {
  /** A name for diagnostics. */
  readonly name: string;
  /**
   * Hooks this interceptor must see even when no handler is registered: the runtime then
   * builds and emits their events (`hasHooks` answers true). Default: none.
   */
  readonly hooks?: readonly HookName[] | "all";
  call?(d: Interception): void;
  result?(d: Interception, result: unknown): void | Promise<void>;
  error?(d: Interception, error: unknown): void | Promise<void>;
  done?(d: Interception): void | Promise<void>;
}

/** The interceptors of one engine, and the hooks they make the runtime emit. */
export class Interceptors {
  readonly list: HookInterceptor[] = [];
  /** Hooks some interceptor wants to see with no handler registered. */
  readonly wanted = new Set<HookName>();

  constructor(
    private readonly allHooks: readonly HookName[],
    private readonly logger: HookLogger,
  ) {}

  add(interceptor: HookInterceptor): () => void {
    this.list.push(interceptor);
    this.recompute();
    return () => {
      const at = this.list.indexOf(interceptor);
      if (at >= 0) this.list.splice(at, 1);
      this.recompute();
    };
  }

  /** Runs `dispatch` between the interceptors' call and result/error/done. */
  around(d: Interception, dispatch: () => unknown, asynchronous: boolean): unknown {
    for (const i of this.list) if (i.call) this.guard(i, "call", () => i.call?.(d));
    let out: unknown;
    try {
      out = dispatch();
    } catch (error) {
      this.finish(d, "error", error);
      throw error;
    }
    if (asynchronous && out instanceof Promise) {
      return out.then(
        (value) => {
          const pending = this.finish(d, "result", value);
          return pending ? pending.then(() => value) : value;
        },
        (error: unknown) => {
          const pending = this.finish(d, "error", error);
          if (!pending) throw error;
          return pending.then(() => {
            throw error;
          });
        },
      );
    }
    // Synchronous kinds (and detached observers, whose handlers run later): nothing is awaited.
    void this.finish(d, "result", out);
    return out;
  }

  /** Calls result (or error) then done on each interceptor; a promise only when one returned one. */
  private finish(d: Interception, what: "result" | "error", value: unknown): Promise<unknown> | undefined {
    const pending: Promise<unknown>[] = [];
    const keep = (p: unknown) => {
      if (p instanceof Promise) pending.push(p.catch((e: unknown) => this.report(what, e)));
    };
    for (const i of this.list) {
      const fn = what === "result" ? i.result : i.error;
      if (fn) keep(this.guard(i, what, () => fn.call(i, d, value)));
    }
    for (const i of this.list) if (i.done) keep(this.guard(i, "done", () => i.done?.(d)));
    return pending.length ? Promise.all(pending) : undefined;
  }

  private guard(i: HookInterceptor, what: string, fn: () => unknown): unknown {
    try {
      return fn();
    } catch (error) {
      this.report(`${i.name} ${what}`, error);
      return undefined;
    }
  }

  private report(what: string, error: unknown): void {
    this.logger.warn(sanitizeLogLine(`interceptor ${what} failed: ${describeError(error)}`));
  }

  private recompute(): void {
    this.wanted.clear();
    for (const i of this.list) {
      const hooks = i.hooks === "all" ? this.allHooks : (i.hooks ?? []);
      for (const h of hooks) this.wanted.add(h);
    }
  }
}
