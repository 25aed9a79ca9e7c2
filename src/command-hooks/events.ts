import type { HookName } from "../hooks/catalog.js";

/**
 * The command-hook events Gatehouse fires, as data. Everything that differs per event lives
 * here so the loader, the protocol and the dispatcher share one answer: which payload field
 * a matcher is tested against, the default timeout, and which verdict fields count.
 */

export const COMMAND_HOOK_EVENTS = [
  "SessionStart",
  "SessionEnd",
  "UserPromptSubmit",
  "PreToolUse",
  "PermissionRequest",
  "PermissionDenied",
  "PostToolUse",
  "PostToolUseFailure",
  "Stop",
  "SubagentStop",
  "SubagentStart",
  "PreCompact",
  "PostCompact",
  "Notification",
  "StopFailure",
  "PostToolBatch",
] as const;

export type CommandHookEvent = (typeof COMMAND_HOOK_EVENTS)[number];

/**
 * Claude Code events that Gatehouse does not fire. A settings file shared with Claude Code
 * may name them; they get a warning instead of the "unknown event" error a typo gets.
 */
export const FOREIGN_CLAUDE_EVENTS: readonly string[] = [
  "Setup",
  "UserPromptExpansion",
  "TaskCreated",
  "TaskCompleted",
  "TeammateIdle",
  "ConfigChange",
  "CwdChanged",
  "FileChanged",
  "DirectoryAdded",
  "InstructionsLoaded",
  "WorktreeCreate",
  "WorktreeRemove",
  "Elicitation",
  "ElicitationResult",
  "MessageDisplay",
];

/** Verdict fields an event can act on; the protocol drops the others. */
export type VerdictField =
  | "additionalContext"
  | "updatedInput"
  | "updatedToolOutput"
  | "continue"
  | "systemMessage"
  | "retry"
  | "sessionTitle";

/** Who a hook's non-blocking stderr is for: the model (where the event puts context), the user, or nobody. */
export type FeedbackAudience = "model" | "user" | "nobody";

/** What a decision of a hook means for this event. */
export type DecisionKind =
  /** PreToolUse: allow / ask / deny, exit 2 denies. */
  | "permission"
  /** PermissionRequest: allow / deny, exit 2 denies. */
  | "approval"
  /** decision:"block" (and exit 2) blocks. */
  | "block"
  /** the event cannot be blocked; exit 2's stderr is feedback. */
  | "none";

export interface EventSpec {
  readonly name: CommandHookEvent;
  /** Payload field the matcher is tested against; null when the event takes no matcher. */
  readonly matcherField: string | null;
  /** Values the matched field takes (documentation and `hooks check` hints). */
  readonly matcherValues: readonly string[];
  /** True for the tool events, where `if` rules apply. */
  readonly toolEvent: boolean;
  readonly decision: DecisionKind;
  readonly fields: ReadonlySet<VerdictField>;
  /** Plain (non-JSON) stdout on exit 0 becomes model context. */
  readonly plainStdoutIsContext: boolean;
  /**
   * `onFailure: "block"` applies. Off where a block would make no sense, and on Stop /
   * SubagentStop, where a stuck hook turning into "one more pass" would loop the agent.
   */
  readonly failureCanBlock: boolean;
  /** Default timeout in seconds for the `claude` dialect. */
  readonly defaultTimeoutSec: number;
  /**
   * Where non-blocking stderr (feedback) goes. `claude`: Claude Code's exit-2 column for the
   * events that cannot block (to the user, to Claude on PostToolUseFailure, ignored on
   * Notification). `codePuppy`: Code Puppy's "fed back to the agent", so to the model where
   * the event has a place for context, else to the user.
   */
  readonly feedback: { readonly claude: FeedbackAudience; readonly codePuppy: FeedbackAudience };
}

/** Claude Code's StopFailure `error` values. */
export const STOP_FAILURE_ERRORS = [
  "rate_limit",
  "overloaded",
  "authentication_failed",
  "billing_error",
  "invalid_request",
  "model_not_found",
  "server_error",
  "max_output_tokens",
  "unknown",
] as const;

const TOOL_NAMES = ["Bash", "Read", "Write", "Edit", "Glob", "Grep", "Agent", "mcp__<server>__<tool>"];
const AGENT_TYPES = ["general-purpose", "<custom agent name>"];
const CONTEXT: VerdictField[] = ["additionalContext", "continue", "systemMessage"];

function spec(
  name: CommandHookEvent,
  s: Partial<Omit<EventSpec, "name" | "fields" | "feedback">> & {
    fields?: VerdictField[];
    feedback?: Partial<EventSpec["feedback"]>;
  },
): EventSpec {
  const decision = s.decision ?? "none";
  const modelHearsIt = s.fields?.includes("additionalContext") ?? false;
  return {
    name,
    matcherField: s.matcherField ?? null,
    matcherValues: s.matcherValues ?? [],
    toolEvent: s.toolEvent ?? false,
    decision,
    fields: new Set(s.fields ?? []),
    plainStdoutIsContext: s.plainStdoutIsContext ?? false,
    failureCanBlock: s.failureCanBlock ?? decision !== "none",
    defaultTimeoutSec: s.defaultTimeoutSec ?? 600,
    feedback: { claude: "user", codePuppy: modelHearsIt ? "model" : "user", ...s.feedback },
  };
}

const tool = { matcherField: "tool_name", matcherValues: TOOL_NAMES, toolEvent: true } as const;

