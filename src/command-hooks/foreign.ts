import { readFileSync, statSync } from "node:fs";
import { parseMcpName } from "../tools/mcp-name.js";
import { type Dialect, gatehouseToolName, nativeToolName, translateParams } from "./dialects.js";
import { blockDecision, type Ctx, claude, exitDetail, failure, keepFields, withFeedback } from "./protocol.js";
import { HOOK_BLOCK_REASON, type HookDecision, type NormalizedVerdict, userSafeText } from "./verdict.js";

/**
 * Gemini CLI's, Codex's and Cursor's hooks: the JSON each one's hooks read (built from the
 * Claude Code payload the runtime made for the same moment) and how each one's answer — exit
 * code, stdout, stderr — becomes a verdict. docs/command-hooks.md states the readings taken
 * where a tool's documentation leaves a case open.
 */

type Obj = Record<string, unknown>;
const isRecord = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** The hook's stdin for its own dialect and event name. */
export function nativePayload(dialect: Dialect, nativeEvent: string, payload: Readonly<Obj>): Obj {
  switch (dialect) {
    case "gemini":
      return geminiPayload(nativeEvent, payload);
    case "codex":
      return codexPayload(nativeEvent, payload);
    case "cursor":
      return cursorPayload(nativeEvent, payload);
    default:
      return payload;
  }
}

const toolName = (payload: Readonly<Obj>) => String(payload.tool_name ?? "");
const nativeTool = (dialect: Dialect, payload: Readonly<Obj>) =>
  payload.tool_name === undefined ? {} : { tool_name: nativeToolName(dialect, toolName(payload)) };

/** A tool's output as the text a model reads. */
function outputText(output: unknown): string {
  if (typeof output === "string") return output;
  if (isRecord(output) && typeof output.stdout === "string")
    return [output.stdout, output.stderr].filter((t) => typeof t === "string" && t !== "").join("\n");
  return JSON.stringify(output) ?? "";
}

function geminiPayload(event: string, p: Readonly<Obj>): Obj {
  const base: Obj = {
    session_id: p.session_id,
    transcript_path: p.transcript_path,
    cwd: p.cwd,
    hook_event_name: event,
    timestamp: new Date().toISOString(),
  };
  switch (event) {
    case "BeforeTool":
    case "AfterTool": {
      const name = nativeToolName("gemini", toolName(p));
      const tool: Obj = {
        ...base,
        tool_name: name,
        tool_input: translateParams("gemini", toolName(p), p.tool_input, "native"),
        original_request_name: name,
      };
      if (event === "BeforeTool") return tool;
      const text = p.error === undefined ? outputText(p.tool_response) : String(p.error);
      return {
        ...tool,
        tool_response: { llmContent: text, returnDisplay: text, ...(p.error === undefined ? {} : { error: p.error }) },
      };
    }
    case "BeforeAgent":
      return { ...base, prompt: p.prompt };
    case "AfterAgent":
      return {
        ...base,
        prompt: p.prompt ?? "",
        prompt_response: p.last_assistant_message,
        stop_hook_active: p.stop_hook_active,
      };
    case "SessionStart":
      return { ...base, source: p.source };
    case "SessionEnd":
      return { ...base, reason: p.reason };
    case "PreCompress":
      return { ...base, trigger: p.trigger };
    case "Notification":
      return {
        ...base,
        notification_type: p.notification_type === "permission_prompt" ? "ToolPermission" : p.notification_type,
        message: p.message,
        details: {},
      };
    default:
      return base;
  }
}

/** Codex's `apply_patch` input for a Write or an Edit: the patch text it would have run. */
function applyPatch(tool: string, input: unknown): Obj {
  const i = isRecord(input) ? input : {};
  const path = String(i.file_path ?? "");
  const lines = (text: unknown, prefix: string) =>
    String(text ?? "")
      .split("\n")
      .map((l) => `${prefix}${l}`)
      .join("\n");
  const body =
    tool === "Write"
      ? `*** Add File: ${path}\n${lines(i.content, "+")}`
      : `*** Update File: ${path}\n@@\n${lines(i.old_string, "-")}\n${lines(i.new_string, "+")}`;
  return { command: `*** Begin Patch\n${body}\n*** End Patch` };
}

