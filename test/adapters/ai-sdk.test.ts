// The AI SDK adapter (docs/hosts/ai-sdk.md) against a real HTTP server speaking OpenAI's Chat
// Completions, through the `ai` package's own generateText / streamText: the canary scenarios of
// `gatehouse run` — a prompt blocked, an answer rewritten or blocked (streamed and not), a tool
// call refused before its side effect, a tool output redacted — with the SDK's returned steps and
// messages, the requests the model received, and the Gatehouse store's file bytes scanned.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { z } from "zod";
import { importOnDemand } from "../../scripts/on-demand.js";
import { gatehouseMiddleware, gatehouseTools } from "../../src/adapters/ai-sdk.js";
import { chatAnswer } from "../models/mock-server.js";
import {
  assertNoCanary,
  CANARY,
  canaryFixture,
  closeAndScan,
  completion,
  delivered,
  MESSAGES,
  policyGatehouse,
  stopPolicy,
  streamedAnswer,
} from "./canaries.js";

const { generateText, stepCountIs, streamText, tool, wrapLanguageModel } =
  await importOnDemand<typeof import("ai")>("ai");

describe("the AI SDK middleware and tools", () => {
  const fixture = canaryFixture();

  const model = () =>
    wrapLanguageModel({
      model: createOpenAICompatible({ name: "test", baseURL: `${fixture.server.origin}/v1`, apiKey: "k" }).chatModel(
        "gpt-test",
      ),
      middleware: gatehouseMiddleware(fixture.handle.gatehouse, { sessionId: "ai-sdk-session" }),
    });

  test("a canary prompt is blocked by before_input or before_agent_run: the model is never called, the user reads the message", async () => {
    const input = await generateText({ model: model(), prompt: `hello ${CANARY.input}` });
    assert.equal(input.text, MESSAGES.input);
    const prompt = await generateText({ model: model(), prompt: `hello ${CANARY.prompt}` });
    assert.equal(prompt.text, MESSAGES.prompt);
    assert.equal(fixture.server.requests.length, 0);
    assertNoCanary("the SDK's steps and messages", [input.steps, input.response.messages]);
    assertNoCanary("the SDK's steps and messages", [prompt.steps, prompt.response.messages]);
    const audit = await closeAndScan(fixture.handle);
    assert.deepEqual(
      audit.map((a) => [a.hook, a.pluginId, a.outcome, a.sessionId]),
      [
        ["before_input", "canary-policy", "block", "ai-sdk-session"],
        ["before_agent_run", "canary-policy", "block", "ai-sdk-session"],
      ],
    );
  });

  test("a canary prompt followed by an assistant prefill meets the input gates too: the model is never called", async () => {
    const result = await generateText({
      model: model(),
      messages: [
        { role: "user", content: `hello ${CANARY.prompt}` },
        { role: "assistant", content: "Sure, here it is:" },
      ],
    });
    assert.equal(result.text, MESSAGES.prompt);
    assert.equal(fixture.server.requests.length, 0);
    await closeAndScan(fixture.handle);
  });

  test("a streamed canary prompt is blocked too: the stream carries only the message", async () => {
    const result = streamText({ model: model(), prompt: `hello ${CANARY.prompt}` });
    assert.equal(await result.text, MESSAGES.prompt);
    assert.equal(fixture.server.requests.length, 0);
    await closeAndScan(fixture.handle);
  });

  test("canaries in a generated answer are rewritten by before_response_emit and message_sending before the SDK returns it", async () => {
    fixture.server.reply(completion(`the key is ${CANARY.answer}, the code ${CANARY.sending}.`));
    const result = await generateText({ model: model(), prompt: "what is the key?" });
    assert.equal(result.text, "the key is [redacted], the code [sent].");
    assertNoCanary("the SDK's steps, messages and response", [result.steps, result.response, result.content]);
    await closeAndScan(fixture.handle);
  });

  test("a streamed answer is held until it passed: no delta carries the canary, even split across chunks", async () => {
    const [head, tail] = [CANARY.answer.slice(0, 8), CANARY.answer.slice(8)];
    fixture.server.reply(streamedAnswer("the key is ", head, tail, `, the code ${CANARY.sending}.`));
    const result = streamText({ model: model(), prompt: "what is the key?" });
    const deltas: string[] = [];
    for await (const delta of result.textStream) deltas.push(delta);
    assert.equal(deltas.join(""), "the key is [redacted], the code [sent].");
    assert.ok(
      deltas.every((d) => !d.includes(head) && !d.includes(tail)),
      `no half of the canary was streamed: ${JSON.stringify(deltas)}`,
    );
    assertNoCanary("the SDK's steps and messages", [await result.steps, (await result.response).messages]);
    await closeAndScan(fixture.handle);
  });

  test("a blocked answer is replaced by the message, streamed and not, and the reason is nowhere", async () => {
    fixture.server.reply(
      completion(`secret: ${CANARY.blockedAnswer}`),
      streamedAnswer("secret: ", CANARY.blockedAnswer),
    );
    const generated = await generateText({ model: model(), prompt: "tell me" });
    assert.equal(generated.text, MESSAGES.answer);
    const streamed = streamText({ model: model(), prompt: "tell me again" });
    assert.equal(await streamed.text, MESSAGES.answer);
    assertNoCanary("the SDK's results", [generated.steps, generated.response, await streamed.steps]);
    const audit = await closeAndScan(fixture.handle);
    assert.deepEqual(
      audit.map((a) => [a.hook, a.outcome]),
      [
        ["before_response_emit", "block"],
        ["before_response_emit", "block"],
      ],
    );
  });

  test("a tool call refused by before_tool_call does not run; the model reads the message, never the reason", async () => {
    let deleted = false;
    const tools = gatehouseTools(
      fixture.handle.gatehouse,
      {
        deleteFiles: tool({
          description: "deletes files",
          inputSchema: z.object({ path: z.string() }),
          execute: async () => {
            deleted = true;
            return "deleted";
          },
        }),
      },
      { sessionId: "ai-sdk-session" },
    );
    fixture.server.reply(
      completion([{ name: "deleteFiles", input: { path: "/" } }]),
      completion("I could not delete."),
    );
    const result = await generateText({ model: model(), prompt: "clean up", tools, stopWhen: stepCountIs(3) });
    assert.equal(deleted, false, "the tool's side effect did not happen");
    assert.equal(result.text, "I could not delete.");
    const second = JSON.stringify(fixture.server.requests[1]?.body);
    assert.match(second, new RegExp(MESSAGES.tool));
    assertNoCanary("the model's second request", second);
    assertNoCanary("the SDK's steps", result.steps);
    const audit = await closeAndScan(fixture.handle);
    assert.deepEqual(
      audit.map((a) => [a.hook, a.outcome]),
      [["before_tool_call", "block"]],
    );
  });

  test("a tool output is redacted by after_tool_call before the model, the steps and the messages see it", async () => {
    const tools = gatehouseTools(fixture.handle.gatehouse, {
      lookup: tool({
        description: "looks a person up",
        inputSchema: z.object({ name: z.string() }),
        execute: async ({ name }) => `${name}: ${CANARY.toolOutput}`,
      }),
    });
    fixture.server.reply(completion([{ name: "lookup", input: { name: "Ada" } }]), completion("Found her."));
    const result = await generateText({ model: model(), prompt: "find Ada", tools, stopWhen: stepCountIs(3) });
    assert.equal(result.text, "Found her.");
    const second = JSON.stringify(fixture.server.requests[1]?.body);
    assert.match(second, /Ada: \[email\]/);
    assertNoCanary("the model's second request", second);
    assertNoCanary("the SDK's steps and messages", [result.steps, result.response.messages]);
    await closeAndScan(fixture.handle);
  });

  test("a tool offered without gatehouseTools() while a tool hook listens is refused before the model is called", async () => {
    const unwrapped = {
      deleteFiles: tool({ inputSchema: z.object({ path: z.string() }), execute: async () => "deleted" }),
    };
    await assert.rejects(
      generateText({ model: model(), prompt: "clean up", tools: unwrapped }),
      /deleteFiles is offered to the model without gatehouseTools\(\)/,
    );
    assert.equal(fixture.server.requests.length, 0);
    await fixture.handle.gatehouse.close();
  });

  test("an answer the policy has nothing against is delivered as the model wrote it, and message_sent hears of it", async () => {
    fixture.server.reply(chatAnswer("plain answer"));
    const result = streamText({ model: model(), prompt: "hi" });
    assert.equal(await result.text, "plain answer");
    assert.equal(delivered.at(-1), "plain answer", "message_sent heard of the delivery");
    await fixture.handle.gatehouse.close();
  });

  test("a tool hook's stopRun ends the SDK's loop: the next model call is not made, the user reads the stop's message", async () => {
    const gatehouse = policyGatehouse(stopPolicy);
    let wired = false;
    const tools = gatehouseTools(gatehouse, {
      finish: tool({ inputSchema: z.object({}), execute: async () => "finished" }),
      wire: tool({
        inputSchema: z.object({ amount: z.number() }),
        execute: async () => {
          wired = true;
          return "sent";
        },
      }),
    });
    const stopping = wrapLanguageModel({
      model: createOpenAICompatible({ name: "test", baseURL: `${fixture.server.origin}/v1`, apiKey: "k" }).chatModel(
        "gpt-test",
      ),
      middleware: gatehouseMiddleware(gatehouse),
    });
    fixture.server.reply(
      completion([
        { name: "wire", input: { amount: 5 } },
        { name: "finish", input: {} },
      ]),
    );
    const result = await generateText({ model: stopping, prompt: "go", tools, stopWhen: stepCountIs(5) });
    assert.equal(result.text, "Stopped by the policy.");
    assert.equal(fixture.server.requests.length, 1, "no model call after the stop");
    assert.equal(wired, false, "a call that asks for approval, with nobody to ask, does not run");
    assert.match(JSON.stringify(result.response.messages), /no one can be asked here/);
    await gatehouse.close();
    await fixture.handle.gatehouse.close();
  });
});
