import { attachmentMetadata, type Message, type Part, type Role } from "../../core/message.js";
import type { RuntimeDeps } from "../deps.js";
import { notices } from "../notices.js";
import type { RunState } from "../state.js";
import { outbox } from "./outbox.js";

export interface Draft {
  readonly role: Exclude<Role, "summary">;
  readonly parts: readonly Part[];
  readonly metadata?: Readonly<Record<string, unknown>>;
}

/**
 * The last stop before the store (docs/lifecycle.md, "Whenever a message is stored"): `tool_result_persist` for tool results, then
 * `before_message_write` for every message, both synchronous. A write blocked there is not
 * stored; `onBlocked` may offer a replacement (a tool result the model still needs), which meets
 * the same gates: blocked too, it gives way to a fixed notice that holds nothing the run wrote.
 */
export async function writeMessage(
  deps: RuntimeDeps,
  state: RunState,
  draft: Draft,
  onBlocked?: () => Draft | undefined,
): Promise<Message | undefined> {
  const passed = gateMessage(deps, state, draft);
  if (passed) return store(deps, state, passed);
  const replacement = onBlocked?.();
  if (!replacement) return undefined;
  const regated = gateMessage(deps, state, replacement);
  if (regated) return store(deps, state, regated);
  const fixed = fixedNotice(state, replacement);
  return fixed ? store(deps, state, fixed) : undefined;
}

/**
 * The context hooks added that the transcript records (Claude Code's attachments), stored after
 * what it followed: masked like any hook text, then through the same gates as every message, so
 * one they block is not kept. The model already read it; the stored copy is never sent again.
 */
export async function storeAttachments(deps: RuntimeDeps, state: RunState): Promise<void> {
  const secrets = deps.secretsOf(state.sessionId);
  for (const { attachment, text } of state.takeAttachments())
    await writeMessage(deps, state, {
      role: "system",
      parts: [{ type: "text", text: secrets.mask(text) }],
      metadata: attachmentMetadata(attachment),
    });
}

/** The message as the gates left it, or undefined when `before_message_write` blocked it. */
function gateMessage(deps: RuntimeDeps, state: RunState, draft: Draft): Draft | Message | undefined {
  const { engine } = deps;
  const persistHook = draft.role === "tool" && engine.hasHooks("tool_result_persist");
  // Without a hook to show it to, the draft goes to the store as it is.
  if (!persistHook && !engine.hasHooks("before_message_write")) return draft;
  let message = draftMessage(state, draft);
  if (persistHook) message = engine.emit("tool_result_persist", { message }).result.message ?? message;
  if (engine.hasHooks("before_message_write")) {
    const outcome = engine.emit("before_message_write", { message });
    if (outcome.result.block) return undefined;
    message = outcome.result.message ?? message;
  }
  return message;
}

/**
 * What stands in for a replacement the gates blocked too: for tool results, an answer to each
 * call this run already stored (its id and name passed the gates with the call), saying the
 * result was not stored; otherwise nothing.
 */
function fixedNotice(state: RunState, replacement: Draft): Draft | undefined {
  if (replacement.role !== "tool") return undefined;
  const stored = new Map<string, string>();
  for (const m of state.runMessages)
    for (const p of m.parts) if (p.type === "tool_call") stored.set(p.toolCallId, p.toolName);
  const parts: Part[] = [];
  for (const p of replacement.parts) {
    const toolName = p.type === "tool_result" ? stored.get(p.toolCallId) : undefined;
    if (p.type === "tool_result" && toolName !== undefined)
      parts.push({
        type: "tool_result",
        toolCallId: p.toolCallId,
        toolName,
        output: notices.resultNotStored,
        isError: true,
      });
  }
  return parts.length ? { role: "tool", parts } : undefined;
}

async function store(deps: RuntimeDeps, state: RunState, message: Draft | Message): Promise<Message> {
  const stored = await outbox(deps, state).store.appendMessage(toInput(state, message));
  state.remember(stored);
  return stored;
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
