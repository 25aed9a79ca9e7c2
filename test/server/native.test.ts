import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { after, before, describe, test } from "node:test";
import { definePlugin } from "../../src/plugins/index.js";
import type { RunEvent } from "../../src/runtime/types.js";
import { echoTool, testGatehouse, waitingTool } from "../runtime/helpers.js";
import { api, type SseEvent, sse, startTestServer, type TestServer } from "./helpers.js";

const SCRIPT = {
  runs: [
    {
      match: "^tool",
      turns: [{ text: "Using it.", toolCalls: [{ name: "Echo", input: { text: "t" } }] }, { text: "Done." }],
    },
    { match: "^wait", turns: [{ toolCalls: [{ name: "Wait", input: { note: "n" } }] }, { text: "never" }] },
    { match: "^ask", turns: [{ toolCalls: [{ name: "Echo", input: { text: "asked" } }] }, { text: "After the ask." }] },
    { match: ".", turns: [{ text: "Plain answer in chunks.", chunks: 3 }] },
  ],
};

/** Asks for approval before every Echo call whose text is "asked". */
const asker = definePlugin({
  id: "asker",
  setup(api) {
    api.on("before_tool_call", (e) =>
      (e.params as { text?: string }).text === "asked" ? { requireApproval: { title: "Echo something?" } } : undefined,
    );
  },
});

const eventsOf = (events: readonly SseEvent[]) => events.map((e) => JSON.parse(e.data) as RunEvent);

