// Tools that start in the background (the CLI's MCP servers, `lateTools`): a turn that calls no
// model never waits for them; the first model call does, and sees them; once they settled, later
// runs never wait again — even when the source failed.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Tool } from "../../src/tools/types.js";
import { echoTool, plugin, testGatehouse } from "./helpers.js";

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const SCRIPT = { runs: [{ turns: [{ text: "done" }] }] };
const late: Tool = { ...echoTool, name: "LateEcho" } as Tool;
const toolNames = (call: { tools?: readonly { name: string }[] } | undefined) => (call?.tools ?? []).map((t) => t.name);

describe("late tools", () => {
  test("a blocked prompt ends while they start; the first model call waits for them and offers them", async () => {
    const pending = deferred<readonly Tool[]>();
    const blocker = plugin("blocker", (api) => {
      api.on("before_agent_run", (e) =>
        e.prompt.includes("stop") ? { outcome: "block", reason: "r", message: "no" } : undefined,
      );
    });
    let waits = 0;
    const { gatehouse, calls } = testGatehouse(SCRIPT, {
      lateTools: pending.promise,
      onToolsWait: () => waits++,
      plugins: [{ plugin: blocker, hooks: { allowConversationAccess: true } }],
    });
    const blocked = await gatehouse.run({ prompt: "stop here" });
    assert.equal(blocked.outcome, "blocked", "ended without the late tools");
    let finished = false;
    const running = gatehouse.run({ prompt: "hello" }).then((r) => {
      finished = true;
      return r;
    });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(calls.length, 0, "no model call before the tools settled");
    assert.equal(waits, 1, "the wait was announced (the blocked prompt did not wait)");
    assert.equal(finished, false);
    pending.resolve([late]);
    assert.equal((await running).outcome, "completed");
    assert.ok(toolNames(calls[0]).includes("LateEcho"), "the late tool is in the first request");
    assert.ok(toolNames(calls[0]).includes("Echo"));
    assert.equal((await gatehouse.run({ prompt: "again" })).outcome, "completed");
    assert.equal(waits, 1, "a later run does not wait");
    await gatehouse.close();
  });

  test("a source that failed is logged once and not waited for by later runs", async () => {
    const pending = deferred<readonly Tool[]>();
    const { gatehouse, calls, logLines } = testGatehouse(SCRIPT, { lateTools: pending.promise });
    pending.reject(new Error("server hung"));
    assert.equal((await gatehouse.run({ prompt: "one" })).outcome, "completed");
    assert.equal((await gatehouse.run({ prompt: "two" })).outcome, "completed");
    assert.deepEqual(toolNames(calls[1]), ["Echo"]);
    assert.equal(logLines.filter((l) => l.includes("server hung")).length, 1);
    await gatehouse.close();
  });

  test("cancelling a run that waits for them ends it at once", async () => {
    const { gatehouse } = testGatehouse(SCRIPT, { lateTools: new Promise<readonly Tool[]>(() => {}) });
    const controller = new AbortController();
    const running = gatehouse.run({ prompt: "hi", signal: controller.signal });
    await new Promise((resolve) => setImmediate(resolve));
    controller.abort();
    assert.equal((await running).outcome, "cancelled");
    await gatehouse.close();
  });
});
