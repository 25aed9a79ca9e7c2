import type { RunError } from "../../models/failure.js";
import type { AuditRecord, Message, Run } from "../../store/types.js";
import type { StepKind, StepRow } from "./records.js";

/** One step of a run's timeline, as the API answers it. */
export interface TimelineStep {
  readonly kind: StepKind;
  readonly at: string;
  readonly offsetMs: number;
  readonly name: string;
  readonly pluginId: string | null;
  readonly outcome: string | null;
  readonly category: string | null;
  readonly durationMs: number | null;
  readonly toolCallId: string | null;
  readonly step: number | null;
}

export interface TimelineRun extends Run {
  readonly durationMs: number | null;
  readonly recorded: boolean;
  /** A failed run's error as its result (and `--json`) gives it; null when none was recorded. */
  readonly error: RunError | null;
  readonly steps: TimelineStep[];
}

/** Outcomes of a decision that did not come from a handler's answer: the audit trail names the cause. */
const FAILURES = new Set(["error", "timeout", "invalid", "cancel"]);

/**
 * A session's runs, each with its steps in lifecycle order. A run served by `gatehouse serve`
 * has its steps as they were recorded; the audit trail adds who answered each approval ask and
 * the cause of a verdict that came from a failing handler (timeout, error). A run from
 * elsewhere (`gatehouse run`) is rebuilt from what the store keeps: its audit records and its
 * stored tool calls, without durations.
 */
export function buildTimeline(
  runs: readonly Run[],
  steps: readonly StepRow[],
  audit: readonly AuditRecord[],
  messages: readonly Message[],
): TimelineRun[] {
  const stepsByRun = groupBy(steps, (s) => s.runId);
  const auditByRun = groupBy(audit, (a) => a.runId ?? "");
  const messagesByRun = groupBy(messages, (m) => m.runId ?? "");
  return runs.map((run) => {
    const started = Date.parse(run.startedAt);
    const recorded = stepsByRun.get(run.id) ?? [];
    const records = auditByRun.get(run.id) ?? [];
    const rows = inLifecycleOrder(
      recorded.length > 0 ? withAudit(recorded, records) : fromStore(run, records, messagesByRun.get(run.id) ?? []),
    );
    const ended = run.endedAt === null ? null : Date.parse(run.endedAt) - started;
    const end = rows.find((r) => r.kind === "run-end");
    return {
      ...run,
      durationMs: end?.durationMs ?? ended,
      recorded: recorded.length > 0,
      error: errorOf(end?.detail),
      steps: rows.map((r) => ({
        kind: r.kind,
        at: new Date(r.at).toISOString(),
        offsetMs: Math.max(0, r.at - started),
        name: r.name,
        pluginId: r.pluginId,
        outcome: r.outcome,
        category: r.category,
        durationMs: r.durationMs,
        toolCallId: r.toolCallId,
        step: r.step,
      })),
    };
  });
}

type Row = Omit<StepRow, "runId" | "sessionId">;

/** Recorded steps, with each approval's answer and each failing handler's cause from the audit trail. */
function withAudit(steps: readonly StepRow[], audit: readonly AuditRecord[]): Row[] {
  const answers = audit.filter((a) => a.hook === "approval");
  const decisions = audit.filter((a) => a.hook !== "approval");
  const rows: Row[] = [];
  for (const s of steps) {
    if (s.kind === "approval") {
      const answer = answers.shift();
      rows.push(
        answer
          ? {
              ...s,
              outcome: answer.outcome,
              pluginId: answer.pluginId,
              durationMs: Math.max(0, Date.parse(answer.at) - s.at),
            }
          : s,
      );
      continue;
    }
    if (s.kind === "hook" && s.outcome !== "pass" && s.outcome !== "modify") {
      const at = decisions.findIndex((a) => a.hook === s.name && a.pluginId === s.pluginId);
      const decision = at >= 0 ? decisions.splice(at, 1)[0] : undefined;
      if (decision && FAILURES.has(decision.outcome)) {
        rows.push({ ...s, outcome: decision.outcome });
        continue;
      }
    }
    rows.push(s);
  }
  // Answers with no recorded ask (denied before it could wait): shown where they happened.
  for (const a of answers) rows.push(auditRow(a));
  return rows;
}

/**
 * Steps by when each began: rows are recorded as each step ends (a model call after the hooks
 * that fired while it streamed, a tool call after its verdicts). The start comes first and the
 * end last whatever their clocks say; steps that began in the same millisecond keep the order
 * they were recorded in.
 */
function inLifecycleOrder(rows: Row[]): Row[] {
  const rank = (r: Row) => (r.kind === "run-start" ? 0 : r.kind === "run-end" ? 2 : 1);
  // Array sort is stable: equal keys keep the recorded order.
  return [...rows].sort((a, b) => rank(a) - rank(b) || a.at - b.at);
}

/** The error kept with a failed run's end (JSON); null when there is none or it does not read. */
function errorOf(detail: string | null | undefined): RunError | null {
  if (!detail) return null;
  try {
    const parsed = JSON.parse(detail) as Partial<RunError> | null;
    return typeof parsed?.kind === "string" && typeof parsed.message === "string" ? (parsed as RunError) : null;
  } catch {
    return null;
  }
}

/** What the store keeps of a run no recorder saw: start, audit records, stored tool calls, end. */
function fromStore(run: Run, audit: readonly AuditRecord[], messages: readonly Message[]): Row[] {
  const started = Date.parse(run.startedAt);
  const rows: Row[] = [row("run-start", run.trigger, started, {})];
  for (const a of audit) rows.push(auditRow(a));
  const results = new Map<string, boolean>();
  for (const m of messages)
    for (const p of m.parts) if (p.type === "tool_result") results.set(p.toolCallId, p.isError === true);
  for (const m of messages)
    for (const p of m.parts)
      if (p.type === "tool_call")
        rows.push(
          row("tool-call", p.toolName, Date.parse(m.createdAt), {
            toolCallId: p.toolCallId,
            outcome: results.has(p.toolCallId) ? (results.get(p.toolCallId) ? "error" : "ok") : null,
          }),
        );
  if (run.endedAt !== null) {
    const ended = Date.parse(run.endedAt);
    rows.push(row("run-end", run.trigger, ended, { outcome: run.status, durationMs: ended - started }));
  }
  return rows;
}

function auditRow(a: AuditRecord): Row {
  return row(a.hook === "approval" ? "approval" : "hook", a.hook, Date.parse(a.at), {
    pluginId: a.pluginId,
    outcome: a.outcome,
    category: a.category,
  });
}

function row(kind: StepKind, name: string, at: number, fields: Partial<Row>): Row {
  return {
    kind,
    name,
    at,
    pluginId: null,
    outcome: null,
    category: null,
    durationMs: null,
    toolCallId: null,
    step: null,
    ...fields,
  };
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}
