import { randomUUID } from "node:crypto";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import type { Message, Part } from "../core/message.js";
import { maskSecrets } from "../core/secrets.js";
import type { CompactionRow, InjectionRow, NewMessage, NewRun, StoreBackend, StoreTx } from "./backend.js";
import { CoreStore, type CoreStoreOptions } from "./core.js";
import { notFound, runExists, StoreError, sessionExists } from "./errors.js";
import {
  type HeldLease,
  type LeaseRow,
  type LeaseState,
  type LeaseStatements,
  type RunLeaseOptions,
  RunLeases,
} from "./lease.js";
import { SqlitePluginState } from "./plugin-state-sqlite.js";
import { makeStorePrivate } from "./private-files.js";
import {
  type AuditRow,
  type CompactionDbRow,
  type CompactionWithMessageRow,
  type InjectionDbRow,
  insertedMessage,
  MESSAGE_COLUMNS,
  type MessageRow,
  PREFIXED_MESSAGE_COLUMNS,
  type RunRow,
  type SessionRow,
  summaryColumns,
  toAudit,
  toCompaction,
  toCompactionSummary,
  toInjection,
  toMessage,
  toRun,
  toSession,
} from "./rows.js";
import { SerialQueue } from "./serial.js";
import { SqliteServiceTables, type SqliteStatements } from "./service-sqlite.js";
import { PURGE_AUDIT, SqlitePurge } from "./sqlite-purge.js";
import { migrateSqlite } from "./sqlite-schema.js";
import type {
  AuditFilter,
  AuditRecord,
  CompactionSummary,
  ListSessionsOptions,
  Run,
  RunStatus,
  RunSummary,
  Session,
  SessionListing,
  SessionStore,
} from "./types.js";

export interface SqliteStoreOptions extends CoreStoreOptions {
  /** The database file; created (with its folder, both private) on first use. */
  readonly path: string;
  /**
   * Notices for the operator (never content): another connection holding the files so that a scrub's
   * old bytes stay until it lets go. Default: a `gatehouse:` line on stderr.
   */
  readonly warn?: (message: string) => void;
}

/** A thrown better-sqlite3 error's code (`SQLITE_CONSTRAINT_PRIMARYKEY`, …). */
const sqliteCode = (error: unknown): string | undefined => (error as { code?: unknown }).code as string | undefined;

/** The current time on the database's clock, in milliseconds since 1970 (run leases use it). */
const NOW_MS = "CAST(unixepoch('subsec') * 1000 AS INTEGER)";
const RUNNING_RUNS = "(SELECT count(*) FROM runs WHERE session_id = @session AND status = 'running')";

/** Recorded in the transaction of every change that removes or overwrites content (see `scrub_debt`). */
const OWE_PURGE =
  "INSERT INTO scrub_debt (id, scrubs) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET scrubs = scrubs + 1";

/** The primitives as synchronous statements; the backend wraps them in transactions. */
class SqliteTx implements StoreTx, LeaseStatements, SqliteStatements {
  private readonly cache = new Map<string, { statement: Database.Statement; writes: boolean }>();
  /** Set once a statement has changed a row; the write group reads and resets it. */
  wrote = false;

  /** `onScrub` hears of each change that owes a purge, before its transaction commits. */
  constructor(
    private readonly db: Database.Database,
    private readonly onScrub: () => void,
  ) {}

  /** Content is being deleted or overwritten: its old bytes must be purged from the files once this commits. */
  owePurge(): void {
    this.run(OWE_PURGE);
    this.onScrub();
  }

  private sql(text: string): { statement: Database.Statement; writes: boolean } {
    let entry = this.cache.get(text);
    if (!entry) {
      const statement = this.db.prepare(text);
      entry = { statement, writes: !statement.readonly };
      this.cache.set(text, entry);
    }
    return entry;
  }

  // A write statement changed something if it changed rows: RETURNING gives one row per changed row.

  get<R>(text: string, ...params: unknown[]): R | undefined {
    const { statement, writes } = this.sql(text);
    const row = statement.get(...params) as R | undefined;
    if (writes && row !== undefined) this.wrote = true;
    return row;
  }