function codexPayload(event: string, p: Readonly<Obj>): Obj {
  const out: Obj = { ...p, hook_event_name: event, turn_id: p.run_id, ...nativeTool("codex", p) };
  if (p.tool_input !== undefined && (toolName(p) === "Write" || toolName(p) === "Edit"))
    out.tool_input = applyPatch(toolName(p), p.tool_input);
  return out;
}

const MAX_READ_CONTENT = 1024 * 1024;

/** Cursor sends `beforeReadFile` hooks the file's content, so they can look for secrets in it. */
function fileContent(path: unknown): string | undefined {
  if (typeof path !== "string") return undefined;
  try {
    if (statSync(path).size > MAX_READ_CONTENT) return undefined;
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

function cursorPayload(event: string, p: Readonly<Obj>): Obj {
  const base: Obj = {
    hook_event_name: event,
    conversation_id: p.session_id,
    generation_id: p.run_id,
    workspace_roots: [p.cwd],
    transcript_path: p.transcript_path,
    cursor_version: "gatehouse",
  };
  const input = isRecord(p.tool_input) ? p.tool_input : {};
  const name = toolName(p);
  switch (event) {
    case "preToolUse":
    case "postToolUse":
    case "postToolUseFailure":
      return {
        ...base,
        ...nativeTool("cursor", p),
        tool_input: p.tool_input,
        tool_use_id: p.tool_use_id,
        ...(event === "postToolUse" ? { tool_output: outputText(p.tool_response) } : {}),
        ...(event === "postToolUseFailure" ? { error: p.error } : {}),
      };
    case "beforeShellExecution":
      return { ...base, command: input.command, cwd: p.cwd };
    case "afterShellExecution":
      return { ...base, command: input.command, output: outputText(p.tool_response), duration: p.duration_ms };
    case "beforeMCPExecution":
    case "afterMCPExecution": {
      const mcp: Obj = {
        ...base,
        tool_name: parseMcpName(name)?.tool ?? name,
        tool_input: JSON.stringify(p.tool_input ?? {}),
      };
      return event === "beforeMCPExecution"
        ? mcp
        : { ...mcp, result_json: JSON.stringify(p.tool_response ?? null), duration: p.duration_ms };
    }
    case "beforeReadFile": {
      const content = fileContent(input.file_path);
      return { ...base, file_path: input.file_path, ...(content === undefined ? {} : { content }), attachments: [] };
    }
    case "afterFileEdit":
      return {
        ...base,
        file_path: input.file_path,
        edits: [
          name === "Write"
            ? { old_string: "", new_string: input.content }
            : { old_string: input.old_string, new_string: input.new_string },
        ],
      };
    case "beforeSubmitPrompt":
      return { ...base, prompt: p.prompt, attachments: [] };
    case "stop":
      return { ...base, status: "completed", loop_count: p.loop_count };
    case "afterAgentResponse":
      return { ...base, text: p.last_assistant_message };
    case "subagentStart":
    case "subagentStop":
      return {
        ...base,
        subagent_id: p.agent_id,
        subagent_type: p.agent_type,
        ...(event === "subagentStop" ? { status: "completed", loop_count: p.loop_count } : {}),
      };
    case "sessionStart":
      return { ...base, source: p.source };
    case "sessionEnd":
      return { ...base, reason: p.reason };
    case "preCompact":
      return { ...base, trigger: p.trigger };
    default:
      return base;
  }
}

/** A foreign hook's answer as a verdict. */
export function interpretForeign(ctx: Ctx): NormalizedVerdict {
  switch (ctx.opts.dialect) {
    case "gemini":
      return gemini(ctx);
    case "codex":
      return codex(ctx);
    default:
      return cursor(ctx);
  }
}

/** stdout, or (Gemini CLI) stderr when stdout is empty, parsed: a JSON string holding JSON is parsed twice. */
function parseJson(text: string): Obj | "invalid" | undefined {
  const t = text.trim();
  if (t === "") return undefined;
  try {
    let value: unknown = JSON.parse(t);
    if (typeof value === "string") value = JSON.parse(value);
    return isRecord(value) ? value : "invalid";
  } catch {
    return "invalid";
  }
}

const text = (v: unknown) => (typeof v === "string" && v.trim() !== "" ? v : undefined);

/** The native tool input a hook sent back, in the Gatehouse tool's shape (merged over the call's own, for Gemini CLI). */
function updatedInput(ctx: Ctx, returned: unknown, merge: boolean): Obj | undefined {
  if (!isRecord(returned)) return undefined;
  const payload = ctx.opts.native?.payload ?? {};
  const tool = gatehouseToolName(ctx.opts.dialect, String(payload.tool_name ?? ""));
  const sent = isRecord(payload.tool_input) ? payload.tool_input : {};
  const merged = merge ? { ...sent, ...returned } : returned;
  const back = translateParams(ctx.opts.dialect, tool, merged, "gatehouse");
  return isRecord(back) ? back : undefined;
}

function decided(ctx: Ctx, decision: HookDecision, reason: string | undefined): NormalizedVerdict {
  const blocks = decision === "deny" || decision === "block";
  const shown = userSafeText(reason, ctx.opts.commandLine) ?? (blocks ? (ctx.stderr ?? HOOK_BLOCK_REASON) : undefined);
  return { decision, ...(shown === undefined ? {} : { reason: shown }) };
}

/**
 * Gemini CLI: the JSON on stdout (or on stderr when stdout is empty) decides whatever the exit
 * code. Plain text: exit 0 is a message for the user, exit 1 a warning, any other code blocks
 * with the text as the reason. Nothing printed and a non-zero exit: no decision.
 */
function gemini(ctx: Ctx): NormalizedVerdict {
  const { raw, spec } = ctx;
  const source = raw.stdout.trim() !== "" ? raw.stdout : raw.stderr;
  const json = parseJson(source);
  const block = blockDecision(spec);
  if (json === undefined) return raw.exitCode === 0 ? {} : failure(ctx, "exit", exitDetail(raw));
  if (json === "invalid") {
    const plain = userSafeText(source, ctx.opts.commandLine);
    if (raw.exitCode === 0) return keepFields(spec, plain ? { systemMessage: plain } : {});
    if (raw.exitCode === 1) return withFeedback(ctx, { error: "exit", errorDetail: exitDetail(raw) }, plain);
    return block === undefined ? withFeedback(ctx, {}, plain) : decided(ctx, block, plain);
  }
  const hso = isRecord(json.hookSpecificOutput) ? json.hookSpecificOutput : {};
  const v: NormalizedVerdict = {};
  const message = userSafeText(text(json.systemMessage), ctx.opts.commandLine);
  if (message) v.systemMessage = message;
  const context = text(hso.additionalContext);
  if (context) v.additionalContext = context;
  if (json.continue === false) {
    v.continue = false;
    const stop = userSafeText(text(json.stopReason), ctx.opts.commandLine);
    if (stop) v.stopReason = stop;
  }
  if (spec.name === "PreToolUse") {
    const input = updatedInput(ctx, hso.tool_input, true);
    if (input) v.updatedInput = input;
  }
  if (spec.name === "PostToolUse" && typeof hso.tool_output === "string") v.updatedToolOutput = hso.tool_output;
  const d = json.decision;
  const verdict =
    d === "deny" || d === "block"
      ? block === undefined
        ? {}
        : decided(ctx, block, text(json.reason))
      : d === "ask" && spec.decision === "permission"
        ? decided(ctx, "ask", text(json.reason))
        : (d === "allow" || d === "approve") && spec.decision !== "none" && spec.decision !== "block"
          ? { decision: "allow" as const }
          : {};
  return keepFields(spec, { ...v, ...verdict });
}

const CODEX_KEYS = new Set([
  "continue",
  "stopReason",
  "suppressOutput",
  "systemMessage",
  "decision",
  "reason",
  "hookSpecificOutput",
]);

/**
 * Codex: Claude Code's JSON, read on exit 0 only and strictly — an unknown field or a combination
 * Codex refuses makes the hook fail (no decision; a block under onFailure "block"). Exit 2
 * blocks with stderr, and fails when stderr is empty.
 */
function codex(ctx: Ctx): NormalizedVerdict {
  const { raw, spec } = ctx;
  if (raw.exitCode === 2 && ctx.stderr === undefined)
    return failure(ctx, "exit", "exit code 2 without a reason on stderr");
  if (raw.exitCode === 0 && raw.stdout.trim().startsWith("{")) {
    const json = parseJson(raw.stdout);
    const problem =
      json === "invalid" || json === undefined ? "stdout is not a JSON object" : codexProblem(json, spec.name);
    if (problem) return failure(ctx, "unparseable", problem);
  }
  const verdict = claude(ctx);
  // An input rewrite of a Write or an Edit was written against the apply_patch text: it cannot be applied.
  const tool = String(ctx.opts.native?.payload.tool_name ?? "");
  if (verdict.updatedInput !== undefined && tool === "apply_patch") {
    const { updatedInput: _, ...rest } = verdict;
    return rest;
  }
  return verdict;
}

function codexProblem(json: Obj, event: string): string | undefined {
  const unknown = Object.keys(json).find((k) => !CODEX_KEYS.has(k));
  if (unknown) return `unknown field "${unknown}"`;
  const hso = isRecord(json.hookSpecificOutput) ? json.hookSpecificOutput : {};
  if (event === "PreToolUse") {
    if (json.continue === false || json.stopReason !== undefined || json.suppressOutput !== undefined)
      return "continue, stopReason and suppressOutput are not supported on PreToolUse";
    if (hso.permissionDecision === "ask") return 'permissionDecision "ask" is not supported';
    if (hso.permissionDecision === "deny" && !text(hso.permissionDecisionReason)) return "deny needs a reason";
    if (hso.permissionDecision === "allow" && hso.updatedInput === undefined) return "allow needs updatedInput";
    if (hso.updatedInput !== undefined && hso.permissionDecision !== "allow") return "updatedInput needs allow";
    if (json.decision === "approve") return 'legacy decision "approve" is not supported';
  }
  if (json.reason !== undefined && json.decision === undefined) return "reason without decision";
  if (json.decision === "block" && !text(json.reason)) return 'decision "block" needs a reason';
  return undefined;
}

/**
 * Cursor: exit 2 denies (or blocks); another non-zero exit is an error (a block under
 * `failClosed`). On exit 0 the JSON answers: `permission` (or `decision`) with `user_message` /
 * `agent_message`, `continue: false` on beforeSubmitPrompt, `followup_message` on stop,
 * `updated_input` on preToolUse, `additional_context`. Output that is not JSON on a permission
 * event denies, as Cursor does; elsewhere it is an error.
 */
function cursor(ctx: Ctx): NormalizedVerdict {
  const { raw, spec } = ctx;
  const block = blockDecision(spec);
  if (raw.exitCode === 2)
    return block === undefined ? withFeedback(ctx, {}, ctx.stderr) : decided(ctx, block, undefined);
  if (raw.exitCode !== 0) return failure(ctx, "exit", exitDetail(raw));
  const json = parseJson(raw.stdout);
  if (json === undefined) return {};
  if (json === "invalid")
    return spec.decision === "permission"
      ? decided(ctx, "deny", undefined)
      : failure(ctx, "unparseable", "stdout is not a JSON object");
  const v: NormalizedVerdict = {};
  const context = text(json.additional_context);
  if (context) v.additionalContext = context;
  const userMessage = userSafeText(text(json.user_message), ctx.opts.commandLine);
  const agentMessage = text(json.agent_message);
  const permission = json.permission ?? json.decision;
  if (spec.decision === "permission" || spec.decision === "approval") {
    const input = updatedInput(ctx, json.updated_input, false);
    if (input) v.updatedInput = input;
    if (permission === "deny") return keepFields(spec, { ...v, ...decided(ctx, "deny", agentMessage ?? userMessage) });
    if (permission === "ask" && spec.decision === "permission")
      return keepFields(spec, { ...v, ...decided(ctx, "ask", userMessage ?? agentMessage) });
    if (permission === "allow") return keepFields(spec, { ...v, decision: "allow" });
    return keepFields(spec, v);
  }
  if (spec.name === "UserPromptSubmit" && json.continue === false)
    return keepFields(spec, { ...v, ...decided(ctx, "block", userMessage) });
  // A follow-up is auto-submitted to the agent: Gatehouse's "one more pass" with it as the instruction.
  if ((spec.name === "Stop" || spec.name === "SubagentStop") && text(json.followup_message))
    return keepFields(spec, { ...v, decision: "block", reason: String(json.followup_message) });
  if (userMessage) v.systemMessage = userMessage;
  return keepFields(spec, v);
}
