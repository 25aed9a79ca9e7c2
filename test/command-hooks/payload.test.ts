import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { runCommandHooks } from "../../src/command-hooks/dispatch.js";
import { COMMAND_HOOK_EVENTS } from "../../src/command-hooks/events.js";
import { buildPayload, type PayloadBase } from "../../src/command-hooks/payload.js";
import { claudeToolResponse } from "../../src/command-hooks/tool-response.js";
import { execHook, tempDir } from "./helpers.js";

const base: PayloadBase = {
  sessionId: "sess-1",
  transcriptPath: "/t/sess-1.jsonl",
  cwd: "/p",
  runId: "run-1",
  depth: 0,
};
const common = {
  session_id: "sess-1",
  transcript_path: "/t/sess-1.jsonl",
  cwd: "/p",
  permission_mode: "default",
  run_id: "run-1",
  prompt_id: "run-1",
  depth: 0,
};

describe("hook payloads use Claude Code's field names", () => {
  test("PreToolUse carries tool_name, tool_input and tool_use_id", () => {
    assert.deepEqual(
      buildPayload("PreToolUse", base, { toolName: "Bash", toolInput: { command: "ls" }, toolUseId: "tu1" }),
      {
        ...common,
        hook_event_name: "PreToolUse",
        tool_name: "Bash",
        tool_input: { command: "ls" },
        tool_use_id: "tu1",
      },
    );
  });

  test("PostToolUse and PostToolUseFailure carry the response or the error", () => {
    const call = { toolName: "Read", toolInput: { file_path: "/p/a" }, toolUseId: "tu2" };
    assert.deepEqual(buildPayload("PostToolUse", base, { ...call, toolResponse: { content: "x" }, durationMs: 5 }), {
      ...common,
      hook_event_name: "PostToolUse",
      tool_name: "Read",
      tool_input: { file_path: "/p/a" },
      tool_use_id: "tu2",
      tool_response: { content: "x" },
      duration_ms: 5,
    });
    const failure = buildPayload("PostToolUseFailure", base, { ...call, error: "ENOENT", durationMs: 12.7 });
    assert.equal(failure.error, "ENOENT");
    assert.equal(failure.is_interrupt, false, "Claude Code always sends is_interrupt");
    assert.equal(failure.duration_ms, 13, "whole milliseconds, as Claude Code sends them");
  });

  test("Stop carries stop_hook_active, loop_count, last_assistant_message and an equal response_text", () => {
    const p = buildPayload("Stop", base, { stopHookActive: true, lastAssistantMessage: "Done.", loopCount: 2 });
    assert.equal(p.stop_hook_active, true);
    assert.equal(p.loop_count, 2);
    assert.equal(p.last_assistant_message, "Done.");
    assert.equal(p.response_text, "Done.");
    assert.deepEqual([p.background_tasks, p.session_crons], [[], []], "present and empty, as Claude Code sends them");
  });

  test("a sub-agent's events carry its own session id plus agent_id and agent_type", () => {
    const sub: PayloadBase = { ...base, sessionId: "sess-child", depth: 1, agent: { id: "ag-1", type: "Explore" } };
    const pre = buildPayload("PreToolUse", sub, { toolName: "Grep", toolInput: {}, toolUseId: "t" });
    assert.equal(pre.session_id, "sess-child");
    assert.equal(pre.agent_id, "ag-1");
    assert.equal(pre.agent_type, "Explore");
    assert.equal(pre.depth, 1);
    const stop = buildPayload("SubagentStop", sub, {
      stopHookActive: false,
      lastAssistantMessage: "found it",
      loopCount: 0,
      agentId: "ag-1",
      agentType: "Explore",
      agentTranscriptPath: "/t/child.jsonl",
    });
    assert.equal(stop.response_text, "found it");
    assert.equal(stop.agent_transcript_path, "/t/child.jsonl");
    assert.equal(
      buildPayload("PreToolUse", base, { toolName: "x", toolInput: {}, toolUseId: "t" }).agent_id,
      undefined,
    );
  });

  test("every event's payload has the common fields and its own hook_event_name, and is frozen", () => {
    const inputs = {
      SessionStart: { source: "startup" },
      SessionEnd: { reason: "other" },
      UserPromptSubmit: { prompt: "hi" },
      PreToolUse: { toolName: "Bash", toolInput: {}, toolUseId: "t" },
      PermissionRequest: { toolName: "Bash", toolInput: {} },
      PermissionDenied: { toolName: "Bash", toolInput: {}, toolUseId: "t", reason: "r" },
      PostToolUse: { toolName: "Bash", toolInput: {}, toolUseId: "t", toolResponse: {} },
      PostToolUseFailure: { toolName: "Bash", toolInput: {}, toolUseId: "t", error: "e" },
      Stop: { stopHookActive: false, lastAssistantMessage: "", loopCount: 0 },
      SubagentStop: { stopHookActive: false, lastAssistantMessage: "", loopCount: 0, agentId: "a", agentType: "b" },
      SubagentStart: { agentId: "a", agentType: "b" },
      PreCompact: { trigger: "auto" },
      PostCompact: { trigger: "auto", compactSummary: "s" },
      Notification: { message: "m", notificationType: "idle_prompt" },
      StopFailure: { error: "rate_limit" },
      PostToolBatch: { toolCalls: [] },
    } as const;
    for (const event of COMMAND_HOOK_EVENTS) {
      const p = buildPayload(event, { ...base, permissionMode: "plan" }, inputs[event] as never);
      assert.equal(p.hook_event_name, event);
      assert.equal(p.session_id, "sess-1");
      assert.equal(p.permission_mode, "plan");
      assert.equal(p.run_id, "run-1");
      assert.equal(p.prompt_id, "run-1", "one prompt, one run: Claude Code's prompt_id is the run id");
      assert.equal(Object.isFrozen(p), true);
    }
    assert.equal(buildPayload("UserPromptSubmit", base, { prompt: "hi" }).prompt, "hi");
    assert.equal(buildPayload("SessionStart", base, { source: "resume" }).source, "resume");
    assert.equal(buildPayload("PreCompact", base, { trigger: "manual" }).custom_instructions, "");
    assert.equal(buildPayload("Notification", base, { message: "m", notificationType: "x" }).notification_type, "x");
  });
});

