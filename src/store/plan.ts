import { type Message, messageText, type Part } from "../core/message.js";
import { StoreError } from "./errors.js";
import type { BlockInput } from "./types.js";

// SQL-free decisions shared by every backend: which parts a rewrite keeps, which messages a block
// removes, where a replacement goes, how summaries stand in for what they cover.

export function isTextBearingAssistant(message: Pick<Message, "role" | "parts">): boolean {
  return message.role === "assistant" && message.parts.some((p) => p.type === "text");
}

/** The run's assistant texts, oldest first: the `allContent` a response gate sees and may rewrite. */
export function assistantTexts(runMessages: readonly Message[]): string[] {
  return runMessages.filter(isTextBearingAssistant).map(messageText);
}

/**
 * The new text goes into the first text part; the other text parts and the reasoning go (reasoning is
 * the model's own text and may restate what the rewrite removes); tool calls, images and files stay.
 * An empty new text removes the text altogether.
 */
export function rewriteParts(parts: readonly Part[], text: string): Part[] {
  const result: Part[] = [];
  let placed = false;
  for (const part of parts) {
    if (part.type === "reasoning") continue;
    if (part.type !== "text") {
      result.push(part);
      continue;
    }
    if (!placed && text !== "") result.push({ type: "text", text });
    placed = true;
  }
  return result;
}

export interface RewritePlan {
  readonly updates: ReadonlyArray<{ readonly id: string; readonly parts: Part[] }>;
  readonly removals: readonly string[];
  readonly changedSeqs: readonly number[];
}

/**
 * A rewrite of the run's texts. When anything changes, the reasoning of every assistant message of
 * the run goes too (a changed message loses it with its old text; the others lose theirs alone):
 * reasoning is the model's own text about the answer and may restate what the rewrite removed.
 */
export function planRewrite(runMessages: readonly Message[], texts: readonly string[]): RewritePlan {
  const targets = runMessages.filter(isTextBearingAssistant);
  if (texts.length !== targets.length) {
    throw new StoreError(
      "invalid",
      `rewrite needs one text per assistant text of the run (${targets.length}), got ${texts.length}`,
    );
  }
  const rewritten = new Map<Message, string>();
  targets.forEach((message, i) => {
    const text = texts[i] as string;
    if (text !== messageText(message)) rewritten.set(message, text);
  });
  const updates: { id: string; parts: Part[] }[] = [];
  const removals: string[] = [];
  const changedSeqs: number[] = [];
  if (rewritten.size === 0) return { updates, removals, changedSeqs };
  for (const message of runMessages) {
    if (message.role !== "assistant") continue;
    const text = rewritten.get(message);
    let parts: Part[];
    if (text !== undefined) parts = rewriteParts(message.parts, text);
    else if (message.parts.some((p) => p.type === "reasoning"))
      parts = message.parts.filter((p) => p.type !== "reasoning");
    else continue;
    changedSeqs.push(message.seq);
    if (parts.length === 0) removals.push(message.id);
    else updates.push({ id: message.id, parts });
  }
  return { updates, removals, changedSeqs };
}

export type BlockKind = "output" | "prompt";

/** The idempotency key of a run's block notice: a second block of the same run finds it and does nothing. */
export function blockKey(kind: BlockKind, runId: string): string {
  return `gatehouse:${kind}-block:${runId}`;
}

export interface BlockPlan {
  readonly removals: readonly string[];
  /** Where the notice goes: the place of the first removed message, so the session stays in order. */
  readonly seq: number | undefined;
}

export function planBlock(kind: BlockKind, runMessages: readonly Message[]): BlockPlan {
  const removed = runMessages.filter((m) => kind === "prompt" || m.role === "assistant" || m.role === "tool");
  return { removals: removed.map((m) => m.id), seq: removed[0]?.seq };
}

export function blockNotice(kind: BlockKind, input: BlockInput, at: string) {
  return {
    role: kind === "prompt" ? ("user" as const) : ("assistant" as const),
    parts: [{ type: "text" as const, text: input.notice }],
    metadata: {
      blockedBy: input.blockedBy,
      hook: input.hook,
      at,
      ...(input.category === undefined ? {} : { category: input.category }),
    },
  };
}

export interface SummaryRange {
  readonly id: string;
  readonly fromSeq: number;
  readonly toSeq: number;
}

/** Summaries nest or stay apart; a partial overlap would make "what stands for what" ambiguous. */
export function checkCompactionRange(existing: readonly SummaryRange[], fromSeq: number, toSeq: number): void {
  for (const s of existing) {
    const disjoint = toSeq < s.fromSeq || fromSeq > s.toSeq;
    const containsIt = fromSeq <= s.fromSeq && s.toSeq <= toSeq;
    if (!disjoint && !containsIt) {
      throw new StoreError(
        "conflict",
        `compaction ${fromSeq}..${toSeq} overlaps summary ${s.id} (${s.fromSeq}..${s.toSeq}) without containing it`,
      );
    }
  }
}

type PlacedSummary = SummaryRange & { readonly message: Message };

function hides(outer: PlacedSummary, inner: PlacedSummary): boolean {
  if (outer === inner || outer.fromSeq > inner.fromSeq || inner.toSeq > outer.toSeq) return false;
  const sameRange = outer.fromSeq === inner.fromSeq && outer.toSeq === inner.toSeq;
  // Of two summaries of the same range, the later one (higher seq) is the one in use.
  return !sameRange || outer.message.seq > inner.message.seq;
}

/** The summaries not inside another one: those are the ones the model sees. */
export function outermostSummaries<S extends PlacedSummary>(summaries: readonly S[]): S[] {
  return summaries.filter((s) => !summaries.some((o) => hides(o, s)));
}

/**
 * The summaries to drop once those `stale` picks are: each of those, and every summary written
 * after one of them whose prompt held it. A compaction's prompt holds every summary standing
 * before the end of its range, so a later summary over a range ending at or after a stale
 * one's start may repeat what the stale one said without covering the scrubbed message itself.
 */
export function withDependentSummaries<S extends PlacedSummary>(
  summaries: readonly S[],
  stale: (s: S) => boolean,
): S[] {
  const out: S[] = [];
  for (const s of [...summaries].sort((a, b) => a.message.seq - b.message.seq)) {
    if (stale(s) || out.some((o) => o.message.seq < s.message.seq && o.fromSeq <= s.toSeq)) out.push(s);
  }
  return out;
}

/**
 * Stored messages in order, each outermost summary in place of its range. Summary messages are placed by
 * the range they cover, not by their own seq (they are written after what they summarise).
 */
export function assembleHistory(messages: readonly Message[], summaries: readonly PlacedSummary[]): Message[] {
  const outer = outermostSummaries(summaries).sort((a, b) => a.fromSeq - b.fromSeq);
  const result: Message[] = [];
  let next = 0;
  for (const message of messages) {
    if (message.role === "summary") continue;
    let current = outer[next];
    while (current && current.toSeq < message.seq) {
      result.push(current.message);
      current = outer[++next];
    }
    if (current && current.fromSeq <= message.seq) continue;
    result.push(message);
  }
  for (const rest of outer.slice(next)) result.push(rest.message);
  return result;
}
