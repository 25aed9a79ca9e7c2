// Claude Code's model aliases on prompt and agent hooks (`haiku`, `sonnet`, `opus`, `inherit`)
// resolve against the run's provider; a model that cannot be resolved fails as onFailure says,
// and `hooks check` warns about it.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { hookModelProblem, hookModelSpec } from "../../src/models/aliases.js";
import { gatehouse, tempProjects } from "./helpers.js";

describe("hook model aliases resolve against the run's provider", () => {
  test("anthropic: the ids Claude Code's aliases name, or its ANTHROPIC_DEFAULT_*_MODEL pin", () => {
    assert.equal(hookModelSpec("haiku", "anthropic", {}), "anthropic:claude-haiku-4-5");
    assert.equal(hookModelSpec("sonnet", "anthropic", {}), "anthropic:claude-sonnet-5");
    assert.equal(hookModelSpec("opus", "anthropic", {}), "anthropic:claude-opus-5");
    assert.equal(
      hookModelSpec("haiku", "anthropic", { ANTHROPIC_DEFAULT_HAIKU_MODEL: "claude-3-5-haiku-latest" }),
      "anthropic:claude-3-5-haiku-latest",
    );
  });

  test("other providers: an alias is the run's own model; inherit and no model always are", () => {
    for (const provider of ["openai", "openai-compatible", "scripted"])
      for (const alias of ["haiku", "sonnet", "opus", "inherit", undefined])
        assert.equal(hookModelSpec(alias, provider, {}), undefined, `${alias} under ${provider}`);
  });

  test("a bare id is the run provider's; a whole spec stays as written", () => {
    assert.equal(hookModelSpec("gpt-5-mini", "openai", {}), "openai:gpt-5-mini");
    assert.equal(hookModelSpec("anthropic:claude-haiku-4-5", "openai", {}), "anthropic:claude-haiku-4-5");
  });

  test("what cannot be resolved is named: an unknown provider, a missing script, no model at all", () => {
    assert.match(hookModelProblem("nope:x", "scripted:s.json", "/", {}) ?? "", /unknown provider 'nope'/);
    assert.match(
      hookModelProblem("claude-3-haiku", "scripted:s.json", "/", {}) ?? "",
      /script file that does not exist/,
    );
    assert.match(hookModelProblem("haiku", undefined, "/", {}) ?? "", /no model is configured/);
    assert.equal(hookModelProblem("haiku", "scripted:/nonexistent.json", "/", {}), undefined, "an alias inherits");
  });
});

/** The hook's evaluation matches the first run; the agent's turn the second. */
const SCRIPT = {
  runs: [
    { match: "^Refuse commands that delete files", turns: [{ text: '{"ok": false, "reason": "no deleting"}' }] },
    {
      turns: [
        { toolCalls: [{ name: "Bash", input: { command: "rm -f keep.txt && touch ran" } }] },
        { text: "tool said: {{lastToolResult}}" },
      ],
    },
  ],
};

describe("a prompt hook's model alias in a run", { concurrency: 2 }, () => {
  const fresh = tempProjects();
  const project = (hook: object) =>
    fresh({
      "s.json": SCRIPT,
      "keep.txt": "kept",
      "gatehouse.json": {
        model: "scripted:s.json",
        hooks: { PreToolUse: [{ matcher: "Bash", hooks: [hook] }] },
        permissions: { allow: ["Bash"] },
      },
    });
  const hook = (extra: object) => ({
    type: "prompt",
    prompt: "Refuse commands that delete files: $ARGUMENTS",
    ...extra,
  });

  test('model "haiku" under a scripted run is the run\'s model: it answers and its ok:false denies the call', async () => {
    const cwd = await project(hook({ model: "haiku", continueOnBlock: true }));
    const check = await gatehouse(["hooks", "check"], { cwd });
    assert.doesNotMatch(check.stdout + check.stderr, /model/);
    const r = await gatehouse(["run", "-p", "clean up"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /no deleting/);
    assert.equal(existsSync(join(cwd, "ran")), false);
  });

  test("a model that cannot be resolved: hooks check warns, and onFailure block refuses the call", async () => {
    const cwd = await project(hook({ model: "claude-3-haiku", onFailure: "block", continueOnBlock: true }));
    const check = await gatehouse(["hooks", "check"], { cwd });
    assert.match(
      check.stdout + check.stderr,
      /hooks\.PreToolUse\[0\]\.hooks\[0\]\.model.*"claude-3-haiku" \(scripted:claude-3-haiku .*\) names a script file that does not exist.*blocked/,
    );
    const r = await gatehouse(["run", "-p", "clean up"], { cwd });
    assert.equal(existsSync(join(cwd, "ran")), false, r.stdout + r.stderr);
    assert.equal(existsSync(join(cwd, "keep.txt")), true);
  });

  test('control: the same unresolvable model with onFailure "continue" lets the call run', async () => {
    const cwd = await project(hook({ model: "claude-3-haiku", continueOnBlock: true }));
    const r = await gatehouse(["run", "-p", "clean up"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(existsSync(join(cwd, "ran")), true);
  });
});
