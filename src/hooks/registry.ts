import { z } from "zod";
import { type FailurePolicy, HOOKS, type HookName, isHookName } from "./catalog.js";
import { compileToolMatcher, type ToolMatcher } from "./matcher.js";
import type { HookContext } from "./types.js";

export interface RegisterOptions {
  /**
   * Higher runs first. Default 0. Ties run in the order the plugins first registered (a
   * reloaded plugin keeps its place), then in the order the plugin registered its handlers.
   */
  readonly priority?: number;
  /** This handler's own timeout; operator configuration overrides it. */
  readonly timeoutMs?: number;
  /** Tool hooks only: which tools this handler sees (Claude Code matcher rules). */
  readonly matcher?: string | readonly string[];
  /** Stable id within the plugin: registering the same id again replaces, never duplicates. */
  readonly id?: string;
}

export interface TimeoutOverrides {
  readonly timeoutMs?: number;
  readonly timeouts?: Partial<Record<HookName, number>>;
}

/** What an operator configures for one plugin (gatehouse.json `plugins[].hooks`). */
export interface OperatorOptions extends TimeoutOverrides {
  /** Turn this plugin's failures into "no opinion" on fail-closed hooks: all hooks, or the listed ones. */
  readonly failOpen?: boolean | readonly HookName[];
}

export interface RegistrationRequest {
  readonly hook: string;
  // biome-ignore lint/suspicious/noExplicitAny: handlers are typed at api.on; the registry stores them erased
  readonly handler: (event: any, ctx: HookContext) => unknown;
  readonly options?: RegisterOptions;
}

export interface Diagnostic {
  readonly level: "warning" | "error";
  readonly pluginId: string;
  readonly hook?: string;
  readonly code: string;
  readonly message: string;
  /** Source lines around the error, the column marked (a plugin with a syntax error). */
  readonly frame?: readonly string[];
}

/** A registration as dispatch uses it: everything resolved once, at registration time. */
export interface Registration {
  readonly pluginId: string;
  readonly id: string | undefined;
  readonly hook: HookName;
  readonly handler: RegistrationRequest["handler"];
  readonly priority: number;
  readonly matches: ToolMatcher | undefined;
  readonly timeoutMs: number;
  readonly failure: FailurePolicy;
  /** Registration order: the plugin's first appearance, then the handler's place within it. */
  readonly order: number;
}

const MAX_TIMEOUT_MS = 600_000;
const PER_PLUGIN = 1_000_000;

/** What each option must be, as the diagnostic says it. */
const OPTION_RULES: Readonly<Record<keyof RegisterOptions, string>> = {
  priority: "a finite number",
  timeoutMs: `a whole number of milliseconds from 1 to ${MAX_TIMEOUT_MS}`,
  matcher: "a string or a list of strings",
  id: "a non-empty string",
};

// Plugins in plain JavaScript get no compile-time check: a typo'd option (`timeoutMS`) must be
// a diagnostic, not an option silently left at its default.
const RegisterOptionsSchema: z.ZodType<RegisterOptions> = z.strictObject({
  priority: z.number().optional(),
  timeoutMs: z.int().min(1).max(MAX_TIMEOUT_MS).optional(),
  matcher: z.union([z.string(), z.array(z.string())]).optional(),
  id: z.string().min(1).optional(),
});

interface PluginEntry {
  readonly order: number;
  requests: RegistrationRequest[];
  operator: OperatorOptions;
}

function validTimeout(ms: unknown): ms is number {
  return typeof ms === "number" && Number.isInteger(ms) && ms > 0 && ms <= MAX_TIMEOUT_MS;
}

/**
 * Holds every plugin's registrations and the per-hook handler lists dispatch reads. A change
 * rebuilds the affected lists and swaps them in with one assignment, so a dispatch sees the
 * old set or the new one, never a mixture or an empty gap.
 */
export class Registry {
  private readonly plugins = new Map<string, PluginEntry>();
  private nextPluginOrder = 0;
  /** Only hooks with at least one handler are present: `has` is the whole cost of an unused hook. */
  lists: ReadonlyMap<HookName, readonly Registration[]> = new Map();

  constructor(private readonly global: TimeoutOverrides = {}) {}

