import type { FieldRule } from "../hooks/catalog.js";
import { matches } from "../hooks/matcher.js";
import { Merger } from "../hooks/merge.js";
import { loadShellParser } from "../permissions/shell-parser.js";
import { isMcpName } from "../tools/mcp-name.js";
import { DIALECT_SPECS, isForeign, nativeToolName } from "./dialects.js";
import { type CommandHookEvent, EVENT_SPECS, matchValueOf } from "./events.js";
import { type ExecutorOptions, type HandlerOutcome, runCommandHandler } from "./executor.js";
import { type IfRule, ifRuleMatches, parseIfRule } from "./if-rule.js";
import type { ConfiguredHandler } from "./sources.js";
import type { HookDecision, NormalizedVerdict } from "./verdict.js";

export interface HandlerRun {
  readonly handler: ConfiguredHandler;
  readonly outcome: HandlerOutcome;
}

/** All matching handlers' verdicts folded into one, plus each handler's own outcome. */
export interface MergedVerdict extends Omit<NormalizedVerdict, "error" | "errorDetail"> {
  /** The handler whose decision won (first in source order among the strongest). */
  decidedBy?: ConfiguredHandler;
  /** In source order, whatever order they finished in. */
  runs: HandlerRun[];
}

const ifRules = new WeakMap<ConfiguredHandler, IfRule | undefined>();
function ifRuleOf(h: ConfiguredHandler): IfRule | undefined {
  if (!ifRules.has(h)) ifRules.set(h, h.definition.if === undefined ? undefined : parseIfRule(h.definition.if));
  return ifRules.get(h);
}

/**
 * The handlers that run for one event: right event, matcher matches, `if` rule (tool events)
 * matches, and identical handlers collapsed to the first in source order.
 */
export function selectHandlers(
  event: CommandHookEvent,
  matchValue: string | undefined,
  payload: Readonly<Record<string, unknown>>,
  handlers: readonly ConfiguredHandler[],
  projectDir: string,
): ConfiguredHandler[] {
  const spec = EVENT_SPECS[event];
  const seen = new Set<string>();
  const out: ConfiguredHandler[] = [];
  for (const h of handlers) {
    if (h.event !== event) continue;
    if (h.tools && !h.tools.some((t) => toolIs(t, String(payload.tool_name ?? "")))) continue;
    if (spec.matcherField !== null && !matchesFor(h, spec.matcherField, matchValue)) continue;
    if (h.definition.if !== undefined) {
      const rule = ifRuleOf(h);
      if (!spec.toolEvent) continue;
      if (rule && !ifRuleMatches(rule, String(payload.tool_name ?? ""), payload.tool_input, projectDir)) continue;
    }
    if (seen.has(h.dedupKey)) continue;
    seen.add(h.dedupKey);
    out.push(h);
  }
  return out;
}

/** `mcp__*` stands for every MCP tool. */
function toolIs(pattern: string, tool: string): boolean {
  return pattern === "mcp__*" ? isMcpName(tool) : pattern === tool;
}

/** A foreign dialect's matcher is tested against the tool as that dialect names it (Codex: either name). */
function matchesFor(h: ConfiguredHandler, field: string, value: string | undefined): boolean {
  if (field !== "tool_name" || value === undefined || !isForeign(h.dialect)) return matches(h.compiledMatcher, value);
  const native = nativeToolName(h.dialect, value);
  return (
    matches(h.compiledMatcher, native) ||
    (DIALECT_SPECS[h.dialect].aliasMatch === true && matches(h.compiledMatcher, value))
  );
}

/** Starts a background handler's run; the caller owns the signal that ends it. */
export type BackgroundStart = (signal: AbortSignal) => Promise<HandlerOutcome>;

export interface DispatchOptions extends ExecutorOptions {
  /**
   * Where `async` / `asyncRewake` command handlers go (Claude Code's background hooks): handed
   * over unstarted, never waited for, their answer not merged. Without it they run like the others.
   */
  background?: (handler: ConfiguredHandler, start: BackgroundStart) => void;
}

/** A command handler Claude Code runs in the background. */
export const runsInBackground = (h: ConfiguredHandler): boolean =>
  h.definition.type === "command" && (h.definition.async === true || h.definition.asyncRewake === true);

