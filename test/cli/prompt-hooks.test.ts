// Claude Code's `prompt` handler: a model answers {ok, reason}. On PreToolUse `ok: false` denies
// the call and, as in Claude Code, ends the turn (the reason is the user's notice); with
// `continueOnBlock` the model reads the reason as the tool's error and the turn goes on. The
// hook's own model call is not a run: it fires no hook and is not stored.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { gatehouse, tempProjects } from "./helpers.js";

// Tools ask in default mode and nobody can answer here (docs/permissions.md): a rule lets them run.
const ALLOW_ALL = { allow: ["Bash", "Write", "Edit", "MultiEdit", "NotebookEdit", "WebFetch", "Agent"] };

const REASON = "deleting files is not allowed here";

/** The evaluator's call matches the first run (its prompt starts with the handler's text); the agent's, the second. */
const SCRIPT = {
  runs: [
    {
      match: "^Refuse commands that delete files",
      turns: [{ text: `\`\`\`json\n{"ok": false, "reason": "${REASON}"}\n\`\`\`` }],
    },
    {
      turns: [
        { toolCalls: [{ name: "Bash", input: { command: "rm -f keep.txt && touch ran" } }] },
        { text: "tool said: {{lastToolResult}}" },
      ],
    },
  ],
};

const promptHook = (extra: object = {}) => ({
  type: "prompt",
  prompt: "Refuse commands that delete files. The call: $ARGUMENTS",
  ...extra,
});

describe("prompt hooks are evaluated by a model", { concurrency: 2 }, () => {
  const fresh = tempProjects();
  const project = (hook: object) =>
    fresh({
      "s.json": SCRIPT,
      "keep.txt": "kept",
      "gatehouse.json": {
        model: "scripted:s.json",
        hooks: { PreToolUse: [{ matcher: "Bash", hooks: [hook] }] },
        permissions: ALLOW_ALL,
      },
    });

  test("ok:false on PreToolUse denies the call and ends the turn with the reason as the notice", async () => {
    const cwd = await project(promptHook());
    const r = await gatehouse(["run", "--json", "-p", "clean up"], { cwd });
    assert.equal(r.code, 3, r.stderr);
    const result = JSON.parse(r.stdout) as { outcome: string; reply: string; steps: number };
    assert.deepEqual([result.outcome, result.reply, result.steps], ["blocked", REASON, 1]);
    assert.equal(existsSync(join(cwd, "ran")), false);
    assert.equal(existsSync(join(cwd, "keep.txt")), true);
  });

  test("with continueOnBlock the model reads the reason as the tool's error and the turn goes on", async () => {
    const cwd = await project(promptHook({ continueOnBlock: true }));
    const r = await gatehouse(["run", "-p", "clean up"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^tool said: .*${REASON}`));
    assert.equal(existsSync(join(cwd, "ran")), false);
  });

  test("hooks check accepts a prompt handler; a model that cannot answer fails open unless onFailure says block", async () => {
    const cwd = await project(promptHook({ model: "scripted:missing.json" }));
    const check = await gatehouse(["hooks", "check"], { cwd });
    assert.equal(check.code, 0, check.stdout);
    assert.doesNotMatch(check.stdout, /not supported/);
    const open = await gatehouse(["run", "-p", "clean up"], { cwd });
    assert.equal(open.code, 0, open.stderr);
    assert.equal(existsSync(join(cwd, "ran")), true, "fails open, as in Claude Code");
    const closedCwd = await project(promptHook({ model: "scripted:missing.json", onFailure: "block" }));
    const closed = await gatehouse(["run", "-p", "clean up"], { cwd: closedCwd });
    assert.equal(closed.code, 0, closed.stderr);
    assert.equal(existsSync(join(closedCwd, "ran")), false, "a guard set to fail closed blocks");
  });

  test("hooks test evaluates prompt and agent handlers with the project's model, as a run would", async () => {
    const cwd = await project(promptHook());
    const r = await gatehouse(["hooks", "test", "PreToolUse", "--json", "--input", "-"], {
      cwd,
      input: JSON.stringify({ tool_input: { command: "rm -rf keep.txt" } }),
    });
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as { merged: { decision?: string; reason?: string } };
    assert.deepEqual([report.merged.decision, report.merged.reason], ["deny", REASON]);
    assert.equal(existsSync(join(cwd, "keep.txt")), true, "nothing ran: only the hook was evaluated");
  });
});
