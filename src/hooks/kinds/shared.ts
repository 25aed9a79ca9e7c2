import type { HookName, HookSpec } from "../catalog.js";
import type { Deadlines } from "../deadlines.js";
import { compileFastParse, type FastParse } from "../fast-parse.js";
import { readResult, UnreadableResult } from "../plain-data.js";
import type { Registration } from "../registry.js";
import type { RunContext } from "../run-context.js";
import { describeError, sanitizeLogLine } from "../sanitize.js";
import type { Attribution } from "../types.js";

export interface HookLogger {
  warn(message: string): void;
  error(message: string): void;
}

/** Everything one dispatch needs; built only when the hook has handlers. */
export interface Dispatch {
  readonly hook: HookName;
  readonly spec: HookSpec;
  readonly registrations: readonly Registration[];
  readonly event: Readonly<Record<string, unknown>>;
  readonly run: RunContext;
  readonly failures: FailureLog;
  /** The engine's handler deadlines. */
  readonly deadlines: Deadlines;
  /** The hook's shortcut past zod for plain results (see fast-parse.ts), if its schema has one. */
  readonly fastParse: FastParse | undefined;
}

export type FailureCause = "threw" | "timeout" | "invalid" | "cancelled";

/** Logs handler failures as one sanitized line that never carries event content or reasons. */
export class FailureLog {
  constructor(private readonly logger: HookLogger) {}

  report(registration: Registration, cause: FailureCause, detail: string, blocked: boolean): void {
    // A handler cut short because its run was cancelled did nothing wrong.
    if (cause === "cancelled") return;
    const effect = blocked ? "blocked (fail closed)" : "ignored (fail open)";
    const line = `hook ${registration.hook}: handler ${handlerName(registration)} ${cause === "threw" ? "threw" : cause === "timeout" ? `timed out after ${registration.timeoutMs} ms` : "returned an invalid result"}${detail ? ` (${detail})` : ""}; ${effect}`;
    (blocked ? this.logger.error : this.logger.warn).call(this.logger, sanitizeLogLine(line));
  }

  /**
   * A handler that can never work as written (a sync hook's handler returning a Promise): an
   * error in the plugin, not a failure of one call, so it is logged as one.
   */
  misuse(registration: Registration, what: string): void {
    this.logger.error(sanitizeLogLine(`hook ${registration.hook}: handler ${handlerName(registration)} ${what}`));
  }

  warn(message: string): void {
    this.logger.warn(sanitizeLogLine(message));
  }
}

function handlerName(registration: Registration): string {
  return registration.id === undefined ? registration.pluginId : `${registration.pluginId}#${registration.id}`;
}

export function attribution(registration: Registration, cause: Attribution["cause"]): Attribution {
  return registration.id === undefined
    ? { hook: registration.hook, pluginId: registration.pluginId, cause }
    : { hook: registration.hook, pluginId: registration.pluginId, registrationId: registration.id, cause };
}

export function errorDetail(error: unknown): string {
  return describeError(error);
}

/** zod issues as codes and schema paths only: never the values or unknown key names. */
export function issueDetail(issues: readonly { code: string; path: readonly PropertyKey[] }[]): string {
  return issues
    .slice(0, 5)
    .map((i) => `${i.code} at ${i.path.length ? i.path.map(String).join(".") : "(root)"}`)
    .join(", ");
}

/**
 * The result read once as data (plain-data.ts), a schema check, then the hook's own cross-field
 * rules: the result to merge, or (a string) why it is invalid. `null` and non-objects are invalid.
 */
export function validateResult(
  d: Dispatch,
  answer: unknown,
  event: Readonly<Record<string, unknown>>,
): Record<string, unknown> | string {
  const { spec } = d;
  const value = readResult(answer);
  if (value instanceof UnreadableResult) return value.why;
  let data = d.fastParse?.(value);
  if (data === undefined) {
    if (spec.result === undefined) return "this hook takes no result";
    if (saysNothing(spec, value)) return EMPTY_RESULT;
    const parsed = spec.result.safeParse(value);
    if (!parsed.success) return issueDetail(parsed.error.issues);
    data = parsed.data as Record<string, unknown>;
  }
  if (spec.normalize === undefined) return data;
  return saysNothing(spec, data) ? EMPTY_RESULT : spec.normalize(data, event as Record<string, unknown>);
}

/** The shortcut past zod for each result schema that has one, compiled once. */
export function fastParseOf(spec: HookSpec): FastParse | undefined {
  return spec.result === undefined ? undefined : compileFastParse(spec.result);
}

/** `{}` from a modify or sync hook says nothing (every field there is optional): no parse needed. */
function saysNothing(spec: HookSpec, value: unknown): boolean {
  return spec.kind !== "claim" && isEmptyPlainObject(value);
}

const EMPTY_RESULT: Record<string, unknown> = Object.freeze({});

function isEmptyPlainObject(value: unknown): boolean {
  if (value === null || typeof value !== "object" || Object.getPrototypeOf(value) !== Object.prototype) return false;
  for (const _key in value) return false;
  return true;
}
