import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { importOnDemand } from "../../scripts/on-demand.js";
import { definePlugin } from "../../src/plugins/index.js";
import { echoTool, promptText } from "../runtime/helpers.js";
import { api, startTestServer, type TestServer } from "./helpers.js";

const { default: OpenAI } = await importOnDemand<typeof import("openai")>("openai");

const NOTICE = "That topic is off limits here.";
const REASON = "internal: matched rule 17 of the secret list";

/** Blocks prompts that mention "forbidden", with a notice for the user and a reason that must never leave. */
const firewall = definePlugin({
  id: "firewall",
  setup(api) {
    api.on("before_agent_run", (e) =>
      e.prompt.includes("forbidden") ? { outcome: "block", reason: REASON, message: NOTICE } : undefined,
    );
  },
});

/** What the provider's own error says: it stays in the server's log, never in the answer. */
const PROVIDER_SECRET_DETAIL = "upstream account acct_4471 over quota";
/** A provider's status → what the client gets: 429 lets it back off; a provider's failure or refusal is 502. */
const PROVIDER_FAILURES: readonly (readonly [number, number, string])[] = [
  [429, 429, "provider_rate_limited"],
  [503, 502, "provider_unavailable"],
  [401, 502, "provider_refused"],
];

describe("OpenAI-compatible endpoints, driven by the real openai client and the AI SDK's OpenAI-compatible provider", () => {
  let server: TestServer;
  let client: InstanceType<typeof OpenAI>;
  before(async () => {
    server = await startTestServer(
      {
        runs: [
          {
            match: "^use a tool",
            turns: [
              { text: "Looking. ", toolCalls: [{ name: "Echo", input: { text: "x" } }] },
              { text: "The tool said x." },
            ],
          },
          { match: "^remember", turns: [{ text: "I remember: {{lastUserMessage}}" }] },
          ...PROVIDER_FAILURES.map(([status]) => ({
            match: `^provider fails ${status}`,
            turns: [{ error: { message: `${PROVIDER_SECRET_DETAIL} (${status})`, statusCode: status } }],
          })),
          { match: ".", turns: [{ text: "Hello from the agent, in three chunks.", chunks: 3 }] },
        ],
      },
      { plugins: [firewall], tools: [echoTool] },
    );
    client = new OpenAI({ apiKey: "unused-on-loopback", baseURL: server.base, maxRetries: 0 });
  });
  after(() => server.close());

  test("chat.completions.create answers with the agent's reply and the session to continue", async () => {
    const completion = await client.chat.completions.create({
      model: "gatehouse",
      messages: [{ role: "user", content: "hi" }],
    });
    assert.equal(completion.choices[0]?.message.content, "Hello from the agent, in three chunks.");
    assert.equal(completion.choices[0]?.finish_reason, "stop");
    assert.equal(completion.object, "chat.completion");
    const extra = (completion as unknown as { gatehouse: { session_id: string; outcome: string } }).gatehouse;
    assert.equal(extra.outcome, "completed");
    assert.ok(extra.session_id);
  });

  test("a failed provider call is answered 429 (rate limited) or 502 (failed, refused) with a code, never the provider's message", async () => {
    for (const [status, expected, code] of PROVIDER_FAILURES) {
      const error = await client.chat.completions
        .create({ model: "gatehouse", messages: [{ role: "user", content: `provider fails ${status}` }] })
        .then(
          () => assert.fail(`provider ${status}: the request succeeded`),
          (e: unknown) => e,
        );
      assert.ok(error instanceof OpenAI.APIError, String(error));
      assert.equal(error.status, expected, `provider ${status}`);
      assert.equal(error.code, code, `provider ${status}`);
      assert.match(error.message, /\(run [^)]+\)/);
      assert.doesNotMatch(error.message, /acct_4471|quota/);
    }
    const streamed = await client.chat.completions.create({
      model: "gatehouse",
      messages: [{ role: "user", content: "provider fails 429" }],
      stream: true,
    });
    const failure = await (async () => {
      for await (const _ of streamed) {
        // No chunk is expected before the error event.
      }
    })().then(
      () => assert.fail("the stream ended without an error"),
      (e: unknown) => e,
    );
    assert.ok(failure instanceof OpenAI.APIError, String(failure));
    assert.match(failure.message, /rate limiting/);
    assert.doesNotMatch(failure.message, /acct_4471/);
  });

  test("streamed chat completions deliver the same text chunk by chunk, then [DONE]", async () => {
    const stream = await client.chat.completions.create({
      model: "gatehouse",
      messages: [{ role: "user", content: "hi" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const deltas: string[] = [];
    let finish: string | null | undefined;
    let usage: unknown;
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      if (choice?.delta.content) deltas.push(choice.delta.content);
      if (choice?.finish_reason) finish = choice.finish_reason;
      if (chunk.usage) usage = chunk.usage;
    }
    assert.ok(deltas.length >= 3, `live deltas: ${JSON.stringify(deltas)}`);
    assert.equal(deltas.join(""), "Hello from the agent, in three chunks.");
    assert.equal(finish, "stop");
    assert.ok(usage);
  });

  test("earlier messages are prior history of a new session; the last user message is the turn; gates see them", async () => {
    const completion = await client.chat.completions.create({
      model: "gatehouse",
      messages: [
        { role: "system", content: "client system prompts are not the agent's" },
        { role: "user", content: "my name is Ada" },
        { role: "assistant", content: "Nice to meet you, Ada." },
        { role: "user", content: "remember my name" },
      ],
    });
    assert.equal(completion.choices[0]?.message.content, "I remember: remember my name");
    const sent = promptText(server.calls.at(-1) as never);
    assert.ok(sent.includes("my name is Ada") && sent.includes("Nice to meet you, Ada."), "the model saw the history");
    assert.ok(!sent.includes("client system prompts"), "a client's system message is not used");
    const sessionId = (completion as unknown as { gatehouse: { session_id: string } }).gatehouse.session_id;
    const detail = await api(server, "GET", `/v1/sessions/${sessionId}`);
    const texts = detail.body.messages.map(
      (m: { role: string; parts: { text?: string }[] }) => `${m.role}:${m.parts[0]?.text}`,
    );
    assert.deepEqual(texts, [
      "user:my name is Ada",
      "assistant:Nice to meet you, Ada.",
      "user:remember my name",
      "assistant:I remember: remember my name",
    ]);
  });

  test("X-Gatehouse-Session continues a stored session: the client sends only the new turn", async () => {
    const first = await client.chat.completions.create({
      model: "gatehouse",
      messages: [{ role: "user", content: "one" }],
    });
    const sessionId = (first as unknown as { gatehouse: { session_id: string } }).gatehouse.session_id;
    await client.chat.completions.create(
      { model: "gatehouse", messages: [{ role: "user", content: "two" }] },
      { headers: { "X-Gatehouse-Session": sessionId } },
    );
    const sent = promptText(server.calls.at(-1) as never);
    assert.ok(sent.includes("one") && sent.includes("two"));
    const detail = await api(server, "GET", `/v1/sessions/${sessionId}`);
    assert.equal(detail.body.runs.length, 2);
    const missing = await client.chat.completions
      .create(
        { model: "gatehouse", messages: [{ role: "user", content: "x" }] },
        { headers: { "X-Gatehouse-Session": "nope" } },
      )
      .catch((e: unknown) => e);
    assert.ok(missing instanceof OpenAI.NotFoundError);
  });

  test("a blocked turn answers with the notice as content (content_filter), never an error, never the reason", async () => {
    const completion = await client.chat.completions.create({
      model: "gatehouse",
      messages: [{ role: "user", content: "tell me the forbidden thing" }],
    });
    assert.equal(completion.choices[0]?.message.content, NOTICE);
    assert.equal(completion.choices[0]?.finish_reason, "content_filter");
    assert.ok(!JSON.stringify(completion).includes(REASON));
    const stream = await client.chat.completions.create({
      model: "gatehouse",
      messages: [{ role: "user", content: "forbidden again" }],
      stream: true,
    });
    let text = "";
    let raw = "";
    for await (const chunk of stream) {
      raw += JSON.stringify(chunk);
      text += chunk.choices[0]?.delta.content ?? "";
    }
    assert.equal(text, NOTICE);
    assert.ok(!raw.includes(REASON));
  });

  test("tool calls stay server-side: the client gets the answer, not tool_calls", async () => {
    const completion = await client.chat.completions.create({
      model: "gatehouse",
      messages: [{ role: "user", content: "use a tool please" }],
      tools: [{ type: "function", function: { name: "client_tool", parameters: { type: "object" } } }],
    });
    const message = completion.choices[0]?.message;
    assert.equal(message?.content, "The tool said x.");
    assert.equal(message?.tool_calls, undefined);
    const sessionId = (completion as unknown as { gatehouse: { session_id: string } }).gatehouse.session_id;
    const detail = await api(server, "GET", `/v1/sessions/${sessionId}`);
    assert.ok(JSON.stringify(detail.body.messages).includes('"toolName":"Echo"'), "the agent's own tool ran");
  });

  test("responses.create: a response id names a run, and previous_response_id continues its session", async () => {
    const first = await client.responses.create({ model: "gatehouse", input: "first turn" });
    assert.equal(first.output_text, "Hello from the agent, in three chunks.");
    assert.match(first.id, /^resp_/);
    const runId = first.id.slice(5);
    const run = await api(server, "GET", `/v1/runs/${runId}`);
    assert.equal(run.status, 200);
    const second = await client.responses.create({
      model: "gatehouse",
      input: "remember this",
      previous_response_id: first.id,
    });
    assert.equal(second.output_text, "I remember: remember this");
    const secondRun = await api(server, "GET", `/v1/runs/${second.id.slice(5)}`);
    assert.equal(secondRun.body.sessionId, run.body.sessionId);
    const unknown = await client.responses
      .create({ model: "gatehouse", input: "x", previous_response_id: "resp_nope" })
      .catch((e: unknown) => e);
    assert.ok(unknown instanceof OpenAI.NotFoundError);
  });

  test("streamed responses: text deltas, then response.completed with the same text", async () => {
    const stream = await client.responses.create({ model: "gatehouse", input: "hi", stream: true });
    let text = "";
    let completed: string | undefined;
    for await (const event of stream) {
      if (event.type === "response.output_text.delta") text += event.delta;
      if (event.type === "response.completed") {
        const item = event.response.output[0];
        completed = item?.type === "message" && item.content[0]?.type === "output_text" ? item.content[0].text : "";
      }
    }
    assert.equal(text, "Hello from the agent, in three chunks.");
    assert.equal(completed, text);
    const blocked = await client.responses.create({ model: "gatehouse", input: "forbidden" });
    assert.equal(blocked.output_text, NOTICE);
  });

  test("models.list lists the agent profiles; an unknown model is 404", async () => {
    const models = await client.models.list();
    assert.deepEqual(
      models.data.map((m) => m.id),
      ["gatehouse"],
    );
    const unknown = await client.chat.completions
      .create({ model: "gpt-nope", messages: [{ role: "user", content: "x" }] })
      .catch((e: unknown) => e);
    assert.ok(unknown instanceof OpenAI.NotFoundError);
  });

  test("the AI SDK's OpenAI-compatible provider talks to the server, streaming and not", async () => {
    const provider = createOpenAICompatible({ name: "gatehouse", baseURL: server.base });
    const model = provider.chatModel("gatehouse");
    const generated = await model.doGenerate({ prompt: [{ role: "user", content: [{ type: "text", text: "hi" }] }] });
    const text = generated.content.flatMap((c) => (c.type === "text" ? [c.text] : [])).join("");
    assert.equal(text, "Hello from the agent, in three chunks.");
    const { stream } = await model.doStream({ prompt: [{ role: "user", content: [{ type: "text", text: "hi" }] }] });
    let streamed = "";
    let deltas = 0;
    for await (const part of stream) {
      if (part.type === "text-delta") {
        streamed += part.delta;
        deltas++;
      }
    }
    assert.equal(streamed, "Hello from the agent, in three chunks.");
    assert.ok(deltas >= 3);
  });
});
