// `continue: false` from a PreToolUse or PostToolUse hook stops the agent, as in Claude Code:
// no further model call, the run ends blocked (exit 3) and the user is shown the hook's
// stopReason, which the model never reads (it is not stored).
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { gatehouse, tempProjects } from "./helpers.js";

// Tools ask in default mode and nobody can answer here (docs/permissions.md): a rule lets them run.
const ALLOW_ALL = { allow: ["Bash", "Write", "Edit", "MultiEdit", "NotebookEdit", "WebFetch", "Agent"] };

const STOP_REASON = "Deploys are frozen until Monday";
const stopHook = { type: "command", command: `echo '{"continue": false, "stopReason": "${STOP_REASON}"}'` };

/** Two Bash calls in one step, then an answer the model must never get to give. */
const SCRIPT = {
  runs: [
    {
      turns: [
        {
          toolCalls: [
            { name: "Bash", input: { command: "touch first" } },
            { name: "Bash", input: { command: "touch second" } },
          ],
        },
        { text: "the model went on" },
      ],
    },
  ],
};

interface RunJson {
  outcome: string;
  reply: string | null;
  steps: number;
  blockedBy?: { pluginId: string; hook: string; category?: string };
}

interface AuditRecord {
  hook: string;
  pluginId: string;
  outcome: string;
  category: string | null;
}

/** Every byte the store wrote, to prove the stop reason is not in it. */
function storeBytes(dir: string): string {
  const root = join(dir, ".gatehouse");
  if (!existsSync(root)) return "";
  const all = readdirSync(root, { recursive: true, withFileTypes: true });
  return all
    .filter((e) => e.isFile())
    .map((e) => readFileSync(join(e.parentPath, e.name), "latin1"))
    .join("");
}

describe("continue: false from a tool hook stops the agent", { concurrency: 2 }, () => {
  const fresh = tempProjects();
  const project = (event: string) =>
    fresh({
      "s.json": SCRIPT,
      "gatehouse.json": {
        model: "scripted:s.json",
        hooks: { [event]: [{ matcher: "Bash", hooks: [stopHook] }] },
        permissions: ALLOW_ALL,
      },
    });

  test("PreToolUse: the call and the rest of the step do not run; the user reads stopReason; exit 3", async () => {
    const cwd = await project("PreToolUse");
    const r = await gatehouse(["run", "-p", "deploy"], { cwd });
    assert.equal(r.code, 3, r.stderr);
    assert.equal(r.stdout, `${STOP_REASON}\n`);
    assert.equal(existsSync(join(cwd, "first")), false);
    assert.equal(existsSync(join(cwd, "second")), false);
    const json = await gatehouse(["run", "--json", "-p", "deploy"], { cwd });
    const result = JSON.parse(json.stdout) as RunJson;
    assert.equal(result.outcome, "blocked");
    assert.equal(result.steps, 1, "no model call after the stop");
    assert.deepEqual(result.blockedBy, { pluginId: "command-hooks", hook: "before_tool_call", category: "stop" });
    assert.equal(storeBytes(cwd).includes(STOP_REASON), false, "stopReason is for the user, not the model");
    // Audited like any verdict: who stopped the run, never why.
    const audit = JSON.parse((await gatehouse(["audit", "--json"], { cwd })).stdout) as AuditRecord[];
    assert.ok(
      audit.some((a) => a.hook === "before_tool_call" && a.pluginId === "command-hooks" && a.category === "stop"),
      JSON.stringify(audit),
    );
  });

  test("PostToolUse: the call ran and its output stays; the next call and model step do not happen", async () => {
    const cwd = await project("PostToolUse");
    const r = await gatehouse(["run", "--json", "-p", "deploy"], { cwd });
    assert.equal(r.code, 3, r.stderr);
    const result = JSON.parse(r.stdout) as RunJson;
    assert.equal(result.reply, STOP_REASON);
    assert.equal(result.steps, 1);
    assert.equal(result.blockedBy?.hook, "after_tool_call");
    assert.equal(existsSync(join(cwd, "first")), true);
    assert.equal(existsSync(join(cwd, "second")), false, "Bash calls run one at a time; the second never starts");
    assert.equal(storeBytes(cwd).includes(STOP_REASON), false);
  });
});
