import type { Channel, Trigger } from "../hooks/run-context.js";
import type { ModelUsage } from "../models/collect.js";
import type { RunError } from "../models/failure.js";
import type { ChildRunCost } from "../tools/types.js";

export type { RunError, RunErrorKind } from "../models/failure.js";

/** How a run ended. `max_steps`: the model was still calling tools when the run's step limit was reached. */
export type RunOutcome = "completed" | "blocked" | "claimed" | "failed" | "cancelled" | "max_steps";

export interface RunInput {
  readonly prompt: string;
  /** Continue this session; a new one is created when absent or unknown. */
  readonly sessionId?: string;
  /** A stable name for the conversation (e.g. "cli"); /reset keeps the key and mints a new session id. */
  readonly sessionKey?: string;
  readonly trigger?: Exclude<Trigger, "subagent">;
  readonly channel?: Channel;
  readonly jobId?: string;
  /** Aborting it cancels the run cleanly (outcome `cancelled`). */
  readonly signal?: AbortSignal;
  /**
   * A W3C `traceparent` to continue (e.g. an HTTP request's): the run's context carries it, so
   * hooks and spans join the caller's trace. A malformed value is ignored (a new trace starts).
   */
  readonly traceparent?: string;
  /** A `provider:model` spec for this run instead of the configured model (an agent profile); hooks may still override it. */
  readonly model?: string;
  /** This run's system prompt instead of the configured one (an agent profile). */
  readonly systemPrompt?: string;
  /**
   * Earlier turns the caller holds (an OpenAI-style client sending the whole conversation): the
   * model sees them before the prompt and `before_agent_run` sees them in `messages`; they are
   * stored, tagged with this run, only once the prompt passed its gate — a blocked turn stores
   * none of them.
   */
  readonly priorMessages?: readonly PriorMessage[];
}

/** What a sub-agent run cost: its model calls and usage, its own sub-agents' included. */
export interface ChildRunSummary extends ChildRunCost {
  readonly outcome: RunOutcome;
}

/** One earlier turn of a conversation held by the caller. */
export interface PriorMessage {
  readonly role: "user" | "assistant";
  readonly text: string;
}

/** Who blocked, as the user may be told: never the hook's internal reason. */
export interface BlockedBy {
  readonly pluginId: string;
  readonly hook: string;
  readonly category?: string;
}

export interface RunResult {
  readonly sessionId: string;
  readonly runId: string;
  readonly outcome: RunOutcome;
  /** The delivered text, or null when nothing was delivered. */
  readonly reply: string | null;
  readonly blockedBy?: BlockedBy;
  /** Model calls made, sub-agents' included. */
  readonly steps: number;
  /** Tokens used, sub-agents' included. */
  readonly usage?: ModelUsage;
  /** The sub-agent runs this run started, each with its own totals (theirs included). */
  readonly children?: readonly ChildRunSummary[];
  /** Milliseconds from the call to the end, a wait for the session's run lock included. */
  readonly durationMs: number;
  /** For failed runs: what went wrong, as data (`message` is one line, secrets masked). */
  readonly error?: RunError;
  /** Tool calls the permission check denied in this run (docs/permissions.md), in order. */
  readonly permissionDenials: readonly PermissionDenial[];
}

/**
 * A tool call the permission check denied: which tool, why, who decided, and the rule with its
 * source when a rule did. (Never the call's input.)
 */
export interface PermissionDenial {
  readonly toolName: string;
  readonly toolCallId: string;
  /**
   * `rule`: a deny rule (or an ask rule in `dontAsk`); `mode`: the permission mode (`plan`,
   * `dontAsk`); `hook`: a `permission_request` handler (a `PermissionRequest` hook); `nobody`: it
   * would ask and no one can be asked (`run` without a terminal); `user`: the person said no;
   * `timeout` / `threw`: the approver did not answer.
   */
  readonly reason: "rule" | "mode" | "hook" | "nobody" | "user" | "timeout" | "threw";
  /** Who decided, as the audit record names it. */
  readonly decidedBy: string;
  readonly mode: string;
  /** The rule that applied, as written, with its source (`user`, `project`, `local`, `config`, `cli`, `flag`, `session`…). */
  readonly rule?: string;
  /** The rule's id, as the audit trail names it (`project.deny.0`, `flag.deny.1`). */
  readonly ruleId?: string;
  readonly source?: string;
  readonly file?: string;
  /** When nobody could be asked: the rules that would allow the call (for `--allowedTools` or settings). */
  readonly suggestions?: readonly string[];
}

