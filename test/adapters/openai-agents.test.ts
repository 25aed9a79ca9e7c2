// The OpenAI Agents JS guardrails (docs/hosts/openai-agents.md) with the SDK's own Runner, its
// Chat Completions model and the `openai` client against a real HTTP server speaking that
// protocol: the canary scenarios of `gatehouse run` for the hooks the SDK's guardrails reach —
// a prompt blocked before the model, an answer blocked or rewritten, a tool call refused before
// its side effect, a tool output redacted — with the SDK's session, run history and errors, the
// requests the model received, and the Gatehouse store's file bytes scanned.
import assert from "node:assert/strict";
import { beforeEach, describe, test } from "node:test";
import type * as AgentsSdk from "@openai/agents";
import { z } from "zod";
import { importOnDemand } from "../../scripts/on-demand.js";
import { type GatehouseGuardrails, gatehouseGuardrails } from "../../src/adapters/openai-agents.js";
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

// The SDK and the client it is handed come from one install (TEST_IMPORTS): one copy of `openai`.
const {
  Agent,
  InputGuardrailTripwireTriggered,
  MemorySession,
  OpenAIChatCompletionsModel,
  OutputGuardrailTripwireTriggered,
  Runner,
  ToolCallError,
  ToolOutputGuardrailTripwireTriggered,
  tool,
} = await importOnDemand<typeof import("@openai/agents")>("@openai/agents");
const { default: OpenAI } = await importOnDemand<typeof import("openai")>("openai");

