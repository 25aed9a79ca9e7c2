/** What one hook said, in Gatehouse's terms, whatever dialect it spoke. */

export type HookDecision = "block" | "deny" | "ask" | "allow";
export type HookError = "timeout" | "spawn" | "unparseable" | "exit" | "aborted";

export interface NormalizedVerdict {
  /** `deny`/`ask`/`allow` on the permission events, `block` on the others that can block. */
  decision?: HookDecision;
  /** Safe to show the user or the model: the hook's own JSON reason or stderr, or a fixed text. */
  reason?: string;
  /** Model-only context (also plain stdout on SessionStart / UserPromptSubmit). */
  additionalContext?: string;
  updatedInput?: Record<string, unknown>;
  updatedToolOutput?: unknown;
  continue?: false;
  stopReason?: string;
  /** PermissionRequest: a deny that also ends the run (`decision.interrupt`). */
  interrupt?: true;
  /** PermissionDenied: the model is told it may try the call again. */
  retry?: true;
  /** SessionStart, UserPromptSubmit: the session's new title (as `/rename`). */
  sessionTitle?: string;
  /** A warning for the user (the plugin logs it at warn level, which the CLI prints on stderr). */
  systemMessage?: string;
  /**
   * Non-blocking stderr meant for the user: Claude Code's exit 2 on an event that cannot
   * block, Code Puppy's exit 2. Where the dialect feeds it to the model instead, it is part
   * of `additionalContext` (events.ts, `feedback`).
   */
  feedback?: string;
  /** Why the hook gave no usable answer (with onFailure "block", the block is why). */
  error?: HookError;
  /** Operator-facing detail of `error` (`hooks test`, logs); never shown to the model. */
  errorDetail?: string;
}

/** Shown when a hook blocks without saying why (exit 2 with empty stderr). */
export const HOOK_BLOCK_REASON = "Blocked by a hook.";
/** What the model reads for a tool call a hook's `continue: false` stopped (its stopReason is the user's). */
export const HOOK_STOP_REASON = "Not run: a hook stopped the agent.";
/** Shown when `onFailure: "block"` turns a timeout, a spawn error or bad output into a block. */
export const NO_DECISION_BLOCK_REASON = "Blocked: a required hook gave no decision.";

const MAX_REASON_CHARS = 10_000;

/**
 * A hook's text made fit to show: trimmed, bounded, and never echoing the hook's own command
 * line (a shell's "not found" message would otherwise reveal paths and arguments).
 */
export function userSafeText(text: string | undefined, commandLine: string | undefined): string | undefined {
  const t = text?.trim();
  if (!t) return undefined;
  if (commandLine && commandLine.trim().length > 0 && t.includes(commandLine.trim())) return undefined;
  return t.length > MAX_REASON_CHARS ? `${t.slice(0, MAX_REASON_CHARS)}…` : t;
}
