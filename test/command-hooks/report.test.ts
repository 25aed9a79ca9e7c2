import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { z } from "zod";
import type { ScriptInput } from "../../src/models/index.js";
import type { Tool } from "../../src/tools/types.js";
import { gatehouse as cli, tempProjects } from "../cli/helpers.js";
import { promptText, testGatehouse } from "../runtime/helpers.js";
import { fixture, tempDir } from "./helpers.js";

/**
 * What the log (and so the CLI's stderr) says about command hooks during real runs: one line
 * per handler that gave no usable answer or overflowed its output cap, with event, source and
 * JSON path but none of the hook's output or its command line; and the words a hook meant for
 * the user (systemMessage, user-bound stderr feedback).
 */

const SECRET = /SECRET/;
const toolTurn: ScriptInput = {
  runs: [{ turns: [{ toolCalls: [{ name: "Probe", input: { text: "x" } }] }, { text: "done" }] }],
};

async function runWith(hooks: Record<string, unknown>, script: ScriptInput = toolTurn) {
  const dir = tempDir();
  let probeRuns = 0;
  const probe: Tool<{ text: string }, string> = {
    name: "Probe",
    description: "Returns a marker",
    inputSchema: z.object({ text: z.string() }),
    async execute() {
      probeRuns++;
      return "PROBE-OUTPUT";
    },
  };
  const t = testGatehouse(script, {
    tools: [probe as Tool],
    env: { PATH: process.env.PATH },
    config: { cwd: dir },
    // Load-time checks (a missing program) are `hooks check`'s; this file is about run time.
    commandHooks: { load: { homeDir: dir, cliSettings: JSON.stringify({ hooks }), checkPrograms: false } },
  });
  try {
    const result = await t.gatehouse.run({ prompt: "go" });
    return { result, probeRuns, logs: t.logLines, prompts: t.calls.map(promptText) };
  } finally {
    await t.gatehouse.close();
  }
}

const sh = (command: string, extra: Record<string, unknown> = {}) => ({ type: "command", command, ...extra });

describe("command-hook failures in the log", () => {
  test("each failing handler is one line: event, source, JSON path and how it ended — no output, no command line", async () => {
    const r = await runWith({
      PreToolUse: [
        {
          hooks: [
            sh("echo STDOUT-SECRET; echo STDERR-SECRET >&2; exit 1 # COMMAND-SECRET"),
            { type: "command", command: "/nonexistent/COMMAND-SECRET", args: ["--flag"] },
            sh("echo '{not json STDOUT-SECRET' # COMMAND-SECRET"),
            sh("sleep 30 # COMMAND-SECRET", { timeout: 0.2 }),
          ],
        },
      ],
    });
    assert.equal(r.result.outcome, "completed");
    assert.equal(r.probeRuns, 1, "failures give no decision: the call runs");
    const where = (i: number) => `warn [command-hooks] PreToolUse hook (cli, hooks.PreToolUse[0].hooks[${i}])`;
    assert.deepEqual(r.logs, [
      `${where(0)} exited with code 1: no decision`,
      `${where(1)} could not start (ENOENT): no decision`,
      `${where(2)} printed output that is not a valid JSON answer: no decision`,
      `${where(3)} timed out after 0.2 s: no decision`,
    ]);
    for (const l of r.logs) assert.doesNotMatch(l, SECRET);
  });

  test('under onFailure "block" the line says the failure blocked', async () => {
    const r = await runWith({ PreToolUse: [{ hooks: [sh("exit 1", { onFailure: "block" })] }] });
    assert.equal(r.probeRuns, 0);
    assert.deepEqual(r.logs, [
      "warn [command-hooks] PreToolUse hook (cli, hooks.PreToolUse[0].hooks[0]) exited with code 1: blocked (onFailure: block)",
    ]);
  });

  test("output over the 1 MiB cap is one line with the bytes dropped, and nothing of the output", async () => {
    const r = await runWith({
      PreToolUse: [{ hooks: [{ type: "command", command: fixture("flood.js"), args: ["2"] }] }],
    });
    assert.equal(r.probeRuns, 1);
    assert.deepEqual(r.logs, [
      `warn [command-hooks] PreToolUse hook (cli, hooks.PreToolUse[0].hooks[0]) wrote more than the output cap; ${2 * 1024 * 1024} bytes dropped`,
    ]);
  });

  test("a hook that answers is not logged at all", async () => {
    const r = await runWith({ PreToolUse: [{ hooks: [sh("echo fine >&2; exit 0")] }] });
    assert.deepEqual(r.logs, []);
  });
});