  all<R>(text: string, ...params: unknown[]): R[] {
    const { statement, writes } = this.sql(text);
    const rows = statement.all(...params) as R[];
    if (writes && rows.length > 0) this.wrote = true;
    return rows;
  }

  run(text: string, ...params: unknown[]): Database.RunResult {
    const { statement, writes } = this.sql(text);
    const result = statement.run(...params);
    if (writes && result.changes > 0) this.wrote = true;
    return result;
  }

  // Sessions

  getSession(id: string): Session | undefined {
    const row = this.get<SessionRow>("SELECT * FROM sessions WHERE id = ?", id);
    return row && toSession(row);
  }

  latestSessionByKey(key: string): Session | undefined {
    const row = this.get<SessionRow>(
      "SELECT * FROM sessions WHERE key = ? ORDER BY created_at DESC, rowid DESC LIMIT 1",
      key,
    );
    return row && toSession(row);
  }

  insertSession(s: Session): void {
    try {
      this.run(
        "INSERT INTO sessions (id, key, parent_session_id, created_at, updated_at, title) VALUES (?, ?, ?, ?, ?, ?)",
        s.id,
        s.key,
        s.parentSessionId,
        s.createdAt,
        s.updatedAt,
        s.title ?? null,
      );
    } catch (error) {
      if (sqliteCode(error) === "SQLITE_CONSTRAINT_PRIMARYKEY") throw sessionExists(s.id);
      if (sqliteCode(error) === "SQLITE_CONSTRAINT_FOREIGNKEY")
        throw notFound("parent session", s.parentSessionId ?? "");
      throw error;
    }
  }

  listSessions(
    options: Required<Pick<ListSessionsOptions, "limit" | "offset">> & ListSessionsOptions,
  ): SessionListing[] {
    const where: string[] = [];
    const params: unknown[] = [];
    if (options.key !== undefined) {
      where.push("s.key = ?");
      params.push(options.key);
    }
    if (options.parentSessionId === null) where.push("s.parent_session_id IS NULL");
    else if (options.parentSessionId !== undefined) {
      where.push("s.parent_session_id = ?");
      params.push(options.parentSessionId);
    }
    const rows = this.all<SessionRow & { run_count: number; message_count: number }>(
      `SELECT s.*,
         (SELECT count(*) FROM runs r WHERE r.session_id = s.id) AS run_count,
         (SELECT count(*) FROM messages m WHERE m.session_id = s.id) AS message_count
       FROM sessions s ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
       ORDER BY s.updated_at DESC, s.id LIMIT ? OFFSET ?`,
      ...params,
      options.limit,
      options.offset,
    );
    return rows.map((r) => ({ ...toSession(r), runCount: r.run_count, messageCount: r.message_count }));
  }

  childSessionIds(id: string): string[] {
    return this.all<{ id: string }>("SELECT id FROM sessions WHERE parent_session_id = ?", id).map((r) => r.id);
  }

  deleteSession(id: string): boolean {
    const deleted = this.run("DELETE FROM sessions WHERE id = ?", id).changes > 0;
    if (deleted) this.owePurge();
    return deleted;
  }

  setSessionTitle(id: string, title: string | null): boolean {
    return this.run("UPDATE sessions SET title = ? WHERE id = ?", title, id).changes > 0;
  }

  // Runs

  getRun(id: string): Run | undefined {
    const row = this.get<RunRow>("SELECT * FROM runs WHERE id = ?", id);
    return row && toRun(row);
  }

