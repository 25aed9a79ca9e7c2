import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { APICallError, type LanguageModelV3Prompt } from "@ai-sdk/provider";
import {
  collectStream,
  contextMessage,
  contextTextPart,
  createScriptedModel,
  GATEHOUSE_KEY,
  type ModelStreamEvent,
  resolveModel,
  ScriptedFileError,
  ScriptedModelError,
  type ScriptInput,
  toModelPrompt,
} from "../../src/models/index.js";
import { msg, streamCall } from "./helpers.js";

const user = (text: string, runStart = false): LanguageModelV3Prompt[number] => ({
  role: "user",
  content: [{ type: "text", text }],
  ...(runStart && { providerOptions: { [GATEHOUSE_KEY]: { runStart: true } } }),
});
const assistant = (text: string): LanguageModelV3Prompt[number] => ({
  role: "assistant",
  content: [{ type: "text", text }],
});
const toolCall = (id: string, name: string, input: unknown): LanguageModelV3Prompt[number] => ({
  role: "assistant",
  content: [{ type: "tool-call", toolCallId: id, toolName: name, input }],
});
const toolResult = (id: string, name: string, value: string | object): LanguageModelV3Prompt[number] => ({
  role: "tool",
  content: [
    {
      type: "tool-result",
      toolCallId: id,
      toolName: name,
      output: typeof value === "string" ? { type: "text", value } : { type: "json", value: value as never },
    },
  ],
});

const ask = (script: ScriptInput, prompt: LanguageModelV3Prompt) => streamCall(createScriptedModel(script), { prompt });
const textOf = (parts: { type: string; text?: string }[]) =>
  parts
    .filter((p) => p.type === "text")
    .map((p) => p.text)
    .join("");

function scriptFile(content: unknown): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-scripted-"));
  const file = "script.json";
  writeFileSync(join(dir, file), typeof content === "string" ? content : JSON.stringify(content));
  return { dir, file };
}

