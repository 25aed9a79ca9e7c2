import type { HookEvent } from "../../hooks/index.js";
import { currentRunContext } from "../../hooks/run-context.js";
import type { Attribution } from "../../hooks/types.js";
import type { RuntimeDeps } from "../deps.js";
import { notices } from "../notices.js";
import type { RunState } from "../state.js";

/** What a reply is, as the output gates see it (`source` in their events). */
export type ReplySource = HookEvent<"before_response_emit">["source"];

/** A text on its way to the user. */
export interface Reply {
  readonly source: ReplySource;
  readonly text: string;
  /** A model answer's every assistant text, oldest first (`text` is the last); other replies: just `text`. */
  readonly allContent?: readonly string[];
  /** A notice `before_response_emit` produced itself does not meet that gate again. */
  readonly afterResponseGate?: boolean;
}

/** What the output gates decided about a reply. */
export type GatedReply =
  /** `before_response_emit` blocked it; `notice` is the user-facing text to deliver instead. */
  | { readonly kind: "blocked"; readonly by: Attribution; readonly notice: string }
  /** `message_sending` cancelled delivery: nothing is delivered. */
  | { readonly kind: "cancelled"; readonly by: Attribution; readonly allContent: readonly string[] }
  /** `text` is delivered; `allContent` is every text of the reply as the gates left it (its last is `text`). */
  | { readonly kind: "delivered"; readonly text: string; readonly allContent: readonly string[] };

/**
 * The two output gates, in order: `before_response_emit` (rewrite one or every text, or block),
 * then `message_sending` (rewrite what is delivered, or cancel). A hook's internal reason
 * (`blockReason`, `cancelReason`) is never read here: the user sees a block's `message`, or
 * Gatehouse's own notice. Nothing is stored or shown here; the caller does that with the verdict
 * (the run's doors, or a host adapter in src/adapters/, which needs only the engine and a signal).
 */
export async function gateReply(
  deps: Pick<RuntimeDeps, "engine">,
  state: Pick<RunState, "signal">,
  reply: Reply,
): Promise<GatedReply> {
  const { engine } = deps;
  let text = reply.text;
  let allContent: readonly string[] = reply.allContent ?? [text];
  if (!reply.afterResponseGate && engine.hasHooks("before_response_emit")) {
    const { result, decidedBy } = await engine.emit("before_response_emit", {
      content: text,
      // Frozen in place by the engine, like every event.
      allContent: allContent as string[],
      source: reply.source,
    });
    state.signal.throwIfAborted();
    if (result.block && decidedBy)
      return { kind: "blocked", by: decidedBy, notice: result.message ?? notices.responseBlocked(decidedBy.pluginId) };
    if (result.allContent) {
      allContent = result.allContent;
      text = result.content ?? text;
    }
  }
  if (engine.hasHooks("message_sending")) {
    const { result, decidedBy } = await engine.emit("message_sending", {
      to: audience(),
      content: text,
      source: reply.source,
    });
    state.signal.throwIfAborted();
    if (result.cancel && decidedBy) return { kind: "cancelled", by: decidedBy, allContent };
    if (result.content !== undefined && result.content !== text) {
      text = result.content;
      allContent = [...allContent.slice(0, -1), text];
    }
  }
  return { kind: "delivered", text, allContent };
}

/** `message_sent` for a text that was delivered. */
export async function announceDelivery(deps: Pick<RuntimeDeps, "engine">, text: string): Promise<void> {
  if (deps.engine.hasHooks("message_sent"))
    await deps.engine.emit("message_sent", { to: audience(), content: text, success: true });
}

/** A sub-agent's answer goes to the parent agent, not to the user. */
function audience(): string {
  return (currentRunContext()?.depth ?? 0) > 0 ? "parent" : "user";
}