/**
 * What a streamed run reports as it goes. Assistant text (`text-delta`) streams live only while
 * no output gate (`before_response_emit`, `message_sending`) has a handler; otherwise the
 * text arrives once, as `final`, after the gates passed. A tool's output is reported only after
 * `after_tool_call` passed it.
 */
export type RunEvent =
  | {
      readonly type: "run-start";
      readonly sessionId: string;
      readonly runId: string;
      /** An output gate listens: the answer arrives once, as `final`, after it passed (no `text-delta`). */
      readonly outputHeld: boolean;
    }
  | {
      /** Another run of the session holds its run lock: this run waits for it (the wait counts in `durationMs`). */
      readonly type: "lock-wait";
      readonly sessionId: string;
    }
  | {
      readonly type: "step";
      readonly step: number;
      /** Tokens used so far by the run (sub-agents' included), when the provider reported any. */
      readonly tokens?: number;
    }
  | {
      /** A model call failed before anything streamed and is tried again after `delayMs`. */
      readonly type: "retry";
      readonly step: number;
      /** The attempt about to start (2 = the first retry). */
      readonly attempt: number;
      /** How many attempts the call may take in all (`model.maxRetries` + 1). */
      readonly maxAttempts: number;
      readonly delayMs: number;
      readonly kind: RunError["kind"];
      readonly status?: number;
    }
  | { readonly type: "text-delta"; readonly delta: string }
  | { readonly type: "tool-call"; readonly toolCallId: string; readonly toolName: string; readonly input: unknown }
  | { readonly type: "tool-blocked"; readonly toolCallId: string; readonly toolName: string; readonly message: string }
  | {
      readonly type: "tool-result";
      readonly toolCallId: string;
      readonly toolName: string;
      readonly output: unknown;
      readonly isError: boolean;
      readonly withheld: boolean;
    }
  | {
      readonly type: "approval-requested";
      readonly toolCallId: string;
      readonly toolName: string;
      readonly title: string;
    }
  | { readonly type: "compacted"; readonly compactedCount: number }
  | { readonly type: "blocked"; readonly hook: string; readonly pluginId: string; readonly message: string }
  | { readonly type: "final"; readonly text: string }
  | { readonly type: "run-end"; readonly result: RunResult };

/** Run events that carry text a user sees (an answer, a notice, a tool's input or output): emitted only by the doors. */
export type TextEvent = Extract<
  RunEvent,
  { readonly type: "text-delta" | "final" | "blocked" | "tool-call" | "tool-blocked" | "tool-result" }
>;
/** Every other event: progress without content. `run-end` is the runtime's own. */
export type ProgressEvent = Exclude<RunEvent, TextEvent | { readonly type: "run-end" }>;

/**
 * `allow-always`: the suggested rules join the session's; `allow-always-local`: they are also
 * written to `.claude/settings.local.json`. Never a whole tool unless the suggestion is one.
 */
export type ApprovalDecision = "allow-once" | "allow-always" | "allow-always-local" | "deny";

export interface ApprovalRequest {
  readonly sessionId: string;
  readonly runId: string;
  readonly toolName: string;
  readonly toolCallId: string;
  readonly params: unknown;
  readonly title: string;
  readonly description?: string;
  /** The ask rule that applies, if one does. */
  readonly rule?: string;
  /** The rules an "always" answer adds (show them before the person chooses). */
  readonly suggestions?: readonly string[];
}

/**
 * An approver's answer: the decision alone, or with who made it (an identifier, e.g. a plugin id),
 * which the audit trail records. A bare decision is recorded as the approver's own. `"nobody"`:
 * no one could be asked for this call (a server whose client cannot answer): denied as where
 * there is no approver, and the model reads that no one could be asked, not that someone said no.
 */
export type ApprovalAnswer =
  | ApprovalDecision
  | "nobody"
  | { readonly decision: ApprovalDecision | "nobody"; readonly decidedBy: string };

/** Answers permission asks (docs/permissions.md) a `permission_request` handler did not decide. */
export type Approver = (request: ApprovalRequest, signal: AbortSignal) => Promise<ApprovalAnswer>;
