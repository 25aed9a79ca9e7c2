import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type MockServer, type Reply, type SseFrame, startMockServer } from "../models/mock-server.js";
import { gatehouse, project } from "./helpers.js";

// `gatehouse run` against a local server speaking OpenAI's Chat Completions protocol: retries,
// errors as data, the one `gatehouse:` line with its hint, exit statuses.

const KEY = "sk-test-retries-0123456789abcdef";
const chunk = (delta: unknown) => ({
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  created: 1700000000,
  model: "gpt-test",
  choices: [{ index: 0, delta, finish_reason: null }],
});
const finish = {
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  created: 1700000000,
  model: "gpt-test",
  choices: [{ index: 0, delta: {}, finish_reason: "stop" }],
  usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 },
};
const answer = (text: string): { sse: SseFrame[] } => ({
  sse: [
    { data: chunk({ role: "assistant", content: "" }) },
    { data: chunk({ content: text }) },
    { data: finish },
    { data: "[DONE]" },
  ],
});
const apiError = (status: number, message: string, headers?: Record<string, string>): Reply => ({
  status,
  json: { error: { message, type: "error", code: null } },
  ...(headers ? { headers } : {}),
});

describe("gatehouse run: model calls against an OpenAI-protocol server", { concurrency: 1 }, () => {
  let server: MockServer;
  let dir: string;
  let remove: () => Promise<void>;
  before(async () => {
    server = await startMockServer();
    ({ dir, remove } = await project());
  });
  after(async () => {
    await server.close();
    await remove();
  });

  const run = (args: string[], env: Record<string, string> = {}) => {
    server.requests.length = 0;
    return gatehouse(["run", "--model", "openai:gpt-test", "--data-dir", ".gh", ...args], {
      cwd: dir,
      env: { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: `${server.origin}/v1`, ...env },
    });
  };

  test("a 429 with retry-after-ms is retried and the run completes; the retry is a debug line", async () => {
    server.reply(apiError(429, "Rate limit reached", { "retry-after-ms": "20" }), answer("hello"));
    const r = await run(["-p", "hi"], { GATEHOUSE_LOG_LEVEL: "debug" });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "hello\n");
    assert.equal(server.requests.length, 2);
    assert.match(r.stderr, /gatehouse: model call: step 1 retry 1\/2 in 20 ms after rate_limit \(429\)/);
    assert.ok(!r.stderr.includes(KEY));
  });

  test("a one-off 500 and a 503 are retried up to the default of 2 retries", async () => {
    server.reply(
      apiError(500, "boom", { "retry-after": "0" }),
      apiError(503, "overloaded", { "retry-after": "0" }),
      answer("third time"),
    );
    const r = await run(["-p", "hi", "--json"]);
    assert.equal(r.code, 0, r.stderr);
    const result = JSON.parse(r.stdout);
    assert.equal(result.reply, "third time");
    assert.equal(result.steps, 1, "retries are not steps");
    assert.equal(server.requests.length, 3);
    assert.ok(Number.isInteger(result.durationMs), `durationMs is whole: ${result.durationMs}`);
  });

  test("500s past the retries fail the run with one line: the status, the retries and a hint", async () => {
    server.reply(
      apiError(500, "boom", { "retry-after": "0" }),
      apiError(500, "boom", { "retry-after": "0" }),
      apiError(500, "boom", { "retry-after": "0" }),
    );
    const r = await run(["-p", "hi"]);
    assert.equal(r.code, 1, r.stderr);
    assert.equal(server.requests.length, 3);
    assert.match(
      r.stderr,
      /gatehouse: run failed: openai \(HTTP 500, retried 2 times\): boom — the provider kept failing; try again later, or raise model\.maxRetries in gatehouse\.json/,
    );
  });

  test("a connection reset before the response is retried (backoff with jitter, no retry-after)", async () => {
    server.reply({ reset: true }, answer("reconnected"));
    const r = await run(["-p", "hi"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "reconnected\n");
    assert.equal(server.requests.length, 2);
  });

  test("429s past model.maxRetries fail the run: error as data in --json, one line saying it retried", async () => {
    const { dir: own, remove: done } = await project({ "gatehouse.json": { model: { maxRetries: 1 } } });
    try {
      server.reply(
        apiError(429, "Rate limit reached", { "retry-after": "0" }),
        apiError(429, "Rate limit reached", { "retry-after": "0" }),
      );
      server.requests.length = 0;
      const r = await gatehouse(["run", "--model", "openai:gpt-test", "-p", "hi", "--json"], {
        cwd: own,
        env: { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: `${server.origin}/v1` },
      });
      assert.equal(r.code, 1, r.stderr);
      assert.equal(server.requests.length, 2);
      const result = JSON.parse(r.stdout);
      assert.equal(result.outcome, "failed");
      assert.deepEqual(result.error, {
        kind: "rate_limit",
        provider: "openai",
        model: "gpt-test",
        status: 429,
        retryable: true,
        attempts: 2,
        message: "Rate limit reached",
      });
      assert.match(r.stderr, /^gatehouse: run failed: openai \(HTTP 429, retried 1 time\): Rate limit reached — /m);
      assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    } finally {
      await done();
    }
  });

  test("a 401 is not retried and its line names the key's variable, never the key", async () => {
    server.reply(apiError(401, `Incorrect API key provided: ${KEY}`));
    const r = await run(["-p", "hi"]);
    assert.equal(r.code, 1);
    assert.equal(server.requests.length, 1);
    assert.match(r.stderr, /gatehouse: run failed: openai \(HTTP 401\): .* — check OPENAI_API_KEY/);
    assert.ok(!r.stderr.includes(KEY), r.stderr);
  });

  test("a 404 names the model", async () => {
    server.reply(apiError(404, "The model `gpt-test` does not exist"));
    const r = await run(["-p", "hi"]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /\(HTTP 404\): .* — check the model name "gpt-test"/);
  });

  test("a missing key is a configuration error: exit 2, the variable named, no request made", async () => {
    const r = await run(["-p", "hi", "--json"], { OPENAI_API_KEY: "" });
    assert.equal(r.code, 2, r.stderr);
    assert.equal(server.requests.length, 0);
    assert.equal(JSON.parse(r.stdout).error.kind, "missing_key");
    assert.match(r.stderr, /gatehouse: OpenAI API key is missing .*set OPENAI_API_KEY/);
  });

  test("a reset after text streamed is not retried and reads the same in run and chat", async () => {
    const cut = { sse: answer("partial").sse, resetAfter: 2 };
    server.reply(cut);
    const r = await run(["-p", "hi", "--json"]);
    assert.equal(r.code, 1);
    assert.equal(server.requests.length, 1, "text had streamed: no retry");
    const error = JSON.parse(r.stdout).error;
    assert.equal(error.kind, "connection", JSON.stringify(error));
    const runLine = /gatehouse: (run failed: .*)/.exec(r.stderr)?.[1];
    assert.ok(runLine, r.stderr);

    server.reply(cut);
    server.requests.length = 0;
    const chat = await gatehouse(["chat", "--model", "openai:gpt-test", "--data-dir", ".gh"], {
      cwd: dir,
      env: { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: `${server.origin}/v1` },
      input: "hi\n/exit\n",
    });
    assert.ok(chat.stdout.includes(runLine) || chat.stderr.includes(runLine), `${chat.stdout}\n${chat.stderr}`);
  });

  test("malformed SSE fails with invalid_response and prints no raw fragment", async () => {
    server.reply({ rawSse: 'data: {"id":"x","choices":[{"delta":{"content":SECRETFRAGMENT}}]}\n\n' });
    const r = await run(["-p", "hi", "--json"]);
    assert.equal(r.code, 1);
    assert.equal(JSON.parse(r.stdout).error.kind, "invalid_response");
    assert.ok(!r.stderr.includes("SECRETFRAGMENT") && !r.stdout.includes("SECRETFRAGMENT"), r.stderr);
    assert.match(r.stderr, /openai sent a response that is not valid for its protocol/);
  });

  test("gatehouse.json model settings, --system-prompt and --append-system-prompt reach the provider; -m picks the model", async () => {
    const { dir: own, remove: done } = await project({
      "gatehouse.json": {
        model: { temperature: 0.3, maxOutputTokens: 123, reasoningEffort: "low" },
        systemPrompt: "Configured prompt.",
      },
    });
    const env = { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: `${server.origin}/v1` };
    try {
      server.reply(answer("a"), answer("b"));
      server.requests.length = 0;
      const appended = await gatehouse(
        ["run", "-m", "openai:gpt-test", "--append-system-prompt", "Answer in French.", "-p", "x"],
        { cwd: own, env },
      );
      assert.equal(appended.code, 0, appended.stderr);
      const replaced = await gatehouse(["run", "-m", "openai:gpt-test", "--system-prompt", "Be terse.", "-p", "x"], {
        cwd: own,
        env,
      });
      assert.equal(replaced.code, 0, replaced.stderr);
      const [first, second] = server.requests;
      assert.deepEqual(first?.body.messages[0], { role: "system", content: "Configured prompt.\n\nAnswer in French." });
      assert.deepEqual(second?.body.messages[0], { role: "system", content: "Be terse." });
      assert.equal(first?.body.temperature, 0.3);
      assert.equal(first?.body.max_tokens ?? first?.body.max_completion_tokens, 123);
      assert.equal(first?.body.reasoning_effort, "low");
    } finally {
      await done();
    }
  });

  test("a failed turn's prompt is not sent again with the next turn of the session", async () => {
    server.reply(apiError(400, "bad request"), answer("fine"));
    const failed = await run(["--session", "s-failed-turn", "-p", "first question"]);
    assert.equal(failed.code, 1);
    server.requests.length = 0;
    const next = await gatehouse(
      ["run", "--model", "openai:gpt-test", "--data-dir", ".gh", "--session", "s-failed-turn", "-p", "second question"],
      {
        cwd: dir,
        env: { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: `${server.origin}/v1` },
      },
    );
    assert.equal(next.code, 0, next.stderr);
    const users = server.requests[0]?.body.messages.filter((m: { role: string }) => m.role === "user");
    assert.deepEqual(
      users.map((m: { content: unknown }) => JSON.stringify(m.content)),
      [JSON.stringify("second question")],
    );
  });

  test("Anthropic: a 529 overloaded is retried, and gatehouse-events shows the retry as a run event", async () => {
    const ev = (type: string, data: Record<string, unknown> = {}): SseFrame => ({
      event: type,
      data: { type, ...data },
    });
    const reply: Reply = {
      sse: [
        ev("message_start", {
          message: {
            id: "msg_1",
            type: "message",
            role: "assistant",
            content: [],
            model: "claude-test",
            stop_reason: null,
            stop_sequence: null,
            usage: { input_tokens: 5, output_tokens: 1 },
          },
        }),
        ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
        ev("content_block_delta", { index: 0, delta: { type: "text_delta", text: "bonjour" } }),
        ev("content_block_stop", { index: 0 }),
        ev("message_delta", { delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 2 } }),
        ev("message_stop"),
      ],
    };
    server.reply(
      {
        status: 529,
        json: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
        headers: { "retry-after": "0" },
      },
      reply,
    );
    server.requests.length = 0;
    const r = await gatehouse(
      [
        "run",
        "--model",
        "anthropic:claude-test",
        "--data-dir",
        ".gh",
        "-p",
        "hi",
        "--output-format",
        "gatehouse-events",
      ],
      {
        cwd: dir,
        env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.origin },
      },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.equal(server.requests.length, 2);
    const events = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      events.filter((e) => e.type === "retry"),
      [{ type: "retry", step: 1, attempt: 2, maxAttempts: 3, delayMs: 0, kind: "server", status: 529 }],
    );
    assert.equal(events.at(-1).result.reply, "bonjour");
  });
});