  insertRun(run: NewRun): Run {
    // The insert proves the session exists (no row otherwise) and the id is new (a constraint error).
    let inserted: { seq: number } | undefined;
    try {
      inserted = this.get<{ seq: number }>(
        `INSERT INTO runs (id, session_id, seq, status, depth, parent_run_id, trigger, job_id, started_at, ended_at)
         SELECT ?, id, next_run_seq, ?, ?, ?, ?, ?, ?, ? FROM sessions WHERE id = ?
         RETURNING seq`,
        run.id,
        run.status,
        run.depth,
        run.parentRunId,
        run.trigger,
        run.jobId,
        run.startedAt,
        run.endedAt,
        run.sessionId,
      );
    } catch (error) {
      if (sqliteCode(error) === "SQLITE_CONSTRAINT_PRIMARYKEY") throw runExists(run.id);
      throw error;
    }
    if (!inserted) throw notFound("session", run.sessionId);
    this.run(
      "UPDATE sessions SET next_run_seq = next_run_seq + 1, updated_at = ? WHERE id = ?",
      run.startedAt,
      run.sessionId,
    );
    return { ...run, seq: inserted.seq };
  }

  setRunStatus(id: string, status: RunStatus, endedAt: string | null): Run | undefined {
    const row = this.get<RunRow>(
      "UPDATE runs SET status = ?, ended_at = ? WHERE id = ? RETURNING *",
      status,
      endedAt,
      id,
    );
    return row && toRun(row);
  }

  finishRun(id: string, status: RunStatus, endedAt: string, summary: RunSummary): Run | undefined {
    const row = this.get<RunRow>(
      `UPDATE runs SET status = CASE status WHEN 'blocked' THEN 'blocked' ELSE ? END, ended_at = ?,
         model = ?, usage = ?, detail = ?, error_kind = ?
       WHERE id = ? RETURNING *`,
      status,
      endedAt,
      ...summaryColumns(summary),
      id,
    );
    return row && toRun(row);
  }

  listRuns(sessionId: string): Run[] {
    return this.all<RunRow>("SELECT * FROM runs WHERE session_id = ? ORDER BY seq", sessionId).map(toRun);
  }

  // Messages

  /**
   * Two statements: the insert takes its position from the session row and proves the session exists,
   * the run belongs to it and the key is new (no row otherwise); then the session's counter moves on.
   */
  appendMessage(m: NewMessage): Message {
    const values = {
      id: m.id,
      session: m.sessionId,
      run: m.runId,
      seq: m.seq ?? null,
      role: m.role,
      parts: JSON.stringify(m.parts),
      metadata: JSON.stringify(m.metadata),
      key: m.idempotencyKey,
      at: m.createdAt,
    };
    const inserted = this.get<{ seq: number }>(
      m.seq === undefined
        ? `INSERT INTO messages (${MESSAGE_COLUMNS})
           SELECT @id, s.id, @run, s.next_seq, @role, @parts, @metadata, @key, @at FROM sessions s
           WHERE s.id = @session
             AND (@run IS NULL OR EXISTS (SELECT 1 FROM runs r WHERE r.id = @run AND r.session_id = @session))
           ON CONFLICT (session_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
           RETURNING seq`
        : `INSERT INTO messages (${MESSAGE_COLUMNS})
           SELECT @id, @session, @run, @seq, @role, @parts, @metadata, @key, @at
           WHERE @run IS NULL OR EXISTS (SELECT 1 FROM runs r WHERE r.id = @run AND r.session_id = @session)
           ON CONFLICT (session_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
           RETURNING seq`,
      values,
    );
    if (!inserted) return this.whyNotAppended(m);
    this.run(
      m.seq === undefined
        ? "UPDATE sessions SET next_seq = next_seq + 1, updated_at = ? WHERE id = ?"
        : "UPDATE sessions SET updated_at = ? WHERE id = ?",
      m.createdAt,
      m.sessionId,
    );
    return insertedMessage(m, inserted.seq);
  }

  /** An append that inserted nothing: its key was taken (the message is returned), or its session or run is missing. */
  private whyNotAppended(m: NewMessage): Message {
    const existing = m.idempotencyKey === null ? undefined : this.messageByKey(m.sessionId, m.idempotencyKey);
    if (existing) return existing;
    if (!this.getSession(m.sessionId)) throw notFound("session", m.sessionId);
    throw notFound(`run in session ${m.sessionId}:`, m.runId ?? "");
  }

