import { messageText } from "../core/message.js";
import type { RuntimeDeps } from "./deps.js";
import type { RunState } from "./state.js";

/** Revisions per run when no retry asks for more attempts. */
export const MAX_REVISIONS = 3;
/** The hard ceiling: a retry's own `maxAttempts` can raise the run's cap up to here, never past it. */
export const MAX_REVISIONS_CEILING = 8;
const DEFAULT_INSTRUCTION = "Please revise your answer.";

/**
 * DESIGN §3 step 9: on a natural final answer, `before_agent_finalize` may ask for one more
 * pass. Returns true when the run should loop back to the model. Each retry counts against its
 * own `maxAttempts` (default 1, keyed by idempotency key or instruction) and the run's cap.
 */
export async function askForRevision(deps: RuntimeDeps, state: RunState): Promise<boolean> {
  if (!deps.engine.hasHooks("before_agent_finalize")) return false;
  const last = [...state.runMessages].reverse().find((m) => m.role === "assistant");
  const outcome = await deps.engine.emit("before_agent_finalize", {
    lastAssistantMessage: last ? messageText(last) : "",
    messages: state.history,
    stopHookActive: state.revisions.length > 0,
    attempt: state.revisions.length,
  });
  const { action, reason, retry } = outcome.result;
  const cap = Math.min(MAX_REVISIONS_CEILING, Math.max(MAX_REVISIONS, ...(retry ?? []).map((r) => r.maxAttempts ?? 1)));
  if (action !== "revise" || state.revisions.length >= cap) return false;
  const instructions: string[] = [];
  for (const r of retry ?? []) {
    const key = r.idempotencyKey ?? r.instruction;
    const used = state.retryCounts.get(key) ?? 0;
    if (used >= (r.maxAttempts ?? 1)) continue;
    state.retryCounts.set(key, used + 1);
    instructions.push(r.instruction);
  }
  if (retry?.length && instructions.length === 0) return false;
  if (instructions.length === 0) {
    const key = reason ?? DEFAULT_INSTRUCTION;
    const used = state.retryCounts.get(key) ?? 0;
    if (used >= 1) return false;
    state.retryCounts.set(key, used + 1);
    instructions.push(key);
  }
  state.revisions.push({ afterMessageId: last?.id, text: instructions.join("\n\n") });
  return true;
}
