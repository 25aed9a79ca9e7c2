// The Claude Code compatibility tables (docs/command-hooks.md) against the code: every event
// Gatehouse fires is listed as run and every one it only warns about as not supported; every
// payload field it sends is listed; every JSON field it reads is; every handler type is one the
// loader runs. And the doc holds exactly what src/command-hooks/compat.ts renders.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import {
  CLAUDE_CODE_EVENTS,
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

describe("the Claude Code compatibility tables are in step with the code", () => {
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

  test("a row that is not plainly supported says why", () => {
    for (const rows of [
      CLAUDE_CODE_EVENTS,
      CLAUDE_CODE_INPUT_FIELDS,
      CLAUDE_CODE_OUTPUT_FIELDS,
      CLAUDE_CODE_HANDLER_TYPES,
    ])
      for (const r of rows) if (r.support !== "supported") assert.notEqual(r.note, "", `${r.name} needs a note`);
  });
});