describe("scripted model: answers", () => {
  test("the n-th model call of a run answers with the n-th turn", async () => {
    const script: ScriptInput = {
      runs: [
        {
          turns: [
            { toolCalls: [{ name: "Read", input: { file_path: "a.txt" } }] },
            { text: "Read it: {{lastToolResult}}" },
          ],
        },
      ],
    };
    const first = await ask(script, [user("summarize a.txt")]);
    assert.deepEqual(first.parts, [
      { type: "tool_call", toolCallId: "call_0_0", toolName: "Read", input: { file_path: "a.txt" } },
    ]);
    assert.equal(first.finishReason, "tool-calls");

    const second = await ask(script, [
      user("summarize a.txt"),
      toolCall("call_0_0", "Read", { file_path: "a.txt" }),
      toolResult("call_0_0", "Read", "hello world"),
    ]);
    assert.deepEqual(second.parts, [{ type: "text", text: "Read it: hello world" }]);
    assert.equal(second.finishReason, "stop");
  });

  test("templates fill the run's prompt, the last user message and the last tool result (JSON as JSON)", async () => {
    const script: ScriptInput = {
      runs: [{ turns: [{ text: "x" }, { text: "p={{prompt}} u={{ lastUserMessage }} t={{lastToolResult}}" }] }],
    };
    const result = await ask(script, [
      user("first question", true),
      toolCall("c", "Glob", {}),
      toolResult("c", "Glob", { files: ["a", "b"] }),
      user("Please revise: include sizes"),
    ]);
    assert.equal(textOf(result.parts), 'p=first question u=Please revise: include sizes t={"files":["a","b"]}');
  });

  test("a template value containing a placeholder is not expanded again", async () => {
    const result = await ask({ runs: [{ turns: [{ text: "<{{prompt}}>" }] }] }, [user("{{lastToolResult}}")]);
    assert.equal(textOf(result.parts), "<{{lastToolResult}}>");
  });

  test("a run uses the first entry whose match matches its prompt; an entry without match takes any prompt", async () => {
    const script: ScriptInput = {
      runs: [
        { match: "^deploy\\b", turns: [{ text: "deploying" }] },
        { match: "weather", turns: [{ text: "sunny" }] },
        { turns: [{ text: "fallback" }] },
        { match: "weather", turns: [{ text: "never reached" }] },
      ],
    };
    assert.equal(textOf((await ask(script, [user("deploy prod")])).parts), "deploying");
    assert.equal(textOf((await ask(script, [user("what's the weather?")])).parts), "sunny");
    assert.equal(textOf((await ask(script, [user("predeploy weather")])).parts), "sunny");
    assert.equal(textOf((await ask(script, [user("hello")])).parts), "fallback");
  });

  test("tool calls get ids from their turn and position, inputs are filled from templates, and ids can be set", async () => {
    const script: ScriptInput = {
      runs: [
        {
          turns: [
            { text: "ok" },
            {
              toolCalls: [
                { name: "Bash", input: { command: "echo {{prompt}}", env: ["{{unknown}}"] } },
                { name: "Read", input: { file_path: "/x" }, id: "toolu_fixed" },
                { name: "Now" },
              ],
            },
          ],
        },
      ],
    };
    const result = await ask(script, [user("hi there"), assistant("ok")]);
    assert.deepEqual(
      result.toolCalls.map(({ toolCallId, toolName, input }) => ({ toolCallId, toolName, input })),
      [
        { toolCallId: "call_1_0", toolName: "Bash", input: { command: "echo hi there", env: ["{{unknown}}"] } },
        { toolCallId: "toolu_fixed", toolName: "Read", input: { file_path: "/x" } },
        { toolCallId: "call_1_2", toolName: "Now", input: {} },
      ],
    );
  });

  test("parts give a multi-part message, after the turn's text and before its tool calls", async () => {
    const script: ScriptInput = {
      runs: [
        {
          turns: [
            {
              text: "Intro.",
              parts: [
                { type: "reasoning", text: "thinking about {{prompt}}" },
                { type: "text", text: "Body." },
                { type: "image", mediaType: "image/png", data: "iVBORw0KGgo=" },
                { type: "text", text: "Outro." },
              ],
              toolCalls: [{ name: "Done", input: {} }],
            },
          ],
        },
      ],
    };
    const result = await ask(script, [user("cats")]);
    assert.deepEqual(result.parts, [
      { type: "text", text: "Intro." },
      { type: "reasoning", text: "thinking about cats" },
      { type: "text", text: "Body." },
      { type: "image", mediaType: "image/png", data: "iVBORw0KGgo=" },
      { type: "text", text: "Outro." },
      { type: "tool_call", toolCallId: "call_0_0", toolName: "Done", input: {} },
    ]);
    const generated = await createScriptedModel(script).doGenerate({ prompt: [user("cats")] });
    assert.deepEqual(
      generated.content.map((c) => c.type),
      ["text", "reasoning", "text", "file", "text", "tool-call"],
    );
  });

  test("chunks streams the text in that many deltas", async () => {
    const script: ScriptInput = { runs: [{ turns: [{ text: "abcdefgh", chunks: 3 }] }] };
    const result = await ask(script, [user("go")]);
    const deltas = result.events.filter(
      (e): e is Extract<ModelStreamEvent, { type: "text-delta" }> => e.type === "text-delta",
    );
    assert.deepEqual(
      deltas.map((e) => e.delta),
      ["ab", "cde", "fgh"],
    );
    assert.deepEqual(result.parts, [{ type: "text", text: "abcdefgh" }]);

    const short = await ask({ runs: [{ turns: [{ text: "hi", chunks: 10 }] }] }, [user("go")]);
    assert.deepEqual(
      short.events.filter((e) => e.type === "text-delta").map((e) => (e as { delta: string }).delta),
      ["h", "i"],
    );
  });

  test("usage is reported as scripted", async () => {
    const script: ScriptInput = {
      runs: [
        {
          turns: [
            { text: "x", usage: { inputTokens: 1200, outputTokens: 80, reasoningTokens: 30, cachedInputTokens: 1000 } },
          ],
        },
      ],
    };
    const result = await ask(script, [user("go")]);
    assert.deepEqual(result.usage, {
      inputTokens: 1200,
      outputTokens: 80,
      totalTokens: 1280,
      reasoningTokens: 30,
      cacheReadTokens: 1000,
      cacheWriteTokens: undefined,
    });
    const generated = await createScriptedModel(script).doGenerate({ prompt: [user("go")] });
    assert.deepEqual(generated.usage.inputTokens, {
      total: 1200,
      noCache: 200,
      cacheRead: 1000,
      cacheWrite: undefined,
    });
  });

  test("without usage, tokens are estimated from the prompt and answer and grow with the conversation", async () => {
    const script: ScriptInput = { runs: [{ turns: [{ text: "12345678" }, { text: "12345678" }] }] };
    const short = await ask(script, [user("abcd")]);
    assert.equal(short.usage.inputTokens, 1);
    assert.equal(short.usage.outputTokens, 2);
    const longer = await ask(script, [user("abcd"), assistant("x".repeat(40))]);
    assert.equal(longer.usage.inputTokens, 11);
  });

  test("an error turn fails the call with an APICallError that is not retryable and carries no prompt", async () => {
    const script: ScriptInput = {
      runs: [
        { match: "plain", turns: [{ error: "Overloaded" }] },
        { match: "status", turns: [{ error: { message: "Rate limited", statusCode: 429, isRetryable: true } }] },
      ],
    };
    const model = createScriptedModel(script);
    await assert.rejects(
      async () => model.doStream({ prompt: [user("plain secret prompt")] }),
      (error: unknown) =>
        APICallError.isInstance(error) &&
        error.message === "Overloaded" &&
        error.isRetryable === false &&
        !JSON.stringify(error.requestBodyValues).includes("secret"),
    );
    await assert.rejects(async () => model.doGenerate({ prompt: [user("plain")] }), /Overloaded/);
    await assert.rejects(
      async () => model.doStream({ prompt: [user("status")] }),
      (error: unknown) => APICallError.isInstance(error) && error.statusCode === 429 && error.isRetryable,
    );
  });

  test("an error turn with output streams the output, then fails the stream", async () => {
    const model = createScriptedModel({
      runs: [{ turns: [{ text: "partial answer", chunks: 2, error: "connection reset" }] }],
    });
    const { stream } = await model.doStream({ prompt: [user("go")] });
    const deltas: string[] = [];
    await assert.rejects(
      () => collectStream(stream, (e) => e.type === "text-delta" && deltas.push(e.delta)),
      (error: unknown) => APICallError.isInstance(error) && error.message === "connection reset",
    );
    assert.equal(deltas.join(""), "partial answer");
    await assert.rejects(async () => model.doGenerate({ prompt: [user("go")] }), /connection reset/);
  });

  test("running out of turns fails the call with a clear error", async () => {
    const model = createScriptedModel(
      { runs: [{ match: "deploy", turns: [{ text: "a" }, { text: "b" }] }] },
      { name: "demo.json" },
    );
    await assert.rejects(
      async () => model.doStream({ prompt: [user("deploy"), assistant("a"), assistant("b")] }),
      (error: unknown) =>
        error instanceof ScriptedModelError &&
        error.message ===
          "scripted model demo.json: run matching /deploy/ (runs[0]) has 2 turns; model call 3 has none",
    );
  });

  test("a prompt no run matches fails the call and lists the patterns, not the prompt", async () => {
    const model = createScriptedModel({
      runs: [
        { match: "^a", turns: [{ text: "a" }] },
        { match: "^b", turns: [{ text: "b" }] },
      ],
    });
    await assert.rejects(
      async () => model.doGenerate({ prompt: [user("zzz private")] }),
      (error: unknown) =>
        error instanceof ScriptedModelError &&
        error.message === "scripted model <inline>: no run matches this prompt (patterns: /^a/, /^b/)",
    );
  });

  test("an aborted signal rejects the call and stops a stream in progress", async () => {
    const model = createScriptedModel({ runs: [{ turns: [{ text: "abcdef", chunks: 6 }] }] });
    const aborted = new AbortController();
    aborted.abort(new Error("user cancelled"));
    await assert.rejects(
      async () => model.doStream({ prompt: [user("go")], abortSignal: aborted.signal }),
      /user cancelled/,
    );

    const controller = new AbortController();
    const { stream } = await model.doStream({ prompt: [user("go")], abortSignal: controller.signal });
    await assert.rejects(
      () => collectStream(stream, (e) => e.type === "text-delta" && controller.abort(new Error("stop now"))),
      /stop now/,
    );
  });
});

