import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { APICallError, LoadAPIKeyError } from "@ai-sdk/provider";
import { z } from "zod";
import { resolveModel, toModelPrompt, toModelTools } from "../../src/models/index.js";
import { msg, streamCall } from "./helpers.js";
import { type MockServer, type SseFrame, startMockServer } from "./mock-server.js";

const ev = (type: string, data: Record<string, unknown> = {}): SseFrame => ({ event: type, data: { type, ...data } });
const messageStart = (inputTokens: number) =>
  ev("message_start", {
    message: {
      id: "msg_1",
      type: "message",
      role: "assistant",
      content: [],
      model: "claude-test",
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: inputTokens, output_tokens: 1 },
    },
  });
const messageEnd = (stopReason: string, outputTokens: number): SseFrame[] => [
  ev("message_delta", {
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: outputTokens },
  }),
  ev("message_stop"),
];
const textBlock = (index: number, ...pieces: string[]): SseFrame[] => [
  ev("content_block_start", { index, content_block: { type: "text", text: "" } }),
  ...pieces.map((text) => ev("content_block_delta", { index, delta: { type: "text_delta", text } })),
  ev("content_block_stop", { index }),
];
const toolBlock = (index: number, id: string, name: string, ...pieces: string[]): SseFrame[] => [
  ev("content_block_start", { index, content_block: { type: "tool_use", id, name, input: {} } }),
  ...pieces.map((partial_json) =>
    ev("content_block_delta", { index, delta: { type: "input_json_delta", partial_json } }),
  ),
  ev("content_block_stop", { index }),
];

const searchTool = {
  name: "search",
  description: "Search the docs",
  inputSchema: z.object({ query: z.string(), limit: z.number().int().optional() }),
};

