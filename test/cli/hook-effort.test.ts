// Claude Code's `effort: { level }` input field and CLAUDE_EFFORT (docs/command-hooks.md): the tool
// events carry gatehouse.json's model.reasoningEffort; the others do not; unset, neither is sent.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { gatehouse, tempProjects } from "./helpers.js";

const SCRIPT = {
  runs: [{ turns: [{ toolCalls: [{ name: "Bash", input: { command: "true" } }] }, { text: "done" }] }],
};
const record = (name: string) => ({
  hooks: [
    {
      type: "command",
      command: `{ cat; echo; echo "env=\${CLAUDE_EFFORT-unset}"; } > "$CLAUDE_PROJECT_DIR/${name}"`,
    },
  ],
});
const HOOKS = { PreToolUse: [{ matcher: "Bash", ...record("pre") }], UserPromptSubmit: [record("prompt")] };

describe("effort in hook payloads", { concurrency: 2 }, () => {
  const fresh = tempProjects();
  const seen = async (cwd: string, name: string) => {
    const [json, env] = (await readFile(join(cwd, name), "utf8")).split("\n").filter((l) => l.trim() !== "");
    return { payload: JSON.parse(json as string) as { effort?: unknown }, env };
  };

  test("model.reasoningEffort reaches the tool events as effort.level and CLAUDE_EFFORT, not UserPromptSubmit", async () => {
    const cwd = await fresh({
      "s.json": SCRIPT,
      "gatehouse.json": {
        model: { spec: "scripted:s.json", reasoningEffort: "high" },
        permissions: { allow: ["Bash"] },
      },
      ".claude/settings.json": { hooks: HOOKS },
    });
    const r = await gatehouse(["run", "-p", "go"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    const pre = await seen(cwd, "pre");
    assert.deepEqual(pre.payload.effort, { level: "high" });
    assert.equal(pre.env, "env=high");
    const prompt = await seen(cwd, "prompt");
    assert.equal(prompt.payload.effort, undefined);
  });

  test("without reasoningEffort no effort is sent", async () => {
    const cwd = await fresh({
      "s.json": SCRIPT,
      "gatehouse.json": { model: "scripted:s.json", permissions: { allow: ["Bash"] } },
      ".claude/settings.json": { hooks: HOOKS },
    });
    const r = await gatehouse(["run", "-p", "go"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    const pre = await seen(cwd, "pre");
    assert.equal(pre.payload.effort, undefined);
    assert.equal(pre.env, "env=unset");
  });
});
