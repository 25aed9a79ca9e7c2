import {
  type Context,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { HOOKS, type HookName, type HookSpec } from "../hooks/catalog.js";
import type { HookInterceptor, Interception } from "../hooks/intercept.js";
import type { RunContext } from "../hooks/run-context.js";
import { VERSION } from "../version.js";

/**
 * Prometheus metrics and OpenTelemetry spans, both built on the engine's interceptors (no
 * call site knows about them). Labels and attributes are identifiers, enums and numbers only:
 * no content, no reason.
 */

interface Outcome {
  readonly outcome?: string;
  readonly by?: { readonly pluginId: string };
  readonly handled?: boolean;
  readonly decidedBy?: { readonly pluginId: string };
  readonly result?: Record<string, unknown>;
}

/** A dispatch's decision as a metric label, with the plugin that made it ("" when nobody decided). */
export function decisionOf(hook: HookName, out: unknown): { decision: string; plugin: string } {
  const spec: HookSpec = HOOKS[hook];
  const o = (out ?? {}) as Outcome;
  switch (spec.kind) {
    case "gate":
      return o.outcome === "block"
        ? { decision: "block", plugin: o.by?.pluginId ?? "" }
        : { decision: "pass", plugin: "" };
    case "claim":
      return o.handled ? { decision: "claim", plugin: o.by?.pluginId ?? "" } : { decision: "pass", plugin: "" };
    case "modify":
    case "sync": {
      if (o.decidedBy)
        return { decision: spec.blockField === "cancel" ? "cancel" : "block", plugin: o.decidedBy.pluginId };
      const changed = o.result !== undefined && Object.keys(o.result).length > 0;
      return { decision: changed ? "modify" : "pass", plugin: "" };
    }
    case "observe":
      return { decision: "observe", plugin: "" };
  }
}

export class ServerMetrics {
  readonly registry = new Registry();
  readonly runs: Counter<"outcome">;
  readonly hookDecisions: Counter<"hook" | "plugin" | "decision">;
  readonly hookSeconds: Histogram<"hook">;
  readonly modelSeconds: Histogram<"provider" | "model">;
  readonly activeRuns: Gauge;
  readonly refused: Counter<"reason">;
  readonly requests: Counter<"route" | "status">;

  constructor(activeRuns: () => number) {
    const registers = [this.registry];
    // prom-client's names already say what they measure (process_cpu_…, nodejs_heap_…).
    collectDefaultMetrics({ register: this.registry, prefix: "gatehouse_" });
    this.runs = new Counter({
      name: "gatehouse_runs_total",
      help: "Top-level runs by outcome.",
      labelNames: ["outcome"],
      registers,
    });
    this.hookDecisions = new Counter({
      name: "gatehouse_hook_decisions_total",
      help: "Hook dispatches by hook, deciding plugin and decision (pass, modify, block, claim, cancel, observe).",
      labelNames: ["hook", "plugin", "decision"],
      registers,
    });
    this.hookSeconds = new Histogram({
      name: "gatehouse_hook_duration_seconds",
      help: "How long a hook's dispatch took (all its handlers).",
      labelNames: ["hook"],
      buckets: [0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 15],
      registers,
    });
    this.modelSeconds = new Histogram({
      name: "gatehouse_model_call_duration_seconds",
      help: "Model calls by provider and model.",
      labelNames: ["provider", "model"],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
      registers,
    });
    this.activeRuns = new Gauge({
      name: "gatehouse_active_runs",
      help: "Runs this instance is running.",
      registers,
      collect() {
        this.set(activeRuns());
      },
    });
    this.refused = new Counter({
      name: "gatehouse_refused_requests_total",
      help: "Requests refused by a limit (too_many_runs, instance_busy, shutting_down, prompt_too_long, body_too_large).",
      labelNames: ["reason"],
      registers,
    });
    this.requests = new Counter({
      name: "gatehouse_http_requests_total",
      help: "HTTP requests by route and status.",
      labelNames: ["route", "status"],
      registers,
    });
  }

  interceptor(): HookInterceptor {
    return {
      name: "metrics",
      hooks: ["model_call_ended", "agent_end"],
      result: (d, out) => {
        if (d.hook === "model_call_ended") {
          const e = d.event as { provider: string; model: string; durationMs: number };
          this.modelSeconds.observe({ provider: e.provider, model: e.model }, e.durationMs / 1000);
        }
        if (d.hook === "agent_end" && d.run.depth === 0)
          this.runs.inc({ outcome: (d.event as { outcome: string }).outcome });
        if (d.handlers === 0) return;
        const { decision, plugin } = decisionOf(d.hook, out);
        this.hookDecisions.inc({ hook: d.hook, plugin, decision });
        if (!(HOOKS[d.hook] as HookSpec).detached)
          this.hookSeconds.observe({ hook: d.hook }, (performance.now() - d.startedAt) / 1000);
      },
    };
  }
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** A W3C traceparent as an OpenTelemetry context whose (remote) span is the parent of what starts in it. */
export function contextFromTraceparent(header: string | undefined): Context {
  const m = header === undefined ? null : TRACEPARENT.exec(header);
  if (!m) return ROOT_CONTEXT;
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId: m[1] as string,
    spanId: m[2] as string,
    traceFlags: Number.parseInt(m[3] as string, 16),
    isRemote: true,
  });
}

/** A span's context as a traceparent, or undefined when no tracer is recording (the no-op API). */
export function traceparentOf(span: Span): string | undefined {
  const c = span.spanContext();
  if (!trace.isSpanContextValid(c)) return undefined;
  return `00-${c.traceId}-${c.spanId}-0${(c.traceFlags & 1).toString(16)}`;
}

