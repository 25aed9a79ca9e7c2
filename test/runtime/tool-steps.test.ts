import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { z } from "zod";
import { messageText, type Part } from "../../src/core/message.js";
import type { Tool } from "../../src/tools/types.js";
import { echoTool, heldTool, plugin, promptText, testGatehouse } from "./helpers.js";

const OUTPUT = "LOOKUP-OUTPUT-9d2";

/** A tool whose output appears nowhere in its input, so a leak of it is a leak of the result. */
const lookupTool: Tool<Record<string, never>, { value: string }> = {
  name: "Lookup",
  description: "looks something up",
  inputSchema: z.object({}),
  async execute() {
    return { value: OUTPUT };
  },
};

const lookUpThenAnswer = {
  runs: [{ turns: [{ text: "looking NOTE-71", toolCalls: [{ name: "Lookup", input: {} }] }, { text: "found it" }] }],
};

const toolResults = (parts: readonly Part[]) => parts.filter((p) => p.type === "tool_result");

describe('the persistence hooks at runtime (docs/lifecycle.md, "Whenever a message is stored")', () => {
  test("tool_result_persist rewrites a tool result before the store: the store and the model's next step see only the rewrite", async () => {
    const redact = plugin("redact", (api) =>
      api.on("tool_result_persist", (e) => ({
        message: {
          ...e.message,
          parts: e.message.parts.map((p) => (p.type === "tool_result" ? { ...p, output: { value: "[redacted]" } } : p)),
        },
      })),
    );
    const { gatehouse, store, calls } = testGatehouse(lookUpThenAnswer, { plugins: [redact], tools: [lookupTool] });
    const result = await gatehouse.run({ prompt: "q" });
    const stored = (await store.runMessages(result.runId)).flatMap((m) => toolResults(m.parts));
    assert.deepEqual(
      stored.map((p) => p.type === "tool_result" && p.output),
      [{ value: "[redacted]" }],
    );
    assert.equal(calls.length, 2);
    assert.match(promptText(calls[1] as never), /\[redacted\]/);
    assert.doesNotMatch(promptText(calls[1] as never), new RegExp(OUTPUT));
    assert.doesNotMatch(JSON.stringify(await store.sessionMessages(result.sessionId)), new RegExp(OUTPUT));
  });

  test("before_message_write may replace a message: the replacement is stored and is what the model sees next", async () => {
    const tidy = plugin("tidy", (api) =>
      api.on("before_message_write", (e) =>
        e.message.role === "assistant" && messageText(e.message).includes("NOTE-71")
          ? {
              message: {
                ...e.message,
                parts: e.message.parts.map((p) => (p.type === "text" ? { ...p, text: "looking" } : p)),
              },
            }
          : undefined,
      ),
    );
    const { gatehouse, store, calls } = testGatehouse(lookUpThenAnswer, { plugins: [tidy], tools: [lookupTool] });
    const result = await gatehouse.run({ prompt: "q" });
    assert.deepEqual(
      (await store.runMessages(result.runId)).map((m) => [m.role, messageText(m)]),
      [
        ["user", "q"],
        ["assistant", "looking"],
        ["tool", ""],
        ["assistant", "found it"],
      ],
    );
    assert.doesNotMatch(promptText(calls[1] as never), /NOTE-71/);
    assert.match(promptText(calls[1] as never), new RegExp(OUTPUT), "the tool call itself still stands");
  });

  test("before_message_write may block: a blocked tool result is stored as a policy notice the model then reads; a blocked text is not stored", async () => {
    const guard = plugin("guard", (api) =>
      api.on("before_message_write", (e) =>
        e.message.role === "tool" || messageText(e.message) === "found it" ? { block: true } : undefined,
      ),
    );
    const { gatehouse, store, calls } = testGatehouse(lookUpThenAnswer, { plugins: [guard], tools: [lookupTool] });
    const result = await gatehouse.run({ prompt: "q" });
    const messages = await store.runMessages(result.runId);
    assert.deepEqual(
      messages.map((m) => m.role),
      ["user", "assistant", "tool"],
    );
    const [answer] = toolResults(messages[2]?.parts ?? []);
    assert.ok(answer?.type === "tool_result" && answer.isError === true);
    assert.match(String(answer.output), /not stored by policy/);
    assert.match(promptText(calls[1] as never), /not stored by policy/);
    assert.doesNotMatch(promptText(calls[1] as never), new RegExp(OUTPUT));
    assert.doesNotMatch(JSON.stringify(messages), /found it/);
    assert.notEqual(result.reply, "found it");
  });

  test("a blocked result's replacement meets before_message_write again: blocked too, the call the run stored is answered by a fixed notice", async () => {
    let toolWrites = 0;
    const guard = plugin("guard", (api) =>
      api.on("before_message_write", (e) => {
        if (e.message.role !== "tool") return undefined;
        toolWrites++;
        return { block: true };
      }),
    );
    const { gatehouse, store } = testGatehouse(lookUpThenAnswer, { plugins: [guard], tools: [lookupTool] });
    const result = await gatehouse.run({ prompt: "q" });
    assert.equal(toolWrites, 2, "the result, then its replacement");
    const [answer] = toolResults((await store.runMessages(result.runId))[2]?.parts ?? []);
    assert.ok(answer?.type === "tool_result" && answer.toolName === "Lookup" && answer.isError === true);
    assert.match(String(answer.output), /not stored by policy/);
  });

  test("what before_message_write kept out reaches no later hook or event: after_tool_batch and the tool-result event see the result as stored", async () => {
    const batches: string[] = [];
    const guard = plugin("guard", (api) => {
      api.on("before_message_write", (e) => (JSON.stringify(e.message).includes(OUTPUT) ? { block: true } : undefined));
      api.on("after_tool_batch", (e) => void batches.push(JSON.stringify(e.calls)));
    });
    const { gatehouse } = testGatehouse(lookUpThenAnswer, { plugins: [guard], tools: [lookupTool] });
    const events: unknown[] = [];
    const stream = gatehouse.stream({ prompt: "q" });
    for await (const event of stream) events.push(event);
    assert.equal((await stream.result).outcome, "completed");
    assert.equal(batches.length, 1);
    assert.match(batches[0] as string, /not stored by policy/);
    const results = events.filter((e) => (e as { type: string }).type === "tool-result");
    assert.equal(results.length, 1);
    for (const sink of [...batches, JSON.stringify(events)]) assert.doesNotMatch(sink, new RegExp(OUTPUT));
  });

  test("a replacement carrying what the gate blocked (a call id of the model's) is stored nowhere when the gate blocks it again", async () => {
    const script = {
      runs: [{ turns: [{ toolCalls: [{ name: "Lookup", input: {}, id: "call-ID-CANARY-5" }] }, { text: "found it" }] }],
    };
    const guard = plugin("guard", (api) =>
      api.on("before_message_write", (e) =>
        JSON.stringify(e.message).includes("ID-CANARY-5") ? { block: true } : undefined,
      ),
    );
    const { gatehouse, store, calls } = testGatehouse(script, { plugins: [guard], tools: [lookupTool] });
    const result = await gatehouse.run({ prompt: "q" });
    assert.equal(result.outcome, "completed");
    const stored = await store.sessionMessages(result.sessionId);
    assert.deepEqual(
      stored.map((m) => m.role),
      ["user", "assistant"],
    );
    assert.doesNotMatch(JSON.stringify(stored), /ID-CANARY-5/);
    assert.doesNotMatch(promptText(calls[1] as never), /ID-CANARY-5/);
  });
});