describe("what a hook tells the user", () => {
  test("a systemMessage and Claude Code exit-2 stderr on an event that cannot block are warnings; the model sees neither", async () => {
    const r = await runWith(
      {
        SessionStart: [{ hooks: [sh("echo 'the index is stale' >&2; exit 2")] }],
        UserPromptSubmit: [{ hooks: [sh(`echo '{"systemMessage":"this project logs prompts"}'`)] }],
      },
      { runs: [{ turns: [{ text: "ok" }] }] },
    );
    assert.equal(r.result.reply, "ok");
    assert.deepEqual(r.logs, [
      "warn [command-hooks] SessionStart hook (cli): the index is stale",
      "warn [command-hooks] UserPromptSubmit hook (cli): this project logs prompts",
    ]);
    for (const p of r.prompts) assert.doesNotMatch(p, /stale|logs prompts/);
  });

  test("Code Puppy exit 2 is fed back to the agent: the model sees it next to the result, the user is not told", async () => {
    const dir = tempDir();
    const t = testGatehouse(
      { runs: [{ turns: [{ toolCalls: [{ name: "Echo", input: { text: "hi" } }] }, { text: "done" }] }] },
      {
        env: { PATH: process.env.PATH },
        config: { cwd: dir },
        commandHooks: {
          load: {
            homeDir: dir,
            dialects: { cli: "code-puppy" },
            cliSettings: JSON.stringify({
              hooks: { PreToolUse: [{ hooks: [sh("echo 'prefer rg over grep' >&2; exit 2")] }] },
            }),
          },
        },
      },
    );
    try {
      const result = await t.gatehouse.run({ prompt: "go" });
      assert.equal(result.outcome, "completed");
      const afterTool = promptText(t.calls[1] as (typeof t.calls)[number]);
      assert.match(afterTool, /echoed/, "the call ran");
      assert.match(afterTool, /prefer rg over grep/);
      assert.deepEqual(t.logLines, []);
    } finally {
      await t.gatehouse.close();
    }
  });

  test("words that repeat the hook's own command line are never shown", async () => {
    const r = await runWith(
      { SessionStart: [{ hooks: [sh(`bash ${fixture("names-itself.sh")}`)] }] },
      { runs: [{ turns: [{ text: "ok" }] }] },
    );
    assert.equal(r.result.reply, "ok");
    assert.deepEqual(r.logs, []);
  });
});

describe("gatehouse run prints hook warnings on stderr", () => {
  const fresh = tempProjects();

  test("systemMessage and a failing hook reach stderr; the reply alone is on stdout", async () => {
    const hooks = {
      UserPromptSubmit: [{ hooks: [sh(`echo '{"systemMessage":"prompts here are audited"}'`)] }],
      Stop: [{ hooks: [sh("sh ./stop-guard.sh")] }],
    };
    const cwd = await fresh({
      "stop-guard.sh": "cat >/dev/null\necho 'STDERR-SECRET' >&2\nexit 1\n",
      "gatehouse.json": { model: "scripted:echo", hooks },
    });
    const r = await cli(["run", "-p", "hello there"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "hello there\n");
    assert.match(
      r.stderr,
      /^gatehouse: \[command-hooks\] UserPromptSubmit hook \(config\): prompts here are audited$/m,
    );
    assert.match(
      r.stderr,
      /^gatehouse: \[command-hooks\] Stop hook \(config, hooks\.Stop\[0\]\.hooks\[0\]\) exited with code 1: no decision$/m,
    );
    assert.doesNotMatch(r.stderr, /SECRET|stop-guard/);
  });
});
