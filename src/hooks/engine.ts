import { maskSecrets } from "../core/secrets.js";
import { HOOK_NAMES, HOOKS, type HookName, type HookSpec } from "./catalog.js";
import { Deadlines } from "./deadlines.js";
import type { FastParse } from "./fast-parse.js";
import { deepFreeze } from "./freeze.js";
import { type HookInterceptor, type Interception, Interceptors } from "./intercept.js";
import { dispatchClaim } from "./kinds/claim.js";
import { dispatchGate } from "./kinds/gate.js";
import { dispatchModify } from "./kinds/modify.js";
import { DetachedQueue, dispatchObserve } from "./kinds/observe.js";
import { type Dispatch, FailureLog, fastParseOf, type HookLogger } from "./kinds/shared.js";
import { dispatchSync } from "./kinds/sync.js";
import {
  type Diagnostic,
  type OperatorOptions,
  type RegisterOptions,
  type Registration,
  type RegistrationRequest,
  Registry,
  type TimeoutOverrides,
} from "./registry.js";
import { currentRunContext, NO_RUN } from "./run-context.js";
import type { DispatchResult, HookEvent, HookHandler } from "./types.js";

export interface HookEngineOptions {
  /** Where handler failures are reported (pino works as is). Defaults to stderr. */
  readonly logger?: HookLogger;
  /** Operator-wide timeouts (`hooks.timeoutMs`, `hooks.timeouts[hook]`). */
  readonly timeouts?: TimeoutOverrides;
  readonly detached?: { readonly concurrency?: number; readonly capacity?: number };
}

/** A registration as `gatehouse plugins inspect` shows it. */
export interface RegistrationInfo {
  readonly hook: HookName;
  readonly pluginId: string;
  readonly id?: string;
  readonly priority: number;
  readonly timeoutMs: number;
  readonly failure: "open" | "closed";
  readonly matcher: boolean;
}

const stderrLogger: HookLogger = {
  warn: (m) => process.stderr.write(`gatehouse: ${maskSecrets(m)}\n`),
  error: (m) => process.stderr.write(`gatehouse: ${maskSecrets(m)}\n`),
};

/** What dispatch needs per hook beyond its spec, derived once. */
interface HookPlan {
  /** A rule is "chain": handlers see rewrites, and the original event. */
  readonly chained: boolean;
  readonly fastParse: FastParse | undefined;
}
const PLANS = Object.fromEntries(
  (Object.keys(HOOKS) as HookName[]).map((h) => {
    const spec: HookSpec = HOOKS[h];
    const chained = Object.values(spec.rules ?? {}).some((r) => r.rule === "chain");
    return [h, { chained, fastParse: fastParseOf(spec) }];
  }),
) as Record<HookName, HookPlan>;

// What a hook with no handler returns: built once, so an unused hook costs a map lookup.
const NOTHING_DONE = Object.freeze({ result: Object.freeze({}) });
const NO_HANDLER: Record<HookSpec["kind"], unknown> = {
  observe: Promise.resolve(),
  modify: Promise.resolve(NOTHING_DONE),
  claim: Promise.resolve(Object.freeze({ handled: false })),
  gate: Promise.resolve(Object.freeze({ outcome: "pass" })),
  sync: NOTHING_DONE,
};
/** Per hook, what `emit` returns when it has no handler: one lookup, nothing built. */
const IDLE = Object.fromEntries(
  (Object.keys(HOOKS) as HookName[]).map((h) => {
    const spec: HookSpec = HOOKS[h];
    return [h, spec.kind === "observe" && spec.detached ? undefined : NO_HANDLER[spec.kind]];
  }),
) as Record<HookName, unknown>;

/**
 * The hook engine: registrations in, verdicts out. It knows the catalog, ordering, the five
 * kinds, merge rules, timeouts and the run context — nothing about agents.
 */
export class HookEngine {
  private readonly registry: Registry;
  private readonly failures: FailureLog;
  private readonly deadlines = new Deadlines();
  private readonly detached: DetachedQueue;
  private readonly interceptors: Interceptors;

  constructor(options: HookEngineOptions = {}) {
    this.registry = new Registry(options.timeouts);
    const logger = options.logger ?? stderrLogger;
    this.failures = new FailureLog(logger);
    this.interceptors = new Interceptors(HOOK_NAMES, logger);
    this.detached = new DetachedQueue(options.detached?.concurrency, options.detached?.capacity);
  }

  /** Adds one handler for a plugin; the same `(pluginId, options.id)` again replaces it. */
  on<K extends HookName>(
    pluginId: string,
    hook: K,
    handler: NoInfer<HookHandler<K>>,
    options?: RegisterOptions,
  ): Diagnostic[] {
    return this.registry.add(pluginId, { hook, handler: handler as RegistrationRequest["handler"], options });
  }

