import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { trace } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { importOnDemand } from "../../scripts/on-demand.js";
import { definePlugin } from "../../src/plugins/index.js";
import { echoTool } from "../runtime/helpers.js";
import { api, startTestServer, type TestServer } from "./helpers.js";

const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = await importOnDemand<
  typeof import("@opentelemetry/sdk-trace-base")
>("@opentelemetry/sdk-trace-base");

const CLIENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN = "00f067aa0ba902b7";

describe("OpenTelemetry spans: request → run → model call / tool call → hook dispatch, continuing the client's traceparent", () => {
  const exporter = new InMemorySpanExporter();
  let server: TestServer;
  let seenTraceparent = "";
  before(async () => {
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
    const guard = definePlugin({
      id: "guard",
      setup(api) {
        api.on("before_tool_call", (e, ctx) => {
          seenTraceparent = ctx.traceparent;
          // serve denies an ask at once (server.approvals.mode "deny"): a denial after this hook.
          return (e.params as { text?: string }).text === "ask-me"
            ? { requireApproval: { title: "Echo?" } }
            : undefined;
        });
      },
    });
    server = await startTestServer(
      {
        runs: [
          {
            match: "^denied",
            turns: [{ toolCalls: [{ name: "Echo", input: { text: "ask-me" } }] }, { text: "done" }],
          },
          { turns: [{ toolCalls: [{ name: "Echo", input: { text: "x" } }] }, { text: "done" }] },
        ],
      },
      { tools: [echoTool], plugins: [guard] },
    );
  });
  after(async () => {
    await server.close();
    trace.disable();
  });

  test("one trace: the client's span is the parent of the request, which is the parent of the run and so on down", async () => {
    const session = await api(server, "POST", "/v1/sessions", { body: {} });
    exporter.reset();
    const res = await api(server, "POST", `/v1/sessions/${session.body.id}/runs`, {
      body: { prompt: "go" },
      headers: { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` },
    });
    assert.equal(res.body.outcome, "completed");
    const spans = exporter.getFinishedSpans();
    const byName = (name: string) => spans.filter((s) => s.name === name);
    const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;
    const [request] = byName("POST /v1/sessions/:id/runs");
    const [run] = byName("gatehouse.run");
    const models = byName("gatehouse.model_call");
    const [tool] = byName("gatehouse.tool_call");
    const [hook] = byName("gatehouse.hook before_tool_call");
    assert.ok(request && run && tool && hook, spans.map((s) => s.name).join(", "));
    for (const s of spans) assert.equal(s.spanContext().traceId, CLIENT_TRACE, `${s.name} is in the client's trace`);
    assert.equal(parentOf(request), CLIENT_SPAN);
    assert.equal(parentOf(run), request.spanContext().spanId);
    assert.equal(models.length, 2);
    for (const m of models) assert.equal(parentOf(m), run.spanContext().spanId);
    assert.equal(parentOf(tool), run.spanContext().spanId);
    assert.equal(parentOf(hook), tool.spanContext().spanId, "a tool's hook dispatch is under its tool call");
    assert.equal(hook.attributes["gatehouse.decision"], "pass");
    assert.equal(run.attributes["gatehouse.outcome"], "completed");
    assert.equal(
      seenTraceparent,
      `00-${CLIENT_TRACE}-${request.spanContext().spanId}-01`,
      "hooks' ctx.traceparent is the request span's context",
    );
    assert.ok(!JSON.stringify(spans.map((s) => s.attributes)).includes("done"), "no content in attributes");
  });

  test("a call the permission layer denies ends its tool span at the denial, marked denied", async () => {
    const session = await api(server, "POST", "/v1/sessions", { body: {} });
    exporter.reset();
    const res = await api(server, "POST", `/v1/sessions/${session.body.id}/runs`, { body: { prompt: "denied call" } });
    assert.equal(res.body.outcome, "completed");
    const spans = exporter.getFinishedSpans();
    const [tool] = spans.filter((s) => s.name === "gatehouse.tool_call");
    const [, secondModelCall] = spans
      .filter((s) => s.name === "gatehouse.model_call")
      .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
    assert.ok(tool && secondModelCall, spans.map((s) => s.name).join(", "));
    assert.equal(tool.attributes["gatehouse.denied"], true);
    const ns = (t: [number, number]) => BigInt(t[0]) * 1_000_000_000n + BigInt(t[1]);
    assert.ok(ns(tool.endTime) <= ns(secondModelCall.startTime), "the span ended before the model was called again");
  });
});
