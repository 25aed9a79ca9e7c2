import type { Message, Part } from "../core/message.js";
import type { CompactionRow, InjectionRow } from "./backend.js";
import type {
  AuditRecord,
  InjectionPlacement,
  Role,
  Run,
  RunStatus,
  RunSummary,
  RunTrigger,
  RunUsage,
  Session,
} from "./types.js";

// Row shapes and mappers shared by the SQL backends. SQLite hands back timestamps and JSON as text;
// PostgreSQL as Date objects and parsed values. Both are accepted.

type Time = string | Date;
type Json<T> = string | T;

const time = (t: Time): string => (typeof t === "string" ? t : t.toISOString());
const maybeTime = (t: Time | null): string | null => (t === null ? null : time(t));
const json = <T>(value: Json<T>): T => (typeof value === "string" ? (JSON.parse(value) as T) : value);

export interface SessionRow {
  id: string;
  key: string | null;
  parent_session_id: string | null;
  created_at: Time;
  updated_at: Time;
  title: string | null;
}
export interface RunRow {
  id: string;
  session_id: string;
  seq: number;
  status: RunStatus;
  depth: number;
  parent_run_id: string | null;
  trigger: RunTrigger;
  job_id: string | null;
  started_at: Time;
  ended_at: Time | null;
  model?: string | null;
  usage?: Json<RunUsage> | null;
  detail?: string | null;
  error_kind?: string | null;
}
export interface MessageRow {
  id: string;
  session_id: string;
  run_id: string | null;
  seq: number;
  role: Role;
  parts: Json<Part[]>;
  metadata: Json<Record<string, unknown>>;
  idempotency_key: string | null;
  created_at: Time;
}
export interface CompactionDbRow {
  id: string;
  session_id: string;
  message_id: string;
  from_seq: number;
  to_seq: number;
  run_ids: Json<string[]>;
  created_at: Time;
}
export interface InjectionDbRow {
  id: string;
  session_id: string;
  text: string;
  placement: InjectionPlacement;
  idempotency_key: string | null;
  expires_at: Time | null;
  created_at: Time;
  consumed_by_run_id: string | null;
  consumed_at: Time | null;
}
export interface AuditRow {
  id: string;
  hook: string;
  plugin_id: string;
  outcome: AuditRecord["outcome"];
  category: string | null;
  session_id: string | null;
  run_id: string | null;
  at: Time;
}
/** A compaction joined with its summary message, message columns prefixed `m_`. */
export type CompactionWithMessageRow = CompactionDbRow & { [K in keyof MessageRow as `m_${K}`]: MessageRow[K] };

export const MESSAGE_COLUMNS = "id, session_id, run_id, seq, role, parts, metadata, idempotency_key, created_at";
export const PREFIXED_MESSAGE_COLUMNS = MESSAGE_COLUMNS.split(", ")
  .map((c) => `m.${c} AS m_${c}`)
  .join(", ");

export const toSession = (r: SessionRow): Session => ({
  id: r.id,
  key: r.key,
  parentSessionId: r.parent_session_id,
  createdAt: time(r.created_at),
  updatedAt: time(r.updated_at),
  ...(r.title === null ? {} : { title: r.title }),
});

export const toRun = (r: RunRow): Run => ({
  id: r.id,
  sessionId: r.session_id,
  seq: r.seq,
  status: r.status,
  depth: r.depth,
  parentRunId: r.parent_run_id,
  trigger: r.trigger,
  jobId: r.job_id,
  startedAt: time(r.started_at),
  endedAt: maybeTime(r.ended_at),
  ...(r.model == null ? {} : { model: r.model }),
  ...(r.usage == null ? {} : { usage: json(r.usage) }),
  ...(r.detail == null ? {} : { detail: r.detail }),
  ...(r.error_kind == null ? {} : { errorKind: r.error_kind }),
});

/** `finishRun`'s summary as the SQL backends' column values: model, usage (JSON text), detail, error kind. */
export function summaryColumns(s: RunSummary): [string | null, string | null, string | null, string | null] {
  return [
    s.model ?? null,
    s.usage === undefined ? null : JSON.stringify(s.usage),
    s.detail ?? null,
    s.errorKind ?? null,
  ];
}

export const toMessage = (r: MessageRow): Message => ({
  id: r.id,
  sessionId: r.session_id,
  runId: r.run_id,
  seq: r.seq,
  role: r.role,
  parts: json(r.parts),
  metadata: json(r.metadata),
  ...(r.idempotency_key === null ? {} : { idempotencyKey: r.idempotency_key }),
  createdAt: time(r.created_at),
});

export const toCompaction = (r: CompactionDbRow): CompactionRow => ({
  id: r.id,
  sessionId: r.session_id,
  messageId: r.message_id,
  fromSeq: r.from_seq,
  toSeq: r.to_seq,
  runIds: json(r.run_ids),
  createdAt: time(r.created_at),
});

export function toCompactionSummary(r: CompactionWithMessageRow) {
  const { messageId: _messageId, ...row } = toCompaction(r);
  const message = toMessage({
    id: r.m_id,
    session_id: r.m_session_id,
    run_id: r.m_run_id,
    seq: r.m_seq,
    role: r.m_role,
    parts: r.m_parts,
    metadata: r.m_metadata,
    idempotency_key: r.m_idempotency_key,
    created_at: r.m_created_at,
  });
  return { ...row, message };
}

export const toInjection = (r: InjectionDbRow): InjectionRow => ({
  id: r.id,
  sessionId: r.session_id,
  text: r.text,
  placement: r.placement,
  idempotencyKey: r.idempotency_key,
  expiresAt: maybeTime(r.expires_at),
  createdAt: time(r.created_at),
  consumedByRunId: r.consumed_by_run_id,
  consumedAt: maybeTime(r.consumed_at),
});

export const toAudit = (r: AuditRow): AuditRecord => ({
  id: r.id,
  hook: r.hook,
  pluginId: r.plugin_id,
  outcome: r.outcome,
  category: r.category,
  sessionId: r.session_id,
  runId: r.run_id,
  at: time(r.at),
});

/** The message as returned by an insert, without reading it back. */
export function insertedMessage(
  m: Omit<Message, "seq" | "idempotencyKey"> & { idempotencyKey: string | null; seq?: number },
  seq: number,
): Message {
  const { idempotencyKey, seq: _requested, ...rest } = m;
  return { ...rest, seq, ...(idempotencyKey === null ? {} : { idempotencyKey }) };
}
