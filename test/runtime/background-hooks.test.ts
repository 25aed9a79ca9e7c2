// Claude Code's background hooks (`async: true`, `asyncRewake`; hooks.md "Run hooks in the
// background"): the run does not wait for them, the run's end kills them, and what they answer
// reaches the model's next call, never the user.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { z } from "zod";
import type { Tool } from "../../src/tools/types.js";
import { echoTool, promptText, testGatehouse } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "gatehouse-background-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Whether the process lives (a zombie waiting to be reaped does not). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

/** Resolves once `check` holds, looking again on each turn of the event loop's timers. */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** A tool that returns once `ready` settles: the step waits for an event, not for a time. */
function gate(ready: Promise<void>): Tool<Record<string, never>, string> {
  return {
    name: "Gate",
    description: "waits",
    inputSchema: z.object({}),
    execute: async () => {
      await ready;
      return "gate open";
    },
  };
}

const settings = (hooks: object[]) => JSON.stringify({ hooks: { PostToolUse: [{ matcher: "Echo", hooks }] } });

/** A background hook that would sleep ten minutes, and its process id once it started (else 0). */
function sleeper(name: string, timeout: number) {
  const pidFile = join(dir, `${name}.pid`);
  return {
    hook: { type: "command", command: `echo $$ > '${pidFile}'; exec sleep 600`, async: true, timeout },
    pid: () => (existsSync(pidFile) ? Number(readFileSync(pidFile, "utf8")) : 0),
  };
}

/** The run's options: these tools, and these hooks on PostToolUse for Echo. */
const withHooks = (tools: readonly Tool[] | undefined, hooks: object[]) => ({
  ...(tools ? { tools: [...tools] } : {}),
  config: { cwd: dir },
  commandHooks: { load: { homeDir: dir, cliSettings: settings(hooks) } },
});

/** Echo (whose PostToolUse starts the hooks), then Gate, then the reply. */
const echoThenGate = (reply: string) => ({
  runs: [
    {
      turns: [
        { toolCalls: [{ name: "Echo", input: { text: "x" } }] },
        { toolCalls: [{ name: "Gate", input: {} }] },
        { text: reply },
      ],
    },
  ],
});

describe("background command hooks", { timeout: 30_000 }, () => {
  test("an async hook that never ends on its own does not hold the run, and the run's end kills it", async () => {
    const forever = sleeper("forever", 600);
    const script = {
      runs: [{ turns: [{ toolCalls: [{ name: "Echo", input: { text: "x" } }] }, { text: "done" }] }],
    };
    const { gatehouse } = testGatehouse(script, withHooks(undefined, [forever.hook]));
    try {
      // The hook would take ten minutes: a run that waited for it would outlast the test.
      const result = await gatehouse.run({ prompt: "go" });
      assert.equal(result.outcome, "completed");
      assert.equal(result.reply, "done");
      const pid = forever.pid();
      assert.ok(pid > 0, "the hook started");
      await until(() => !alive(pid));
    } finally {
      await gatehouse.close();
    }
  });

  test("a background hook past its timeout is killed while the run goes on", async () => {
    const timed = sleeper("timed", 1);
    // The run's next step waits until the hook's process is gone: only its timeout can end it.
    const gone = until(() => timed.pid() > 0 && !alive(timed.pid()));
    const { gatehouse } = testGatehouse(
      echoThenGate("done"),
      withHooks([echoTool as Tool, gate(gone) as unknown as Tool], [timed.hook]),
    );
    try {
      const result = await gatehouse.run({ prompt: "go" });
      assert.equal(result.outcome, "completed");
      assert.equal(result.reply, "done");
    } finally {
      await gatehouse.close();
    }
  });

  test("a cancelled run kills its background hooks", async () => {
    const hook = sleeper("cancelled", 600);
    const controller = new AbortController();
    // Cancels the run once the hook's process runs, and waits for the cancellation.
    const cancel: Tool<Record<string, never>, string> = {
      name: "Gate",
      description: "cancels",
      inputSchema: z.object({}),
      execute: async (_input, ctx) => {
        await until(() => hook.pid() > 0 && alive(hook.pid()));
        controller.abort();
        ctx.signal.throwIfAborted();
        await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
        return "cancelled";
      },
    };
    const { gatehouse } = testGatehouse(
      echoThenGate("not reached"),
      withHooks([echoTool as Tool, cancel as unknown as Tool], [hook.hook]),
    );
    try {
      const result = await gatehouse.run({ prompt: "go", signal: controller.signal });
      assert.notEqual(result.outcome, "completed");
      await until(() => !alive(hook.pid()));
    } finally {
      await gatehouse.close();
    }
  });

  test("what background hooks answer reaches the model's next call, and their systemMessage is not shown", async () => {
    let finished = 0;
    let open!: () => void;
    const bothFinished = new Promise<void>((resolve) => {
      open = resolve;
    });
    const lines: string[] = [];
    const logger = {
      debug: (m: string) => {
        if (/background hook .* finished/.test(m) && ++finished === 2) open();
      },
      info: () => {},
      warn: (m: string) => lines.push(m),
      error: (m: string) => lines.push(m),
    };
    const answer = JSON.stringify({
      hookSpecificOutput: { hookEventName: "PostToolUse", additionalContext: "background context ALPHA" },
      systemMessage: "background note BETA",
    });
    const script = {
      runs: [
        {
          turns: [
            { toolCalls: [{ name: "Echo", input: { text: "x" } }] },
            { toolCalls: [{ name: "Gate", input: {} }] },
            { text: "done" },
          ],
        },
      ],
    };
    const { gatehouse, calls } = testGatehouse(script, {
      tools: [{ ...(await import("./helpers.js")).echoTool } as Tool, gate(bothFinished) as unknown as Tool],
      logger,
      config: { cwd: dir },
      commandHooks: {
        load: {
          homeDir: dir,
          cliSettings: settings([
            { type: "command", command: `printf '%s' '${answer}'`, async: true },
            { type: "command", command: "echo 'tests failed: GAMMA' >&2; exit 2", asyncRewake: true },
          ]),
        },
      },
    });
    try {
      const result = await gatehouse.run({ prompt: "go" });
      assert.equal(result.reply, "done");
      assert.equal(calls.length, 3);
      // The Gate step began after the Echo step's PostToolUse hooks were started, not finished: the
      // second call went out without their answers; the third (after both finished) has them.
      const third = promptText(calls[2] as (typeof calls)[number]);
      for (const said of ["ALPHA", "BETA", "GAMMA"]) assert.ok(third.includes(said), `${said} reaches the model`);
      assert.equal(
        lines.some((l) => /BETA|GAMMA/.test(l)),
        false,
        "nothing a background hook says is shown to the user",
      );
    } finally {
      await gatehouse.close();
    }
  });
});