  /** Swaps all of a plugin's registrations at once (load and reload). */
  replacePlugin(
    pluginId: string,
    registrations: readonly RegistrationRequest[],
    operator?: OperatorOptions,
  ): Diagnostic[] {
    return this.registry.replacePlugin(pluginId, registrations, operator);
  }

  removePlugin(pluginId: string): void {
    this.registry.removePlugin(pluginId);
  }

  /** Lets call sites skip building an event nobody listens to (no handler, no interceptor asking for it). */
  hasHooks(hook: HookName): boolean {
    return this.registry.lists.has(hook) || this.interceptors.wanted.has(hook);
  }

  /**
   * Adds an interceptor (see `HookInterceptor`): it sees every dispatch from now on, in the
   * order interceptors were added. Returns a function that removes it.
   */
  intercept(interceptor: HookInterceptor): () => void {
    return this.interceptors.add(interceptor);
  }

  registrations(hook?: HookName): RegistrationInfo[] {
    const lists = hook ? [this.registry.lists.get(hook) ?? []] : [...this.registry.lists.values()];
    return lists.flat().map(info);
  }

  /**
   * Fires a hook inside the current run context. What it returns depends on the hook's kind:
   * modify → merged result (+ who latched a decision); gate → pass or block; claim → the
   * winning claim; observe → a promise (awaited hooks) or nothing (detached hooks); sync → the
   * merged result, synchronously.
   *
   * The event is deep-frozen in place (the caller's objects too) and handed to handlers as is.
   * Freezing stops at anything already frozen — that is what makes a 10,000-message history
   * cost one check — so a producer that passes a frozen object must have frozen it all the way
   * down (`deepFreeze`): a frozen array of unfrozen messages would let a handler change them.
   */
  emit<K extends HookName>(hook: K, event: HookEvent<K>): DispatchResult<K> {
    const registrations = this.registry.lists.get(hook);
    if (registrations === undefined) {
      // Interceptors see a hook nobody handles only when one of them asked for it.
      if (!this.interceptors.wanted.has(hook)) return IDLE[hook] as DispatchResult<K>;
    } else if (this.interceptors.list.length === 0)
      return this.dispatch(hook, HOOKS[hook], registrations, event as Record<string, unknown>) as DispatchResult<K>;
    return this.intercepted(hook, registrations, event as Record<string, unknown>) as DispatchResult<K>;
  }

  /**
   * Stops waiting for a cancelled run's pending handlers: each dispatch ends at once (a gate
   * or fail-closed hook as a block attributed with cause "cancelled"). Their signals have
   * already aborted with the run's.
   */
  cancelRun(runId: string): void {
    this.deadlines.cancelRun(runId);
  }

  /** Waits for detached observers still queued or running (used on close and in tests). */
  drain(): Promise<void> {
    return this.detached.drain();
  }

  /** A dispatch with interceptors around it; a hook with no handler answers as it would without them. */
  private intercepted(
    hook: HookName,
    registrations: readonly Registration[] | undefined,
    event: Record<string, unknown>,
  ): unknown {
    const spec: HookSpec = HOOKS[hook];
    const d: Interception = {
      hook,
      event: deepFreeze(event),
      run: currentRunContext() ?? NO_RUN,
      startedAt: performance.now(),
      handlers: registrations?.length ?? 0,
    };
    const asynchronous = spec.kind !== "sync" && !(spec.kind === "observe" && spec.detached);
    return this.interceptors.around(
      d,
      () => (registrations === undefined ? IDLE[hook] : this.dispatch(hook, spec, registrations, event)),
      asynchronous,
    );
  }

  private dispatch(
    hook: HookName,
    spec: HookSpec,
    registrations: readonly Registration[],
    event: Record<string, unknown>,
  ): unknown {
    const frozen = deepFreeze(event);
    const plan = PLANS[hook];
    const d: Dispatch = {
      hook,
      spec,
      registrations,
      event: plan.chained ? Object.freeze({ ...frozen, original: frozen }) : frozen,
      run: currentRunContext() ?? NO_RUN,
      failures: this.failures,
      deadlines: this.deadlines,
      fastParse: plan.fastParse,
    };
    switch (spec.kind) {
      case "observe":
        if (spec.detached) return this.detached.push(d);
        return dispatchObserve(d);
      case "modify":
        return dispatchModify(d);
      case "claim":
        return dispatchClaim(d);
      case "gate":
        return dispatchGate(d);
      case "sync":
        return dispatchSync(d);
    }
  }
}

function info(r: Registration): RegistrationInfo {
  return {
    hook: r.hook,
    pluginId: r.pluginId,
    ...(r.id === undefined ? {} : { id: r.id }),
    priority: r.priority,
    timeoutMs: r.timeoutMs,
    failure: r.failure,
    matcher: r.matches !== undefined,
  };
}
