import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { z } from "zod";
import { createCommandHooksPlugin } from "../../src/command-hooks/plugin.js";
import type { Tool } from "../../src/tools/types.js";
import { hook, tempDir } from "../command-hooks/helpers.js";
import { plugin, testGatehouse } from "./helpers.js";

/** A hook answering every event with additional context (UserPromptSubmit, PreToolUse keep it per run). */
function contextHook(dir: string, event: "UserPromptSubmit" | "PreToolUse") {
  const script = join(dir, `${event}.mjs`);
  writeFileSync(
    script,
    `process.stdout.write(JSON.stringify({ hookSpecificOutput: { hookEventName: ${JSON.stringify(event)}, additionalContext: "ctx" } }));`,
  );
  return hook({ type: "command", command: process.execPath, args: [script] }, { event });
}

describe("per-run and per-session state in a long-running process is let go when the run or session ends", () => {
  test("the command hooks' per-run context (UserPromptSubmit, PreToolUse) is held during the run and gone after it", async () => {
    const dir = tempDir();
    const store = { current: undefined as unknown };
    const hooks = createCommandHooksPlugin({
      handlers: [contextHook(dir, "UserPromptSubmit"), contextHook(dir, "PreToolUse")],
      store: () => store.current as never,
      projectDir: dir,
      env: { PATH: process.env.PATH },
    });
    let heldDuringTool = -1;
    const probe: Tool<{ text: string }, string> = {
      name: "Probe",
      description: "Looks at what the command hooks hold",
      inputSchema: z.object({ text: z.string() }),
      async execute() {
        heldDuringTool = hooks.runsHeld();
        return "ok";
      },
    };
    const t = testGatehouse(
      { runs: [{ turns: [{ toolCalls: [{ name: "Probe", input: { text: "x" } }] }, { text: "done" }] }] },
      { plugins: [hooks], tools: [probe as Tool] },
    );
    store.current = t.store;
    const result = await t.gatehouse.run({ prompt: "go" });
    await t.gatehouse.engine.drain();
    assert.equal(result.outcome, "completed");
    assert.equal(heldDuringTool, 1, "control: the run's context is held while it runs");
    assert.equal(hooks.runsHeld(), 0);
    assert.equal(t.gatehouse.retained().runs, 0);
    await t.gatehouse.close();
  });

  test("a session is remembered as opened until its session_end, then forgotten", async () => {
    const starts: string[] = [];
    const watcher = plugin("starts", (api) =>
      api.on("session_start", (e) => {
        starts.push(String(e.source));
      }),
    );
    const t = testGatehouse(
      { runs: [{ turns: [{ text: "a" }] }, { turns: [{ text: "b" }] }, { turns: [{ text: "c" }] }] },
      { plugins: [watcher] },
    );
    const first = await t.gatehouse.run({ prompt: "one" });
    await t.gatehouse.run({ prompt: "again", sessionId: first.sessionId });
    const second = await t.gatehouse.run({ prompt: "two" });
    assert.deepEqual(starts, ["startup", "startup"], "a session's later run is not a resume in the same process");
    assert.equal(t.gatehouse.retained().sessions, 2, "control: both sessions are held while they live");
    for (const { sessionId } of [first, second])
      await t.gatehouse.engine.emit("session_end", { sessionId, reason: "deleted" });
    assert.deepEqual(t.gatehouse.retained(), { sessions: 0, sessionEnv: 0, runs: 0 });
    await t.gatehouse.close();
  });

  test("what a run's listeners hold is garbage once the run is over, though a tool and the approver leave abort listeners on the signals they were given (as the MCP SDK does)", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const held: WeakRef<object>[] = [];
    let recording = false;
    /** An abort listener nobody removes, holding something of this run. */
    const leaveListener = (signal: AbortSignal) => {
      const ofTheRun = { run: "x".repeat(1024) };
      if (recording) held.push(new WeakRef(ofTheRun));
      signal.addEventListener("abort", () => ofTheRun.run.length);
    };
    const bash: Tool<{ command: string }, string> = {
      name: "Bash",
      description: "runs a command",
      inputSchema: z.object({ command: z.string() }),
      async execute({ command }, ctx) {
        leaveListener(ctx.signal);
        return `ran ${command}`;
      },
    };
    const oneCall = { turns: [{ toolCalls: [{ name: "Bash", input: { command: "touch made" } }] }, { text: "done" }] };
    const t = testGatehouse(
      { runs: [oneCall, oneCall, oneCall] },
      {
        tools: [bash as Tool],
        approver: async (_request, signal) => {
          leaveListener(signal);
          return "allow-once";
        },
      },
    );
    // The caller's signal lives on (a server's, a chat's): the run must not stay reachable from it.
    const caller = new AbortController();
    // The run before loads what is loaded once (the shell reader), and the run after takes over
    // what holds the latest run only (the store's write queue): the middle run is the one looked at.
    await t.gatehouse.run({ prompt: "before", signal: caller.signal });
    recording = true;
    const result = await t.gatehouse.run({ prompt: "go", signal: caller.signal });
    recording = false;
    await t.gatehouse.run({ prompt: "after", signal: caller.signal });
    await t.gatehouse.engine.drain();
    assert.equal(result.outcome, "completed");
    assert.equal(held.length, 2, "control: the tool ran and the approver was asked");
    // The test's model spy keeps each call's options, the run's signal among them.
    t.calls.length = 0;
    for (let i = 0; i < 10 && held.some((r) => r.deref() !== undefined); i++) {
      await new Promise((resolve) => setImmediate(resolve));
      gc();
    }
    assert.deepEqual(
      held.map((r) => r.deref() === undefined),
      [true, true],
      "the approver's and the tool's listeners hold nothing of the run any more",
    );
    await t.gatehouse.close();
  });
});
