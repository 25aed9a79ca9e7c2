import assert from "node:assert/strict";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { messageText } from "../../src/core/message.js";
import type { ScriptInput } from "../../src/models/index.js";
import { notices } from "../../src/runtime/notices.js";
import { openMemoryStore, openStore } from "../../src/store/index.js";
import type { SessionStore } from "../../src/store/types.js";
import { filesContaining, tempDir } from "../store/helpers.js";
import { plugin, runCancelledOnceStarted, testGatehouse, waitingTool } from "./helpers.js";

// A run that ends cancelled or failed while an output gate has handlers never passed that gate:
// its output goes fail-closed, as crash recovery takes it, and its outcome stays.

const CANARY = "UNCHECKED-5c1e";

const gates = {
  before_response_emit: plugin("gate", (api) => api.on("before_response_emit", () => ({ block: true }))),
  message_sending: plugin("gate", (api) => api.on("message_sending", () => ({ cancel: true }))),
};

function endings() {
  const outcomes: string[] = [];
  const messages: string[] = [];
  const p = plugin("ends", (api) =>
    api.on("agent_end", (e) => {
      outcomes.push(e.outcome);
      messages.push(JSON.stringify(e.messages));
    }),
  );
  return { plugin: p, outcomes, messages };
}

const waitsForCancel: ScriptInput = {
  runs: [
    { match: "^hello$", turns: [{ text: "earlier answer" }] },
    { turns: [{ text: `thinking ${CANARY}`, toolCalls: [{ name: "Wait", input: { note: CANARY } }] }] },
  ],
};

