import type { Message, Part, Role } from "../../core/message.js";
import type { RuntimeDeps } from "../deps.js";
import type { RunState } from "../state.js";

export interface Draft {
  readonly role: Exclude<Role, "summary">;
  readonly parts: readonly Part[];
  readonly metadata?: Readonly<Record<string, unknown>>;
}

/**
 * The last stop before the store (docs/lifecycle.md, "Whenever a message is stored"): `tool_result_persist` for tool results, then
 * `before_message_write` for every message, both synchronous. A write blocked there is not
 * stored; `onBlocked` may offer a replacement (a tool result the model still needs).
 */
export async function writeMessage(
  deps: RuntimeDeps,
  state: RunState,
  draft: Draft,
  onBlocked?: () => Draft | undefined,
): Promise<Message | undefined> {
  const { engine, store } = deps;
  const persistHook = draft.role === "tool" && engine.hasHooks("tool_result_persist");
  // Without a hook to show it to, the draft goes to the store as it is.
  if (!persistHook && !engine.hasHooks("before_message_write"))
    return store.appendMessage(toInput(state, draft)).then(remember(state));
  let message = draftMessage(state, draft);
  if (persistHook) {
    message = engine.emit("tool_result_persist", { message }).result.message ?? message;
  }
  if (engine.hasHooks("before_message_write")) {
    const outcome = engine.emit("before_message_write", { message });
    if (outcome.result.block) {
      const replacement = onBlocked?.();
      return replacement ? store.appendMessage({ ...toInput(state, replacement) }).then(remember(state)) : undefined;
    }
    message = outcome.result.message ?? message;
  }
  return store.appendMessage(toInput(state, message)).then(remember(state));
}

function remember(state: RunState) {
  return (stored: Message) => {
    state.remember(stored);
    return stored;
  };
}

/** Hooks see the message before it has an id or a place; those come from the store. */
export function draftMessage(state: RunState, draft: Draft): Message {
  return {
    id: "",
    sessionId: state.sessionId,
    runId: state.runId,
    seq: 0,
    role: draft.role,
    parts: draft.parts,
    metadata: draft.metadata ?? {},
    createdAt: new Date().toISOString(),
  };
}

function toInput(state: RunState, message: Draft | Message) {
  return {
    sessionId: state.sessionId,
    runId: state.runId,
    role: message.role === "summary" ? ("system" as const) : message.role,
    parts: message.parts,
    metadata: message.metadata ?? {},
  };
}