describe("parallel tool calls", () => {
  const step = (...calls: [string, string][]) => ({
    runs: [{ turns: [{ toolCalls: calls.map(([name, id]) => ({ name, input: { id } })) }, { text: "done" }] }],
  });

  // A regression to sequential calls would leave the first waiting for the second forever: the timeout bounds it.
  test("calls of tools that may run in parallel overlap within one step", { timeout: 10_000 }, async () => {
    const log: string[] = [];
    const held = heldTool("P", log, { parallel: true });
    const { gatehouse, store } = testGatehouse(step(["P", "a"], ["P", "b"]), { tools: [held.tool] });
    const running = gatehouse.run({ prompt: "q" });
    await Promise.all([held.started("a"), held.started("b")]);
    assert.deepEqual(log, ["start a", "start b"]);
    held.release("b");
    held.release("a");
    const result = await running;
    assert.equal(result.outcome, "completed");
    assert.deepEqual(log, ["start a", "start b", "end b", "end a"]);
    const stored = (await store.runMessages(result.runId)).flatMap((m) => toolResults(m.parts));
    assert.deepEqual(
      stored.map((p) => p.type === "tool_result" && p.output),
      ["done a", "done b"],
      "results are stored in call order",
    );
  });

  test("a step that mixes in a tool that may not run in parallel runs its calls one at a time, in order", async () => {
    const log: string[] = [];
    const parallel = heldTool("P", log, { parallel: true });
    const serial = heldTool("S", log);
    const pre = plugin("pre", (api) =>
      api.on("before_tool_call", (e) => void log.push(`pre ${(e.params as { id: string }).id}`)),
    );
    const { gatehouse } = testGatehouse(step(["P", "a"], ["S", "b"], ["P", "c"]), {
      tools: [parallel.tool, serial.tool],
      plugins: [pre],
    });
    const running = gatehouse.run({ prompt: "q" });
    await parallel.started("a");
    // Run concurrently, b's before_tool_call would already have fired: the calls start together.
    assert.deepEqual(log, ["pre a", "start a"]);
    parallel.release("a");
    await serial.started("b");
    assert.deepEqual(log, ["pre a", "start a", "end a", "pre b", "start b"]);
    serial.release("b");
    await parallel.started("c");
    parallel.release("c");
    await running;
    assert.deepEqual(log, ["pre a", "start a", "end a", "pre b", "start b", "end b", "pre c", "start c", "end c"]);
  });
});

describe("after_tool_batch's modelText", () => {
  test("is the text the model reads: a tool's own rendering, JSON otherwise, the notice for a failure", async () => {
    const rendered: Tool<{ text: string }, { echoed: string }> = {
      ...echoTool,
      name: "Rendered",
      toModelOutput: (o) => `echoed ${o.echoed}`,
    };
    const seen: unknown[] = [];
    const { gatehouse, calls } = testGatehouse(
      {
        runs: [
          {
            turns: [
              {
                toolCalls: [
                  { name: "Rendered", input: { text: "a" } },
                  { name: "Echo", input: { text: "b" } },
                  { name: "Missing", input: {} },
                ],
              },
              { text: "done" },
            ],
          },
        ],
      },
      {
        tools: [echoTool, rendered],
        plugins: [
          plugin("batch", (api) =>
            api.on("after_tool_batch", (e) => void seen.push(...e.calls.map((c) => c.modelText))),
          ),
        ],
      },
    );
    await gatehouse.run({ prompt: "go" });
    assert.equal(seen[0], "echoed a");
    assert.equal(seen[1], '{"echoed":"b"}');
    assert.match(String(seen[2]), /Missing/);
    // The same texts reached the model.
    const prompt = JSON.stringify(calls[1]?.prompt);
    assert.ok(prompt.includes("echoed a") && prompt.includes(String(seen[2]).slice(0, 20)));
    await gatehouse.close();
  });
});
