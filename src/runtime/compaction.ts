import type { LanguageModelV3Prompt } from "@ai-sdk/provider";
import type { Message } from "../core/message.js";
import { attachmentOf, messageText, modelHistory } from "../core/message.js";
import { collectStream } from "../models/collect.js";
import { toModelPrompt } from "../models/prompt.js";
import { withModelRetries } from "../models/retry.js";
import type { RuntimeDeps } from "./deps.js";
import { storeSummary } from "./doors/output.js";
import type { RunState } from "./state.js";

const SUMMARY_INSTRUCTION =
  "Summarize the conversation above for your own later use: the user's goals, decisions made, facts learned, files and tools involved, and what is still open. Be concise and complete.";

/** A rough token count (4 characters a token): enough to decide when to compact. */
export function estimateTokens(messages: readonly Message[]): number {
  let chars = 0;
  for (const m of messages) chars += messageChars(m);
  return charsToTokens(chars);
}

/** The characters `estimateTokens` counts for one message. */
export function messageChars(message: Message): number {
  // A stored attachment is not sent to the model: it takes no room in its context.
  if (attachmentOf(message) !== undefined) return 0;
  let chars = 0;
  for (const p of message.parts)
    chars += p.type === "text" || p.type === "reasoning" ? p.text.length : JSON.stringify(p).length;
  return chars;
}

export function charsToTokens(chars: number): number {
  return Math.ceil(chars / 4);
}

export type CompactionResult =
  | { readonly status: "compacted"; readonly compactedCount: number }
  | { readonly status: "nothing" }
  | { readonly status: "blocked"; readonly pluginId: string; readonly message?: string };

/**
 * docs/lifecycle.md, step 10a (and /compact, step 4): summarize all but the most recent messages.
 * `before_compaction` sees /compact's instructions and may block it or add its own; the summary
 * comes from the run's model and is stored through the output door (`storeSummary`), where it
 * stands for the range it covers (so a later block of a covered run drops it).
 */
export async function compact(
  deps: RuntimeDeps,
  state: RunState,
  trigger: "auto" | "manual",
  instructions?: string,
): Promise<CompactionResult> {
  const range = compactableRange(state.history, deps.config.compaction.keepRecent);
  if (!range) return { status: "nothing" };
  const { engine } = deps;
  const pre = await engine.emit("before_compaction", {
    messageCount: range.length,
    tokenCount: estimateTokens(range),
    trigger,
    ...(instructions === undefined ? {} : { instructions }),
  });
  if (pre.result.block) {
    const { message } = pre.result;
    return {
      status: "blocked",
      pluginId: pre.decidedBy?.pluginId ?? "",
      ...(message === undefined ? {} : { message }),
    };
  }
  const extra = [instructions, pre.result.instructions].filter((t): t is string => !!t);
  const prompt: LanguageModelV3Prompt = [
    // Earlier summaries go in too, so the new one carries what they said.
    ...toModelPrompt(
      modelHistory(state.history.slice(0, state.history.indexOf(range.at(-1) as Message) + 1)),
      "You write summaries of conversations.",
    ),
    { role: "user", content: [{ type: "text", text: [SUMMARY_INSTRUCTION, ...extra].join("\n\n") }] },
  ];
  // The summary reaches nobody as it streams: any retryable failure may be tried again.
  const response = await withModelRetries(
    async () => {
      const { stream } = await state.model.model.doStream({ prompt, abortSignal: state.signal });
      return collectStream(stream);
    },
    { maxRetries: deps.config.model.maxRetries, signal: state.signal },
  );
  state.addUsage(response.usage);
  const written = messageText(response).trim() || "(no summary)";
  const first = range[0] as Message;
  const last = range.at(-1) as Message;
  // Through the output door: what `after_compaction` and later turns see is what was stored.
  const covered = { fromSeq: first.seq, toSeq: last.seq, count: range.length };
  const summary = await storeSummary(deps, state, covered, written);
  state.setHistory(await deps.store.history(state.sessionId));
  if (engine.hasHooks("after_compaction"))
    await engine.emit("after_compaction", { compactedCount: range.length, summary, trigger });
  // As in Claude Code, the session starts again on its summary (SessionStart `compact`).
  if (engine.hasHooks("session_start"))
    await engine.emit("session_start", {
      sessionId: state.sessionId,
      source: "compact",
      model: state.modelName(),
    });
  state.emit({ type: "compacted", compactedCount: range.length });
  return { status: "compacted", compactedCount: range.length };
}

/**
 * The stored messages to summarize: everything before the last `keepRecent`, skipping
 * summaries already standing in history, and never ending between a tool call and its result.
 */
function compactableRange(history: readonly Message[], keepRecent: number): Message[] | undefined {
  // What the model reads, so that attachments neither count towards keepRecent nor start a range.
  const stored = modelHistory(history).filter((m) => m.role !== "summary");
  let end = stored.length - keepRecent;
  while (end > 0 && stored[end]?.role === "tool") end--;
  const range = stored.slice(0, Math.max(0, end));
  return range.length > 0 ? range : undefined;
}
