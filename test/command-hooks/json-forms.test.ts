import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { CommandHookEvent } from "../../src/command-hooks/events.js";
import { runCommandHandler } from "../../src/command-hooks/executor.js";
import type { NormalizedVerdict } from "../../src/command-hooks/verdict.js";
import { NO_DECISION_BLOCK_REASON } from "../../src/command-hooks/verdict.js";
import { execHook, execOptions, inputFor, tempDir } from "./helpers.js";

const project = tempDir();

async function answer(form: string, event: CommandHookEvent, extra: Parameters<typeof execHook>[2] = {}) {
  const outcome = await runCommandHandler(
    execHook("respond.js", [form], { event, ...extra }),
    inputFor(event, { tool_input: { command: "make" } }),
    execOptions(project),
  );
  const { errorDetail: _d, ...verdict } = outcome.verdict;
  return verdict as NormalizedVerdict;
}

describe("Claude Code JSON output forms (node fixture)", () => {
  test("PreToolUse permissionDecision allow, deny and ask carry their reasons", async () => {
    assert.deepEqual(await answer("allow", "PreToolUse"), { decision: "allow", reason: "fine" });
    assert.deepEqual(await answer("deny", "PreToolUse"), { decision: "deny", reason: "no Bash here" });
    assert.deepEqual(await answer("ask", "PreToolUse"), { decision: "ask", reason: "check with the user" });
  });

  test("PreToolUse updatedInput replaces the tool input", async () => {
    assert.deepEqual(await answer("rewrite", "PreToolUse"), {
      decision: "allow",
      updatedInput: { command: "make --dry-run" },
    });
  });

  test("legacy decision approve / block map to allow / deny on PreToolUse", async () => {
    assert.deepEqual(await answer("legacy-approve", "PreToolUse"), { decision: "allow", reason: "ok" });
    assert.deepEqual(await answer("legacy-block", "PreToolUse"), { decision: "deny", reason: "legacy says no" });
    assert.deepEqual(await answer("legacy-block", "PostToolUse"), { decision: "block", reason: "legacy says no" });
    assert.deepEqual(await answer("legacy-approve", "PostToolUse"), {}, "approve means nothing after the call");
  });

  test("additionalContext is kept where the event reads it and dropped where it does not", async () => {
    for (const e of ["PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit", "SessionStart"] as const) {
      assert.deepEqual(await answer("context", e), { additionalContext: `context for ${e}` }, e);
    }
    for (const e of ["Stop", "SubagentStop", "SubagentStart"] as const) {
      assert.deepEqual(await answer("context", e), { additionalContext: `context for ${e}` }, e);
    }
    for (const e of ["Notification", "SessionEnd", "PostCompact", "PreCompact"] as const) {
      assert.deepEqual(await answer("context", e), {}, e);
    }
  });

  test("PermissionRequest decision.behavior allows (with updatedInput) or denies with its message", async () => {
    assert.deepEqual(await answer("permission-allow", "PermissionRequest"), {
      decision: "allow",
      updatedInput: { command: "ls" },
    });
    assert.deepEqual(await answer("permission-deny", "PermissionRequest"), {
      decision: "deny",
      reason: "not this one",
    });
  });

  test("PostToolUse updatedToolOutput replaces the result; other events ignore it", async () => {
    assert.deepEqual(await answer("replace-output", "PostToolUse"), { updatedToolOutput: { stdout: "[redacted]" } });
    assert.deepEqual(await answer("replace-output", "PreToolUse"), {});
  });

  test("continue:false carries the stop reason, and systemMessage reaches the user", async () => {
    assert.deepEqual(await answer("stop", "UserPromptSubmit"), {
      continue: false,
      stopReason: "enough for today",
      systemMessage: "stopping",
    });
  });

  test("hookSpecificOutput for another event is unparseable: no decision, or a block with onFailure", async () => {
    assert.deepEqual(await answer("wrong-event", "PreToolUse"), { error: "unparseable" });
    assert.deepEqual(await answer("wrong-event", "PreToolUse", { onFailure: "block" }), {
      decision: "deny",
      reason: NO_DECISION_BLOCK_REASON,
      error: "unparseable",
    });
  });

  test("claude-2025 reads the same JSON on exit 0", async () => {
    assert.deepEqual(await answer("deny", "PreToolUse", { dialect: "claude-2025" }), {
      decision: "deny",
      reason: "no Bash here",
    });
  });
});

describe("a Python guard", () => {
  const run = (command: string) =>
    runCommandHandler(
      execHook("guard.py", []),
      inputFor("PreToolUse", { tool_input: { command } }),
      execOptions(project),
    );

  test("denies rm -rf with its own reason and stays silent otherwise", async () => {
    assert.deepEqual((await run("rm -rf /")).verdict, {
      decision: "deny",
      reason: "rm -rf is not allowed in this project",
    });
    assert.deepEqual((await run("ls")).verdict, {});
  });
});