const EMPTY: MergedVerdict = Object.freeze({ runs: [] }) as MergedVerdict;

/**
 * Runs every matching handler in parallel and merges their verdicts in source order.
 * `matchValue` defaults to the payload field the event's matcher tests.
 */
export async function runCommandHooks(
  event: CommandHookEvent,
  matchValue: string | undefined,
  payload: Readonly<Record<string, unknown>>,
  handlers: readonly ConfiguredHandler[],
  opts: DispatchOptions,
): Promise<MergedVerdict> {
  const value = matchValue ?? matchValueOf(event, payload);
  // An `if` rule reads a Bash line with the shell parser; until it has loaded, every such rule matches.
  if (handlers.some((h) => h.definition.if !== undefined)) await loadShellParser();
  let selected = selectHandlers(event, value, payload, handlers, opts.projectDir);
  const { background, ...executor } = opts;
  if (background) {
    for (const h of selected.filter(runsInBackground))
      background(h, (signal) => runCommandHandler(h, payload, { ...executor, signal }));
    selected = selected.filter((h) => !runsInBackground(h));
  }
  if (selected.length === 0) return { ...EMPTY, runs: [] };
  const outcomes = await Promise.all(selected.map((h) => runCommandHandler(h, payload, executor)));
  return mergeVerdicts(selected.map((handler, i) => ({ handler, outcome: outcomes[i] as HandlerOutcome })));
}

/**
 * The merge rules, as field rules of the engine's `Merger` (the same rules typed plugins' results
 * merge by): the strongest decision wins (deny/block > ask > allow; among equals the first in
 * source order), and its handler's reason goes with it; context, system messages and feedback
 * are concatenated in order; `updatedInput` / `updatedToolOutput` come from the last handler in
 * order that gave one; `continue: false` from any handler stops, with the first stop reason; an
 * `interrupt` from any PermissionRequest deny ends the run.
 */
const MERGE_RULES: Readonly<Record<string, FieldRule>> = {
  decision: { rule: "rank", order: ["block", "deny", "ask", "allow"] satisfies HookDecision[] },
  additionalContext: { rule: "concat" },
  systemMessage: { rule: "concat" },
  feedback: { rule: "concat" },
  updatedInput: { rule: "chain" },
  updatedToolOutput: { rule: "chain" },
  sessionTitle: { rule: "chain" },
  stop: { rule: "latch" },
  stopReason: { rule: "first" },
};

/** The fields merged as they are (the decision, its reason and the stop have rules of their own). */
const MERGED_AS_IS = [
  "additionalContext",
  "systemMessage",
  "feedback",
  "updatedInput",
  "updatedToolOutput",
  "sessionTitle",
] as const;

export function mergeVerdicts(runs: HandlerRun[]): MergedVerdict {
  const merger = new Merger(MERGE_RULES);
  for (const { outcome } of runs) {
    const { decision, stopReason } = outcome.verdict;
    const stops = outcome.verdict.continue === false;
    merger.apply({
      decision,
      ...Object.fromEntries(MERGED_AS_IS.map((key) => [key, outcome.verdict[key]])),
      ...(stops ? { stop: true, stopReason } : {}),
    });
  }
  const merged = merger.merged as Partial<NormalizedVerdict> & { stop?: true };
  const m: MergedVerdict = { runs };
  for (const key of MERGED_AS_IS) if (merged[key] !== undefined) Object.assign(m, { [key]: merged[key] });
  if (merged.decision !== undefined) {
    // The reason is the deciding handler's: the first in source order with the winning decision.
    const decided = runs.find((r) => r.outcome.verdict.decision === merged.decision) as HandlerRun;
    m.decision = merged.decision;
    m.decidedBy = decided.handler;
    if (decided.outcome.verdict.reason !== undefined) m.reason = decided.outcome.verdict.reason;
  }
  if (merged.stop) {
    m.continue = false;
    if (merged.stopReason !== undefined) m.stopReason = merged.stopReason;
  }
  if (runs.some((r) => r.outcome.verdict.interrupt)) m.interrupt = true;
  if (runs.some((r) => r.outcome.verdict.retry)) m.retry = true;
  return m;
}