  messageByKey(sessionId: string, key: string): Message | undefined {
    const row = this.get<MessageRow>(
      `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE session_id = ? AND idempotency_key = ?`,
      sessionId,
      key,
    );
    return row && toMessage(row);
  }

  runMessages(runId: string): Message[] {
    return this.all<MessageRow>(`SELECT ${MESSAGE_COLUMNS} FROM messages WHERE run_id = ? ORDER BY seq`, runId).map(
      toMessage,
    );
  }

  sessionMessages(sessionId: string, afterSeq: number, limit: number): Message[] {
    return this.all<MessageRow>(
      `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?`,
      sessionId,
      afterSeq,
      limit,
    ).map(toMessage);
  }

  countMessages(sessionId: string): number {
    return (
      this.get<{ n: number }>("SELECT count(*) AS n FROM messages WHERE session_id = ?", sessionId) as {
        n: number;
      }
    ).n;
  }

  historyMessages(sessionId: string): Message[] {
    return this.all<MessageRow>(
      `SELECT ${MESSAGE_COLUMNS} FROM messages m
       WHERE m.session_id = ? AND m.role <> 'summary'
         AND NOT EXISTS (SELECT 1 FROM compactions c
                         WHERE c.session_id = m.session_id AND m.seq BETWEEN c.from_seq AND c.to_seq)
         AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = m.run_id AND r.error_kind IS NOT NULL)
       ORDER BY m.seq`,
      sessionId,
    ).map(toMessage);
  }

  runIdsInRange(sessionId: string, fromSeq: number, toSeq: number): string[] {
    return this.all<{ run_id: string }>(
      `SELECT DISTINCT run_id FROM messages
       WHERE session_id = ? AND seq BETWEEN ? AND ? AND role <> 'summary' AND run_id IS NOT NULL`,
      sessionId,
      fromSeq,
      toSeq,
    ).map((r) => r.run_id);
  }

  updateMessageParts(id: string, parts: readonly Part[]): void {
    if (this.run("UPDATE messages SET parts = ? WHERE id = ?", JSON.stringify(parts), id).changes > 0) this.owePurge();
  }

  deleteMessages(ids: readonly string[]): void {
    let deleted = 0;
    for (const id of ids) deleted += this.run("DELETE FROM messages WHERE id = ?", id).changes;
    if (deleted > 0) this.owePurge();
  }

  // Compactions

  insertCompaction(c: CompactionRow): void {
    this.run(
      "INSERT INTO compactions (id, session_id, message_id, from_seq, to_seq, run_ids, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
      c.id,
      c.sessionId,
      c.messageId,
      c.fromSeq,
      c.toSeq,
      JSON.stringify(c.runIds),
      c.createdAt,
    );
    for (const runId of c.runIds) {
      this.run("INSERT INTO compaction_runs (run_id, compaction_id) VALUES (?, ?)", runId, c.id);
    }
  }

  listCompactions(sessionId: string): CompactionSummary[] {
    return this.all<CompactionWithMessageRow>(
      `SELECT c.*, ${PREFIXED_MESSAGE_COLUMNS}
       FROM compactions c JOIN messages m ON m.id = c.message_id
       WHERE c.session_id = ? ORDER BY m.seq`,
      sessionId,
    ).map(toCompactionSummary);
  }

  compactionsCoveringRun(runId: string): CompactionRow[] {
    return this.all<CompactionDbRow>(
      `SELECT c.* FROM compaction_runs cr JOIN compactions c ON c.id = cr.compaction_id WHERE cr.run_id = ?`,
      runId,
    ).map(toCompaction);
  }

  deleteCompactions(rows: readonly CompactionRow[]): void {
    // The compaction row (and its run index) goes with its summary message, by cascade.
    this.deleteMessages(rows.map((row) => row.messageId));
  }

  // Injections

