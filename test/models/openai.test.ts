import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { APICallError, LoadAPIKeyError } from "@ai-sdk/provider";
import { z } from "zod";
import { collectStream, resolveModel, toModelPrompt, toModelTools } from "../../src/models/index.js";
import { msg, streamCall } from "./helpers.js";
import { type MockServer, type SseFrame, startMockServer } from "./mock-server.js";

const chunk = (delta: unknown, extra: Record<string, unknown> = {}) => ({
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  created: 1700000000,
  model: "gpt-test",
  choices: [{ index: 0, delta, finish_reason: null }],
  ...extra,
});
const finish = (reason: string) => ({
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  created: 1700000000,
  model: "gpt-test",
  choices: [{ index: 0, delta: {}, finish_reason: reason }],
});
const usageChunk = (prompt: number, completion: number) => ({
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  created: 1700000000,
  model: "gpt-test",
  choices: [],
  usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
});
const sse = (...data: unknown[]): { sse: SseFrame[] } => ({
  sse: [...data.map((d) => ({ data: d })), { data: "[DONE]" }],
});

const weatherTool = {
  name: "get_weather",
  description: "Current weather for a city",
  inputSchema: z.object({ city: z.string(), unit: z.enum(["c", "f"]).default("c") }),
};

describe("openai: models over Chat Completions against a local server", () => {
  let server: MockServer;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    server = await startMockServer();
    env = { OPENAI_API_KEY: "sk-test-openai", OPENAI_BASE_URL: `${server.origin}/v1` };
  });
  after(() => server.close());

  test("streams text deltas and usage; the server gets the model, messages, stream options and bearer key", async () => {
    server.reply(
      sse(
        chunk({ role: "assistant", content: "" }),
        chunk({ content: "Hel" }),
        chunk({ content: "lo!" }),
        finish("stop"),
        usageChunk(12, 3),
      ),
    );
    const model = await resolveModel("openai:gpt-test", { env });
    const result = await streamCall(model, { prompt: toModelPrompt([msg("user", "Say hello")], "Be brief.") });

    const request = server.requests.at(-1);
    assert.equal(request?.path, "/v1/chat/completions");
    assert.equal(request?.headers.authorization, "Bearer sk-test-openai");
    assert.equal(request?.body.model, "gpt-test");
    assert.equal(request?.body.stream, true);
    assert.deepEqual(request?.body.stream_options, { include_usage: true });
    assert.deepEqual(request?.body.messages, [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Say hello" },
    ]);
    assert.deepEqual(result.parts, [{ type: "text", text: "Hello!" }]);
    assert.deepEqual(
      result.events.filter((e) => e.type === "text-delta").map((e) => e.delta),
      ["Hel", "lo!"],
    );
    assert.equal(result.finishReason, "stop");
    assert.equal(result.usage.inputTokens, 12);
    assert.equal(result.usage.outputTokens, 3);
    assert.equal(result.usage.totalTokens, 15);
  });

  test("streams two tool calls whose arguments arrive in pieces, and sends the tools' JSON schema", async () => {
    server.reply(
      sse(
        chunk({
          role: "assistant",
          content: null,
          tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "get_weather", arguments: "" } }],
        }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"ci' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: 'ty":"Paris"}' } }] }),
        chunk({
          tool_calls: [
            { index: 1, id: "call_b", type: "function", function: { name: "get_weather", arguments: '{"city":' } },
          ],
        }),
        chunk({ tool_calls: [{ index: 1, function: { arguments: '"Oslo","unit":"f"}' } }] }),
        finish("tool_calls"),
        usageChunk(40, 20),
      ),
    );
    const model = await resolveModel("openai:gpt-test", { env });
    const result = await streamCall(model, {
      prompt: toModelPrompt([msg("user", "Weather in Paris and Oslo?")]),
      tools: toModelTools([weatherTool]),
    });

    const body = server.requests.at(-1)?.body;
    assert.deepEqual(body.tools, [
      {
        type: "function",
        function: {
          name: "get_weather",
          description: "Current weather for a city",
          parameters: {
            $schema: "http://json-schema.org/draft-07/schema#",
            type: "object",
            properties: { city: { type: "string" }, unit: { default: "c", type: "string", enum: ["c", "f"] } },
            required: ["city"],
            additionalProperties: false,
          },
        },
      },
    ]);
    assert.deepEqual(
      result.toolCalls.map(({ toolCallId, toolName, input }) => ({ toolCallId, toolName, input })),
      [
        { toolCallId: "call_a", toolName: "get_weather", input: { city: "Paris" } },
        { toolCallId: "call_b", toolName: "get_weather", input: { city: "Oslo", unit: "f" } },
      ],
    );
    assert.deepEqual(result.parts, [
      { type: "tool_call", toolCallId: "call_a", toolName: "get_weather", input: { city: "Paris" } },
      { type: "tool_call", toolCallId: "call_b", toolName: "get_weather", input: { city: "Oslo", unit: "f" } },
    ]);
    assert.equal(result.finishReason, "tool-calls");
    assert.ok(result.events.some((e) => e.type === "tool-input-delta" && e.toolCallId === "call_a"));
  });

  test("sends earlier tool calls and their results back as assistant tool_calls and tool messages", async () => {
    server.reply(sse(chunk({ content: "Sunny." }), finish("stop")));
    const history = [
      msg("user", "Weather in Paris?"),
      msg("assistant", [
        { type: "text", text: "Checking." },
        { type: "tool_call", toolCallId: "call_a", toolName: "get_weather", input: { city: "Paris" } },
      ]),
      msg("tool", [{ type: "tool_result", toolCallId: "call_a", toolName: "get_weather", output: { temp: 21 } }]),
    ];
    const model = await resolveModel("openai:gpt-test", { env });
    const result = await streamCall(model, { prompt: toModelPrompt(history) });

    assert.deepEqual(server.requests.at(-1)?.body.messages, [
      { role: "user", content: "Weather in Paris?" },
      {
        role: "assistant",
        content: "Checking.",
        tool_calls: [
          { id: "call_a", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_a", content: '{"temp":21}' },
    ]);
    assert.deepEqual(result.parts, [{ type: "text", text: "Sunny." }]);
  });

  test("answers without streaming through doGenerate, with text, a tool call and usage", async () => {
    server.reply({
      json: {
        id: "chatcmpl-2",
        object: "chat.completion",
        created: 1700000000,
        model: "gpt-test",
        choices: [
          {
            index: 0,
            message: {
              role: "assistant",
              content: "Let me look.",
              tool_calls: [
                { id: "call_x", type: "function", function: { name: "get_weather", arguments: '{"city":"Rome"}' } },
              ],
            },
            finish_reason: "tool_calls",
          },
        ],
        usage: { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 },
      },
    });
    const model = await resolveModel("openai:gpt-test", { env });
    const result = await model.doGenerate({ prompt: toModelPrompt([msg("user", "Rome?")]) });

    assert.equal(server.requests.at(-1)?.body.stream, undefined);
    assert.deepEqual(result.content, [
      { type: "text", text: "Let me look." },
      { type: "tool-call", toolCallId: "call_x", toolName: "get_weather", input: '{"city":"Rome"}' },
    ]);
    assert.equal(result.finishReason.unified, "tool-calls");
    assert.equal(result.usage.inputTokens.total, 9);
    assert.equal(result.usage.outputTokens.total, 4);
  });

  test("reports an HTTP error as an APICallError carrying the status and the provider's message", async () => {
    server.reply({ status: 429, json: { error: { message: "Rate limit reached", type: "rate_limit_error" } } });
    const model = await resolveModel("openai:gpt-test", { env });
    await assert.rejects(
      async () => model.doStream({ prompt: toModelPrompt([msg("user", "hi")]) }),
      (error: unknown) =>
        APICallError.isInstance(error) && error.statusCode === 429 && /Rate limit reached/.test(error.message),
    );
  });

  test("fails a stream whose body carries an error object after output started", async () => {
    server.reply(
      sse(chunk({ content: "partial" }), { error: { message: "upstream overloaded", type: "server_error" } }),
    );
    const model = await resolveModel("openai:gpt-test", { env });
    const { stream } = await model.doStream({ prompt: toModelPrompt([msg("user", "hi")]) });
    await assert.rejects(() => collectStream(stream), /upstream overloaded/);
  });

  test("a missing OPENAI_API_KEY resolves fine but fails the call clearly, without a request", async () => {
    const before = server.requests.length;
    const model = await resolveModel("openai:gpt-test", { env: { OPENAI_BASE_URL: `${server.origin}/v1` } });
    await assert.rejects(
      async () => model.doStream({ prompt: toModelPrompt([msg("user", "hi")]) }),
      (error: unknown) =>
        LoadAPIKeyError.isInstance(error) &&
        /OPENAI_API_KEY/.test(error.message) &&
        /openai:gpt-test/.test(error.message),
    );
    await assert.rejects(async () => model.doGenerate({ prompt: [] }), /OPENAI_API_KEY/);
    assert.equal(server.requests.length, before);
  });

  test("uses the fetch option for every request", async () => {
    server.reply(sse(chunk({ content: "ok" }), finish("stop")));
    const seen: string[] = [];
    const model = await resolveModel("openai:gpt-test", {
      env,
      fetch: (input, init) => {
        seen.push(String(input));
        return fetch(input, init);
      },
    });
    await streamCall(model, { prompt: toModelPrompt([msg("user", "hi")]) });
    assert.deepEqual(seen, [`${server.origin}/v1/chat/completions`]);
  });
});