describe("native API: sessions, runs, tenancy", () => {
  let server: TestServer;
  let alice: string;
  let bob: string;
  before(async () => {
    server = await startTestServer(SCRIPT, { tools: [echoTool] });
    alice = await server.key("alice");
    bob = await server.key("bob");
  });
  after(() => server.close());

  test("sessions: create with key and title, list newest first, get with runs and messages, delete", async () => {
    const created = await api(server, "POST", "/v1/sessions", {
      key: alice,
      body: { key: "support-42", title: "Refund" },
    });
    assert.equal(created.status, 201);
    assert.equal(created.body.title, "Refund");
    assert.equal(created.body.key, "support-42");
    const other = await api(server, "POST", "/v1/sessions", { key: alice, body: {} });
    const listed = await api(server, "GET", "/v1/sessions", { key: alice });
    assert.deepEqual(
      listed.body.data.slice(0, 2).map((s: { id: string }) => s.id),
      [other.body.id, created.body.id],
    );
    const run = await api(server, "POST", `/v1/sessions/${created.body.id}/runs`, {
      key: alice,
      body: { prompt: "hello" },
    });
    assert.equal(run.status, 200);
    assert.equal(run.body.outcome, "completed");
    assert.equal(run.body.reply, "Plain answer in chunks.");
    const detail = await api(server, "GET", `/v1/sessions/${created.body.id}`, { key: alice });
    assert.equal(detail.body.runs.length, 1);
    assert.deepEqual(
      detail.body.messages.map((m: { role: string }) => m.role),
      ["user", "assistant"],
    );
    const deleted = await api(server, "DELETE", `/v1/sessions/${created.body.id}`, { key: alice });
    assert.equal(deleted.status, 204);
    assert.equal((await api(server, "GET", `/v1/sessions/${created.body.id}`, { key: alice })).status, 404);
  });

  test("tenancy: another principal's sessions, runs and audit are 404, and absent from its list", async () => {
    const mine = await api(server, "POST", "/v1/sessions", { key: alice, body: { title: "private" } });
    const run = await api(server, "POST", `/v1/sessions/${mine.body.id}/runs`, { key: alice, body: { prompt: "hi" } });
    for (const [method, path, body] of [
      ["GET", `/v1/sessions/${mine.body.id}`, undefined],
      ["DELETE", `/v1/sessions/${mine.body.id}`, undefined],
      ["POST", `/v1/sessions/${mine.body.id}/runs`, { prompt: "x" }],
      ["GET", `/v1/runs/${run.body.runId}`, undefined],
      ["POST", `/v1/runs/${run.body.runId}/cancel`, undefined],
      ["GET", `/v1/audit?sessionId=${mine.body.id}`, undefined],
    ] as const) {
      const res = await api(server, method, path, { key: bob, ...(body ? { body } : {}) });
      assert.equal(res.status, 404, `${method} ${path}`);
    }
    const bobs = await api(server, "GET", "/v1/sessions", { key: bob });
    assert.ok(!bobs.body.data.some((s: { id: string }) => s.id === mine.body.id));
    assert.equal((await api(server, "GET", `/v1/sessions/${mine.body.id}`, { key: alice })).status, 200);
  });

  test("keys: none or a wrong one is 401 once keys exist; a revoked key stops working", async () => {
    assert.equal((await api(server, "GET", "/v1/sessions")).status, 401);
    const wrong = await api(server, "GET", "/v1/sessions", { key: `${alice.slice(0, -4)}AAAA` });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.body.error.code, "invalid_api_key");
    const carol = await server.key("carol");
    assert.equal((await api(server, "GET", "/v1/sessions", { key: carol })).status, 200);
    const id = /^ghk_([a-f0-9]+)_/.exec(carol)?.[1] as string;
    assert.equal(await server.service.records.revokeApiKey(id, new Date().toISOString()), true);
    assert.equal((await api(server, "GET", "/v1/sessions", { key: carol })).status, 401);
    const stored = JSON.stringify(await server.service.records.findApiKey(id));
    // The secret is everything after the id (base64url: it may itself hold "_").
    assert.ok(!stored.includes(carol.slice(`ghk_${id}_`.length)), "only a hash of the secret is stored");
  });

  test("SSE: the same run events gatehouse.stream() yields for the same turn, ending with run-end", async () => {
    const session = await api(server, "POST", "/v1/sessions", { key: alice, body: {} });
    const streamed = await sse(
      server,
      `/v1/sessions/${session.body.id}/runs`,
      { prompt: "tool please" },
      { key: alice },
    );
    assert.equal(streamed.status, 200);
    const overHttp = eventsOf(streamed.events);
    assert.deepEqual(
      streamed.events.map((e) => e.event),
      overHttp.map((e) => e.type),
      "each frame is named after its event",
    );
    const local = testGatehouse(SCRIPT, { tools: [echoTool] });
    const inProcess: RunEvent[] = [];
    for await (const e of local.gatehouse.stream({ prompt: "tool please" })) inProcess.push(e);
    const shape = (events: RunEvent[]) =>
      events.map((e) => (e.type === "run-start" || e.type === "run-end" ? e.type : JSON.stringify(e)));
    assert.deepEqual(shape(overHttp), shape(inProcess));
    const end = overHttp.at(-1) as Extract<RunEvent, { type: "run-end" }>;
    assert.equal(end.result.reply, "Done.");
    assert.ok(overHttp.some((e) => e.type === "tool-result"));
  });

  test("limits: a prompt too long is 400, a body too large 413, an unknown profile 404", async () => {
    const session = await api(server, "POST", "/v1/sessions", { key: alice, body: {} });
    const long = await api(server, "POST", `/v1/sessions/${session.body.id}/runs`, {
      key: alice,
      body: { prompt: "x".repeat(100_001) },
    });
    assert.equal(long.status, 400);
    assert.equal(long.body.error.code, "prompt_too_long");
    const huge = await api(server, "POST", `/v1/sessions/${session.body.id}/runs`, {
      key: alice,
      body: { prompt: "x".repeat(2 * 1024 * 1024) },
    });
    assert.equal(huge.status, 413);
    const model = await api(server, "POST", `/v1/sessions/${session.body.id}/runs`, {
      key: alice,
      body: { prompt: "x", model: "nope" },
    });
    assert.equal(model.status, 404);
    const invalid = await api(server, "POST", `/v1/sessions/${session.body.id}/runs`, {
      key: alice,
      body: { nope: 1 },
    });
    assert.equal(invalid.status, 400);
  });

  test("operations: healthz, readyz, Prometheus metrics by outcome and hook, and the checked-in OpenAPI document is the one served", async () => {
    assert.deepEqual((await api(server, "GET", "/healthz")).body, { status: "ok" });
    const ready = await api(server, "GET", "/readyz");
    assert.equal(ready.status, 200);
    assert.deepEqual(ready.body.checks, { store: true, plugins: true, draining: false });
    const metrics = await fetch(`${server.url}/metrics`).then((r) => r.text());
    assert.match(metrics, /gatehouse_runs_total\{outcome="completed"\} \d+/);
    assert.match(metrics, /gatehouse_model_call_duration_seconds_count\{provider="scripted"/);
    assert.match(metrics, /gatehouse_http_requests_total/);
    assert.match(metrics, /^gatehouse_process_cpu_user_seconds_total \d/m);
    assert.match(metrics, /^gatehouse_nodejs_eventloop_lag_seconds \d/m);
    assert.doesNotMatch(metrics, /gatehouse_process_process_|gatehouse_process_nodejs_/, "one prefix");
    const served = await api(server, "GET", "/openapi.json");
    const checkedIn = JSON.parse(await readFile(new URL("../../docs/openapi.json", import.meta.url), "utf8"));
    assert.deepEqual(served.body, checkedIn, "docs/openapi.json is stale: run npm run openapi");
    for (const path of [
      "/v1/sessions",
      "/v1/sessions/{id}",
      "/v1/sessions/{id}/runs",
      "/v1/runs/{runId}/cancel",
      "/v1/runs/{runId}/approvals/{toolCallId}",
      "/v1/audit",
      "/v1/chat/completions",
      "/v1/responses",
      "/v1/models",
      "/healthz",
      "/readyz",
      "/metrics",
    ])
      assert.ok(served.body.paths[path], `${path} is documented`);
  });
});