describe("scripted model: which run and which turn", () => {
  const script: ScriptInput = {
    runs: [
      {
        match: "^refactor",
        turns: [{ text: "draft 1" }, { text: "draft 2 after {{lastUserMessage}}" }, { text: "draft 3" }],
      },
      { turns: [{ text: "other: {{prompt}}" }] },
    ],
  };

  test("the runStart mark keeps a revision instruction in the same run: the turn count continues", async () => {
    const history = [
      msg("user", "refactor the parser", "r1"),
      msg("assistant", "draft 1", "r1"),
      msg("user", "Please revise: add tests", "r1"),
    ];
    const result = await ask(script, toModelPrompt(history, { runId: "r1" }));
    assert.equal(textOf(result.parts), "draft 2 after Please revise: add tests");
  });

  test("without the mark, the last user message starts the run", async () => {
    const history = [
      msg("user", "refactor the parser"),
      msg("assistant", "draft 1"),
      msg("user", "Please revise: add tests"),
    ];
    const result = await ask(script, toModelPrompt(history));
    assert.equal(textOf(result.parts), "other: Please revise: add tests");
  });

  test("earlier runs in the history do not count toward this run's turns", async () => {
    const history = [
      msg("user", "refactor a", "r0"),
      msg("assistant", "draft 1", "r0"),
      msg("assistant", "draft 2", "r0"),
      msg("user", "refactor b", "r1"),
    ];
    const result = await ask(script, toModelPrompt(history, { runId: "r1" }));
    assert.equal(textOf(result.parts), "draft 1");
  });

  test("injected context (system prompt, context messages, context parts, summaries) is not the prompt", async () => {
    const prompt = toModelPrompt([msg("summary", "earlier: refactor stuff", null), msg("user", "hello")], "sys");
    prompt.push(contextMessage("refactor reminder from a hook"));
    const last = prompt.find(
      (m) => m.role === "user" && m.content.some((p) => p.type === "text" && p.text === "hello"),
    );
    assert.ok(last && last.role === "user");
    last.content.push(contextTextPart(" [context: refactor]"));
    const result = await ask(script, prompt);
    assert.equal(textOf(result.parts), "other: hello");
  });

  test("scripted:echo answers every call with the run's user prompt", async () => {
    const model = await resolveModel("scripted:echo");
    const first = await streamCall(model, { prompt: toModelPrompt([msg("user", "ping")], "sys") });
    assert.deepEqual(first.parts, [{ type: "text", text: "ping" }]);
    const second = await streamCall(model, {
      prompt: toModelPrompt([msg("user", "ping", "r"), msg("assistant", "ping", "r"), msg("user", "again", "r")], {
        runId: "r",
      }),
    });
    assert.deepEqual(second.parts, [{ type: "text", text: "ping" }]);
    const generated = await model.doGenerate({ prompt: [user("pong")] });
    assert.deepEqual(generated.content, [{ type: "text", text: "pong" }]);
  });
});