export function tracer(): Tracer {
  return trace.getTracer("gatehouse", VERSION);
}

interface RunSpans {
  readonly run: Span;
  readonly context: Context;
  model?: { span: Span; context: Context };
  readonly tools: Map<string, { span: Span; context: Context }>;
}

/**
 * Spans: run → model call / tool call → hook dispatch. A top-level run is a child of its
 * context's traceparent (the HTTP request's span, itself continuing the client's
 * `traceparent`); a sub-agent's run is a child of its parent's Agent tool call. Each hook
 * dispatch is a span under the tool call it is about, else the model call, else the run.
 * With no OpenTelemetry SDK registered the API is a no-op and this costs a few calls.
 */
export function tracingInterceptor(): HookInterceptor {
  const runs = new Map<string, RunSpans>();
  const dispatches = new WeakMap<Interception, Span>();
  const t = tracer();

  const runOf = (ctx: RunContext, now: number): RunSpans => {
    let spans = runs.get(ctx.runId);
    if (spans) return spans;
    const parent =
      ctx.parentRunId === undefined
        ? contextFromTraceparent(ctx.traceparent)
        : (() => {
            const p = runs.get(ctx.parentRunId);
            if (!p) return ROOT_CONTEXT;
            const agentCalls = [...p.tools.values()];
            return agentCalls.length === 1 ? (agentCalls[0] as { context: Context }).context : p.context;
          })();
    const run = t.startSpan(
      "gatehouse.run",
      {
        kind: SpanKind.INTERNAL,
        startTime: performance.timeOrigin + now,
        attributes: {
          "gatehouse.run_id": ctx.runId,
          "gatehouse.session_id": ctx.sessionId,
          "gatehouse.depth": ctx.depth,
          "gatehouse.agent_id": ctx.agentId,
          "gatehouse.trigger": ctx.trigger,
        },
      },
      parent,
    );
    spans = { run, context: trace.setSpan(parent, run), tools: new Map() };
    runs.set(ctx.runId, spans);
    return spans;
  };

  return {
    name: "tracing",
    hooks: [
      "message_received",
      "model_call_started",
      "model_call_ended",
      "before_tool_call",
      "after_tool_call",
      "permission_denied",
      "agent_end",
    ],
    call(d) {
      if (d.run.runId === "") return;
      const spans = runOf(d.run, d.startedAt);
      const e = d.event as { toolCallId?: string; toolName?: string; provider?: string; model?: string; step?: number };
      if (d.hook === "model_call_started") {
        const span = t.startSpan(
          "gatehouse.model_call",
          {
            attributes: {
              "gen_ai.system": e.provider ?? "",
              "gen_ai.request.model": e.model ?? "",
              "gatehouse.step": e.step ?? 0,
            },
          },
          spans.context,
        );
        spans.model = { span, context: trace.setSpan(spans.context, span) };
      }
      // A call a deny rule refuses never reaches before_tool_call: its span starts at the denial.
      const toolHook = d.hook === "before_tool_call" || d.hook === "permission_denied";
      if (toolHook && e.toolCallId !== undefined && !spans.tools.has(e.toolCallId)) {
        const span = t.startSpan(
          "gatehouse.tool_call",
          { attributes: { "gatehouse.tool_name": e.toolName ?? "", "gatehouse.tool_call_id": e.toolCallId } },
          spans.context,
        );
        spans.tools.set(e.toolCallId, { span, context: trace.setSpan(spans.context, span) });
      }
      if (d.handlers === 0) return;
      const under =
        (e.toolCallId !== undefined ? spans.tools.get(e.toolCallId)?.context : undefined) ??
        (d.hook.startsWith("model_call") || d.hook.startsWith("llm_") ? spans.model?.context : undefined) ??
        spans.context;
      dispatches.set(
        d,
        t.startSpan(
          `gatehouse.hook ${d.hook}`,
          { attributes: { "gatehouse.hook": d.hook, "gatehouse.handlers": d.handlers } },
          under,
        ),
      );
    },
    result(d, out) {
      const span = dispatches.get(d);
      if (span) {
        const { decision, plugin } = decisionOf(d.hook, out);
        span.setAttribute("gatehouse.decision", decision);
        if (plugin) span.setAttribute("gatehouse.plugin", plugin);
        span.end();
      }
      const spans = runs.get(d.run.runId);
      if (!spans) return;
      const e = d.event as { toolCallId?: string; outcome?: string; error?: string };
      if (d.hook === "model_call_ended" && spans.model) {
        if (e.error !== undefined) spans.model.span.setStatus({ code: SpanStatusCode.ERROR, message: e.error });
        spans.model.span.end();
        spans.model = undefined;
      }
      const blocked = d.hook === "before_tool_call" && (out as Outcome | undefined)?.result?.block === true;
      const denied = d.hook === "permission_denied";
      if ((d.hook === "after_tool_call" || blocked || denied) && e.toolCallId !== undefined) {
        const tool = spans.tools.get(e.toolCallId);
        if (blocked) tool?.span.setAttribute("gatehouse.blocked", true);
        if (denied) tool?.span.setAttribute("gatehouse.denied", true);
        tool?.span.end();
        spans.tools.delete(e.toolCallId);
      }
      if (d.hook === "agent_end") {
        for (const tool of spans.tools.values()) tool.span.end();
        spans.model?.span.end();
        spans.run.setAttribute("gatehouse.outcome", e.outcome ?? "");
        if (e.outcome === "failed") spans.run.setStatus({ code: SpanStatusCode.ERROR });
        spans.run.end();
        runs.delete(d.run.runId);
      }
    },
    error(d) {
      dispatches.get(d)?.setStatus({ code: SpanStatusCode.ERROR });
      dispatches.get(d)?.end();
    },
  };
}