  /** Replaces all of a plugin's registrations at once. */
  replacePlugin(
    pluginId: string,
    requests: readonly RegistrationRequest[],
    operator: OperatorOptions = {},
  ): Diagnostic[] {
    const entry = this.plugins.get(pluginId);
    const order = entry?.order ?? this.nextPluginOrder++;
    const diagnostics: Diagnostic[] = [];
    const accepted: RegistrationRequest[] = [];
    for (const request of requests) {
      const problem = this.check(pluginId, request);
      if (problem) diagnostics.push(problem);
      else upsert(accepted, request);
    }
    this.plugins.set(pluginId, { order, requests: accepted, operator });
    this.rebuild();
    return diagnostics;
  }

  /** Adds one registration to a plugin (replacing the one with the same id, if any). */
  add(pluginId: string, request: RegistrationRequest): Diagnostic[] {
    const entry = this.plugins.get(pluginId);
    return this.replacePlugin(pluginId, [...(entry?.requests ?? []), request], entry?.operator);
  }

  removePlugin(pluginId: string): void {
    if (this.plugins.delete(pluginId)) this.rebuild();
  }

  pluginIds(): string[] {
    return [...this.plugins.keys()];
  }

  private check(pluginId: string, request: RegistrationRequest): Diagnostic | undefined {
    const { hook } = request;
    const fail = (code: string, message: string): Diagnostic => ({ level: "error", pluginId, hook, code, message });
    if (!isHookName(hook)) return fail("unknown-hook", `unknown hook "${hook}"`);
    if (typeof request.handler !== "function")
      return fail("bad-handler", `the handler for "${hook}" is not a function`);
    if (request.options === undefined) return undefined;
    const parsed = RegisterOptionsSchema.safeParse(request.options);
    if (!parsed.success) return fail("bad-option", optionProblem(parsed.error.issues));
    if (parsed.data.matcher !== undefined) {
      if (!("matcher" in HOOKS[hook]))
        return fail("matcher-not-supported", `"${hook}" has no matcher; only tool hooks take one`);
      try {
        compileToolMatcher(parsed.data.matcher);
      } catch (error) {
        return fail("bad-matcher", (error as Error).message);
      }
    }
    return undefined;
  }

  private resolve(pluginId: string, entry: PluginEntry, request: RegistrationRequest, index: number): Registration {
    const hook = request.hook as HookName;
    const spec = HOOKS[hook];
    const { operator } = entry;
    const options = request.options ?? {};
    const failOpen =
      operator.failOpen === true || (Array.isArray(operator.failOpen) && operator.failOpen.includes(hook));
    const timeoutMs =
      [operator.timeouts?.[hook], operator.timeoutMs, this.global.timeouts?.[hook], this.global.timeoutMs].find(
        validTimeout,
      ) ??
      options.timeoutMs ??
      spec.timeoutMs;
    return {
      pluginId,
      id: options.id,
      hook,
      handler: request.handler,
      priority: options.priority ?? 0,
      matches: compileToolMatcher(options.matcher),
      timeoutMs,
      failure: failOpen ? "open" : spec.failure,
      order: entry.order * PER_PLUGIN + index,
    };
  }

  private rebuild(): void {
    const lists = new Map<HookName, Registration[]>();
    for (const [pluginId, entry] of this.plugins) {
      entry.requests.forEach((request, index) => {
        const registration = this.resolve(pluginId, entry, request, index);
        const list = lists.get(registration.hook);
        if (list) list.push(registration);
        else lists.set(registration.hook, [registration]);
      });
    }
    for (const list of lists.values()) list.sort((a, b) => b.priority - a.priority || a.order - b.order);
    this.lists = lists;
  }
}

function optionProblem(issues: readonly z.core.$ZodIssue[]): string {
  const known = Object.keys(OPTION_RULES).join(", ");
  // An unknown key first: a typo'd option is likelier than a wrong value, and says more.
  const issue = issues.find((i) => i.code === "unrecognized_keys") ?? (issues[0] as z.core.$ZodIssue);
  if (issue.code === "unrecognized_keys") {
    const which = issue.keys.map((k) => JSON.stringify(k)).join(", ");
    return `unknown option${issue.keys.length > 1 ? "s" : ""} ${which} (the options are ${known})`;
  }
  const key = issue.path[0];
  if (typeof key === "string" && key in OPTION_RULES)
    return `${key} must be ${OPTION_RULES[key as keyof RegisterOptions]}`;
  return `the options must be an object (with ${known})`;
}

function upsert(list: RegistrationRequest[], request: RegistrationRequest): void {
  const id = request.options?.id;
  const at = id === undefined ? -1 : list.findIndex((r) => r.options?.id === id);
  if (at >= 0) list[at] = request;
  else list.push(request);
}
