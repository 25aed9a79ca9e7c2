// The Claude Code compatibility tables (docs/command-hooks.md) against the code: every event
// Gatehouse fires is listed as run and every one it only warns about as not supported; every
// payload field it sends is listed; every JSON field it reads is; every handler type is one the
// loader runs. And the doc holds exactly what src/command-hooks/compat.ts renders.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import {
  CLAUDE_CODE_EVENTS,
  CLAUDE_CODE_HANDLER_FIELDS,
  CLAUDE_CODE_HANDLER_TYPES,
  CLAUDE_CODE_INPUT_FIELDS,
  CLAUDE_CODE_OUTPUT_FIELDS,
  type CompatRow,
  renderCompatTables,
} from "../../src/command-hooks/compat.js";
import { COMMAND_HOOK_EVENTS, FOREIGN_CLAUDE_EVENTS } from "../../src/command-hooks/events.js";
import { buildPayload, type EventInputs } from "../../src/command-hooks/payload.js";
import { HookJsonSchema } from "../../src/command-hooks/protocol.js";
import { HandlerSchema } from "../../src/command-hooks/settings.js";

const names = (rows: readonly CompatRow[], run?: boolean) =>
  rows
    .filter((r) => run === undefined || (r.support !== "not supported") === run)
    .map((r) => r.name)
    .sort();

/** One input per event with every optional field set, so the payloads hold every field Gatehouse can send. */
const FULL_INPUTS: { [E in (typeof COMMAND_HOOK_EVENTS)[number]]: EventInputs[E] } = {
  SessionStart: { source: "startup", model: "m", sessionTitle: "t" },
  SessionEnd: { reason: "other" },
  UserPromptSubmit: { prompt: "p", sessionTitle: "t" },
  PreToolUse: { toolName: "Bash", toolInput: {}, toolUseId: "t" },
  PermissionRequest: { toolName: "Bash", toolInput: {}, permissionSuggestions: [] },
  PermissionDenied: { toolName: "Bash", toolInput: {}, toolUseId: "t", reason: "r" },
  PostToolUse: { toolName: "Bash", toolInput: {}, toolUseId: "t", toolResponse: {}, durationMs: 1 },
  PostToolUseFailure: { toolName: "Bash", toolInput: {}, toolUseId: "t", error: "e", durationMs: 1 },
  Stop: { stopHookActive: false, lastAssistantMessage: "", loopCount: 0 },
  SubagentStop: {
    stopHookActive: false,
    lastAssistantMessage: "",
    loopCount: 0,
    agentId: "a",
    agentType: "b",
    agentTranscriptPath: "/t/a.jsonl",
  },
  SubagentStart: { agentId: "a", agentType: "b" },
  PreCompact: { trigger: "manual", customInstructions: "c" },
  PostCompact: { trigger: "manual", compactSummary: "s" },
  Notification: { message: "m", notificationType: "permission_prompt" },
  StopFailure: { error: "unknown", errorDetails: "d" },
  PostToolBatch: { toolCalls: [{ toolName: "Bash", toolInput: {}, toolUseId: "t", toolResponse: "r" }] },
};

/** Fields Gatehouse adds that Claude Code does not send (documented under the event table). */
const GATEHOUSE_ONLY = new Set(["run_id", "depth", "loop_count", "response_text"]);
/** Claude Code's input fields Gatehouse does not send, though it lists them as supported elsewhere. */
const UNSENT_BY_DESIGN = new Set<string>();

/**
 * Every input field Claude Code 2.1.328's hooks reference documents (the common fields and each
 * event's "input" section; tool inputs and nested objects aside), and every output field.
 */
const DOCUMENTED_INPUT_FIELDS = [
  ...["session_id", "transcript_path", "cwd", "hook_event_name", "permission_mode", "prompt_id", "effort"],
  ...["agent_id", "agent_type", "agent_transcript_path", "model", "source", "session_title", "reason", "prompt"],
  ...["tool_name", "tool_input", "tool_use_id", "tool_response", "duration_ms", "error", "is_interrupt"],
  ...["error_details", "tool_calls", "permission_suggestions", "stop_hook_active", "last_assistant_message"],
  ...["background_tasks", "session_crons", "trigger", "custom_instructions", "compact_summary", "message"],
  ...["title", "notification_type", "file_path", "memory_type", "load_reason", "globs", "trigger_file_path"],
  ...["parent_file_path", "expansion_type", "command_name", "command_args", "command_source", "turn_id"],
  ...["message_id", "index", "delta", "final", "task_id", "task_subject", "task_description", "teammate_name"],
  ...["team_name", "old_cwd", "new_cwd", "directory", "event", "name", "worktree_path", "mcp_server_name"],
  ...["mode", "url", "elicitation_id", "requested_schema", "action", "content"],
];
const DOCUMENTED_OUTPUT_FIELDS = [
  ...["continue", "stopReason", "suppressOutput", "systemMessage", "decision", "reason"],
  ...["hookEventName", "permissionDecision", "permissionDecisionReason", "updatedInput", "additionalContext"],
  ...["updatedToolOutput", "updatedMCPToolOutput", "decision", "retry", "sessionTitle", "suppressOriginalPrompt"],
  ...["initialUserMessage", "watchPaths", "reloadSkills", "displayContent", "worktreePath", "action", "content"],
].map((f, i) => (i < 6 ? f : `hookSpecificOutput.${f}`));

