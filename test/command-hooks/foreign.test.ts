import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import type { Dialect } from "../../src/command-hooks/dialects.js";
import { selectHandlers } from "../../src/command-hooks/dispatch.js";
import type { CommandHookEvent } from "../../src/command-hooks/events.js";
import { nativePayload } from "../../src/command-hooks/foreign.js";
import { interpret, type RawOutcome } from "../../src/command-hooks/protocol.js";
import { loadCommandHookSources } from "../../src/command-hooks/sources.js";

const raw = (exitCode: number, stdout = "", stderr = ""): RawOutcome => ({
  exitCode,
  signal: null,
  stdout,
  stderr,
  timedOut: false,
});

function verdict(dialect: Dialect, event: CommandHookEvent, nativeEvent: string, r: RawOutcome, payload = {}) {
  return interpret(event, r, { dialect, onFailure: "continue", native: { event: nativeEvent, payload } });
}

describe("foreign dialects' answers", () => {
  test("Gemini CLI: JSON decides on any exit code, from stdout or (stdout empty) stderr; plain text: 0 informs, 1 warns, 2+ blocks", () => {
    const deny = JSON.stringify({ decision: "deny", reason: "no" });
    assert.deepEqual(verdict("gemini", "PreToolUse", "BeforeTool", raw(0, deny)), { decision: "deny", reason: "no" });
    assert.deepEqual(verdict("gemini", "PreToolUse", "BeforeTool", raw(2, "", deny)), {
      decision: "deny",
      reason: "no",
    });
    assert.deepEqual(verdict("gemini", "PreToolUse", "BeforeTool", raw(0, JSON.stringify(deny))), {
      decision: "deny",
      reason: "no",
    });
    assert.deepEqual(verdict("gemini", "PreToolUse", "BeforeTool", raw(3, "", "stop that")), {
      decision: "deny",
      reason: "stop that",
    });
    assert.deepEqual(verdict("gemini", "PreToolUse", "BeforeTool", raw(0, "hello")), { systemMessage: "hello" });
    assert.deepEqual(verdict("gemini", "SessionEnd", "SessionEnd", raw(0, "hello")), {});
    assert.deepEqual(verdict("gemini", "UserPromptSubmit", "BeforeAgent", raw(0, "hello")), { systemMessage: "hello" });
    assert.equal(verdict("gemini", "PreToolUse", "BeforeTool", raw(1, "", "careful")).decision, undefined);
    assert.equal(verdict("gemini", "PreToolUse", "BeforeTool", raw(2)).error, "exit");
    assert.deepEqual(verdict("gemini", "Stop", "AfterAgent", raw(0, deny)), { decision: "block", reason: "no" });
  });

  test("Gemini CLI: BeforeTool's tool_input merges over the call's own and comes back in Gatehouse's shape", () => {
    const payload = nativePayload("gemini", "BeforeTool", {
      session_id: "s",
      cwd: "/p",
      tool_name: "Grep",
      tool_input: { pattern: "x", path: "src", glob: "*.ts" },
    });
    assert.deepEqual(payload.tool_input, { pattern: "x", dir_path: "src", include: "*.ts" });
    assert.equal(payload.tool_name, "grep_search");
    const out = JSON.stringify({ hookSpecificOutput: { tool_input: { include: "*.js" } } });
    assert.deepEqual(verdict("gemini", "PreToolUse", "BeforeTool", raw(0, out), payload).updatedInput, {
      pattern: "x",
      path: "src",
      glob: "*.js",
    });
  });

  test("Codex: exit 2 blocks with stderr but fails without it; JSON is strict (unknown fields, ask, allow without updatedInput fail)", () => {
    assert.deepEqual(verdict("codex", "PreToolUse", "PreToolUse", raw(2, "", "nope")), {
      decision: "deny",
      reason: "nope",
    });
    assert.equal(verdict("codex", "PreToolUse", "PreToolUse", raw(2)).error, "exit");
    const json = (o: object) => raw(0, JSON.stringify(o));
    const deny = {
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "r" },
    };
    assert.deepEqual(verdict("codex", "PreToolUse", "PreToolUse", json(deny)), { decision: "deny", reason: "r" });
    for (const bad of [
      { ...deny, extra: 1 },
      { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "ask" } },
      { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow" } },
      { reason: "without a decision" },
    ])
      assert.equal(verdict("codex", "PreToolUse", "PreToolUse", json(bad)).error, "unparseable", JSON.stringify(bad));
  });

  test("Cursor: permission JSON, exit 2 denies, not-JSON on a permission event denies, continue:false blocks a prompt, followup_message asks for another pass", () => {
    const answer = JSON.stringify({ permission: "deny", user_message: "for you", agent_message: "for the agent" });
    assert.deepEqual(verdict("cursor", "PreToolUse", "beforeShellExecution", raw(0, answer)), {
      decision: "deny",
      reason: "for the agent",
    });
    assert.equal(verdict("cursor", "PreToolUse", "beforeShellExecution", raw(2)).decision, "deny");
    assert.equal(verdict("cursor", "PreToolUse", "beforeShellExecution", raw(0, "garbage")).decision, "deny");
    assert.equal(verdict("cursor", "PreToolUse", "beforeShellExecution", raw(0, "")).decision, undefined);
    assert.deepEqual(
      verdict(
        "cursor",
        "UserPromptSubmit",
        "beforeSubmitPrompt",
        raw(0, JSON.stringify({ continue: false, user_message: "no" })),
      ),
      { decision: "block", reason: "no" },
    );
    assert.deepEqual(verdict("cursor", "Stop", "stop", raw(0, JSON.stringify({ followup_message: "run the tests" }))), {
      decision: "block",
      reason: "run the tests",
    });
    assert.equal(verdict("cursor", "PreToolUse", "preToolUse", raw(1)).error, "exit");
  });
});

