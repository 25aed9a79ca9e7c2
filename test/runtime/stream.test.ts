import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { RunStream } from "../../src/runtime/gatehouse.js";
import type { RunEvent } from "../../src/runtime/types.js";
import { plugin, testGatehouse } from "./helpers.js";

// The stream contract of issue 4: each event type, in the place a run produces it.

const toolThenAnswer = {
  runs: [{ turns: [{ toolCalls: [{ name: "Echo", input: { text: "hi" } }] }, { text: "all done", chunks: 2 }] }],
};

async function collect(stream: RunStream): Promise<RunEvent[]> {
  const events: RunEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** Each event as its type, with the detail that places it. */
function outline(events: readonly RunEvent[]): string[] {
  return events.map((e) => {
    switch (e.type) {
      case "step":
        return `step ${e.step}`;
      case "text-delta":
        return `text-delta ${e.delta}`;
      case "tool-call":
      case "tool-result":
        return `${e.type} ${e.toolName}`;
      case "blocked":
        return `blocked ${e.hook}`;
      case "final":
        return `final ${e.text}`;
      default:
        return e.type;
    }
  });
}

describe("run events", () => {
  test("a run with a tool step: step, tool-call, tool-result, step, text-delta…, final, in that order", async () => {
    const { gatehouse } = testGatehouse(toolThenAnswer);
    const stream = gatehouse.stream({ prompt: "q" });
    const events = await collect(stream);
    const result = await stream.result;
    assert.deepEqual(outline(events), [
      "run-start",
      "step 1",
      "tool-call Echo",
      "tool-result Echo",
      "step 2",
      "text-delta all ",
      "text-delta done",
      "final all done",
      "run-end",
    ]);
    const call = events.find((e) => e.type === "tool-call");
    const output = events.find((e) => e.type === "tool-result");
    assert.ok(call?.type === "tool-call" && output?.type === "tool-result");
    assert.equal(output.toolCallId, call.toolCallId);
    assert.deepEqual(call.input, { text: "hi" });
    assert.deepEqual(events.at(-1), { type: "run-end", result });
  });

  test("an answer blocked at before_response_emit: progress events, then blocked with the notice; no text, no final", async () => {
    const gate = plugin("dlp", (api) => api.on("before_response_emit", () => ({ block: true })));
    const { gatehouse } = testGatehouse(toolThenAnswer, { plugins: [gate] });
    const stream = gatehouse.stream({ prompt: "q" });
    const events = await collect(stream);
    assert.deepEqual(outline(events), [
      "run-start",
      "step 1",
      "tool-call Echo",
      "tool-result Echo",
      "step 2",
      "blocked before_response_emit",
      "run-end",
    ]);
    const blocked = events.find((e) => e.type === "blocked");
    assert.equal(blocked?.type === "blocked" && blocked.message, (await stream.result).reply);
  });

  test("a prompt blocked at before_agent_run: blocked at once, no step", async () => {
    const gate = plugin("guard", (api) => api.on("before_agent_run", () => ({ outcome: "block", reason: "internal" })));
    const { gatehouse } = testGatehouse(toolThenAnswer, { plugins: [gate] });
    const events = await collect(gatehouse.stream({ prompt: "q" }));
    assert.deepEqual(outline(events), ["run-start", "blocked before_agent_run", "run-end"]);
    assert.doesNotMatch(JSON.stringify(events), /internal/);
  });
});
