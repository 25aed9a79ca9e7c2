import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { APICallError } from "@ai-sdk/provider";
import { z } from "zod";
import {
  collectStream,
  GATEHOUSE_KEY,
  ModelStreamError,
  type ModelStreamEvent,
  SUMMARY_PREFIX,
  toModelPrompt,
  toModelTools,
} from "../../src/models/index.js";
import type { Tool } from "../../src/tools/types.js";
import { msg } from "./helpers.js";

function streamOf(parts: LanguageModelV3StreamPart[]): ReadableStream<LanguageModelV3StreamPart> {
  return new ReadableStream({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  });
}

const usage = (input: number, output: number) => ({
  inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});

describe("toModelPrompt", () => {
  test("puts the system prompt and leading system messages first, as system messages", () => {
    const prompt = toModelPrompt([msg("system", "House rules."), msg("user", "hi")], "You are Gatehouse.");
    assert.deepEqual(prompt, [
      { role: "system", content: "You are Gatehouse." },
      { role: "system", content: "House rules." },
      { role: "user", content: [{ type: "text", text: "hi" }] },
    ]);
  });

  test("turns a summary and a mid-conversation system message into marked user-side context", () => {
    const prompt = toModelPrompt([
      msg("summary", "We fixed the parser.", null),
      msg("user", "next?"),
      msg("assistant", "Tests."),
      msg("system", "Budget is low."),
    ]);
    assert.deepEqual(prompt, [
      {
        role: "user",
        content: [{ type: "text", text: `${SUMMARY_PREFIX}We fixed the parser.` }],
        providerOptions: { [GATEHOUSE_KEY]: { context: true, origin: "summary" } },
      },
      { role: "user", content: [{ type: "text", text: "next?" }] },
      { role: "assistant", content: [{ type: "text", text: "Tests." }] },
      {
        role: "user",
        content: [{ type: "text", text: "Budget is low." }],
        providerOptions: { [GATEHOUSE_KEY]: { context: true, origin: "system" } },
      },
    ]);
  });

  test("converts every part kind: reasoning, tool calls, text/JSON/error tool results, images and files", () => {
    const prompt = toModelPrompt([
      msg("user", [
        { type: "text", text: "Look:" },
        { type: "image", mediaType: "image/png", data: "iVBORw0KGgo=" },
        { type: "image", mediaType: "image/jpeg", data: "https://example.com/cat.jpg" },
        { type: "file", mediaType: "text/plain", data: "data:text/plain,hi%20there", filename: "a.txt" },
      ]),
      msg("assistant", [
        { type: "reasoning", text: "Need tools." },
        { type: "text", text: "" },
        { type: "tool_call", toolCallId: "c1", toolName: "Read", input: { file_path: "a" } },
        { type: "tool_call", toolCallId: "c2", toolName: "Bash", input: { command: "ls" } },
        { type: "tool_call", toolCallId: "c3", toolName: "Glob", input: { pattern: "*" } },
      ]),
      msg("tool", [{ type: "tool_result", toolCallId: "c1", toolName: "Read", output: "contents" }]),
      msg("tool", [
        { type: "tool_result", toolCallId: "c2", toolName: "Bash", output: { stdout: "x", code: 1 }, isError: true },
        { type: "tool_result", toolCallId: "c3", toolName: "Glob", output: ["a", "b"] },
      ]),
    ]);
    assert.equal(prompt.length, 3);
    const [user, assistant, tool] = prompt;
    assert.deepEqual(user, {
      role: "user",
      content: [
        { type: "text", text: "Look:" },
        { type: "file", mediaType: "image/png", data: "iVBORw0KGgo=" },
        { type: "file", mediaType: "image/jpeg", data: new URL("https://example.com/cat.jpg") },
        { type: "file", mediaType: "text/plain", data: Buffer.from("hi there").toString("base64"), filename: "a.txt" },
      ],
    });
    assert.deepEqual(assistant, {
      role: "assistant",
      content: [
        { type: "reasoning", text: "Need tools." },
        { type: "tool-call", toolCallId: "c1", toolName: "Read", input: { file_path: "a" } },
        { type: "tool-call", toolCallId: "c2", toolName: "Bash", input: { command: "ls" } },
        { type: "tool-call", toolCallId: "c3", toolName: "Glob", input: { pattern: "*" } },
      ],
    });
    // Results of one step stay in one tool message even when stored as two.
    assert.deepEqual(tool, {
      role: "tool",
      content: [
        { type: "tool-result", toolCallId: "c1", toolName: "Read", output: { type: "text", value: "contents" } },
        {
          type: "tool-result",
          toolCallId: "c2",
          toolName: "Bash",
          output: { type: "error-json", value: { stdout: "x", code: 1 } },
        },
        { type: "tool-result", toolCallId: "c3", toolName: "Glob", output: { type: "json", value: ["a", "b"] } },
      ],
    });
  });

  test("moves tool results out of user messages and text out of tool messages, keeping order", () => {
    const prompt = toModelPrompt([
      msg("user", [
        { type: "tool_result", toolCallId: "c1", toolName: "Read", output: "x" },
        { type: "text", text: "and also this" },
      ]),
      msg("tool", [
        { type: "tool_result", toolCallId: "c2", toolName: "Read", output: undefined, isError: true },
        { type: "text", text: "note from the tool layer" },
      ]),
    ]);
    assert.deepEqual(
      prompt.map((m) => [m.role, m.content.length]),
      [
        ["tool", 1],
        ["user", 1],
        ["tool", 1],
        ["user", 1],
      ],
    );
    assert.deepEqual(prompt[2]?.content[0], {
      type: "tool-result",
      toolCallId: "c2",
      toolName: "Read",
      output: { type: "error-text", value: "" },
    });
  });

  test("marks the first user message of the given run as the run start, and only that one", () => {
    const prompt = toModelPrompt(
      [
        msg("user", "old question", "run-0"),
        msg("assistant", "old answer", "run-0"),
        msg("user", "new question", "run-1"),
        msg("assistant", "draft", "run-1"),
        msg("user", "Please revise: shorter", "run-1"),
      ],
      { systemPrompt: "sys", runId: "run-1" },
    );
    const marked = prompt.filter((m) => m.providerOptions?.[GATEHOUSE_KEY]?.runStart === true);
    assert.equal(marked.length, 1);
    assert.deepEqual(marked[0]?.content, [{ type: "text", text: "new question" }]);
  });

  test("drops messages left empty and tool outputs that cannot be JSON are sent as text", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const prompt = toModelPrompt([
      msg("user", ""),
      msg("assistant", [{ type: "text", text: "" }]),
      msg("tool", [{ type: "tool_result", toolCallId: "c", toolName: "T", output: cyclic }]),
    ]);
    assert.deepEqual(prompt, [
      {
        role: "tool",
        content: [
          { type: "tool-result", toolCallId: "c", toolName: "T", output: { type: "text", value: "[object Object]" } },
        ],
      },
    ]);
  });
});

