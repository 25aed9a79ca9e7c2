import { type CommandHookEvent, EVENT_SPECS } from "./events.js";

/**
 * Builders for the JSON a hook reads on stdin, with Claude Code's field names. They take
 * plain values, not runtime objects, so the runtime, `hooks test` and tests build the same
 * shapes.
 */

export type PermissionMode = "default" | "plan" | "acceptEdits" | "auto" | "dontAsk" | "bypassPermissions";

export interface PayloadBase {
  /** The run's real session id (a sub-agent's own), also exported as `CLAUDE_CODE_SESSION_ID`. */
  sessionId: string;
  /** The JSONL transcript materialized for command hooks. */
  transcriptPath: string;
  cwd: string;
  permissionMode?: PermissionMode;
  /** The model's effort level (gatehouse.json's `model.reasoningEffort`, else the provider's default): Claude Code's `effort: { level }`. */
  effort?: string;
  runId: string;
  /** 0 for a top-level run. */
  depth: number;
  /** Set inside a sub-agent run. */
  agent?: { id: string; type: string };
}

interface ToolCall {
  toolName: string;
  toolInput: unknown;
  toolUseId: string;
}

interface StopInput {
  stopHookActive: boolean;
  /** The final reply; also sent as `response_text`. */
  lastAssistantMessage: string;
  /** Consecutive Stop blocks so far in this run. */
  loopCount: number;
}

export interface EventInputs {
  /** `sessionTitle`: the session's title, when it has one (Claude Code's `session_title`). */
  SessionStart: { source: "startup" | "resume" | "clear" | "compact"; model?: string; sessionTitle?: string };
  SessionEnd: { reason: "clear" | "logout" | "prompt_input_exit" | "other" };
  UserPromptSubmit: { prompt: string; sessionTitle?: string };
  PreToolUse: ToolCall;
  PermissionRequest: Omit<ToolCall, "toolUseId"> & { permissionSuggestions?: unknown[] };
  PermissionDenied: ToolCall & { reason: string };
  PostToolUse: ToolCall & { toolResponse: unknown; durationMs?: number };
  PostToolUseFailure: ToolCall & { error: string; isInterrupt?: boolean; durationMs?: number };
  Stop: StopInput;
  SubagentStop: StopInput & { agentId: string; agentType: string; agentTranscriptPath?: string };
  SubagentStart: { agentId: string; agentType: string };
  PreCompact: { trigger: "manual" | "auto"; customInstructions?: string };
  PostCompact: { trigger: "manual" | "auto"; compactSummary: string };
  Notification: { message: string; notificationType: string; title?: string };
  StopFailure: { error: string; errorDetails?: string; lastAssistantMessage?: string };
  PostToolBatch: { toolCalls: readonly (ToolCall & { toolResponse: unknown })[] };
}

export type HookPayload = Readonly<Record<string, unknown>> & {
  readonly session_id: string;
  readonly hook_event_name: CommandHookEvent;
};

type Builder<E extends CommandHookEvent> = (i: EventInputs[E]) => Record<string, unknown>;

const tool = (i: ToolCall) => ({ tool_name: i.toolName, tool_input: i.toolInput, tool_use_id: i.toolUseId });
const stop = (i: StopInput) => ({
  stop_hook_active: i.stopHookActive,
  last_assistant_message: i.lastAssistantMessage,
  response_text: i.lastAssistantMessage,
  loop_count: i.loopCount,
  // Claude Code lists in-flight background tasks and session crons; Gatehouse runs neither, so
  // both are present and empty, which Claude Code's docs define as "nothing will wake the session".
  background_tasks: [],
  session_crons: [],
});
/** Claude Code reports whole milliseconds. */
const wholeMs = (ms: number | undefined) => (ms === undefined ? undefined : Math.round(ms));
const defined = (o: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Record<string, unknown>;

const BUILDERS: { [E in CommandHookEvent]: Builder<E> } = {
  SessionStart: (i) => defined({ source: i.source, model: i.model, session_title: i.sessionTitle }),
  SessionEnd: (i) => ({ reason: i.reason }),
  UserPromptSubmit: (i) => defined({ prompt: i.prompt, session_title: i.sessionTitle }),
  PreToolUse: tool,
  PermissionRequest: (i) =>
    defined({ tool_name: i.toolName, tool_input: i.toolInput, permission_suggestions: i.permissionSuggestions }),
  PermissionDenied: (i) => ({ ...tool(i), reason: i.reason }),
  PostToolUse: (i) => defined({ ...tool(i), tool_response: i.toolResponse, duration_ms: wholeMs(i.durationMs) }),
  PostToolUseFailure: (i) =>
    defined({ ...tool(i), error: i.error, is_interrupt: i.isInterrupt ?? false, duration_ms: wholeMs(i.durationMs) }),
  Stop: stop,
  SubagentStop: (i) =>
    defined({
      ...stop(i),
      agent_id: i.agentId,
      agent_type: i.agentType,
      agent_transcript_path: i.agentTranscriptPath,
    }),
  SubagentStart: (i) => ({ agent_id: i.agentId, agent_type: i.agentType }),
  PreCompact: (i) => ({ trigger: i.trigger, custom_instructions: i.customInstructions ?? "" }),
  PostCompact: (i) => ({ trigger: i.trigger, compact_summary: i.compactSummary }),
  Notification: (i) => defined({ message: i.message, title: i.title, notification_type: i.notificationType }),
  PostToolBatch: (i) => ({ tool_calls: i.toolCalls.map((c) => ({ ...tool(c), tool_response: c.toolResponse })) }),
  StopFailure: (i) =>
    defined({ error: i.error, error_details: i.errorDetails, last_assistant_message: i.lastAssistantMessage }),
};

const EFFORT_EVENTS: ReadonlySet<CommandHookEvent> = new Set(["PostToolBatch", "Stop", "SubagentStop"]);

export function buildPayload<E extends CommandHookEvent>(
  event: E,
  base: PayloadBase,
  input: EventInputs[E],
): HookPayload {
  const common: Record<string, unknown> = {
    session_id: base.sessionId,
    transcript_path: base.transcriptPath,
    cwd: base.cwd,
    hook_event_name: event,
    permission_mode: base.permissionMode ?? "default",
    run_id: base.runId,
    // Claude Code correlates one user prompt's events by prompt_id; in Gatehouse a prompt is a run.
    prompt_id: base.runId,
    depth: base.depth,
  };
  // Claude Code sends `effort` where a tool is in play and when the agent stops.
  if (base.effort !== undefined && (EVENT_SPECS[event].toolEvent || EFFORT_EVENTS.has(event)))
    common.effort = { level: base.effort };
  if (base.agent) {
    common.agent_id = base.agent.id;
    common.agent_type = base.agent.type;
  }
  const builder = BUILDERS[event] as Builder<E>;
  return Object.freeze({ ...common, ...builder(input) }) as HookPayload;
}