  insertInjection(i: InjectionRow): InjectionRow {
    const inserted = this.get<InjectionDbRow>(
      `INSERT INTO injections (id, session_id, text, placement, idempotency_key, expires_at, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (session_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
       RETURNING *`,
      i.id,
      i.sessionId,
      i.text,
      i.placement,
      i.idempotencyKey,
      i.expiresAt,
      i.createdAt,
    );
    if (inserted) return toInjection(inserted);
    return toInjection(
      this.get<InjectionDbRow>(
        "SELECT * FROM injections WHERE session_id = ? AND idempotency_key = ?",
        i.sessionId,
        i.idempotencyKey,
      ) as InjectionDbRow,
    );
  }

  pendingInjections(sessionId: string, now: string): InjectionRow[] {
    return this.all<InjectionDbRow>(
      `SELECT * FROM injections
       WHERE session_id = ? AND consumed_at IS NULL AND (expires_at IS NULL OR expires_at > ?)
       ORDER BY ord`,
      sessionId,
      now,
    ).map(toInjection);
  }

  consumeInjections(ids: readonly string[], runId: string, sessionId: string, at: string): number {
    let consumed = 0;
    for (const id of ids) {
      consumed += this.run(
        `UPDATE injections SET text = '', consumed_by_run_id = ?, consumed_at = ?
         WHERE id = ? AND session_id = ? AND consumed_at IS NULL`,
        runId,
        at,
        id,
        sessionId,
      ).changes;
    }
    return consumed;
  }

  deleteExpiredInjections(now: string, sessionId: string | undefined): number {
    return this.run(
      `DELETE FROM injections WHERE consumed_at IS NULL AND expires_at IS NOT NULL AND expires_at <= ?
         AND (? IS NULL OR session_id = ?)`,
      now,
      sessionId ?? null,
      sessionId ?? null,
    ).changes;
  }

  // Audit

  insertAudit(a: AuditRecord): void {
    this.run(
      "INSERT INTO audit (id, hook, plugin_id, outcome, category, session_id, run_id, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      a.id,
      a.hook,
      a.pluginId,
      a.outcome,
      a.category,
      a.sessionId,
      a.runId,
      a.at,
    );
  }

  listAudit(filter: AuditFilter): AuditRecord[] {
    const rows = this.all<AuditRow>(
      `SELECT * FROM (
         SELECT * FROM audit WHERE (? IS NULL OR session_id = ?) AND (? IS NULL OR run_id = ?)
         ORDER BY ord DESC LIMIT ?
       ) ORDER BY ord`,
      filter.sessionId ?? null,
      filter.sessionId ?? null,
      filter.runId ?? null,
      filter.runId ?? null,
      filter.limit ?? -1,
    );
    return rows.map(toAudit);
  }

  // Run leases (lease.ts)

  takeLease(sessionId: string, owner: string, ttlMs: number, ticket: number | null): number | undefined {
    return this.get<{ running: number }>(
      `INSERT INTO run_leases (session_id, owner, acquired_at, expires_at)
       SELECT @session, @owner, ${NOW_MS}, ${NOW_MS} + @ttl
       WHERE NOT EXISTS (SELECT 1 FROM run_lease_waiters
                         WHERE session_id = @session AND (@ticket IS NULL OR ticket < @ticket))
       ON CONFLICT (session_id) DO UPDATE SET acquired_at = excluded.acquired_at, expires_at = excluded.expires_at
         WHERE run_leases.owner = excluded.owner
       RETURNING ${RUNNING_RUNS} AS running`,
      { session: sessionId, owner, ttl: ttlMs, ticket },
    )?.running;
  }

  takeOverLease(sessionId: string, from: string, owner: string, ttlMs: number): number | undefined {
    return this.get<{ running: number }>(
      `UPDATE run_leases SET owner = @owner, acquired_at = ${NOW_MS}, expires_at = ${NOW_MS} + @ttl
       WHERE session_id = @session AND owner = @from
       RETURNING ${RUNNING_RUNS} AS running`,
      { session: sessionId, from, owner, ttl: ttlMs },
    )?.running;
  }

