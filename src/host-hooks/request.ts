import { gatehouseToolName, translateParams } from "../command-hooks/dialects.js";
import { type Agent, type ServedEvent, servedEventOf } from "./hosts.js";

type Obj = Record<string, unknown>;
const isRecord = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown) => (typeof v === "string" ? v : undefined);

/** What an agent's hook payload asks, in Gatehouse's terms (tool names and params as Gatehouse's). */
export type HookRequest = {
  readonly agent: Agent;
  /** The agent's own event name (the answer is written for it). */
  readonly native: string;
  readonly event: ServedEvent;
  readonly sessionId: string;
  /** The tool as the agent named it (answers that echo a tool's shape need it). */
  readonly nativeTool?: string;
} & (
  | {
      readonly hook: "before_tool_call";
      readonly toolName: string;
      readonly params: unknown;
      readonly toolCallId: string;
    }
  | {
      readonly hook: "after_tool_call";
      readonly toolName: string;
      readonly params: unknown;
      readonly toolCallId: string;
      readonly result?: unknown;
      readonly error?: string;
      readonly durationMs: number;
    }
  | { readonly hook: "before_input"; readonly prompt: string }
  | { readonly hook: "before_agent_finalize"; readonly lastAssistantMessage: string; readonly stopHookActive: boolean }
);

/** Why a payload cannot be answered: the hook then fails closed where the event can block. */
export class PayloadError extends Error {}

/**
 * Reads an agent's hook payload. An event `gatehouse hook` does not serve gives undefined (it is
 * answered with nothing); a payload that is not what the agent sends is a PayloadError.
 */
export function readRequest(agent: Agent, payload: unknown): HookRequest | undefined {
  if (!isRecord(payload)) throw new PayloadError("the hook payload is not a JSON object");
  const native = str(payload.hook_event_name);
  if (native === undefined) throw new PayloadError("the hook payload has no hook_event_name");
  const failed = agent === "gemini" ? isRecord(payload.tool_response) && payload.tool_response.error != null : false;
  const event = servedEventOf(agent, native, failed);
  if (event === undefined) return undefined;
  const sessionId = str(payload.session_id) ?? str(payload.conversation_id) ?? "";
  const base = { agent, native, event, sessionId };
  switch (event) {
    case "PreToolUse":
    case "PostToolUse":
    case "PostToolUseFailure": {
      const nativeTool = str(payload.tool_name);
      if (nativeTool === undefined) throw new PayloadError(`${native}: the payload has no tool_name`);
      const toolName = toolNameOf(agent, nativeTool);
      const params = translateParams(agent, toolName, payload.tool_input, "gatehouse");
      const toolCallId = str(payload.tool_use_id) ?? "";
      if (event === "PreToolUse")
        return { ...base, hook: "before_tool_call", nativeTool, toolName, params, toolCallId };
      const durationMs = typeof payload.duration_ms === "number" ? payload.duration_ms : 0;
      const call = { ...base, hook: "after_tool_call" as const, nativeTool, toolName, params, toolCallId, durationMs };
      return event === "PostToolUseFailure"
        ? { ...call, error: errorOf(agent, payload) }
        : { ...call, result: resultOf(agent, payload) };
    }
    case "UserPromptSubmit": {
      const prompt = str(payload.prompt);
      if (prompt === undefined) throw new PayloadError(`${native}: the payload has no prompt`);
      return { ...base, hook: "before_input", prompt };
    }
    default:
      return {
        ...base,
        hook: "before_agent_finalize",
        lastAssistantMessage: str(payload.last_assistant_message) ?? str(payload.prompt_response) ?? "",
        stopHookActive:
          payload.stop_hook_active === true || (typeof payload.loop_count === "number" && payload.loop_count > 0),
      };
  }
}

/**
 * A tool as Gatehouse names it. Codex runs both Write and Edit as `apply_patch`, with the patch
 * text as its input: neither Gatehouse tool's params, so it keeps its own name.
 */
function toolNameOf(agent: Agent, nativeTool: string): string {
  if (agent === "codex" && nativeTool === "apply_patch") return nativeTool;
  return gatehouseToolName(agent, nativeTool);
}

/** A successful call's output: Claude Code's and Codex's object as sent, Gemini CLI's model text, Cursor's text. */
function resultOf(agent: Agent, payload: Obj): unknown {
  if (agent === "gemini") return isRecord(payload.tool_response) ? payload.tool_response.llmContent : undefined;
  if (agent === "cursor") return payload.tool_output;
  return payload.tool_response;
}

function errorOf(agent: Agent, payload: Obj): string {
  const error = agent === "gemini" && isRecord(payload.tool_response) ? payload.tool_response.error : payload.error;
  if (typeof error === "string") return error;
  if (isRecord(error) && typeof error.message === "string") return error.message;
  return JSON.stringify(error ?? "the tool failed");
}
