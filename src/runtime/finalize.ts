import { messageText } from "../core/message.js";
import { REVISION_LIMITS, type RevisionBudget } from "../hooks/revisions.js";
import type { RuntimeDeps } from "./deps.js";
import type { RunState } from "./state.js";

export { REVISION_LIMITS, type RevisionBudget } from "../hooks/revisions.js";

const DEFAULT_INSTRUCTION = "Please revise your answer.";

/**
 * On a natural final answer, `before_agent_finalize` may ask for one more pass. Returns true
 * when the run should loop back to the model. Each retry counts against its own `maxAttempts`
 * (default 1, keyed by idempotency key or instruction) and against its budget's limit.
 */
export async function askForRevision(deps: RuntimeDeps, state: RunState, depth = 0): Promise<boolean> {
  if (!deps.engine.hasHooks("before_agent_finalize")) return false;
  const last = [...state.runMessages].reverse().find((m) => m.role === "assistant");
  const outcome = await deps.engine.emit("before_agent_finalize", {
    lastAssistantMessage: last ? messageText(last) : "",
    messages: state.history,
    stopHookActive: state.revisions.length > 0,
    attempt: state.revisions.length,
  });
  const { action, reason, retry } = outcome.result;
  const charged = new Set<RevisionBudget>();
  const instructions: string[] = [];
  const take = (key: string, maxAttempts: number, budget: RevisionBudget): string | undefined => {
    const used = state.retryCounts.get(key) ?? 0;
    if (used >= maxAttempts || state.revisionCounts[budget] >= REVISION_LIMITS[budget].limit) return undefined;
    state.retryCounts.set(key, used + 1);
    charged.add(budget);
    return key;
  };
  if (action === "revise") {
    for (const r of retry ?? [])
      if (take(r.idempotencyKey ?? r.instruction, r.maxAttempts ?? 1, r.budget ?? "revise") !== undefined)
        instructions.push(r.instruction);
    // A revise without a retry asks once with its reason.
    if (!retry?.length) {
      const instruction = take(reason ?? DEFAULT_INSTRUCTION, 1, "revise");
      if (instruction !== undefined) instructions.push(instruction);
    }
  }
  for (const budget of Object.keys(REVISION_LIMITS) as RevisionBudget[]) {
    if (charged.has(budget)) state.revisionCounts[budget]++;
    else if (REVISION_LIMITS[budget].counts === "consecutive") state.revisionCounts[budget] = 0;
  }
  if (instructions.length === 0) return false;
  const text = instructions.join("\n\n");
  state.revisions.push({ afterMessageId: last?.id, text });
  state.noteAttachment({ type: "stop_hook_feedback", hookEvent: depth > 0 ? "SubagentStop" : "Stop" }, text);
  return true;
}