  leaseState(sessionId: string, ticket: number | null): LeaseState {
    const holder = this.get<{ now: number; owner: string | null; expires_at: number | null }>(
      `SELECT ${NOW_MS} AS now, l.owner, l.expires_at FROM (SELECT 1) LEFT JOIN run_leases l ON l.session_id = ?`,
      sessionId,
    ) as { now: number; owner: string | null; expires_at: number | null };
    const waiters = this.all<{ ticket: number; owner: string; expires_at: number }>(
      `SELECT ticket, owner, expires_at FROM run_lease_waiters
       WHERE session_id = @session AND (@ticket IS NULL OR ticket < @ticket) ORDER BY ticket`,
      { session: sessionId, ticket },
    );
    return {
      now: holder.now,
      holder: holder.owner === null ? undefined : { owner: holder.owner, expiresAt: holder.expires_at as number },
      waiters: waiters.map((w) => ({ ticket: w.ticket, owner: w.owner, expiresAt: w.expires_at })),
    };
  }

  releaseLease(sessionId: string, owner: string): boolean {
    return this.run("DELETE FROM run_leases WHERE session_id = ? AND owner = ?", sessionId, owner).changes > 0;
  }

  queueForLease(sessionId: string, owner: string, ttlMs: number): number {
    return (
      this.get<{ ticket: number }>(
        `INSERT INTO run_lease_waiters (session_id, owner, expires_at) VALUES (?, ?, ${NOW_MS} + ?) RETURNING ticket`,
        sessionId,
        owner,
        ttlMs,
      ) as { ticket: number }
    ).ticket;
  }

  leaveLeaseQueue(ticket: number): void {
    this.run("DELETE FROM run_lease_waiters WHERE ticket = ?", ticket);
  }

  renewLeases(owner: string, ttlMs: number): string[] {
    this.run(`UPDATE run_lease_waiters SET expires_at = ${NOW_MS} + ? WHERE owner = ?`, ttlMs, owner);
    return this.all<{ session_id: string }>(
      `UPDATE run_leases SET expires_at = ${NOW_MS} + ? WHERE owner = ? RETURNING session_id`,
      ttlMs,
      owner,
    ).map((r) => r.session_id);
  }

  dropLeaseOwner(owner: string): void {
    this.run("DELETE FROM run_leases WHERE owner = ?", owner);
    this.run("DELETE FROM run_lease_waiters WHERE owner = ?", owner);
  }

  leasesNotOwnedBy(owner: string): { now: number; leases: LeaseRow[] } {
    const rows = this.all<{ session_id: string; owner: string; expires_at: number }>(
      "SELECT session_id, owner, expires_at FROM run_leases WHERE owner <> ?",
      owner,
    );
    const now = (this.get<{ now: number }>(`SELECT ${NOW_MS} AS now`) as { now: number }).now;
    return { now, leases: rows.map((r) => ({ sessionId: r.session_id, owner: r.owner, expiresAt: r.expires_at })) };
  }
}

const BUSY_TIMEOUT_MS = 10_000;
/** Most operations one grouped transaction carries (a write group holds the database's write lock while they run). */
const MAX_GROUP = 256;

interface PendingOp {
  readonly fn: (tx: SqliteTx) => Promise<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** Operations waiting for their turn, and whether a turn is scheduled for them. */
class Batch {
  readonly ops: PendingOp[] = [];
  scheduled = false;
}

/** Like the runtime's default logger: secrets masked (a path may hold anything). */
const stderrWarn = (message: string) => void process.stderr.write(`gatehouse: ${maskSecrets(message)}\n`);

/**
 * "Never persists" for SQLite: `secure_delete` on the connection, and after every commit that removed
 * content a purge (sqlite-purge.ts): VACUUM, then a TRUNCATE checkpoint.
 *
 * Group commit, on purpose: operations asked for in the same turn of the event loop run together, at the
 * end of that turn (`setImmediate`), writes in one transaction and one COMMIT, reads in one snapshot. A
 * write's promise settles only after the COMMIT that made it durable (as durable as WAL with
 * `synchronous = NORMAL` makes it: see docs/security.md).
 */
class SqliteBackend implements StoreBackend {
  readonly kind = "sqlite" as const;
  readonly defaultTranscriptDir: string;
  readonly service: SqliteServiceTables;
  readonly pluginState: SqlitePluginState;
  private readonly db: Database.Database;
  private readonly tx: SqliteTx;
  private readonly control: Record<"begin" | "beginImmediate" | "commit", Database.Statement>;
  private readonly writes = new Batch();
  private readonly reads = new Batch();
  private readonly queue = new SerialQueue();
  private readonly leases: RunLeases;
  private readonly purge: SqlitePurge;
  private closing = false;