describe("toModelTools", () => {
  test("publishes the input side of zod schemas as closed draft-07 JSON schemas", () => {
    const [tool] = toModelTools([
      {
        name: "Edit",
        description: "Edit a file",
        inputSchema: z.object({
          file_path: z.string().describe("absolute path"),
          edits: z.array(z.object({ old: z.string(), new: z.string() })),
          replace_all: z.boolean().default(false),
          extra: z.object({ note: z.string() }).passthrough().optional(),
          meta: z.object({}).default({}).optional(),
        }),
      },
    ]);
    assert.equal(tool?.type, "function");
    assert.equal(tool?.name, "Edit");
    assert.equal(tool?.description, "Edit a file");
    // biome-ignore lint/suspicious/noExplicitAny: walking a JSON schema literal
    const schema = tool?.inputSchema as Record<string, any>;
    assert.equal(schema.$schema, "http://json-schema.org/draft-07/schema#");
    assert.equal(schema.additionalProperties, false);
    assert.deepEqual(schema.required, ["file_path", "edits"]);
    assert.equal(schema.properties.file_path.description, "absolute path");
    assert.equal(schema.properties.edits.items.additionalProperties, false);
    assert.deepEqual(schema.properties.extra.additionalProperties, {});
    // A default value is data, not a schema: it is left as it is.
    assert.deepEqual(schema.properties.meta.default, {});
  });

  test("accepts the tool layer's Tool objects as they are", () => {
    const read: Tool<{ file_path: string }, string> = {
      name: "Read",
      description: "Read a file",
      inputSchema: z.object({ file_path: z.string() }),
      execute: async () => "",
    };
    assert.deepEqual(toModelTools([read])[0]?.inputSchema.required, ["file_path"]);
  });
});

