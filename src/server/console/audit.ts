import type { FastifyRequest } from "fastify";
import type { z } from "zod";
import type { AuditRecord } from "../../store/types.js";
import { type ServerContext, visibleSession } from "../context.js";
import type { AuditFilterQuery } from "./schemas.js";
import { adminOnly } from "./sessions.js";

/** How many records, newest first, a filter searches when no session is named. */
export const SEARCHED_AUDIT = 10_000;

type Filter = z.output<typeof AuditFilterQuery>;
type Caller = Pick<FastifyRequest, "principal" | "admin">;
export interface ShownRecord extends AuditRecord {
  readonly principal: string | null;
}

/**
 * The audit records a caller may see, filtered, oldest first: one session's (its owner's, or an
 * admin's), or — without a session — those of the caller's sessions, or every record for an
 * admin key (records of sessions made outside serve, and of no session, included).
 */
export async function filteredAudit(ctx: ServerContext, caller: Caller, filter: Filter): Promise<ShownRecord[]> {
  if (filter.principal !== undefined && !caller.admin && filter.principal !== caller.principal) throw adminOnly();
  const { store } = ctx.gatehouse;
  let records: AuditRecord[];
  if (filter.sessionId !== undefined) {
    await visibleSession(ctx, caller, filter.sessionId);
    records = await store.listAudit({
      sessionId: filter.sessionId,
      ...(filter.runId === undefined ? {} : { runId: filter.runId }),
      limit: SEARCHED_AUDIT,
    });
  } else
    records = await store.listAudit({
      ...(filter.runId === undefined ? {} : { runId: filter.runId }),
      limit: SEARCHED_AUDIT,
    });
  const sessionIds = [...new Set(records.flatMap((r) => (r.sessionId === null ? [] : [r.sessionId])))];
  const owners = await ctx.records.sessionOwners(sessionIds);
  const since = filter.since === undefined ? undefined : Date.parse(filter.since);
  const until = filter.until === undefined ? undefined : Date.parse(filter.until);
  const shown: ShownRecord[] = [];
  for (const r of records) {
    const principal = r.sessionId === null ? null : (owners.get(r.sessionId)?.principal ?? null);
    if (!caller.admin && principal !== caller.principal) continue;
    if (filter.principal !== undefined && principal !== filter.principal) continue;
    if (filter.hook !== undefined && r.hook !== filter.hook) continue;
    if (filter.pluginId !== undefined && r.pluginId !== filter.pluginId) continue;
    if (filter.outcome !== undefined && r.outcome !== filter.outcome) continue;
    if (filter.category !== undefined && r.category !== filter.category) continue;
    const at = Date.parse(r.at);
    if (since !== undefined && at < since) continue;
    if (until !== undefined && at >= until) continue;
    shown.push({ ...r, principal });
  }
  return shown.slice(-filter.limit);
}

const BUCKET_MS = { hour: 3_600_000, day: 86_400_000 } as const;
/** At most this many buckets, the newest: a chart of a year by the hour would be unreadable anyway. */
const MAX_BUCKETS = 400;

/** Decisions per plugin per hour or day (UTC), every bucket from the first to the last present. */
export function summarize(records: readonly AuditRecord[], bucket: "hour" | "day") {
  const size = BUCKET_MS[bucket];
  const counts = new Map<string, Map<number, number>>();
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  for (const r of records) {
    const start = Math.floor(Date.parse(r.at) / size) * size;
    first = Math.min(first, start);
    last = Math.max(last, start);
    const byBucket = counts.get(r.pluginId) ?? new Map<number, number>();
    byBucket.set(start, (byBucket.get(start) ?? 0) + 1);
    counts.set(r.pluginId, byBucket);
  }
  const starts: number[] = [];
  if (records.length > 0)
    for (let t = Math.max(first, last - (MAX_BUCKETS - 1) * size); t <= last; t += size) starts.push(t);
  const series = [...counts.entries()]
    .map(([pluginId, byBucket]) => ({ pluginId, counts: starts.map((t) => byBucket.get(t) ?? 0) }))
    .sort((a, b) => total(b.counts) - total(a.counts) || a.pluginId.localeCompare(b.pluginId));
  return { buckets: starts.map((t) => new Date(t).toISOString()), series };
}

const total = (counts: readonly number[]) => counts.reduce((a, b) => a + b, 0);

export const EXPORT_COLUMNS = [
  "at",
  "hook",
  "pluginId",
  "outcome",
  "category",
  "principal",
  "sessionId",
  "runId",
  "id",
] as const;

/**
 * One CSV field (RFC 4180). A field a spreadsheet would read as a formula (=, +, -, @, tab, CR
 * first) is prefixed with an apostrophe.
 */
function csvField(value: string | null): string {
  if (value === null) return "";
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

export function auditCsv(records: readonly ShownRecord[]): string {
  const lines = [EXPORT_COLUMNS.join(",")];
  for (const r of records) lines.push(EXPORT_COLUMNS.map((c) => csvField(r[c] ?? null)).join(","));
  return `${lines.join("\r\n")}\r\n`;
}

export function auditJsonl(records: readonly ShownRecord[]): string {
  return records.map((r) => `${JSON.stringify(r)}\n`).join("");
}