describe("a cancelled or failed run under an output gate keeps none of its unchecked output", () => {
  const dir = tempDir("gatehouse-unchecked-");
  after(() => dir.remove());
  let n = 0;
  const sqlite = async () => {
    const data = join(dir.path, `case${n++}`);
    return { data, store: await openStore({ kind: "sqlite", path: join(data, "gatehouse.db") }) };
  };

  for (const [gate, gatePlugin] of Object.entries(gates)) {
    test(`cancelled during a tool call under ${gate}: prompt and a notice stay, not a byte of the model's text; outcome cancelled`, async () => {
      const { data, store } = await sqlite();
      const { tool, started } = waitingTool();
      const ends = endings();
      const { gatehouse } = testGatehouse(waitsForCancel, { store, tools: [tool], plugins: [gatePlugin, ends.plugin] });
      const earlier = await gatehouse.run({ prompt: "hello" });
      const result = await runCancelledOnceStarted(gatehouse, { prompt: "go", sessionId: earlier.sessionId }, started);
      assert.equal(result.outcome, "cancelled");
      assert.equal(result.reply, null);
      assert.deepEqual(ends.outcomes.at(-1), "cancelled");
      assert.doesNotMatch(ends.messages.at(-1) ?? "", new RegExp(CANARY), "agent_end sees the run as stored");
      assert.deepEqual(
        (await store.runMessages(result.runId)).map((m) => [m.role, messageText(m)]),
        [
          ["user", "go"],
          ["assistant", notices.cancelledUnchecked],
        ],
      );
      assert.equal((await store.getRun(result.runId))?.status, "cancelled");
      assert.equal((await store.runMessages(earlier.runId)).length, 2, "earlier history is untouched");
      assert.deepEqual(filesContaining(data, CANARY), [], "open");
      await store.close();
      assert.deepEqual(filesContaining(data, CANARY), [], "closed");
    });
  }

  test("a failed run (a provider error after a tool step) goes the same way, its outcome failed", async () => {
    const { data, store } = await sqlite();
    const ends = endings();
    const script: ScriptInput = {
      runs: [
        {
          turns: [
            { text: `step one ${CANARY}`, toolCalls: [{ name: "Echo", input: { text: CANARY } }] },
            { error: { message: "overloaded" } },
          ],
        },
      ],
    };
    const { gatehouse } = testGatehouse(script, { store, plugins: [gates.before_response_emit, ends.plugin] });
    const result = await gatehouse.run({ prompt: "go" });
    assert.equal(result.outcome, "failed");
    assert.match(result.error?.message ?? "", /overloaded/);
    assert.deepEqual(ends.outcomes, ["failed"]);
    assert.deepEqual(
      (await store.runMessages(result.runId)).map((m) => [m.role, messageText(m)]),
      [
        ["user", "go"],
        ["assistant", notices.failedUnchecked],
      ],
    );
    assert.equal((await store.getRun(result.runId))?.status, "failed");
    await store.close();
    assert.deepEqual(filesContaining(data, CANARY), []);
  });

  test("a sub-agent's run is emptied with its cancelled parent (its task was the parent's removed call); the child run stays cancelled", async () => {
    const { data, store } = await sqlite();
    const { tool, started } = waitingTool();
    const script: ScriptInput = {
      runs: [
        {
          match: "^child",
          turns: [{ text: `child ${CANARY}`, toolCalls: [{ name: "Wait", input: { note: "x" } }] }],
        },
        { turns: [{ toolCalls: [{ name: "Agent", input: { description: "d", prompt: "child task" } }] }] },
      ],
    };
    const { gatehouse } = testGatehouse(script, {
      store,
      tools: [tool],
      subagents: true,
      // Agent calls ask in default mode: a rule lets the sub-agent start.
      permissions: { allow: ["Agent"] },
      plugins: [gates.before_response_emit],
    });
    const result = await runCancelledOnceStarted(gatehouse, { prompt: "delegate" }, started);
    assert.equal(result.outcome, "cancelled");
    const [child] = await store.listSessions({ parentSessionId: result.sessionId });
    const [childRun] = await store.listRuns(child?.id as string);
    assert.equal(childRun?.status, "cancelled");
    assert.deepEqual((await store.runMessages(childRun?.id as string)).map(messageText), [notices.cancelledUnchecked]);
    assert.deepEqual((await store.runMessages(result.runId)).map(messageText), [
      "delegate",
      notices.cancelledUnchecked,
    ]);
    await store.close();
    assert.deepEqual(filesContaining(data, CANARY), []);
  });

  test("without an output gate a cancelled run keeps what it wrote, each open tool call answered", async () => {
    const { tool, started } = waitingTool();
    const { gatehouse, store } = testGatehouse(waitsForCancel, { tools: [tool] });
    const result = await runCancelledOnceStarted(gatehouse, { prompt: "go" }, started);
    assert.equal(result.outcome, "cancelled");
    const messages = await store.runMessages(result.runId);
    assert.match(messageText(messages[1] as never), new RegExp(CANARY));
    const results = messages.flatMap((m) => m.parts.filter((p) => p.type === "tool_result"));
    assert.equal(results.length, 1);
    assert.equal((await store.getRun(result.runId))?.status, "cancelled");
  });

  test("when the store cannot remove it, the run is left for recovery, which removes it at the next admission", async () => {
    const memory = openMemoryStore();
    let failBlocks = true;
    const flaky = new Proxy(memory, {
      get(target, key) {
        if (key === "blockRun" && failBlocks) return () => Promise.reject(new Error("disk full"));
        const value = Reflect.get(target, key, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    }) as SessionStore;
    const { tool, started } = waitingTool();
    const ends = endings();
    const { gatehouse } = testGatehouse(waitsForCancel, {
      store: flaky,
      tools: [tool],
      plugins: [gates.before_response_emit, ends.plugin],
    });
    const result = await runCancelledOnceStarted(gatehouse, { prompt: "go" }, started);
    assert.equal(result.outcome, "cancelled");
    assert.equal((await memory.getRun(result.runId))?.status, "running");
    assert.deepEqual(ends.outcomes, ["cancelled"]);
    assert.doesNotMatch(ends.messages[0] ?? "", new RegExp(CANARY), "agent_end is not handed the unchecked output");
    assert.match(ends.messages[0] ?? "", /"go"/);
    failBlocks = false;
    await gatehouse.run({ prompt: "hello", sessionId: result.sessionId });
    assert.doesNotMatch(JSON.stringify(await memory.runMessages(result.runId)), new RegExp(CANARY));
  });
});