describe("the OpenAI Agents guardrails", () => {
  const fixture = canaryFixture();
  let guards: GatehouseGuardrails;
  let session: AgentsSdk.MemorySession;
  const runner = new Runner({ tracingDisabled: true });
  beforeEach(() => {
    guards = gatehouseGuardrails(fixture.handle.gatehouse, { sessionId: "agents-session" });
    session = new MemorySession();
  });

  /** What a run that must be stopped threw. */
  const stopped = (target: AgentsSdk.Agent, input: string) =>
    runner.run(target, input, { session }).then(
      () => assert.fail("the run was not stopped"),
      (e: unknown) => e,
    );

  const agent = (tools: ConstructorParameters<typeof Agent>[0]["tools"] = []) =>
    new Agent({
      name: "assistant",
      instructions: "You help.",
      model: new OpenAIChatCompletionsModel(
        new OpenAI({ baseURL: `${fixture.server.origin}/v1`, apiKey: "k" }),
        "gpt-test",
      ),
      inputGuardrails: [guards.input],
      outputGuardrails: [guards.output],
      tools,
    });

  test("a canary prompt trips the input guardrail (before_input, before_agent_run) before the model is called; outputInfo carries the message, never the reason", async () => {
    for (const [canary, hook, message] of [
      [CANARY.input, "before_input", MESSAGES.input],
      [CANARY.prompt, "before_agent_run", MESSAGES.prompt],
    ] as const) {
      const error = await stopped(agent(), `hello ${canary}`);
      assert.ok(error instanceof InputGuardrailTripwireTriggered, String(error));
      assert.deepEqual(error.result.output.outputInfo, { message, hook, pluginId: "canary-policy" });
      assertNoCanary("the tripwire's message", error.message);
    }
    assert.equal(fixture.server.requests.length, 0, "the model never read the prompt");
    assertNoCanary("the SDK session", await session.getItems());
    const audit = await closeAndScan(fixture.handle);
    assert.deepEqual(
      audit.map((a) => [a.hook, a.outcome, a.sessionId]),
      [
        ["before_input", "block", "agents-session"],
        ["before_agent_run", "block", "agents-session"],
      ],
    );
  });

  test("a blocked answer trips the output guardrail: the message, never the answer or the reason, and the session keeps neither", async () => {
    fixture.server.reply(completion(`secret: ${CANARY.blockedAnswer}`));
    const error = await stopped(agent(), "tell me");
    assert.ok(error instanceof OutputGuardrailTripwireTriggered, String(error));
    assert.deepEqual(error.result.output.outputInfo, {
      message: MESSAGES.answer,
      hook: "before_response_emit",
      pluginId: "canary-policy",
    });
    assertNoCanary("the tripwire's message", error.message);
    assertNoCanary("the SDK session", await session.getItems());
    await closeAndScan(fixture.handle);
  });

  test("an answer rewritten by before_response_emit and message_sending trips the output guardrail with the rewritten text; the original is in no message or session", async () => {
    fixture.server.reply(completion(`the key is ${CANARY.answer}, the code ${CANARY.sending}.`));
    const error = await stopped(agent(), "what is the key?");
    assert.ok(error instanceof OutputGuardrailTripwireTriggered, String(error));
    assert.deepEqual(error.result.output.outputInfo, {
      message: "the key is [redacted], the code [sent].",
      rewritten: true,
    });
    assertNoCanary("the tripwire's message", error.message);
    assertNoCanary("the SDK session", await session.getItems());
    await closeAndScan(fixture.handle);
  });

  test("a streamed run through guards.model holds the answer: a blocked or rewritten answer streams no delta, and trips the output guardrail once", async () => {
    const streamedAgent = () =>
      new Agent({
        name: "assistant",
        model: guards.model(
          new OpenAIChatCompletionsModel(
            new OpenAI({ baseURL: `${fixture.server.origin}/v1`, apiKey: "k" }),
            "gpt-test",
          ),
        ),
        inputGuardrails: [guards.input],
        outputGuardrails: [guards.output],
      });
    const [head, tail] = [CANARY.answer.slice(0, 8), CANARY.answer.slice(8)];
    fixture.server.reply(
      streamedAnswer("secret: ", CANARY.blockedAnswer),
      streamedAnswer("the key is ", head, tail, "."),
      streamedAnswer("plain ", "answer"),
    );
    const outcomes: unknown[] = [];
    const texts: string[] = [];
    for (const prompt of ["tell me", "what is the key?", "hi"]) {
      const result = await runner.run(streamedAgent(), prompt, { stream: true, session });
      const deltas: string[] = [];
      try {
        for await (const delta of result.toTextStream()) deltas.push(delta);
        await result.completed;
        outcomes.push(result.finalOutput);
      } catch (error) {
        outcomes.push(error);
      }
      texts.push(deltas.join(""));
    }
    assert.deepEqual(texts, ["", "", "plain answer"], "only the answer the gates passed streamed");
    const [blocked, rewritten, plain] = outcomes;
    assert.ok(blocked instanceof OutputGuardrailTripwireTriggered, String(blocked));
    assert.equal(blocked.result.output.outputInfo.message, MESSAGES.answer);
    assert.ok(rewritten instanceof OutputGuardrailTripwireTriggered, String(rewritten));
    assert.equal(rewritten.result.output.outputInfo.message, "the key is [redacted].");
    assert.equal(plain, "plain answer");
    assertNoCanary("the SDK session", await session.getItems());
    const audit = await closeAndScan(fixture.handle);
    assert.deepEqual(
      audit.map((a) => [a.hook, a.outcome]),
      [["before_response_emit", "block"]],
      "the gates ran once per answer",
    );
  });

  test("a tool call refused by before_tool_call does not run; the model reads the message, never the reason", async () => {
    let deleted = false;
    const deleteFiles = tool({
      name: "deleteFiles",
      description: "deletes files",
      parameters: z.object({ path: z.string() }),
      inputGuardrails: [guards.toolInput],
      outputGuardrails: [guards.toolOutput],
      execute: async () => {
        deleted = true;
        return "deleted";
      },
    });
    fixture.server.reply(
      completion([{ name: "deleteFiles", input: { path: "/" } }]),
      completion("I could not delete."),
    );
    const result = await runner.run(agent([deleteFiles]), "clean up", { session });
    assert.equal(deleted, false, "the tool's side effect did not happen");
    assert.equal(result.finalOutput, "I could not delete.");
    const second = JSON.stringify(fixture.server.requests[1]?.body);
    assert.match(second, new RegExp(MESSAGES.tool));
    assertNoCanary("the model's second request", second);
    assertNoCanary("the run's history and the session", [result.history, await session.getItems()]);
    const audit = await closeAndScan(fixture.handle);
    assert.deepEqual(
      audit.map((a) => [a.hook, a.outcome]),
      [["before_tool_call", "block"]],
    );
  });

  test("a tool output is redacted by after_tool_call before the model, the run's history and the session see it", async () => {
    const lookup = tool({
      name: "lookup",
      description: "looks a person up",
      parameters: z.object({ name: z.string() }),
      inputGuardrails: [guards.toolInput],
      outputGuardrails: [guards.toolOutput],
      execute: async ({ name }) => `${name}: ${CANARY.toolOutput}`,
    });
    fixture.server.reply(completion([{ name: "lookup", input: { name: "Ada" } }]), completion("Found her."));
    const result = await runner.run(agent([lookup]), "find Ada", { session });
    assert.equal(result.finalOutput, "Found her.");
    assert.equal(delivered.at(-1), "Found her.", "message_sent heard of the delivery");
    assert.ok((await session.getItems()).length >= 4, "the session kept the turn: prompt, call, output, answer");
    const second = JSON.stringify(fixture.server.requests[1]?.body);
    assert.match(second, /Ada: \[email\]/);
    assertNoCanary("the model's second request", second);
    assertNoCanary("the run's history and the session", [result.history, await session.getItems()]);
    await closeAndScan(fixture.handle);
  });

  test("an agent with a tool lacking the tool guardrails is refused before the model is called", async () => {
    const ungated = tool({
      name: "deleteFiles",
      description: "deletes files",
      parameters: z.object({ path: z.string() }),
      execute: async () => "deleted",
    });
    await assert.rejects(runner.run(agent([ungated]), "clean up"), /deleteFiles lacks the Gatehouse tool guardrails/);
    assert.equal(fixture.server.requests.length, 0);
    await fixture.handle.gatehouse.close();
  });

  test("a tool hook's stopRun halts the run with the tool output tripwire, its outputInfo the stop's message (in the SDK's ToolCallError)", async () => {
    const gatehouse = policyGatehouse(stopPolicy);
    const own = gatehouseGuardrails(gatehouse);
    const finish = tool({
      name: "finish",
      description: "finishes",
      parameters: z.object({}),
      inputGuardrails: [own.toolInput],
      outputGuardrails: [own.toolOutput],
      execute: async () => "finished",
    });
    const stopping = new Agent({
      name: "assistant",
      model: new OpenAIChatCompletionsModel(
        new OpenAI({ baseURL: `${fixture.server.origin}/v1`, apiKey: "k" }),
        "gpt-test",
      ),
      inputGuardrails: [own.input],
      tools: [finish],
    });
    fixture.server.reply(completion([{ name: "finish", input: {} }]));
    const error = await runner.run(stopping, "go").then(
      () => assert.fail("the run was not stopped"),
      (e: unknown) => e,
    );
    // The SDK wraps a tool guardrail's tripwire in the ToolCallError of the call.
    assert.ok(
      error instanceof ToolCallError && error.error instanceof ToolOutputGuardrailTripwireTriggered,
      String(error),
    );
    assert.deepEqual(error.error.result.output.outputInfo, {
      message: "Stopped by the policy.",
      hook: "after_tool_call",
      pluginId: "stop-policy",
    });
    assert.equal(fixture.server.requests.length, 1, "no model call after the stop");
    await gatehouse.close();
    await fixture.handle.gatehouse.close();
  });
});
