import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, test } from "node:test";
import type { CommandHookEvent } from "../../src/command-hooks/events.js";
import { runCommandHandler } from "../../src/command-hooks/executor.js";
import { HOOK_BLOCK_REASON, NO_DECISION_BLOCK_REASON } from "../../src/command-hooks/verdict.js";
import { execHook, execOptions, hook, inputFor, shellHook, tempDir } from "./helpers.js";

/**
 * A block reason reaches the user or the model. It must be the hook's own words (JSON reason
 * or stderr) or a fixed text: never the hook's command line, never "failed".
 */

const dir = tempDir();
const BLOCKING_EVENTS: CommandHookEvent[] = [
  "PreToolUse",
  "PermissionRequest",
  "UserPromptSubmit",
  "PostToolUse",
  "PreCompact",
];

function assertSafe(reason: string | undefined, commandLine: string) {
  assert.ok(reason, "a block has a reason");
  assert.equal(reason.includes(commandLine), false, `reason "${reason}" contains the command line`);
  assert.doesNotMatch(reason, /failed/i);
}

const missingScript = `"${join(dir, "hooks/guard-missing.sh")}" --strict`;
const CASES = [
  {
    name: "a missing script (exit 127 from sh)",
    make: (e: CommandHookEvent) => shellHook(missingScript, { event: e, onFailure: "block" }),
    line: missingScript,
  },
  {
    name: "a program that cannot be spawned",
    make: (e: CommandHookEvent) =>
      hook({ type: "command", command: join(dir, "nope"), args: ["--x"] }, { event: e, onFailure: "block" }),
    line: `${join(dir, "nope")} --x`,
  },
  {
    name: "a timeout",
    make: (e: CommandHookEvent) =>
      shellHook("exec sleep 30 # guard-timeout", { event: e, onFailure: "block", timeout: 0.2 }),
    line: "exec sleep 30 # guard-timeout",
  },
  {
    name: "unparseable output",
    make: (e: CommandHookEvent) => shellHook("echo '{not json' # guard-json", { event: e, onFailure: "block" }),
    line: "echo '{not json' # guard-json",
  },
  {
    name: "stderr that echoes the command line",
    make: (e: CommandHookEvent) => shellHook("tr '\\0' ' ' < /proc/$$/cmdline >&2; exit 2", { event: e }),
    line: "tr '\\0' ' ' < /proc/$$/cmdline >&2; exit 2",
  },
  {
    name: "exit 2 with nothing on stderr",
    make: (e: CommandHookEvent) => shellHook("exit 2 # silent-guard", { event: e }),
    line: "exit 2 # silent-guard",
  },
];

describe("block reasons never show the command line or say failed", () => {
  for (const c of CASES) {
    test(`${c.name}: the block reason is a fixed, safe text on every blocking event`, async () => {
      for (const event of BLOCKING_EVENTS) {
        const o = await runCommandHandler(c.make(event), inputFor(event), execOptions(dir, { killGraceMs: 100 }));
        assert.ok(o.verdict.decision === "block" || o.verdict.decision === "deny", `${event} blocks`);
        assertSafe(o.verdict.reason, c.line);
        assert.ok([NO_DECISION_BLOCK_REASON, HOOK_BLOCK_REASON].includes(o.verdict.reason as string), o.verdict.reason);
      }
    });
  }

  test("a hook's own stderr is the reason when it blocks with exit 2", async () => {
    const o = await runCommandHandler(
      execHook("emit.sh", ["2", "", "  no secrets in commits\n"]),
      inputFor("PreToolUse"),
      execOptions(dir),
    );
    assert.equal(o.verdict.reason, "no secrets in commits");
  });

  test("with onFailure block, a guard's exit 1 uses its stderr, but not the shell's 'not found' text", async () => {
    const own = await runCommandHandler(
      execHook("emit.sh", ["1", "", "policy: no pushes on Friday"], { onFailure: "block" }),
      inputFor("PreToolUse"),
      execOptions(dir),
    );
    assert.equal(own.verdict.reason, "policy: no pushes on Friday");
    const shell = await runCommandHandler(
      shellHook("no-such-program-xyz", { onFailure: "block" }),
      inputFor("PreToolUse"),
      execOptions(dir),
    );
    assert.equal(shell.exitCode, 127);
    assert.equal(shell.verdict.reason, NO_DECISION_BLOCK_REASON);
  });

  test("the fixed texts themselves are safe", () => {
    for (const t of [NO_DECISION_BLOCK_REASON, HOOK_BLOCK_REASON]) assert.doesNotMatch(t, /failed/i);
  });
});