  constructor(path: string, leaseOptions: RunLeaseOptions, warn: (message: string) => void = stderrWarn) {
    const dir = dirname(path);
    makeStorePrivate(path);
    // The only connection: every write, run leases included, goes through it, so secure_delete covers all.
    this.db = new Database(path, { timeout: BUSY_TIMEOUT_MS });
    try {
      this.db.pragma("journal_mode = WAL");
      this.db.pragma("synchronous = NORMAL");
      this.db.pragma("secure_delete = ON");
      this.db.pragma("foreign_keys = ON");
      // VACUUM's transient copy of the database, too, stays in memory.
      this.db.pragma("temp_store = MEMORY");
      migrateSqlite(this.db);
      this.tx = new SqliteTx(this.db, () => this.purge.owe());
      this.purge = new SqlitePurge(this.db, {
        path,
        busyTimeoutMs: BUSY_TIMEOUT_MS,
        queue: this.queue,
        audit: (outcome, category) =>
          this.tx.insertAudit({
            id: randomUUID(),
            hook: PURGE_AUDIT.hook,
            pluginId: PURGE_AUDIT.pluginId,
            outcome,
            category,
            sessionId: null,
            runId: null,
            at: new Date().toISOString(),
          }),
        warn,
        now: () => new Date().toISOString(),
      });
      // A crash between a scrub's commit and its purge, or a reader that held the files, left it owed.
      this.purge.atOpen();
    } catch (error) {
      this.db.close();
      throw error;
    }
    this.control = {
      begin: this.db.prepare("BEGIN"),
      beginImmediate: this.db.prepare("BEGIN IMMEDIATE"),
      commit: this.db.prepare("COMMIT"),
    };
    this.leases = new RunLeases(
      {
        write: (fn) => this.write(async () => fn(this.tx)),
        read: (fn) => this.read(async () => fn(this.tx)),
      },
      leaseOptions,
    );
    this.defaultTranscriptDir = join(dir, "transcripts");
    const groups = {
      read: <T>(fn: (s: SqliteStatements) => T) => this.read(async () => fn(this.tx)),
      write: <T>(fn: (s: SqliteStatements) => T) => this.write(async () => fn(this.tx)),
    };
    this.service = new SqliteServiceTables(groups);
    this.pluginState = new SqlitePluginState(groups);
  }

  read<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    return this.enqueue(this.reads, fn);
  }

