import { join } from "node:path";
import { type Agent, hostEvents } from "./hosts.js";

/**
 * `gatehouse hook install <agent>`: the hook entries that make the agent call `gatehouse hook
 * <agent>` on every event it serves, merged into the agent's project config file. The file
 * formats are the ones src/command-hooks/sources.ts reads for Gatehouse's own command hooks.
 */

/** The agent's project config file, relative to the project. */
export const CONFIG_FILE: Readonly<Record<Agent, string>> = {
  claude: join(".claude", "settings.json"),
  codex: join(".codex", "hooks.json"),
  gemini: join(".gemini", "settings.json"),
  cursor: join(".cursor", "hooks.json"),
};

/** Tool events take every tool; the others take no matcher. */
const TOOL_EVENTS = new Set(["PreToolUse", "PostToolUse", "PostToolUseFailure", "BeforeTool", "AfterTool"]);

type Obj = Record<string, unknown>;
const isRecord = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** Why a config file cannot be merged into: it is not what the agent reads. */
export class ConfigShapeError extends Error {}

/**
 * The config file's new text: the existing one (or none) with a hook entry for each served event
 * added, unless an entry running `command` is there already. Other keys and entries are kept as
 * they are, in their order. Throws ConfigShapeError for a file that is not JSON of the agent's shape.
 */
export function withHookEntries(agent: Agent, existing: string | undefined, command: string, file: string): string {
  let root: Obj = {};
  if (existing !== undefined && existing.trim() !== "") {
    let parsed: unknown;
    try {
      parsed = JSON.parse(existing);
    } catch (error) {
      throw new ConfigShapeError(`${file}: not valid JSON (${error instanceof Error ? error.message : String(error)})`);
    }
    if (!isRecord(parsed)) throw new ConfigShapeError(`${file}: expected a JSON object at the top`);
    root = parsed;
  }
  if (root.hooks !== undefined && !isRecord(root.hooks))
    throw new ConfigShapeError(`${file}: "hooks" must be an object of events`);
  const hooks: Obj = { ...((root.hooks as Obj | undefined) ?? {}) };
  for (const { native } of hostEvents(agent)) {
    const entries = hooks[native] ?? [];
    if (!Array.isArray(entries)) throw new ConfigShapeError(`${file}: "hooks.${native}" must be an array`);
    if (entries.some((e) => runs(e, command))) continue;
    hooks[native] = [...entries, entryFor(agent, native, command)];
  }
  const out = agent === "cursor" ? { version: 1, ...root, hooks } : { ...root, hooks };
  return `${JSON.stringify(out, null, 2)}\n`;
}

function entryFor(agent: Agent, native: string, command: string): Obj {
  const handler = { type: "command", command };
  if (agent === "cursor") return { command };
  if (agent === "gemini")
    return { ...(TOOL_EVENTS.has(native) ? { matcher: ".*" } : {}), hooks: [{ ...handler, name: "gatehouse" }] };
  return { ...(TOOL_EVENTS.has(native) ? { matcher: "*" } : {}), hooks: [handler] };
}

/** An entry (a matcher group, or a Cursor handler) that already runs the command. */
function runs(entry: unknown, command: string): boolean {
  if (!isRecord(entry)) return false;
  if (entry.command === command) return true;
  return Array.isArray(entry.hooks) && entry.hooks.some((h) => isRecord(h) && h.command === command);
}
