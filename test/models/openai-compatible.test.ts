import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { z } from "zod";
import { resolveModel, toModelPrompt, toModelTools } from "../../src/models/index.js";
import { msg, streamCall } from "./helpers.js";
import { type MockServer, startMockServer } from "./mock-server.js";

const frame = (delta: unknown, finish: string | null = null, usage?: unknown) => ({
  data: {
    id: "cmpl-1",
    object: "chat.completion.chunk",
    created: 1700000000,
    model: "llama-test",
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...(usage !== undefined && { usage }),
  },
});

describe("openai-compatible: models on any OpenAI-style server (Ollama, vLLM, LM Studio)", () => {
  let server: MockServer;
  before(async () => {
    server = await startMockServer();
  });
  after(() => server.close());

  test("posts to <baseURL>/chat/completions with the model from after '#', without auth when no key is set", async () => {
    server.reply({ sse: [frame({ role: "assistant", content: "Hi" }), frame({}, "stop"), { data: "[DONE]" }] });
    const model = await resolveModel(`openai-compatible:${server.origin}/api/v1#llama-test:8b`, {
      env: { OPENAI_API_KEY: "must-not-leak" },
    });
    const result = await streamCall(model, { prompt: toModelPrompt([msg("user", "hello")]) });

    const request = server.requests.at(-1);
    assert.equal(request?.path, "/api/v1/chat/completions");
    assert.equal(request?.body.model, "llama-test:8b");
    assert.equal(request?.headers.authorization, undefined);
    assert.deepEqual(request?.body.stream_options, { include_usage: true });
    assert.deepEqual(result.parts, [{ type: "text", text: "Hi" }]);
  });

  test("sends OPENAI_COMPATIBLE_API_KEY as a bearer token", async () => {
    server.reply({ sse: [frame({ content: "ok" }, "stop"), { data: "[DONE]" }] });
    const model = await resolveModel(`openai-compatible:${server.origin}/v1#m`, {
      env: { OPENAI_COMPATIBLE_API_KEY: "local-key" },
    });
    await streamCall(model, { prompt: toModelPrompt([msg("user", "hi")]) });
    assert.equal(server.requests.at(-1)?.headers.authorization, "Bearer local-key");
  });

  test("collects reasoning_content, text and a tool call streamed in pieces, with usage", async () => {
    server.reply({
      sse: [
        frame({ role: "assistant", reasoning_content: "The user wants " }),
        frame({ reasoning_content: "a file." }),
        frame({ content: "Reading it." }),
        frame({
          tool_calls: [{ index: 0, id: "call_7", type: "function", function: { name: "Read", arguments: '{"file_' } }],
        }),
        frame({ tool_calls: [{ index: 0, function: { arguments: 'path":"/tmp/a.txt"}' } }] }),
        frame({}, "tool_calls"),
        {
          data: {
            id: "cmpl-1",
            object: "chat.completion.chunk",
            created: 1,
            model: "llama-test",
            choices: [],
            usage: { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 },
          },
        },
        { data: "[DONE]" },
      ],
    });
    const model = await resolveModel(`openai-compatible:${server.origin}/v1#llama-test`, { env: {} });
    const tools = toModelTools([
      { name: "Read", description: "Read a file", inputSchema: z.object({ file_path: z.string() }) },
    ]);
    const result = await streamCall(model, { prompt: toModelPrompt([msg("user", "show /tmp/a.txt")]), tools });

    assert.equal(server.requests.at(-1)?.body.tools[0].function.name, "Read");
    assert.deepEqual(result.parts, [
      { type: "reasoning", text: "The user wants a file." },
      { type: "text", text: "Reading it." },
      { type: "tool_call", toolCallId: "call_7", toolName: "Read", input: { file_path: "/tmp/a.txt" } },
    ]);
    assert.equal(result.finishReason, "tool-calls");
    assert.equal(result.usage.inputTokens, 30);
    assert.equal(result.usage.outputTokens, 12);
  });

  test("answers without streaming through doGenerate", async () => {
    server.reply({
      json: {
        id: "cmpl-2",
        object: "chat.completion",
        created: 1,
        model: "llama-test",
        choices: [{ index: 0, message: { role: "assistant", content: "plain answer" }, finish_reason: "stop" }],
        usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
      },
    });
    const model = await resolveModel(`openai-compatible:${server.origin}/v1#llama-test`, { env: {} });
    const result = await model.doGenerate({ prompt: toModelPrompt([msg("user", "hi")]) });
    assert.deepEqual(result.content, [{ type: "text", text: "plain answer" }]);
    assert.equal(result.usage.outputTokens.total, 2);
  });
});
