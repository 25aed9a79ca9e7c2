import type { Attribution } from "../../hooks/types.js";
import { assistantTexts } from "../../store/plan.js";
import type { Run } from "../../store/types.js";
import type { RuntimeDeps } from "../deps.js";
import { notices } from "../notices.js";
import type { RunState } from "../state.js";
import { announceDelivery, gateReply } from "./gates.js";
import { outbox, storeWriter } from "./outbox.js";
import { subagentRuns } from "./unchecked.js";

/** A verdict that stops something, and where it stops it. */
export type Block =
  /** An input gate (`before_input`, `before_agent_run`): the prompt is stored only as the notice. */
  | { readonly kind: "prompt"; readonly by: Attribution; readonly notice: string; readonly category?: string }
  /** `before_response_emit` on the run's stored answer: its assistant and tool messages give way to the notice. */
  | { readonly kind: "answer"; readonly by: Attribution; readonly notice: string }
  /** `before_response_emit` on a reply nothing stores (a slash command's, an inbound claim's). */
  | { readonly kind: "reply"; readonly by: Attribution; readonly notice: string }
  /** `before_tool_call`: the call does not run. */
  | {
      readonly kind: "tool-call";
      readonly by: Attribution;
      readonly toolName: string;
      readonly toolCallId: string;
      /** The hook's `blockReason`: what the model reads. */
      readonly reason: string | undefined;
      /** The hook's `blockMessage`: the model's whole text, in place of Gatehouse's notice. */
      readonly message?: string;
    }
  /**
   * A tool hook's `stopRun` (Claude Code's `continue: false`): the run ends after the step, its
   * work kept; `notice` is the hook's message for the user.
   */
  | { readonly kind: "stop"; readonly by: Attribution; readonly notice: string }
  /** `after_tool_call`: the output (or failure) is withheld, and the sub-agent runs behind the call are scrubbed. */
  | {
      readonly kind: "tool-output";
      readonly by: Attribution;
      readonly toolName: string;
      readonly reason: string | undefined;
      readonly childRuns: readonly string[];
    };

/**
 * The one block path. (The engine's audit interceptor has already recorded the verdict — hook,
 * plugin, outcome, category, never a reason.) A run-level block (prompt, answer, reply) sends its notice through the output gates
 * — `message_sending` may rewrite or cancel it like any reply; a notice the response gate did
 * not produce meets that gate too — then stores what was delivered in the run's place, ends
 * the run `blocked` and reports it. A tool block returns what the model sees instead: the
 * hook's `blockReason`, which for tool hooks is user-safe by contract (docs/hooks.md).
 */
export async function applyBlock(deps: RuntimeDeps, state: RunState, block: Block): Promise<string | null> {
  const { by } = block;
  switch (block.kind) {
    case "tool-call": {
      const message = block.message ?? notices.toolBlocked(block.toolName, by.pluginId, block.reason);
      outbox(deps, state).emitText({
        type: "tool-blocked",
        toolCallId: block.toolCallId,
        toolName: block.toolName,
        message,
      });
      return message;
    }
    case "tool-output": {
      const notice = notices.toolWithheld(block.toolName, by.pluginId, block.reason);
      await scrubSubagentTrees(deps, block.childRuns, notice, by);
      return notice;
    }
    case "stop":
      return stopTheRun(deps, state, block);
    default:
      return blockTheRun(deps, state, block);
  }
}

/**
 * The run ends where a tool hook stopped it. What it did stays, and goes through the output
 * gates like an answer would (its texts in `allContent`), with the stop's notice as the text
 * delivered: a response gate that blocks it blocks the run's answer; one that rewrites the
 * earlier texts has them stored rewritten. The notice itself is not stored: it is for the user,
 * and the model never reads it (as in Claude Code, where `stopReason` is not shown to Claude).
 */
async function stopTheRun(
  deps: RuntimeDeps,
  state: RunState,
  block: Extract<Block, { kind: "stop" }>,
): Promise<string | null> {
  const { by } = block;
  const out = outbox(deps, state);
  const texts = assistantTexts(state.runMessages);
  const gated = await gateReply(deps, state, {
    source: "notice",
    text: block.notice,
    allContent: [...texts, block.notice],
  });
  if (gated.kind === "blocked") return blockTheRun(deps, state, { kind: "answer", by: gated.by, notice: gated.notice });
  const earlier = gated.allContent.slice(0, -1);
  if (texts.length > 0 && earlier.some((text, i) => text !== texts[i]))
    await out.store.rewriteRun(state.runId, earlier);
  const delivered = gated.kind === "delivered" ? gated.text : null;
  state.setBlocked({ pluginId: by.pluginId, hook: by.hook, category: "stop" });
  out.deliver(delivered);
  out.emitText({ type: "blocked", hook: by.hook, pluginId: by.pluginId, message: delivered ?? block.notice });
  if (delivered !== null) await announceDelivery(deps, delivered);
  return delivered;
}

async function blockTheRun(
  deps: RuntimeDeps,
  state: RunState,
  block: Extract<Block, { kind: "prompt" | "answer" | "reply" }>,
): Promise<string | null> {
  const { by } = block;
  const category = block.kind === "prompt" ? block.category : undefined;
  const gated = await gateReply(deps, state, {
    source: "notice",
    text: block.notice,
    afterResponseGate: block.kind === "answer",
  });
  // Gatehouse's own notice names only the plugin: it needs no gate, and stands in when a gate stopped the plugin's.
  const own = block.kind === "prompt" ? notices.promptBlocked(by.pluginId) : notices.responseBlocked(by.pluginId);
  const delivered = gated.kind === "delivered" ? gated.text : gated.kind === "blocked" ? own : null;
  const record = {
    notice: delivered ?? own,
    blockedBy: by.pluginId,
    hook: by.hook,
    ...(category === undefined ? {} : { category }),
  };
  const out = outbox(deps, state);
  if (block.kind === "prompt") await out.store.blockPrompt(state.runId, record);
  else if (block.kind === "answer") await out.store.blockRun(state.runId, record);
  state.setBlocked({ pluginId: by.pluginId, hook: by.hook, ...(category ? { category } : {}) });
  out.deliver(delivered);
  out.emitText({ type: "blocked", hook: by.hook, pluginId: by.pluginId, message: delivered ?? own });
  if (delivered !== null) await announceDelivery(deps, delivered);
  return delivered;
}

/**
 * A withheld sub-agent answer is stored in the child's own session too, and whatever the
 * child's own sub-agents did went into it: the child's output gives way to the notice, and
 * every run below it is emptied (its prompt was the child's output as well).
 */
async function scrubSubagentTrees(
  deps: RuntimeDeps,
  childRunIds: readonly string[],
  notice: string,
  by: Attribution,
): Promise<void> {
  const { store } = deps;
  const writer = storeWriter(deps);
  for (const runId of childRunIds) {
    const child = (await store.getRun(runId)) as Run;
    await writer.blockRun(runId, { notice, blockedBy: by.pluginId, hook: by.hook });
    for (const below of await subagentRuns(store, child.sessionId, [child]))
      await writer.blockPrompt(below.id, { notice: notices.subagentWithheld, blockedBy: by.pluginId, hook: by.hook });
  }
}
