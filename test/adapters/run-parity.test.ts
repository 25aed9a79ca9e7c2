// The reference for the adapters' canary scenarios: `gatehouse run`, with the same canary policy
// and the same model answers (scripted), gives the user and the model the very words the AI SDK
// and OpenAI Agents tests expect of their hosts (test/adapters/ai-sdk.test.ts,
// openai-agents.test.ts), and its store keeps none of the canaries.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { z } from "zod";
import type { ScriptInput } from "../../src/models/index.js";
import type { Tool } from "../../src/tools/types.js";
import { promptText, testGatehouse } from "../runtime/helpers.js";
import { assertNoCanary, CANARY, canaryPolicy, MESSAGES } from "./canaries.js";

const answering = (text: string): ScriptInput => ({ runs: [{ turns: [{ text }] }] });
const calling = (name: string, input: Record<string, unknown>, then: string): ScriptInput => ({
  runs: [{ turns: [{ toolCalls: [{ name, input }] }, { text: then }] }],
});

/** What the user read, what the model read on its last call, and everything the store kept. */
async function runScenario(script: ScriptInput, prompt: string, tools: Tool[] = []) {
  const { gatehouse, store, calls } = testGatehouse(script, {
    tools,
    plugins: [canaryPolicy],
    permissions: { allow: tools.map((t) => t.name) },
  });
  const result = await gatehouse.run({ prompt });
  const stored = [await store.sessionMessages(result.sessionId), await store.listAudit()];
  await gatehouse.close();
  const last = calls.at(-1);
  return { reply: result.reply, modelRead: last ? promptText(last) : "", stored, calls: calls.length };
}

describe("gatehouse run on the adapters' canary scenarios", () => {
  test("a canary prompt: blocked by before_input or before_agent_run with the same message, the model never called", async () => {
    for (const [canary, message] of [
      [CANARY.input, MESSAGES.input],
      [CANARY.prompt, MESSAGES.prompt],
    ] as const) {
      const run = await runScenario(answering("never"), `hello ${canary}`);
      assert.equal(run.reply, message);
      assert.equal(run.calls, 0);
      assertNoCanary("the store", run.stored);
    }
  });

  test("a canary answer: rewritten by before_response_emit and message_sending, or blocked with the same message", async () => {
    const rewritten = await runScenario(answering(`the key is ${CANARY.answer}, the code ${CANARY.sending}.`), "key?");
    assert.equal(rewritten.reply, "the key is [redacted], the code [sent].");
    assertNoCanary("the store", rewritten.stored);
    const blocked = await runScenario(answering(`secret: ${CANARY.blockedAnswer}`), "tell me");
    assert.equal(blocked.reply, MESSAGES.answer);
    assertNoCanary("the store", blocked.stored);
  });

  test("a refused tool call does not run and the model reads the same message; a tool output reaches it redacted the same way", async () => {
    let deleted = false;
    const deleteFiles: Tool<{ path: string }, string> = {
      name: "deleteFiles",
      description: "deletes files",
      inputSchema: z.object({ path: z.string() }),
      async execute() {
        deleted = true;
        return "deleted";
      },
    };
    const refused = await runScenario(calling("deleteFiles", { path: "/" }, "I could not delete."), "clean up", [
      deleteFiles as Tool,
    ]);
    assert.equal(deleted, false);
    assert.match(refused.modelRead, new RegExp(MESSAGES.tool));
    assertNoCanary("the model's second call and the store", [refused.modelRead, refused.stored]);

    const lookup: Tool<{ name: string }, string> = {
      name: "lookup",
      description: "looks a person up",
      inputSchema: z.object({ name: z.string() }),
      execute: async ({ name }) => `${name}: ${CANARY.toolOutput}`,
    };
    const redacted = await runScenario(calling("lookup", { name: "Ada" }, "Found her."), "find Ada", [lookup as Tool]);
    assert.match(redacted.modelRead, /Ada: \[email\]/);
    assert.equal(redacted.reply, "Found her.");
    assertNoCanary("the model's second call and the store", [redacted.modelRead, redacted.stored]);
  });
});
