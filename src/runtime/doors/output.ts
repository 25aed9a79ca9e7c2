import { currentRunContext } from "../hooks/run-context.js";
import { assistantTexts } from "../store/plan.js";
import type { RuntimeDeps } from "./deps.js";
import { notices } from "./notices.js";
import type { RunState } from "./state.js";

/**
 * DESIGN §3 step 10: the response gate sees the final text and every assistant text of the run,
 * and may rewrite them or block. Its verdict is applied to the store by run id before anything
 * is delivered. Sets `state.reply` (what delivery will carry) and, on a block, the outcome.
 */
export async function gateResponse(deps: RuntimeDeps, state: RunState): Promise<void> {
  const allContent = assistantTexts(state.runMessages);
  const content = allContent.at(-1) ?? "";
  if (!deps.engine.hasHooks("before_response_emit")) {
    state.reply = content;
    return;
  }
  const outcome = await deps.engine.emit("before_response_emit", { content, allContent });
  state.signal.throwIfAborted();
  const { result, decidedBy } = outcome;
  if (result.block && decidedBy) {
    const notice = result.blockReason || notices.responseBlocked(decidedBy.pluginId);
    await deps.store.blockRun(state.runId, { notice, blockedBy: decidedBy.pluginId, hook: decidedBy.hook });
    state.outcome = "blocked";
    state.blockedBy = { pluginId: decidedBy.pluginId, hook: decidedBy.hook };
    state.reply = notice;
    state.emit({ type: "blocked", hook: decidedBy.hook, pluginId: decidedBy.pluginId, message: notice });
    return;
  }
  const rewritten = result.allContent;
  if (rewritten?.some((text, i) => text !== allContent[i])) {
    await deps.store.rewriteRun(state.runId, rewritten);
  }
  state.reply = result.content ?? content;
}

/**
 * DESIGN §3 steps 11–12: the delivery gate may rewrite what is sent or cancel the delivery;
 * then the reply is delivered (the `final` event) and `message_sent` observes it.
 */
export async function deliver(deps: RuntimeDeps, state: RunState): Promise<void> {
  const { engine } = deps;
  let text = state.reply ?? "";
  if (engine.hasHooks("message_sending")) {
    const outcome = await engine.emit("message_sending", { to: audience(), content: text });
    state.signal.throwIfAborted();
    if (outcome.result.cancel) {
      state.reply = null;
      return;
    }
    text = outcome.result.content ?? text;
  }
  state.reply = text;
  state.emit({ type: "final", text });
  if (engine.hasHooks("message_sent"))
    await engine.emit("message_sent", { to: audience(), content: text, success: true });
}

/** A sub-agent's answer goes to the parent agent, not to the user. */
function audience(): string {
  return (currentRunContext()?.depth ?? 0) > 0 ? "parent" : "user";
}