  write<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    return this.enqueue(this.writes, fn);
  }

  writeOne<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    return this.write(fn);
  }

  afterScrub(): Promise<void> {
    return this.queue.run(async () => {
      this.purge.settle();
    });
  }

  acquireLease(sessionId: string, signal: AbortSignal | undefined, onWait?: () => void): Promise<HeldLease> {
    return this.leases.acquire(sessionId, signal, onWait);
  }

  abandonedLeases(): Promise<string[]> {
    return this.leases.abandoned();
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.leases.close();
    await this.queue.run(async () => {
      // Whatever was asked for before close() runs first (a turn already scheduled finds nothing left).
      while (this.writes.ops.length > 0 || this.reads.ops.length > 0) {
        await this.runBatch(this.writes, (group) => this.writeGroup(group));
        await this.runBatch(this.reads, (group) => this.readGroup(group));
      }
      try {
        this.purge.atClose();
      } finally {
        this.db.close();
      }
    });
  }

  private enqueue<T>(batch: Batch, fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      batch.ops.push({ fn, resolve: resolve as (value: unknown) => void, reject });
      this.schedule(batch);
    });
  }

  /** At the end of this turn of the event loop, the batch's operations take their turn in the queue. */
  private schedule(batch: Batch): void {
    if (batch.scheduled) return;
    batch.scheduled = true;
    const run = batch === this.writes ? this.writeGroup.bind(this) : this.readGroup.bind(this);
    setImmediate(() => void this.queue.run(() => this.runBatch(batch, run)));
  }

  /** Takes the batch's operations, a group at a time; never rejects (each operation's promise carries its outcome). */
  private async runBatch(batch: Batch, run: (group: PendingOp[]) => Promise<void>): Promise<void> {
    batch.scheduled = false;
    if (!this.db.open) {
      const closed = new StoreError("closed", "the store is closed");
      for (const op of batch.ops.splice(0)) op.reject(closed);
      return;
    }
    // While closing, finish everything asked for before close() here: a later turn would find the connection closed.
    do if (batch.ops.length > 0) await run(batch.ops.splice(0, MAX_GROUP));
    while (this.closing && batch.ops.length > 0);
    // More than a group's worth, or more arrived meanwhile: they go after whatever queued up since.
    if (batch.ops.length > 0) this.schedule(batch);
  }

  private async readGroup(group: readonly PendingOp[]): Promise<void> {
    const done: [PendingOp, unknown][] = [];
    let next = 0;
    try {
      this.control.begin.run();
      for (; next < group.length; next++) {
        const read = group[next] as PendingOp;
        try {
          done.push([read, await read.fn(this.tx)]);
        } catch (error) {
          read.reject(error);
          // If SQLite ended the transaction, the reads after this one get a new one.
          if (!this.db.inTransaction) this.control.begin.run();
        }
      }
      this.control.commit.run();
    } catch (error) {
      this.rollback();
      for (const [read] of done) read.reject(error);
      for (const read of group.slice(next)) read.reject(error);
      return;
    }
    for (const [read, value] of done) read.resolve(value);
  }

  /**
   * One transaction for the group, without a savepoint per write: a write that fails before changing
   * anything leaves the transaction as it was, and the others go on. One that fails after changing
   * something takes the group's transaction down with it; the writes that ran with it did not fail,
   * so they run again, in a new transaction, with those that had not run yet.
   */
  private async writeGroup(group: readonly PendingOp[]): Promise<void> {
    const done: [PendingOp, unknown][] = [];
    let next = 0;
    try {
      this.control.beginImmediate.run();
      for (; next < group.length; next++) {
        const write = group[next] as PendingOp;
        this.tx.wrote = false;
        try {
          done.push([write, await write.fn(this.tx)]);
        } catch (error) {
          if (this.tx.wrote || !this.db.inTransaction) throw error;
          write.reject(error);
        }
      }
      this.control.commit.run();
    } catch (error) {
      const inTransaction = this.db.inTransaction;
      this.rollback();
      const failed = group[next];
      failed?.reject(error);
      const again = group.slice(next + 1);
      // A failed BEGIN or COMMIT, or SQLite ending the transaction itself (an I/O error, say), fails
      // the writes that ran too; a write's own failure sends them back to the head of the line.
      if (failed && inTransaction) again.unshift(...done.map(([write]) => write));
      else for (const [write] of done) write.reject(error);
      this.writes.ops.unshift(...again);
      if (again.length > 0) this.schedule(this.writes);
      return;
    }
    try {
      this.purge.afterCommit();
    } catch (error) {
      for (const [write] of done) write.reject(error);
      return;
    }
    for (const [write, value] of done) write.resolve(value);
  }

  private rollback(): void {
    try {
      if (this.db.inTransaction) this.db.exec("ROLLBACK");
    } catch {
      // The next transaction reports what is wrong with the connection.
    }
  }
}

export function openSqliteStore(options: SqliteStoreOptions): SessionStore {
  return new CoreStore(new SqliteBackend(options.path, options.runLock ?? {}, options.warn), options);
}