describe("scripted model: files", () => {
  const good = {
    runs: [{ match: "time", turns: [{ toolCalls: [{ name: "Now" }] }, { text: "It is {{lastToolResult}}." }] }],
  };

  test("scripted:<file> reads the file relative to cwd and answers from it", async () => {
    const { dir, file } = scriptFile(good);
    const model = await resolveModel(`scripted:${file}`, { cwd: dir });
    assert.equal(model.modelId, file);
    const result = await streamCall(model, {
      prompt: [user("what time is it"), toolCall("call_0_0", "Now", {}), toolResult("call_0_0", "Now", "noon")],
    });
    assert.equal(textOf(result.parts), "It is noon.");
  });

  test("two model instances of one file give the same answers to the same prompt", async () => {
    const { dir, file } = scriptFile(good);
    const prompt: LanguageModelV3Prompt = [user("time?")];
    const a = await (await resolveModel(`scripted:${file}`, { cwd: dir })).doGenerate({ prompt });
    await (await resolveModel(`scripted:${file}`, { cwd: dir })).doGenerate({ prompt: [user("time, again")] });
    const b = await (await resolveModel(`scripted:${file}`, { cwd: dir })).doGenerate({ prompt });
    assert.deepEqual(a, b);
  });

  test("a separate process gives the same answer as this one", async () => {
    const { dir, file } = scriptFile(good);
    const prompt: LanguageModelV3Prompt = [
      user("what time is it"),
      toolCall("call_0_0", "Now", {}),
      toolResult("call_0_0", "Now", "9:00"),
    ];
    const here = await streamCall(await resolveModel(`scripted:${file}`, { cwd: dir }), { prompt });
    const helper = fileURLToPath(new URL("./scripted-answer.ts", import.meta.url));
    const output = execFileSync(
      process.execPath,
      ["--import", "tsx", helper, `scripted:${file}`, dir, JSON.stringify(prompt)],
      {
        encoding: "utf8",
      },
    );
    const { events: _events, ...collected } = here;
    assert.deepEqual(JSON.parse(output), JSON.parse(JSON.stringify(collected)));
  });

  const bad = async (content: unknown): Promise<string> => {
    const { dir, file } = scriptFile(content);
    try {
      await resolveModel(`scripted:./${file}`, { cwd: dir });
    } catch (error) {
      assert.ok(error instanceof ScriptedFileError, String(error));
      return error.message;
    }
    assert.fail("expected the file to be rejected");
  };

  test("a bad file is rejected at resolve time, naming the file and the JSON path", async () => {
    const message = await bad({ runs: [{ turns: [{ text: "a" }, { toolCalls: [{ name: 42 }] }] }] });
    assert.equal(
      message,
      "scripted model file ./script.json: runs[0].turns[1].toolCalls[0].name: Invalid input: expected string, received number",
    );
  });

  test("unknown keys, bad regexes, unknown templates and empty runs are each reported with their path", async () => {
    assert.match(
      await bad({ runs: [{ turns: [{ txt: "a" }] }] }),
      /^scripted model file \.\/script\.json: runs\[0\]\.turns\[0\]: Unrecognized key: "txt"$/,
    );
    assert.match(
      await bad({ runs: [{ match: "(", turns: [{ text: "a" }] }] }),
      /runs\[0\]\.match: invalid regular expression/,
    );
    assert.match(
      await bad({ runs: [{ turns: [{ text: "{{promt}}" }] }] }),
      /runs\[0\]\.turns\[0\]\.text: unknown template \{\{promt\}\}; expected one of \{\{prompt\}\}/,
    );
    assert.match(await bad({ runs: [] }), /runs: Too small: expected array to have >=1 items/);
    assert.match(await bad({ runs: [{ turns: [{ chunks: 0, text: "a" }] }] }), /runs\[0\]\.turns\[0\]\.chunks: /);
    assert.match(
      await bad({ runs: [{ turns: [{ parts: [{ type: "video", data: "x" }] }] }] }),
      /runs\[0\]\.turns\[0\]\.parts\[0\]\.type: /,
    );
    assert.match(
      await bad([]),
      /^scripted model file \.\/script\.json: \(top level\): Invalid input: expected object, received array$/,
    );
  });

  test("every problem of a file is listed, one per line", async () => {
    const message = await bad({ runs: [{ turns: [{ text: 1, usage: { inputTokens: -1 } }] }] });
    assert.deepEqual(
      message.split("\n").map((line) => line.split(": ")[1]),
      ["runs[0].turns[0].text", "runs[0].turns[0].usage.inputTokens"],
    );
  });

  test("a file that is missing or not JSON is reported as such", async () => {
    assert.match(await bad("{ runs: "), /^scripted model file \.\/script\.json:1:3: invalid JSON: /);
    await assert.rejects(
      () => resolveModel("scripted:./nope.json", { cwd: tmpdir() }),
      (error: unknown) =>
        error instanceof ScriptedFileError &&
        error.message === "scripted model file ./nope.json: cannot be read (ENOENT)",
    );
  });

  test("createScriptedModel validates an in-memory script the same way", () => {
    assert.throws(
      () => createScriptedModel({ runs: [{ turns: [] }] }, { name: "fixture" }),
      /^ScriptedFileError: scripted model fixture: runs\[0\]\.turns: Too small/,
    );
  });
});