describe("foreign hook files", () => {
  const dirs: string[] = [];
  after(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));
  async function project(files: Record<string, unknown>): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), "gatehouse-foreign-"));
    dirs.push(dir);
    for (const [name, content] of Object.entries(files)) {
      await mkdir(join(dir, name, ".."), { recursive: true });
      await writeFile(join(dir, name), JSON.stringify(content));
    }
    return dir;
  }

  test("events map onto runtime points (AfterTool on two), names with none are warnings, Cursor needs version 1", async () => {
    const dir = await project({
      ".gemini/settings.json": {
        hooksConfig: { disabled: ["muted"] },
        hooks: {
          AfterTool: [{ hooks: [{ type: "command", command: "true" }] }],
          BeforeAgent: [{ hooks: [{ type: "command", command: "false", name: "muted" }] }],
          BeforeModel: [{ hooks: [{ type: "command", command: "true" }] }],
          Typo: [],
        },
      },
      ".cursor/hooks.json": { hooks: { beforeReadFile: [{ command: "true", failClosed: true }] } },
    });
    const loaded = loadCommandHookSources({ projectDir: dir, homeDir: join(dir, "home"), gemini: true, cursor: true });
    assert.deepEqual(
      loaded.handlers.map((h) => [h.dialect, h.nativeEvent, h.event, h.tools ?? null, h.onFailure]),
      [
        ["gemini", "AfterTool", "PostToolUse", null, "continue"],
        ["gemini", "AfterTool", "PostToolUseFailure", null, "continue"],
        ["cursor", "beforeReadFile", "PreToolUse", ["Read"], "block"],
      ],
    );
    assert.deepEqual(
      loaded.diagnostics.map((d) => `${d.level} ${d.path}`),
      ["warning hooks.BeforeModel", "warning hooks.Typo", "error version"],
    );
  });

  test("a foreign matcher is tested against the tool's name in that dialect; Cursor's shell event only sees Bash", async () => {
    const dir = await project({
      ".gemini/settings.json": {
        hooks: { BeforeTool: [{ matcher: "run_shell", hooks: [{ type: "command", command: "true" }] }] },
      },
      ".cursor/hooks.json": { version: 1, hooks: { beforeShellExecution: [{ command: "true" }] } },
      ".codex/hooks.json": {
        hooks: { PreToolUse: [{ matcher: "Edit", hooks: [{ type: "command", command: "true" }] }] },
      },
    });
    const { handlers } = loadCommandHookSources({
      projectDir: dir,
      homeDir: join(dir, "home"),
      gemini: true,
      codex: true,
      cursor: true,
    });
    const selected = (tool: string) =>
      selectHandlers("PreToolUse", tool, { tool_name: tool }, handlers, dir).map((h) => h.dialect);
    assert.deepEqual(selected("Bash"), ["gemini", "cursor"]);
    // Codex names Write and Edit apply_patch; its matchers also try the Gatehouse name.
    assert.deepEqual(selected("Edit"), ["codex"]);
    assert.deepEqual(selected("Read"), []);
  });
});
