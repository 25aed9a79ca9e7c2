// Settings Claude Code accepts start Gatehouse: fields it does not know are ignored with a
// warning, and a handler whose program is missing fails at run time under its own onFailure
// (a guard that fails closed still blocks).
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { gatehouse, tempProjects } from "./helpers.js";

// Tools ask in default mode and nobody can answer here (docs/permissions.md): a rule lets them run.
const ALLOW_ALL = { allow: ["Bash", "Write", "Edit", "MultiEdit", "NotebookEdit", "WebFetch", "Agent"] };

/** One Bash call that leaves a file behind if it runs. */
const SCRIPT = {
  runs: [{ turns: [{ toolCalls: [{ name: "Bash", input: { command: "touch ran" } }] }, { text: "done" }] }],
};

/** As READMEs write them: a macOS notifier, fields from a newer Claude Code, a linter not yet installed. */
const settings = (guard: object) => ({
  hooks: {
    Stop: [{ hooks: [{ type: "command", command: "afplay /System/Library/Sounds/Glass.aiff" }] }],
    PreToolUse: [
      {
        matcher: "Bash",
        description: "a field Claude Code may add one day",
        hooks: [{ type: "command", command: "no-such-linter --check", statusMessage: "linting", ...guard }],
      },
    ],
  },
});

describe("settings Claude Code accepts do not stop Gatehouse", { concurrency: 3 }, () => {
  const fresh = tempProjects();
  const project = (guard: object) =>
    fresh({
      "s.json": SCRIPT,
      "gatehouse.json": { model: "scripted:s.json", permissions: ALLOW_ALL },
      ".claude/settings.json": settings(guard),
    });

  test("run: one warning line, the run goes on, and a missing guard program fails open by default", async () => {
    const cwd = await project({ futureFlag: true });
    const r = await gatehouse(["run", "-p", "go"], { cwd, env: { HOME: join(cwd, "home") } });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "done\n");
    const warnings = r.stderr.split("\n").filter((l) => /^gatehouse: warning: /.test(l));
    assert.equal(warnings.length, 1, r.stderr);
    assert.match(warnings[0] ?? "", /\(and 3 more\); `gatehouse hooks check` lists them$/);
    assert.equal(existsSync(join(cwd, "ran")), true, "the missing program is a non-blocking error");
  });

  test('a guard whose program is missing blocks the call under onFailure "block"', async () => {
    const cwd = await project({ onFailure: "block" });
    const r = await gatehouse(["run", "-p", "go"], { cwd, env: { HOME: join(cwd, "home") } });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(existsSync(join(cwd, "ran")), false, "fail-closed guard still blocks");
  });

  test("hooks check lists each ignored field and missing program as a warning and exits 0", async () => {
    const cwd = await project({ futureFlag: true });
    const r = await gatehouse(["hooks", "check"], { cwd, env: { HOME: join(cwd, "home") } });
    assert.equal(r.code, 0, r.stdout);
    const at = ".claude/settings.json";
    for (const line of [
      `warning: ${at}:8:13: hooks.Stop[0].hooks[0].command: program "afplay" was not found on PATH`,
      `warning: ${at}:16:9: hooks.PreToolUse[0].description: unknown field "description" in a matcher group is ignored`,
      `warning: ${at}:22:13: hooks.PreToolUse[0].hooks[0].futureFlag: unknown field "futureFlag" for a command handler is ignored`,
      `warning: ${at}:20:13: hooks.PreToolUse[0].hooks[0].command: program "no-such-linter" was not found on PATH`,
    ])
      assert.ok(r.stdout.includes(line), `${line}\n---\n${r.stdout}`);
    assert.match(r.stdout, /^0 errors, 4 warnings; 2 handlers/m);
  });
});
