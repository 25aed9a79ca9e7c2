// Row ↔ record mapping of the server's tables (service.ts), shared by the SQL backends.
// PostgreSQL answers BIGINT as a string: numbers go through Number().
import type {
  ConsoleLogin,
  LiveRun,
  OrderedStep,
  PendingApproval,
  SessionOwner,
  StepKind,
  StepRow,
  StoredApiKey,
} from "./service.js";

export interface KeyRow {
  id: string;
  principal: string;
  name: string | null;
  hash: string;
  created_at: string;
  revoked_at: string | null;
  admin: number;
}
export interface OwnerRow {
  session_id: string;
  principal: string;
  title: string | null;
  created_at: string;
}
export interface StepDbRow {
  run_id: string;
  session_id: string;
  at: number | string;
  kind: StepKind;
  name: string;
  plugin_id: string | null;
  outcome: string | null;
  category: string | null;
  duration_ms: number | null;
  tool_call_id: string | null;
  step: number | null;
  detail: string | null;
}
export interface LiveDbRow {
  run_id: string;
  session_id: string;
  parent_run_id: string | null;
  depth: number;
  instance: string;
  started_at: number | string;
}
export interface ApprovalDbRow {
  run_id: string;
  tool_call_id: string;
  session_id: string;
  tool_name: string;
  title: string;
  asked_at: number | string;
  instance: string;
  detail: string | null;
}
export interface LoginDbRow {
  token_hash: string;
  principal: string;
  admin: number;
  key_id: string | null;
  csrf: string;
  expires_at: number | string;
}

export const toKey = (r: KeyRow): StoredApiKey => ({
  id: r.id,
  principal: r.principal,
  name: r.name,
  admin: Number(r.admin) === 1,
  hash: r.hash,
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
});
export const toOwner = (r: OwnerRow): SessionOwner => ({
  sessionId: r.session_id,
  principal: r.principal,
  title: r.title,
  createdAt: r.created_at,
});
export const toStep = (r: StepDbRow): StepRow => ({
  runId: r.run_id,
  sessionId: r.session_id,
  at: Number(r.at),
  kind: r.kind,
  name: r.name,
  pluginId: r.plugin_id,
  outcome: r.outcome,
  category: r.category,
  durationMs: r.duration_ms === null ? null : Number(r.duration_ms),
  toolCallId: r.tool_call_id,
  step: r.step,
  detail: r.detail ?? null,
});
export const toLive = (r: LiveDbRow): LiveRun => ({
  runId: r.run_id,
  sessionId: r.session_id,
  parentRunId: r.parent_run_id,
  depth: Number(r.depth),
  instance: r.instance,
  startedAt: Number(r.started_at),
});
export const toApproval = (r: ApprovalDbRow): PendingApproval => ({
  runId: r.run_id,
  toolCallId: r.tool_call_id,
  sessionId: r.session_id,
  toolName: r.tool_name,
  title: r.title,
  askedAt: Number(r.asked_at),
  instance: r.instance,
  detail: r.detail ?? null,
});
export const toLogin = (r: LoginDbRow): ConsoleLogin => ({
  tokenHash: r.token_hash,
  principal: r.principal,
  admin: Number(r.admin) === 1,
  keyId: r.key_id,
  csrf: r.csrf,
  expiresAt: Number(r.expires_at),
});

export const STEP_COLUMNS =
  "run_id, session_id, at, kind, name, plugin_id, outcome, category, duration_ms, tool_call_id, step, ord, detail";
export const stepValues = (s: OrderedStep) => [
  s.runId,
  s.sessionId,
  s.at,
  s.kind,
  s.name,
  s.pluginId,
  s.outcome,
  s.category,
  s.durationMs,
  s.toolCallId,
  s.step,
  s.ord,
  s.detail ?? null,
];
export const keyValues = (k: StoredApiKey) => [k.id, k.principal, k.name, k.hash, k.createdAt, k.admin ? 1 : 0];
export const ownerValues = (o: SessionOwner) => [o.sessionId, o.principal, o.title, o.createdAt];
export const liveValues = (r: LiveRun) => [r.runId, r.sessionId, r.parentRunId, r.depth, r.instance, r.startedAt];
export const approvalValues = (a: PendingApproval) => [
  a.runId,
  a.toolCallId,
  a.sessionId,
  a.toolName,
  a.title,
  a.askedAt,
  a.instance,
  a.detail ?? null,
];
export const loginValues = (l: ConsoleLogin) => [
  l.tokenHash,
  l.principal,
  l.admin ? 1 : 0,
  l.keyId,
  l.csrf,
  l.expiresAt,
];