describe("the Claude Code compatibility tables are in step with the code", () => {
  test("every input and output field Claude Code documents has a row, with its status", () => {
    const inputs = new Set(names(CLAUDE_CODE_INPUT_FIELDS));
    const outputs = new Set(names(CLAUDE_CODE_OUTPUT_FIELDS));
    assert.deepEqual(
      DOCUMENTED_INPUT_FIELDS.filter((f) => !inputs.has(f)),
      [],
      "documented input fields missing from the table",
    );
    assert.deepEqual(
      DOCUMENTED_OUTPUT_FIELDS.filter((f) => !outputs.has(f)),
      [],
      "documented output fields missing from the table",
    );
  });

  test("docs/command-hooks.md holds what compat.ts renders", () => {
    const doc = readFileSync(new URL("../../docs/command-hooks.md", import.meta.url), "utf8");
    assert.ok(
      doc.includes(renderCompatTables()),
      "docs/command-hooks.md is out of date with src/command-hooks/compat.ts: run `npm run docs`",
    );
  });

  test("events: those Gatehouse fires are listed as run, those it warns about as not supported", () => {
    assert.deepEqual(names(CLAUDE_CODE_EVENTS, true), [...COMMAND_HOOK_EVENTS].sort());
    assert.deepEqual(names(CLAUDE_CODE_EVENTS, false), [...FOREIGN_CLAUDE_EVENTS].sort());
  });

  test("input fields: every field a payload carries is listed as sent, and every field listed as sent is carried", () => {
    const sent = new Set<string>();
    const base = {
      sessionId: "s",
      transcriptPath: "/t",
      cwd: "/",
      runId: "r",
      depth: 1,
      effort: "high",
      agent: { id: "a", type: "b" },
    };
    for (const event of COMMAND_HOOK_EVENTS)
      for (const key of Object.keys(buildPayload(event, base, FULL_INPUTS[event] as never))) sent.add(key);
    const listed = new Set(names(CLAUDE_CODE_INPUT_FIELDS, true));
    for (const field of sent)
      if (!GATEHOUSE_ONLY.has(field)) assert.ok(listed.has(field), `payload field ${field} is not in the table`);
    for (const field of listed)
      if (!UNSENT_BY_DESIGN.has(field)) assert.ok(sent.has(field), `${field} is listed as sent but no payload has it`);
    for (const field of names(CLAUDE_CODE_INPUT_FIELDS, false))
      assert.ok(!sent.has(field), `${field} is sent but listed as not supported`);
  });

  test("output fields: every field listed as read is one the protocol reads, and every one it reads is listed", () => {
    // Top-level forms other agent CLIs' hooks answer with (Code Puppy's `result`, …), not Claude Code fields.
    const otherTools = new Set(["hookSpecificOutput", "result", "additionalContext", "updatedToolOutput"]);
    const top = Object.keys(HookJsonSchema.shape).filter((k) => !otherTools.has(k));
    const hso = HookJsonSchema.shape.hookSpecificOutput.unwrap().shape;
    const read = new Set([...top, ...Object.keys(hso).map((k) => `hookSpecificOutput.${k}`)]);
    assert.deepEqual(names(CLAUDE_CODE_OUTPUT_FIELDS, true), [...read].sort());
  });

  test("handler types: every one Claude Code has is one the loader runs", () => {
    const run = HandlerSchema.options.map((o) => o.shape.type.value);
    assert.deepEqual(names(CLAUDE_CODE_HANDLER_TYPES, true), [...run].sort());
    assert.deepEqual(names(CLAUDE_CODE_HANDLER_TYPES, false), []);
  });

  test("handler fields: every field Claude Code documents is listed, and every one listed is one the loader accepts", () => {
    const documented = [
      ...["type", "if", "timeout", "statusMessage", "once", "command", "args", "async", "asyncRewake", "shell"],
      ...["url", "headers", "allowedEnvVars", "server", "tool", "input", "prompt", "model"],
    ];
    assert.deepEqual(names(CLAUDE_CODE_HANDLER_FIELDS), [...documented].sort());
    const accepted = new Set(HandlerSchema.options.flatMap((o) => Object.keys(o.shape)));
    for (const field of names(CLAUDE_CODE_HANDLER_FIELDS, true))
      assert.ok(accepted.has(field), `${field} is listed but no handler schema accepts it`);
  });

  test("a row that is not plainly supported says why", () => {
    for (const rows of [
      CLAUDE_CODE_EVENTS,
      CLAUDE_CODE_INPUT_FIELDS,
      CLAUDE_CODE_OUTPUT_FIELDS,
      CLAUDE_CODE_HANDLER_TYPES,
      CLAUDE_CODE_HANDLER_FIELDS,
    ])
      for (const r of rows) if (r.support !== "supported") assert.notEqual(r.note, "", `${r.name} needs a note`);
  });
});