describe("session id", () => {
  test("every event of one run gives the hook the same real session id on stdin and in the environment", async () => {
    const dir = tempDir();
    const run: PayloadBase = { ...base, sessionId: "7f3c-real-session", cwd: dir };
    const payloads = [
      buildPayload("UserPromptSubmit", run, { prompt: "hello" }),
      buildPayload("PreToolUse", run, { toolName: "Bash", toolInput: { command: "ls" }, toolUseId: "t1" }),
      buildPayload("PostToolUse", run, {
        toolName: "Bash",
        toolInput: { command: "ls" },
        toolUseId: "t1",
        toolResponse: {},
      }),
      buildPayload("Stop", run, { stopHookActive: false, lastAssistantMessage: "ok", loopCount: 0 }),
    ];
    for (const [i, payload] of payloads.entries()) {
      const out = join(dir, `seen-${i}.json`);
      const handler = execHook("record.py", [out], { event: payload.hook_event_name });
      await runCommandHooks(payload.hook_event_name, undefined, payload, [handler], {
        projectDir: dir,
        sessionId: run.sessionId,
        env: { PATH: process.env.PATH },
      });
      const seen = JSON.parse(readFileSync(out, "utf8"));
      assert.equal(seen.stdin.session_id, "7f3c-real-session");
      assert.equal(seen.env.CLAUDE_CODE_SESSION_ID, "7f3c-real-session");
    }
  });
});

describe("tool_response in Claude Code's shapes", () => {
  test("Bash: stdout and stderr without their final newlines, isImage and noOutputExpected added, exitCode kept", () => {
    assert.deepEqual(claudeToolResponse("Bash", { stdout: "hi\n", stderr: "", interrupted: false, exitCode: 0 }), {
      stdout: "hi",
      stderr: "",
      interrupted: false,
      exitCode: 0,
      isImage: false,
      noOutputExpected: false,
    });
    assert.equal(
      (claudeToolResponse("Bash", { stdout: "", stderr: "", interrupted: false }) as Record<string, unknown>)
        .noOutputExpected,
      true,
    );
  });

  test("other tools, and a Bash output a hook rewrote into another shape, are passed as they are", () => {
    const read = { type: "text", file: { filePath: "/p/a", content: "x\n" } };
    assert.equal(claudeToolResponse("Read", read), read);
    assert.equal(claudeToolResponse("Bash", "[withheld]"), "[withheld]");
  });
});