describe("native API: cancel, approvals, holdback, run limits", () => {
  test("cancel stops a running run; the request that started it answers with outcome cancelled", async () => {
    const wait = waitingTool();
    const server = await startTestServer(SCRIPT, { tools: [wait.tool] });
    try {
      const session = await api(server, "POST", "/v1/sessions", { body: {} });
      const running = api(server, "POST", `/v1/sessions/${session.body.id}/runs`, { body: { prompt: "wait here" } });
      await wait.started;
      const [run] = (await api(server, "GET", `/v1/sessions/${session.body.id}`)).body.runs;
      const cancel = await api(server, "POST", `/v1/runs/${run.id}/cancel`);
      assert.equal(cancel.status, 202);
      const result = await running;
      assert.equal(result.body.outcome, "cancelled");
      assert.equal((await api(server, "POST", `/v1/runs/${run.id}/cancel`)).status, 409);
    } finally {
      await server.close();
    }
  });

  test("shutdown: a run still going when the grace period ends is cancelled cleanly and answered; new runs get 503", async () => {
    const wait = waitingTool();
    const server = await startTestServer(SCRIPT, { tools: [wait.tool] });
    const session = await api(server, "POST", "/v1/sessions", { body: {} });
    const running = api(server, "POST", `/v1/sessions/${session.body.id}/runs`, { body: { prompt: "wait forever" } });
    await wait.started;
    const closing = server.running.close(50);
    const refused = await api(server, "POST", `/v1/sessions/${session.body.id}/runs`, { body: { prompt: "late" } });
    assert.equal(refused.status, 503);
    assert.equal(refused.body.error.code, "shutting_down");
    assert.equal((await running).body.outcome, "cancelled");
    await closing;
    await server.gatehouse.close();
  });

  test("approvals by default: denied at once as nobody could be asked (not 'not approved'), visible as an event, audited", async () => {
    const server = await startTestServer(SCRIPT, { tools: [echoTool], plugins: [asker] });
    try {
      const session = await api(server, "POST", "/v1/sessions", { body: {} });
      const streamed = eventsOf(
        (await sse(server, `/v1/sessions/${session.body.id}/runs`, { prompt: "ask first" })).events,
      );
      const types = streamed.map((e) => e.type);
      assert.ok(types.includes("approval-requested"));
      assert.ok(!types.includes("tool-call"), "the tool did not run");
      // What the model reads is what `run` says with nobody to ask: nobody said no.
      const blocked = streamed.find((e) => e.type === "tool-blocked");
      assert.equal(
        blocked?.type === "tool-blocked" && blocked.message,
        "Permission to use Echo was denied (it needs approval in default mode, and no one can be asked here).",
      );
      const audit = await api(server, "GET", `/v1/audit?sessionId=${session.body.id}`);
      assert.ok(
        audit.body.data.some(
          (r: { hook: string; outcome: string; pluginId: string }) =>
            r.hook === "permission" && r.outcome === "deny" && r.pluginId === "server",
        ),
        JSON.stringify(audit.body.data),
      );
    } finally {
      await server.close();
    }
  });

  test("approvals in client mode: the streaming client answers by request and the tool runs", async () => {
    const server = await startTestServer(SCRIPT, {
      tools: [echoTool],
      plugins: [asker],
      config: { approvals: { mode: "client" } },
    });
    try {
      const session = await api(server, "POST", "/v1/sessions", { body: {} });
      let runId = "";
      const answers: Promise<unknown>[] = [];
      const streamed = await sse(
        server,
        `/v1/sessions/${session.body.id}/runs`,
        { prompt: "ask first" },
        {
          onEvent: (e) => {
            const event = JSON.parse(e.data) as RunEvent;
            if (event.type === "run-start") runId = event.runId;
            if (event.type === "approval-requested")
              answers.push(
                api(server, "POST", `/v1/runs/${runId}/approvals/${event.toolCallId}`, {
                  body: { decision: "allow-once" },
                }),
              );
          },
        },
      );
      assert.equal(((await answers[0]) as { status: number }).status, 202);
      const types = eventsOf(streamed.events).map((e) => e.type);
      assert.ok(types.includes("tool-call") && types.includes("tool-result"), types.join(","));
      const end = eventsOf(streamed.events).at(-1) as Extract<RunEvent, { type: "run-end" }>;
      assert.equal(end.result.reply, "After the ask.");
    } finally {
      await server.close();
    }
  });

  test("holdback: with an output gate, SSE carries no text before the gate passed — the text comes once, as final", async () => {
    const gate = definePlugin({
      id: "gate",
      setup(api) {
        api.on("before_response_emit", (e) => ({ content: e.content.replace("Plain", "Checked") }));
      },
    });
    const server = await startTestServer(SCRIPT, { plugins: [gate] });
    try {
      const session = await api(server, "POST", "/v1/sessions", { body: {} });
      const events = eventsOf((await sse(server, `/v1/sessions/${session.body.id}/runs`, { prompt: "hello" })).events);
      assert.ok(!events.some((e) => e.type === "text-delta"));
      assert.deepEqual(
        events.find((e) => e.type === "final"),
        { type: "final", text: "Checked answer in chunks." },
      );
      assert.ok(!JSON.stringify(events).includes("Plain answer"));
    } finally {
      await server.close();
    }
  });

  test("run limits: over the per-principal limit is 429, over the instance limit 503, both with retry-after; a deadline is 504", async () => {
    const wait = waitingTool();
    const server = await startTestServer(SCRIPT, {
      tools: [wait.tool],
      config: { limits: { runsPerPrincipal: 1, runsPerInstance: 2, requestTimeoutMs: 60_000 } },
    });
    try {
      const a = await server.key("a");
      const b = await server.key("b");
      const c = await server.key("c");
      const sa = await api(server, "POST", "/v1/sessions", { key: a, body: {} });
      const sb = await api(server, "POST", "/v1/sessions", { key: b, body: {} });
      const sc = await api(server, "POST", "/v1/sessions", { key: c, body: {} });
      const first = api(server, "POST", `/v1/sessions/${sa.body.id}/runs`, { key: a, body: { prompt: "wait" } });
      await wait.started;
      const again = await api(server, "POST", `/v1/sessions/${sa.body.id}/runs`, { key: a, body: { prompt: "hi" } });
      assert.equal(again.status, 429);
      assert.equal(again.headers.get("retry-after"), "1");
      const second = await api(server, "POST", `/v1/sessions/${sb.body.id}/runs`, { key: b, body: { prompt: "hi" } });
      assert.equal(second.status, 200, "b has its own budget");
      const busyHolder = api(server, "POST", `/v1/sessions/${sb.body.id}/runs`, { key: b, body: { prompt: "wait" } });
      // Wait until the instance holds two runs, then a third principal is refused with 503.
      while (
        (await fetch(`${server.url}/metrics`).then((r) => r.text())).match(/gatehouse_active_runs (\d+)/)?.[1] !== "2"
      )
        await new Promise((r) => setImmediate(r));
      const busy = await api(server, "POST", `/v1/sessions/${sc.body.id}/runs`, { key: c, body: { prompt: "hi" } });
      assert.equal(busy.status, 503);
      assert.ok(busy.headers.get("retry-after"));
      const refused = await fetch(`${server.url}/metrics`).then((r) => r.text());
      assert.match(refused, /gatehouse_refused_requests_total\{reason="too_many_runs"\} 1/);
      assert.match(refused, /gatehouse_refused_requests_total\{reason="instance_busy"\} 1/);
      for (const run of (await api(server, "GET", `/v1/sessions/${sa.body.id}`, { key: a })).body.runs)
        await api(server, "POST", `/v1/runs/${run.id}/cancel`, { key: a });
      for (const run of (await api(server, "GET", `/v1/sessions/${sb.body.id}`, { key: b })).body.runs)
        if (run.status === "running") await api(server, "POST", `/v1/runs/${run.id}/cancel`, { key: b });
      await Promise.all([first, busyHolder]);
    } finally {
      await server.close();
    }
    const deadlineWait = waitingTool();
    const slow = await startTestServer(SCRIPT, {
      tools: [deadlineWait.tool],
      config: { limits: { requestTimeoutMs: 200 } },
    });
    try {
      const session = await api(slow, "POST", "/v1/sessions", { body: {} });
      const late = await api(slow, "POST", `/v1/sessions/${session.body.id}/runs`, { body: { prompt: "wait" } });
      assert.equal(late.status, 504);
      assert.equal(late.body.error.code, "deadline_exceeded");
    } finally {
      await slow.close();
    }
  });
});
