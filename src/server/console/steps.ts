import { HOOKS, type HookSpec } from "../../hooks/catalog.js";
import type { HookInterceptor, Interception } from "../../hooks/intercept.js";
import type { HookLogger } from "../../hooks/kinds/shared.js";
import { describeError, sanitizeLogLine } from "../../hooks/sanitize.js";
import { categorySlug } from "../../runtime/audit.js";
import { decisionOf } from "../telemetry.js";
import type { ConsoleRecords, LiveRun, StepKind, StepRow } from "./records.js";

interface Decided {
  readonly outcome?: string;
  readonly category?: string;
  readonly by?: { readonly pluginId: string };
  readonly decidedBy?: { readonly pluginId: string };
  readonly result?: Record<string, unknown>;
}

/**
 * A run's steps as the engine's interceptors see them, written to the service's records so that
 * every instance's console can show them: when a run starts and ends, each model call, each
 * tool call with its verdict, each hook decision (hook, deciding plugin, outcome, category —
 * never a reason), approval asks, retries, compactions and sub-agents, with durations.
 *
 * What is recorded is chosen field by field from the events: identifiers, names of registered
 * tools, hooks and models, enums and numbers — and a failed run's error as its result gives it.
 * Prompts, parameters, outputs, texts and reasons are never read. Rows are written in batches, once per turn of the event loop; a run's end
 * waits for its rows, so a client that got the run's answer finds its timeline.
 */
export class StepRecorder {
  private steps: StepRow[] = [];
  private started: LiveRun[] = [];
  private ended: string[] = [];
  private scheduled: Promise<void> | undefined;
  private writing: Promise<void> = Promise.resolve();
  private readonly runsSeen = new Set<string>();
  /** When each tool call's before_tool_call began (run id + tool call id → epoch ms). */
  private readonly toolStarts = new Map<string, number>();

  constructor(
    private readonly records: ConsoleRecords,
    private readonly instance: string,
    private readonly logger: HookLogger,
  ) {}

  interceptor(): HookInterceptor {
    return {
      name: "console-steps",
      hooks: [
        "message_received",
        "model_call_ended",
        "permission_denied",
        "after_compaction",
        "subagent_end",
        "agent_end",
      ],
      call: (d) => {
        if (d.run.runId === "") return;
        this.noticeRun(d);
        if (d.hook === "before_tool_call") {
          const e = d.event as { toolCallId: string };
          this.toolStarts.set(`${d.run.runId}\0${e.toolCallId}`, epoch(d.startedAt));
        }
      },
      result: (d, out) => (d.run.runId === "" ? undefined : this.onResult(d, out)),
      error: (d) => {
        if (d.run.runId === "" || d.handlers === 0) return;
        this.push(d, "hook", d.hook, { outcome: "error", durationMs: elapsed(d) });
      },
    };
  }

  /** Writes what is buffered; resolves when every row so far is written. */
  flush(): Promise<void> {
    const batch = { steps: this.steps, started: this.started, ended: this.ended };
    this.steps = [];
    this.started = [];
    this.ended = [];
    this.scheduled = undefined;
    if (batch.steps.length + batch.started.length + batch.ended.length > 0)
      this.writing = this.writing.then(() =>
        this.records.recordSteps(batch).catch((error: unknown) => {
          this.logger.warn(sanitizeLogLine(`console: run steps not recorded: ${describeError(error)}`));
        }),
      );
    return this.writing;
  }

