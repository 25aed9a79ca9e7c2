// One block verdict, `{ outcome: "block", reason?, message? }`, on every hook that can block
// (docs/hooks.md, "Reasons and messages"); the hooks' older spellings stay aliases. `reason` is
// internal wherever it is given: it reaches neither the model, the user nor the store.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { z } from "zod";
import type { Tool } from "../../src/tools/types.js";
import { plugin, promptText, testGatehouse } from "./helpers.js";

const INTERNAL = "internal-reason-canary";
const oneEcho = { runs: [{ turns: [{ toolCalls: [{ name: "Echo", input: { text: "hi" } }] }, { text: "done" }] }] };

/** An Echo tool that says when it ran. */
const watched = (ran: () => void): Tool<{ text: string }, string> => ({
  name: "Echo",
  description: "echo",
  inputSchema: z.object({ text: z.string() }),
  async execute() {
    ran();
    return "ran";
  },
});

async function stored(store: ReturnType<typeof testGatehouse>["store"], sessionId: string): Promise<string> {
  return JSON.stringify(await store.sessionMessages(sessionId));
}

describe("the one block verdict", () => {
  test("before_tool_call { outcome: block, reason, message }: the call does not run, the model reads message, never reason", async () => {
    let ran = false;
    const { gatehouse, calls, store } = testGatehouse(oneEcho, {
      tools: [watched(() => (ran = true))],
      plugins: [
        plugin("guard", (api) =>
          api.on("before_tool_call", () => ({
            outcome: "block",
            reason: INTERNAL,
            message: "Echo is not allowed here.",
          })),
        ),
      ],
    });
    const result = await gatehouse.run({ prompt: "go" });
    assert.equal(ran, false);
    const second = promptText(calls[1] as (typeof calls)[number]);
    assert.match(second, /Echo is not allowed here\./);
    assert.equal(second.includes(INTERNAL), false);
    assert.equal((await stored(store, result.sessionId)).includes(INTERNAL), false);
    await gatehouse.close();
  });

  test("a gate answering in the alias spelling { block, blockReason, message } blocks with its message", async () => {
    const { gatehouse } = testGatehouse(
      { runs: [{ turns: [{ text: "never called" }] }] },
      {
        plugins: [
          plugin("gate", (api) =>
            api.on("before_agent_run", () => ({ block: true, blockReason: INTERNAL, message: "Not here." })),
          ),
        ],
      },
    );
    const result = await gatehouse.run({ prompt: "go" });
    assert.equal(result.outcome, "blocked");
    assert.equal(result.reply, "Not here.");
    await gatehouse.close();
  });

  test("before_response_emit { outcome: block, reason, message }: the user gets message; reason is nowhere", async () => {
    const { gatehouse, store } = testGatehouse(
      { runs: [{ turns: [{ text: "secret answer" }] }] },
      {
        plugins: [
          plugin("emit", (api) =>
            api.on("before_response_emit", () => ({ outcome: "block", reason: INTERNAL, message: "Withheld." })),
          ),
        ],
      },
    );
    const result = await gatehouse.run({ prompt: "go" });
    assert.equal(result.reply, "Withheld.");
    const saved = await stored(store, result.sessionId);
    assert.equal(saved.includes(INTERNAL), false);
    assert.equal(saved.includes("secret answer"), false);
    await gatehouse.close();
  });

  test("a result that says block both ways but disagrees is invalid, and the fail-closed hook blocks", async () => {
    let ran = false;
    const { gatehouse, logLines } = testGatehouse(oneEcho, {
      tools: [watched(() => (ran = true))],
      plugins: [
        plugin("confused", (api) =>
          api.on("before_tool_call", () => ({ outcome: "pass", block: true, blockReason: "x" })),
        ),
      ],
    });
    await gatehouse.run({ prompt: "go" });
    assert.equal(ran, false);
    assert.ok(
      logLines.some((l) => /outcome "pass" with block: true/.test(l)),
      logLines.join("\n"),
    );
    await gatehouse.close();
  });
});