describe("anthropic: models over the Messages API against a local server", () => {
  let server: MockServer;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    server = await startMockServer();
    env = { ANTHROPIC_API_KEY: "sk-ant-test", ANTHROPIC_BASE_URL: `${server.origin}/v1` };
  });
  after(() => server.close());

  test("streams text; the server gets the model, system prompt, messages, version and x-api-key", async () => {
    server.reply({
      sse: [messageStart(25), ev("ping"), ...textBlock(0, "Hello", ", world"), ...messageEnd("end_turn", 7)],
    });
    const model = await resolveModel("anthropic:claude-test", { env });
    const result = await streamCall(model, { prompt: toModelPrompt([msg("user", "Greet me")], "You are terse.") });

    const request = server.requests.at(-1);
    assert.equal(request?.path, "/v1/messages");
    assert.equal(request?.headers["x-api-key"], "sk-ant-test");
    assert.equal(request?.headers["anthropic-version"], "2023-06-01");
    assert.equal(request?.body.model, "claude-test");
    assert.equal(request?.body.stream, true);
    assert.equal(typeof request?.body.max_tokens, "number");
    assert.deepEqual(request?.body.system, [{ type: "text", text: "You are terse." }]);
    assert.deepEqual(request?.body.messages, [{ role: "user", content: [{ type: "text", text: "Greet me" }] }]);
    assert.deepEqual(result.parts, [{ type: "text", text: "Hello, world" }]);
    assert.deepEqual(
      result.events.filter((e) => e.type === "text-delta").map((e) => e.delta),
      ["Hello", ", world"],
    );
    assert.equal(result.finishReason, "stop");
    assert.equal(result.usage.inputTokens, 25);
    assert.equal(result.usage.outputTokens, 7);
  });

  test("streams text then a tool call whose JSON arrives in pieces, and sends tools as input_schema", async () => {
    server.reply({
      sse: [
        messageStart(50),
        ...textBlock(0, "Searching."),
        ...toolBlock(1, "toolu_01", "search", "", '{"query": "ho', 'oks", "li', 'mit": 3}'),
        ...messageEnd("tool_use", 30),
      ],
    });
    const model = await resolveModel("anthropic:claude-test", { env });
    const result = await streamCall(model, {
      prompt: toModelPrompt([msg("user", "Find hooks docs")]),
      tools: toModelTools([searchTool]),
    });

    const tools = server.requests.at(-1)?.body.tools;
    assert.equal(tools.length, 1);
    assert.equal(tools[0].name, "search");
    assert.equal(tools[0].description, "Search the docs");
    assert.deepEqual(tools[0].input_schema.properties, {
      query: { type: "string" },
      limit: { type: "integer", minimum: -9007199254740991, maximum: 9007199254740991 },
    });
    assert.deepEqual(tools[0].input_schema.required, ["query"]);
    assert.equal(tools[0].input_schema.additionalProperties, false);
    assert.deepEqual(result.parts, [
      { type: "text", text: "Searching." },
      { type: "tool_call", toolCallId: "toolu_01", toolName: "search", input: { query: "hooks", limit: 3 } },
    ]);
    assert.equal(result.toolCalls[0]?.inputText, '{"query": "hooks", "limit": 3}');
    assert.equal(result.finishReason, "tool-calls");
    assert.equal(result.usage.outputTokens, 30);
  });

  test("streams thinking blocks as reasoning parts before the answer", async () => {
    server.reply({
      sse: [
        messageStart(10),
        ev("content_block_start", { index: 0, content_block: { type: "thinking", thinking: "" } }),
        ev("content_block_delta", { index: 0, delta: { type: "thinking_delta", thinking: "Let me think" } }),
        ev("content_block_delta", { index: 0, delta: { type: "signature_delta", signature: "sig" } }),
        ev("content_block_stop", { index: 0 }),
        ...textBlock(1, "42"),
        ...messageEnd("end_turn", 5),
      ],
    });
    const model = await resolveModel("anthropic:claude-test", { env });
    const result = await streamCall(model, { prompt: toModelPrompt([msg("user", "Answer?")]) });
    assert.deepEqual(result.parts, [
      { type: "reasoning", text: "Let me think" },
      { type: "text", text: "42" },
    ]);
    assert.deepEqual(
      result.events.filter((e) => e.type === "reasoning-delta").map((e) => e.delta),
      ["Let me think"],
    );
  });

  test("sends tool results back as tool_result blocks in a user turn, after the assistant's tool_use", async () => {
    server.reply({ sse: [messageStart(80), ...textBlock(0, "Found it."), ...messageEnd("end_turn", 4)] });
    const history = [
      msg("user", "Find hooks docs"),
      msg("assistant", [{ type: "tool_call", toolCallId: "toolu_01", toolName: "search", input: { query: "hooks" } }]),
      msg("tool", [{ type: "tool_result", toolCallId: "toolu_01", toolName: "search", output: "docs/hooks.md" }]),
      msg("tool", [
        { type: "tool_result", toolCallId: "toolu_02", toolName: "search", output: "no index", isError: true },
      ]),
    ];
    const model = await resolveModel("anthropic:claude-test", { env });
    await streamCall(model, { prompt: toModelPrompt(history) });

    const messages = server.requests.at(-1)?.body.messages;
    assert.equal(messages.length, 3);
    assert.deepEqual(messages[1], {
      role: "assistant",
      content: [{ type: "tool_use", id: "toolu_01", name: "search", input: { query: "hooks" } }],
    });
    assert.equal(messages[2].role, "user");
    assert.deepEqual(
      messages[2].content.map((b: { type: string; tool_use_id: string; is_error?: boolean }) => [
        b.type,
        b.tool_use_id,
        b.is_error,
      ]),
      [
        ["tool_result", "toolu_01", undefined],
        ["tool_result", "toolu_02", true],
      ],
    );
    assert.deepEqual(messages[2].content[0].content, "docs/hooks.md");
  });

  test("answers without streaming through doGenerate, with text, a tool call and usage", async () => {
    server.reply({
      json: {
        id: "msg_2",
        type: "message",
        role: "assistant",
        model: "claude-test",
        content: [
          { type: "text", text: "One moment." },
          { type: "tool_use", id: "toolu_09", name: "search", input: { query: "gates" } },
        ],
        stop_reason: "tool_use",
        stop_sequence: null,
        usage: { input_tokens: 11, output_tokens: 6 },
      },
    });
    const model = await resolveModel("anthropic:claude-test", { env });
    const result = await model.doGenerate({ prompt: toModelPrompt([msg("user", "gates?")]) });

    assert.equal(server.requests.at(-1)?.body.stream, undefined);
    assert.deepEqual(
      result.content.map((c) =>
        c.type === "tool-call" ? [c.type, c.toolName, c.input] : [c.type, "text" in c ? c.text : ""],
      ),
      [
        ["text", "One moment."],
        ["tool-call", "search", '{"query":"gates"}'],
      ],
    );
    assert.equal(result.finishReason.unified, "tool-calls");
    assert.equal(result.usage.inputTokens.total, 11);
  });

  test("reports an overloaded error as a retryable APICallError", async () => {
    server.reply({ status: 529, json: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } } });
    const model = await resolveModel("anthropic:claude-test", { env });
    await assert.rejects(
      async () => model.doStream({ prompt: toModelPrompt([msg("user", "hi")]) }),
      (error: unknown) => APICallError.isInstance(error) && error.statusCode === 529 && error.isRetryable,
    );
  });

  test("ANTHROPIC_BASE_URL without a path gets /v1, as the Anthropic SDK and Claude Code expect", async () => {
    server.reply({ sse: [messageStart(1), ...textBlock(0, "ok"), ...messageEnd("end_turn", 1)] });
    const model = await resolveModel("anthropic:claude-test", {
      env: { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: `${server.origin}/` },
    });
    await streamCall(model, { prompt: toModelPrompt([msg("user", "hi")]) });
    assert.equal(server.requests.at(-1)?.path, "/v1/messages");
  });

  test("ANTHROPIC_AUTH_TOKEN is sent as a bearer token when there is no API key", async () => {
    server.reply({ sse: [messageStart(1), ...textBlock(0, "ok"), ...messageEnd("end_turn", 1)] });
    const model = await resolveModel("anthropic:claude-test", {
      env: { ANTHROPIC_AUTH_TOKEN: "tok-123", ANTHROPIC_BASE_URL: server.origin },
    });
    await streamCall(model, { prompt: toModelPrompt([msg("user", "hi")]) });
    const headers = server.requests.at(-1)?.headers;
    assert.equal(headers?.authorization, "Bearer tok-123");
    assert.equal(headers?.["x-api-key"], undefined);
  });

  test("a missing ANTHROPIC_API_KEY fails the call, not the resolve, and names the variable", async () => {
    const before = server.requests.length;
    const model = await resolveModel("anthropic:claude-test", { env: { ANTHROPIC_BASE_URL: server.origin } });
    await assert.rejects(
      async () => model.doStream({ prompt: toModelPrompt([msg("user", "hi")]) }),
      (error: unknown) => LoadAPIKeyError.isInstance(error) && /ANTHROPIC_API_KEY/.test(error.message),
    );
    assert.equal(server.requests.length, before);
  });
});