export const EVENT_SPECS: Readonly<Record<CommandHookEvent, EventSpec>> = {
  SessionStart: spec("SessionStart", {
    matcherField: "source",
    matcherValues: ["startup", "resume", "clear", "compact"],
    fields: [...CONTEXT, "sessionTitle"],
    plainStdoutIsContext: true,
  }),
  SessionEnd: spec("SessionEnd", {
    matcherField: "reason",
    matcherValues: ["clear", "logout", "prompt_input_exit", "other"],
  }),
  UserPromptSubmit: spec("UserPromptSubmit", {
    decision: "block",
    fields: [...CONTEXT, "sessionTitle"],
    plainStdoutIsContext: true,
    defaultTimeoutSec: 30,
  }),
  PreToolUse: spec("PreToolUse", { ...tool, decision: "permission", fields: [...CONTEXT, "updatedInput"] }),
  PermissionRequest: spec("PermissionRequest", {
    ...tool,
    decision: "approval",
    fields: ["updatedInput", "continue", "systemMessage"],
  }),
  // Every denial of the permission check (Claude Code: auto mode's); `retry` tells the model it may try again.
  PermissionDenied: spec("PermissionDenied", { ...tool, fields: ["retry", "systemMessage"] }),
  PostToolUse: spec("PostToolUse", { ...tool, decision: "block", fields: [...CONTEXT, "updatedToolOutput"] }),
  // Blocking withholds the failure, as PostToolUse withholds an output: a Gatehouse extension (Claude
  // Code's PostToolUseFailure cannot block, and its exit 2 is feedback to the model).
  PostToolUseFailure: spec("PostToolUseFailure", { ...tool, decision: "block", fields: CONTEXT }),
  // Context on Stop sends the agent back for another pass; Code Puppy's feedback never did that.
  Stop: spec("Stop", { decision: "block", fields: CONTEXT, failureCanBlock: false, feedback: { codePuppy: "user" } }),
  SubagentStop: spec("SubagentStop", {
    matcherField: "agent_type",
    matcherValues: AGENT_TYPES,
    decision: "block",
    fields: CONTEXT,
    failureCanBlock: false,
    feedback: { codePuppy: "user" },
  }),
  SubagentStart: spec("SubagentStart", {
    matcherField: "agent_type",
    matcherValues: AGENT_TYPES,
    fields: ["additionalContext", "systemMessage"],
  }),
  PreCompact: spec("PreCompact", {
    matcherField: "trigger",
    matcherValues: ["manual", "auto"],
    decision: "block",
    fields: ["continue"],
  }),
  PostCompact: spec("PostCompact", { matcherField: "trigger", matcherValues: ["manual", "auto"] }),
  // After every step with tool calls: block or continue:false ends the run there; context is the model's.
  PostToolBatch: spec("PostToolBatch", { decision: "block", fields: CONTEXT }),
  // A turn that ended in an error (the run failed); as in Claude Code, what the hook answers is ignored.
  StopFailure: spec("StopFailure", {
    matcherField: "error",
    matcherValues: STOP_FAILURE_ERRORS,
    feedback: { claude: "nobody", codePuppy: "user" },
  }),
  Notification: spec("Notification", {
    matcherField: "notification_type",
    matcherValues: ["permission_prompt", "idle_prompt", "agent_needs_input", "agent_completed"],
    feedback: { claude: "nobody" },
  }),
};

/**
 * Gatehouse's notification kinds by the `notification_type` Claude Code gives the same moment,
 * so a `Notification` matcher written for Claude Code (`permission_prompt`) fires here too.
 */
const NOTIFICATION_TYPES: Readonly<Record<string, string>> = { approval: "permission_prompt" };

/** A runtime notification kind as the hook sees it; a kind Claude Code has no name for passes as it is. */
export function notificationTypeOf(kind: string): string {
  return Object.hasOwn(NOTIFICATION_TYPES, kind) ? (NOTIFICATION_TYPES[kind] as string) : kind;
}

export function isCommandHookEvent(name: string): name is CommandHookEvent {
  return Object.hasOwn(EVENT_SPECS, name);
}

/** The value a matcher is tested against, read from the payload the hook receives. */
export function matchValueOf(event: CommandHookEvent, payload: Readonly<Record<string, unknown>>): string | undefined {
  const field = EVENT_SPECS[event].matcherField;
  if (field === null) return undefined;
  const value = payload[field];
  return typeof value === "string" ? value : undefined;
}

/**
 * The catalog hook each event fires at (plugin.ts registers each event's handler there). The
 * same table read the other way is what `gatehouse hook` fires when another agent sends the event
 * (src/host-hooks/).
 */
export const CATALOG_HOOK_OF = {
  SessionStart: "session_start",
  SessionEnd: "session_end",
  UserPromptSubmit: "before_input",
  PreToolUse: "before_tool_call",
  PermissionRequest: "permission_request",
  PermissionDenied: "permission_denied",
  PostToolUse: "after_tool_call",
  PostToolUseFailure: "after_tool_call",
  Stop: "before_agent_finalize",
  SubagentStop: "before_agent_finalize",
  SubagentStart: "subagent_start",
  PreCompact: "before_compaction",
  PostCompact: "after_compaction",
  Notification: "notification",
  StopFailure: "agent_end",
  PostToolBatch: "after_tool_batch",
} as const satisfies Readonly<Record<CommandHookEvent, HookName>>;