  private onResult(d: Interception, out: unknown): Promise<void> | undefined {
    const runId = d.run.runId;
    const now = Date.now();
    const spec: HookSpec = HOOKS[d.hook];
    switch (d.hook) {
      case "model_call_ended": {
        const e = d.event as { provider: string; model: string; step: number; durationMs: number; error?: string };
        this.push(d, "model-call", `${e.provider}:${e.model}`, {
          at: now - e.durationMs,
          durationMs: e.durationMs,
          outcome: e.error === undefined ? "ok" : "error",
          step: e.step,
        });
        break;
      }
      case "after_compaction":
        this.push(d, "compaction", "compaction", { outcome: "compacted" });
        break;
      case "subagent_end": {
        const e = d.event as { outcome: string; childSessionId: string };
        this.push(d, "subagent", e.childSessionId, { outcome: e.outcome });
        break;
      }
      case "permission_denied": {
        // The call never runs: no after_tool_call will report it.
        const e = d.event as { toolName: string; toolCallId: string; deniedBy: string };
        const key = `${runId}\0${e.toolCallId}`;
        const at = this.toolStarts.get(key) ?? epoch(d.startedAt);
        this.toolStarts.delete(key);
        this.push(d, "tool-call", e.toolName, {
          at,
          durationMs: now - at,
          outcome: "denied",
          category: e.deniedBy,
          toolCallId: e.toolCallId,
        });
        break;
      }
      case "agent_end": {
        const e = d.event as { outcome: string; durationMs: number; failure?: unknown };
        this.push(d, "run-end", d.run.trigger, {
          outcome: e.outcome,
          durationMs: e.durationMs,
          // The run result's error: kind, provider, status and a line Gatehouse wrote, secrets masked.
          ...(e.failure === undefined ? {} : { detail: JSON.stringify(e.failure) }),
        });
        this.ended.push(runId);
        this.runsSeen.delete(runId);
        for (const key of this.toolStarts.keys()) if (key.startsWith(`${runId}\0`)) this.toolStarts.delete(key);
        // The run ends once its steps are written.
        return this.flush();
      }
    }
    if (d.handlers > 0 && spec.kind !== "observe") {
      const o = (out ?? {}) as Decided;
      const { decision, plugin } = decisionOf(d.hook, out);
      this.push(d, "hook", d.hook, {
        pluginId: plugin || null,
        outcome: decision,
        category: (spec.kind === "gate" && o.outcome === "block" && categorySlug(o.category)) || null,
        durationMs: elapsed(d),
      });
      if (d.hook === "before_agent_finalize" && (o.result?.action === "revise" || o.result?.retry !== undefined))
        this.push(d, "retry", d.hook, { outcome: "revise" });
    }
    if (d.hook === "before_tool_call") this.onBeforeTool(d, out as Decided);
    if (d.hook === "after_tool_call") this.onAfterTool(d, out as Decided);
    return undefined;
  }

  private onBeforeTool(d: Interception, out: Decided): void {
    const e = d.event as { toolName: string; toolCallId: string };
    const key = `${d.run.runId}\0${e.toolCallId}`;
    if (out.result?.block === true) {
      const at = this.toolStarts.get(key) ?? epoch(d.startedAt);
      this.toolStarts.delete(key);
      this.push(d, "tool-call", e.toolName, {
        at,
        durationMs: Date.now() - at,
        outcome: "blocked",
        pluginId: out.decidedBy?.pluginId ?? null,
        toolCallId: e.toolCallId,
      });
    } else if (out.result?.requireApproval !== undefined)
      this.push(d, "approval", e.toolName, { outcome: "asked", toolCallId: e.toolCallId });
  }

  private onAfterTool(d: Interception, out: Decided): void {
    const e = d.event as { toolName: string; toolCallId: string; error?: string; durationMs: number };
    const key = `${d.run.runId}\0${e.toolCallId}`;
    const at = this.toolStarts.get(key) ?? Date.now() - e.durationMs;
    this.toolStarts.delete(key);
    const withheld = out?.decidedBy !== undefined;
    this.push(d, "tool-call", e.toolName, {
      at,
      durationMs: Date.now() - at,
      outcome: withheld ? "withheld" : e.error === undefined ? "ok" : "error",
      pluginId: withheld ? (out.decidedBy?.pluginId ?? null) : null,
      toolCallId: e.toolCallId,
    });
  }

  /** The first dispatch seen in a run marks its start. */
  private noticeRun(d: Interception): void {
    const { runId, sessionId, parentRunId, depth, trigger } = d.run;
    if (this.runsSeen.has(runId)) return;
    this.runsSeen.add(runId);
    const startedAt = epoch(d.startedAt);
    this.started.push({
      runId,
      sessionId,
      parentRunId: parentRunId ?? null,
      depth,
      instance: this.instance,
      startedAt,
    });
    this.push(d, "run-start", trigger, { at: startedAt });
  }

  private push(
    d: Interception,
    kind: StepKind,
    name: string,
    fields: Partial<Omit<StepRow, "runId" | "sessionId" | "kind" | "name">>,
  ): void {
    this.steps.push({
      runId: d.run.runId,
      sessionId: d.run.sessionId,
      // Whole milliseconds: the column is an integer in every database.
      at: Math.round(fields.at ?? epoch(d.startedAt)),
      kind,
      name,
      pluginId: fields.pluginId ?? null,
      outcome: fields.outcome ?? null,
      category: fields.category ?? null,
      durationMs: fields.durationMs ?? null,
      toolCallId: fields.toolCallId ?? null,
      step: fields.step ?? null,
      detail: fields.detail ?? null,
    });
    this.scheduled ??= new Promise<void>((resolve) => setImmediate(() => void this.flush().then(resolve)));
  }
}

/** `performance.now()` as epoch milliseconds. */
const epoch = (at: number) => Math.round(performance.timeOrigin + at);
const elapsed = (d: Interception) =>
  (HOOKS[d.hook] as HookSpec).detached ? null : Math.round((performance.now() - d.startedAt) * 100) / 100;