describe("collectStream", () => {
  test("keeps one part per block in order, concatenating deltas, and parses tool input JSON", async () => {
    const events: ModelStreamEvent[] = [];
    const result = await collectStream(
      streamOf([
        { type: "stream-start", warnings: [] },
        { type: "reasoning-start", id: "r" },
        { type: "reasoning-delta", id: "r", delta: "hmm " },
        { type: "reasoning-delta", id: "r", delta: "ok" },
        { type: "reasoning-end", id: "r" },
        { type: "text-start", id: "t1" },
        { type: "text-delta", id: "t1", delta: "Let me " },
        { type: "text-delta", id: "t1", delta: "check." },
        { type: "text-end", id: "t1" },
        { type: "tool-input-start", id: "c1", toolName: "Read" },
        { type: "tool-input-delta", id: "c1", delta: '{"file_path":' },
        { type: "tool-input-delta", id: "c1", delta: '"a"}' },
        { type: "tool-input-end", id: "c1" },
        { type: "tool-call", toolCallId: "c1", toolName: "Read", input: '{"file_path":"a"}' },
        { type: "text-start", id: "t2" },
        { type: "text-delta", id: "t2", delta: "Done." },
        { type: "text-end", id: "t2" },
        { type: "finish", usage: usage(10, 5), finishReason: { unified: "tool-calls", raw: "tool_use" } },
      ]),
      (event) => events.push(event),
    );
    assert.deepEqual(result.parts, [
      { type: "reasoning", text: "hmm ok" },
      { type: "text", text: "Let me check." },
      { type: "tool_call", toolCallId: "c1", toolName: "Read", input: { file_path: "a" } },
      { type: "text", text: "Done." },
    ]);
    assert.equal(result.finishReason, "tool-calls");
    assert.deepEqual(result.usage, {
      inputTokens: 10,
      outputTokens: 5,
      totalTokens: 15,
      reasoningTokens: undefined,
      cacheReadTokens: undefined,
      cacheWriteTokens: undefined,
    });
    assert.deepEqual(
      events.map((e) => e.type),
      [
        "reasoning-delta",
        "reasoning-delta",
        "text-delta",
        "text-delta",
        "tool-input-start",
        "tool-input-delta",
        "tool-input-delta",
        "tool-call",
        "text-delta",
        "finish",
      ],
    );
  });

  test("an empty tool input means {}, and invalid JSON is kept as text with an inputError", async () => {
    const result = await collectStream(
      streamOf([
        { type: "tool-call", toolCallId: "a", toolName: "Now", input: "" },
        { type: "tool-call", toolCallId: "b", toolName: "Read", input: '{"file_path": "x"' },
      ]),
    );
    assert.deepEqual(result.toolCalls[0]?.input, {});
    assert.equal(result.toolCalls[0]?.inputError, undefined);
    assert.equal(result.toolCalls[1]?.input, '{"file_path": "x"');
    assert.match(result.toolCalls[1]?.inputError ?? "", /tool call Read \(b\): arguments are not valid JSON/);
    // The stored part stays within the shared Part schema (no extra keys).
    assert.deepEqual(result.parts[1], {
      type: "tool_call",
      toolCallId: "b",
      toolName: "Read",
      input: '{"file_path": "x"',
    });
    assert.equal(result.finishReason, "other");
  });

  test("turns generated files into image or file parts", async () => {
    const result = await collectStream(
      streamOf([
        { type: "file", mediaType: "image/png", data: new Uint8Array([1, 2, 3]) },
        { type: "file", mediaType: "application/pdf", data: "JVBERi0=" },
      ]),
    );
    assert.deepEqual(result.parts, [
      { type: "image", mediaType: "image/png", data: "AQID" },
      { type: "file", mediaType: "application/pdf", data: "JVBERi0=" },
    ]);
  });

  test("rejects with the provider's Error on an error part, and wraps a non-Error payload", async () => {
    const apiError = new APICallError({ message: "boom", url: "u", requestBodyValues: {}, isRetryable: true });
    await assert.rejects(
      () =>
        collectStream(
          streamOf([
            { type: "text-delta", id: "0", delta: "x" },
            { type: "error", error: apiError },
          ]),
        ),
      (error: unknown) => error === apiError,
    );
    await assert.rejects(
      () => collectStream(streamOf([{ type: "error", error: { message: "server overloaded", code: 529 } }])),
      (error: unknown) => error instanceof ModelStreamError && error.message === "server overloaded",
    );
  });

  test("stops reading the stream when the event handler throws", async () => {
    let cancelled = false;
    const stream = new ReadableStream<LanguageModelV3StreamPart>({
      pull(controller) {
        controller.enqueue({ type: "text-delta", id: "0", delta: "x" });
      },
      cancel() {
        cancelled = true;
      },
    });
    await assert.rejects(
      () =>
        collectStream(stream, () => {
          throw new Error("consumer gone");
        }),
      /consumer gone/,
    );
    assert.equal(cancelled, true);
  });
});
