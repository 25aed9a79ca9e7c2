import type { HookName } from "../../hooks/catalog.js";
import { hookMapping } from "./hooks.js";

/**
 * OpenClaw's internal hooks (`api.registerHook(events, handler)`, HOOK.md packs): colon-named
 * events (`message:received`), observe-only, the handler's return value ignored and its errors
 * logged. The ones with a Gatehouse moment run there; the others are named in a warning.
 */

export interface InternalHookMapping {
  /** The catalog hooks an event (or a whole family) runs on. */
  readonly targets: readonly HookName[];
  /** OpenClaw's `event.type` and `event.action` for what the handler receives. */
  readonly type: string;
  readonly action: string;
}

export const INTERNAL_HOOKS: Readonly<Record<string, InternalHookMapping>> = {
  "command:new": { targets: ["before_reset"], type: "command", action: "new" },
  "command:reset": { targets: ["before_reset"], type: "command", action: "reset" },
  "message:received": { targets: ["message_received"], type: "message", action: "received" },
  "message:sent": { targets: ["message_sent"], type: "message", action: "sent" },
  "session:compact:before": { targets: ["before_compaction"], type: "session", action: "compact:before" },
  "session:compact:after": { targets: ["after_compaction"], type: "session", action: "compact:after" },
};

/** OpenClaw's internal events with no Gatehouse moment, and why. */
export const INTERNAL_HOOKS_NOT_RUN: Readonly<Record<string, string>> = {
  "command:stop": "a cancelled run ends without a hook",
  "session:patch": "Gatehouse has no session patch command",
  "agent:bootstrap": "Gatehouse has no workspace bootstrap files to edit",
  "gateway:startup": "no gateway in Gatehouse",
  "gateway:shutdown": "no gateway in Gatehouse",
  "gateway:pre-restart": "no gateway in Gatehouse",
  "message:transcribed": "Gatehouse transcribes no audio",
  "message:preprocessed": "Gatehouse has no channel preprocessing; use message:received",
};

/** `events` as registerHook takes it (a name, a family such as `message`, or a list), resolved. */
export function resolveInternalEvents(events: unknown): {
  mapped: [string, InternalHookMapping][];
  notRun: [string, string][];
} {
  const names = (Array.isArray(events) ? events : [events]).map((e) => String(e));
  const mapped: [string, InternalHookMapping][] = [];
  const notRun: [string, string][] = [];
  for (const name of names) {
    const family = Object.keys({ ...INTERNAL_HOOKS, ...INTERNAL_HOOKS_NOT_RUN }).filter((k) =>
      k.startsWith(`${name}:`),
    );
    const members = family.length > 0 ? family : [name];
    for (const member of members) {
      const mapping = INTERNAL_HOOKS[member];
      if (mapping) mapped.push([member, mapping]);
      else notRun.push([member, whyNotRun(member)]);
    }
  }
  return { mapped, notRun };
}

function whyNotRun(name: string): string {
  const why = INTERNAL_HOOKS_NOT_RUN[name];
  if (why) return why;
  // OpenClaw registers a typed name here too, with a warning, and never calls it.
  if (hookMapping(name) !== undefined) return `"${name}" is a typed hook: register it with api.on, as OpenClaw says`;
  return "OpenClaw has no such internal event";
}
