// Fail-closed where we promise it: a command hook that fails (here: answers nonsense) lets a tool
// call through by default (Claude Code's rule), blocks it under the project-wide
// commandHooks.onFailure "block", and a handler's own onFailure wins over that default.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { gatehouse, tempProjects } from "./helpers.js";

/** A guard that answers nonsense: exit 1 with text that is not JSON. */
const broken = (extra: object = {}) => ({ type: "command", command: "echo nonsense; exit 1", ...extra });

const project = (fresh: (files?: Record<string, unknown>) => Promise<string>, config: object, guard: object) =>
  fresh({
    "s.json": {
      runs: [{ turns: [{ toolCalls: [{ name: "Bash", input: { command: "touch ran" } }] }, { text: "done" }] }],
    },
    "gatehouse.json": {
      model: "scripted:s.json",
      // Bash asks in default mode and nobody can answer here: a rule lets the guard be what decides.
      permissions: { allow: ["Bash"] },
      ...config,
      hooks: { PreToolUse: [{ matcher: "Bash", hooks: [guard] }] },
    },
  });

describe("a failing guard: open by default, closed by commandHooks.onFailure", { concurrency: 3 }, () => {
  const fresh = tempProjects();

  for (const [name, config, guard, runs] of [
    ["no onFailure anywhere: fails open, the command runs", {}, broken(), true],
    [
      'commandHooks.onFailure "block": fails closed, the command never runs',
      { commandHooks: { onFailure: "block" } },
      broken(),
      false,
    ],
    [
      'the handler\'s own onFailure "continue" wins over the project default',
      { commandHooks: { onFailure: "block" } },
      broken({ onFailure: "continue" }),
      true,
    ],
  ] as const) {
    test(name, async () => {
      const cwd = await project(fresh, config, guard);
      const r = await gatehouse(["run", "-p", "go"], { cwd });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(existsSync(join(cwd, "ran")), runs);
    });
  }
});
