import { type Message, messageText, type Part } from "../../core/message.js";
import { assistantTexts } from "../../store/plan.js";
import type { RuntimeDeps } from "../deps.js";
import { notices } from "../notices.js";
import type { RunState, StopRequest } from "../state.js";
import { applyBlock } from "./block.js";
import { announceDelivery, gateReply, type ReplySource } from "./gates.js";
import { outbox } from "./outbox.js";
import { storeAttachments, writeMessage } from "./persist.js";

/**
 * The output door (docs/lifecycle.md, steps 10–12). Every text a user is given — a model's
 * answer, a claim's reply, a slash command's reply, a block notice — goes through here:
 * `before_response_emit`, then `message_sending`, then delivery (the `final` event and the run's
 * reply), and the store keeps exactly what was delivered. The assistant messages of a run are
 * written here too, and text streams live from here only while no output gate listens.
 */

/** Whether an output gate has a handler: then no text counts, or is shown, until the gates passed it. */
export function outputGated(deps: RuntimeDeps): boolean {
  return deps.engine.hasHooks("before_response_emit") || deps.engine.hasHooks("message_sending");
}

/**
 * Where the model's text goes as it streams: to the user at once when no output gate listens;
 * otherwise nowhere (held back), and the text arrives once, gated, as `final`.
 */
export function liveText(deps: RuntimeDeps, state: RunState): ((delta: string) => void) | undefined {
  if (outputGated(deps)) return undefined;
  const out = outbox(deps, state);
  return (delta) => out.emitText({ type: "text-delta", delta });
}

/** Stores an assistant message of the run: the model's, or a claim's reply. Gated when the run's answer is delivered. */
/**
 * The feedback a finalize hook sent the agent back with (Claude Code's "Stop hook feedback"),
 * stored after the answer it revises, for the transcript: the model reads it from the run.
 */
export async function storeRevisionFeedback(deps: RuntimeDeps, state: RunState): Promise<void> {
  await storeAttachments(deps, state);
}

export async function writeAssistant(deps: RuntimeDeps, state: RunState, parts: readonly Part[]): Promise<void> {
  if (parts.length) await writeMessage(deps, state, { role: "assistant", parts });
}

/**
 * Delivers the run's answer — its stored assistant texts, the last of them the reply — and
 * makes the store hold what was delivered: a rewrite stored rewritten (which drops the run's
 * reasoning), a block stored as its notice, an answer whose delivery was cancelled as a notice
 * saying so.
 */
export async function deliverAnswer(deps: RuntimeDeps, state: RunState, source: "model" | "claim"): Promise<void> {
  const texts = assistantTexts(state.runMessages);
  const gated = await gateReply(deps, state, { source, text: texts.at(-1) ?? "", allContent: texts });
  switch (gated.kind) {
    case "blocked":
      await applyBlock(deps, state, { kind: "answer", by: gated.by, notice: gated.notice });
      return;
    case "cancelled": {
      // The answer that was not delivered gives way to a notice saying so; the run's work before it
      // stays, as the response gate left it.
      const out = outbox(deps, state);
      if (texts.length)
        await out.store.rewriteRun(state.runId, [
          ...gated.allContent.slice(0, -1),
          notices.notDelivered(gated.by.pluginId),
        ]);
      out.deliver(null);
      return;
    }
    case "delivered": {
      if (texts.length === 0 && gated.text !== "")
        await writeAssistant(deps, state, [{ type: "text", text: gated.text }]);
      else if (gated.allContent.some((text, i) => text !== texts[i]))
        await outbox(deps, state).store.rewriteRun(state.runId, gated.allContent);
      await deliver(deps, state, gated.text);
      return;
    }
  }
}

/** A run a tool hook stopped (`stopRun`) ends with that hook's notice in place of an answer. */
export async function deliverStop(deps: RuntimeDeps, state: RunState, stop: StopRequest): Promise<void> {
  const notice = stop.message ?? notices.runStopped(stop.by.pluginId);
  await applyBlock(deps, state, { kind: "stop", by: stop.by, notice });
}

/** Delivers a reply the store does not keep: a slash command's, an inbound claim's. */
export async function deliverReply(
  deps: RuntimeDeps,
  state: RunState,
  source: ReplySource,
  text: string,
): Promise<void> {
  const gated = await gateReply(deps, state, { source, text });
  switch (gated.kind) {
    case "blocked":
      await applyBlock(deps, state, { kind: "reply", by: gated.by, notice: gated.notice });
      return;
    case "cancelled":
      outbox(deps, state).deliver(null);
      return;
    case "delivered":
      await deliver(deps, state, gated.text);
  }
}

async function deliver(deps: RuntimeDeps, state: RunState, text: string): Promise<void> {
  const out = outbox(deps, state);
  out.deliver(text);
  out.emitText({ type: "final", text });
  await announceDelivery(deps, text);
}

/**
 * A compaction's summary: model-written text that stands in the history for the messages it
 * covers, and that exports and hook transcripts show. It is stored like any message: the
 * session's secrets masked, then `before_message_write`, which may rewrite it or block it. A
 * blocked summary is never kept: a fixed notice takes its place, so the compaction still frees
 * the context. Returns the text stored.
 */
export async function storeSummary(
  deps: RuntimeDeps,
  state: RunState,
  covered: { readonly fromSeq: number; readonly toSeq: number; readonly count: number },
  summary: string,
): Promise<string> {
  let text = deps.secretsOf(state.sessionId).mask(summary);
  if (deps.engine.hasHooks("before_message_write")) {
    const message: Message = {
      id: "",
      sessionId: state.sessionId,
      runId: null,
      seq: 0,
      role: "summary",
      parts: [{ type: "text", text }],
      metadata: { fromSeq: covered.fromSeq, toSeq: covered.toSeq },
      createdAt: new Date().toISOString(),
    };
    const outcome = deps.engine.emit("before_message_write", { message });
    // A rewrite that leaves no text keeps nothing of the summary either: the notice stands in.
    const kept = outcome.result.block ? "" : outcome.result.message ? messageText(outcome.result.message).trim() : text;
    text = kept || notices.summaryNotStored(covered.count);
  }
  const { fromSeq, toSeq } = covered;
  await outbox(deps, state).store.recordCompaction({ sessionId: state.sessionId, fromSeq, toSeq, summary: text });
  return text;
}
