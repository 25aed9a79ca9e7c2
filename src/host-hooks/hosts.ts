import { DIALECT_SPECS, type Dialect } from "../command-hooks/dialects.js";
import { CATALOG_HOOK_OF, type CommandHookEvent } from "../command-hooks/events.js";

/**
 * The agents `gatehouse hook <agent>` answers for, and which of their events it serves. The
 * events come from the dialect tables (src/command-hooks/dialects.ts) that already map each
 * agent's event names onto Claude Code's for Gatehouse's own command hooks: read the other way,
 * they say which catalog hook an agent's event fires.
 */
export const AGENTS = ["claude", "codex", "gemini", "cursor"] as const;
export type Agent = (typeof AGENTS)[number];

export function isAgent(name: string): name is Agent {
  return (AGENTS as readonly string[]).includes(name);
}

/** The Claude Code events whose catalog hook can change what the agent does. */
export const SERVED_EVENTS = [
  "PreToolUse",
  "PostToolUse",
  "PostToolUseFailure",
  "UserPromptSubmit",
  "Stop",
  "SubagentStop",
] as const satisfies readonly CommandHookEvent[];
export type ServedEvent = (typeof SERVED_EVENTS)[number];
const served = (e: CommandHookEvent): e is ServedEvent => (SERVED_EVENTS as readonly string[]).includes(e);

/** One of an agent's events that `gatehouse hook` answers. */
export interface HostEvent {
  readonly native: string;
  /** The Claude Code events it stands for (Gemini CLI's AfterTool: success and failure). */
  readonly events: readonly ServedEvent[];
}

/**
 * An agent's events `gatehouse hook` answers: those whose answer the agent reads (not the
 * observe-only ones), for every tool (not Cursor's per-tool duplicates of preToolUse), mapping
 * to a served event. Claude Code's are its own names.
 */
export function hostEvents(agent: Agent): readonly HostEvent[] {
  const table = DIALECT_SPECS[agent as Dialect].events;
  if (table === undefined) return SERVED_EVENTS.map((e) => ({ native: e, events: [e] }));
  return Object.entries(table).flatMap(([native, spec]) => {
    if (spec.observe || spec.tools !== undefined) return [];
    const events = spec.events.filter(served);
    return events.length === 0 ? [] : [{ native, events }];
  });
}

/** The Claude Code event an agent's event name stands for; for Gemini CLI's AfterTool, by whether the call failed. */
export function servedEventOf(agent: Agent, native: string, failed: boolean): ServedEvent | undefined {
  const found = hostEvents(agent).find((e) => e.native === native);
  if (found === undefined) return undefined;
  if (found.events.length > 1)
    return found.events.find((e) => (e === "PostToolUseFailure") === failed) ?? found.events[0];
  return found.events[0];
}

/** The catalog hook an event fires. */
export const catalogHookOf = (event: ServedEvent) => CATALOG_HOOK_OF[event];
