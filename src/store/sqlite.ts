import { closeSync, mkdirSync, openSync } from "node:fs";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import type { Message, Part } from "../core/message.js";
import type { CompactionRow, InjectionRow, NewMessage, NewRun, StoreBackend, StoreTx } from "./backend.js";
import { CoreStore, type CoreStoreOptions } from "./core.js";
import { notFound } from "./errors.js";
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
  toAudit,
  toCompaction,
  toCompactionSummary,
  toInjection,
  toMessage,
  toRun,
  toSession,
} from "./rows.js";
import { SerialQueue } from "./serial.js";
import { SqliteRunLocks } from "./sqlite-lock.js";
import { migrateSqlite } from "./sqlite-schema.js";
import type {
  AuditFilter,
  AuditRecord,
  CompactionSummary,
  ListSessionsOptions,
  Run,
  RunStatus,
  Session,
  SessionListing,
  SessionStore,
} from "./types.js";

export interface SqliteStoreOptions extends CoreStoreOptions {
  /** The database file; created (with its folder, both private) on first use. */
  readonly path: string;
}

/** The primitives as synchronous statements; the backend wraps them in transactions. */
class SqliteTx implements StoreTx {
  private readonly cache = new Map<string, Database.Statement>();

  constructor(private readonly db: Database.Database) {}

  private sql(text: string): Database.Statement {
    let statement = this.cache.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.cache.set(text, statement);
    }
    return statement;
  }

  private get<R>(text: string, ...params: unknown[]): R | undefined {
    return this.sql(text).get(...params) as R | undefined;
  }

  private all<R>(text: string, ...params: unknown[]): R[] {
    return this.sql(text).all(...params) as R[];
  }

  private run(text: string, ...params: unknown[]): Database.RunResult {
    return this.sql(text).run(...params);
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
    this.run(
      "INSERT INTO sessions (id, key, parent_session_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
      s.id,
      s.key,
      s.parentSessionId,
      s.createdAt,
      s.updatedAt,
    );
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
    return this.run("DELETE FROM sessions WHERE id = ?", id).changes > 0;
  }

  // Runs

  getRun(id: string): Run | undefined {
    const row = this.get<RunRow>("SELECT * FROM runs WHERE id = ?", id);
    return row && toRun(row);
  }

  insertRun(run: NewRun): Run {
    const allocated = this.get<{ seq: number }>(
      "UPDATE sessions SET next_run_seq = next_run_seq + 1, updated_at = ? WHERE id = ? RETURNING next_run_seq - 1 AS seq",
      run.startedAt,
      run.sessionId,
    );
    if (!allocated) throw notFound("session", run.sessionId);
    this.run(
      `INSERT INTO runs (id, session_id, seq, status, depth, parent_run_id, trigger, job_id, started_at, ended_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      run.id,
      run.sessionId,
      allocated.seq,
      run.status,
      run.depth,
      run.parentRunId,
      run.trigger,
      run.jobId,
      run.startedAt,
      run.endedAt,
    );
    return { ...run, seq: allocated.seq };
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

  listRuns(sessionId: string): Run[] {
    return this.all<RunRow>("SELECT * FROM runs WHERE session_id = ? ORDER BY seq", sessionId).map(toRun);
  }

  // Messages

  appendMessage(m: NewMessage): Message {
    if (m.idempotencyKey !== null) {
      const existing = this.messageByKey(m.sessionId, m.idempotencyKey);
      if (existing) return existing;
    }
    if (m.runId !== null) {
      const run = this.get<{ session_id: string }>("SELECT session_id FROM runs WHERE id = ?", m.runId);
      if (run?.session_id !== m.sessionId) throw notFound(`run in session ${m.sessionId}:`, m.runId);
    }
    let seq = m.seq;
    if (seq === undefined) {
      seq = this.get<{ seq: number }>(
        "UPDATE sessions SET next_seq = next_seq + 1, updated_at = ? WHERE id = ? RETURNING next_seq - 1 AS seq",
        m.createdAt,
        m.sessionId,
      )?.seq;
      if (seq === undefined) throw notFound("session", m.sessionId);
    } else {
      this.run("UPDATE sessions SET updated_at = ? WHERE id = ?", m.createdAt, m.sessionId);
    }
    this.run(
      `INSERT INTO messages (${MESSAGE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      m.id,
      m.sessionId,
      m.runId,
      seq,
      m.role,
      JSON.stringify(m.parts),
      JSON.stringify(m.metadata),
      m.idempotencyKey,
      m.createdAt,
    );
    return insertedMessage(m, seq);
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
    this.run("UPDATE messages SET parts = ? WHERE id = ?", JSON.stringify(parts), id);
  }

  deleteMessages(ids: readonly string[]): void {
    for (const id of ids) this.run("DELETE FROM messages WHERE id = ?", id);
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
    for (const row of rows) this.run("DELETE FROM messages WHERE id = ?", row.messageId);
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
}

const BUSY_TIMEOUT_MS = 10_000;
const CHECKPOINT_WAIT_MS = 200;
const CHECKPOINT_RETRY_MS = 250;
/** Most writes one grouped transaction carries (it holds the database's write lock while they run). */
const MAX_GROUP = 256;

interface PendingOp {
  readonly fn: (tx: StoreTx) => Promise<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * "Never persists" for SQLite: `secure_delete` zeroes deleted and overwritten content in the main file,
 * and after every scrub a TRUNCATE checkpoint copies the zeroed pages in and cuts the WAL to zero bytes,
 * so no older frame holding the old text survives there either.
 */
class SqliteBackend implements StoreBackend {
  readonly kind = "sqlite" as const;
  readonly defaultTranscriptDir: string;
  private readonly db: Database.Database;
  private readonly tx: SqliteTx;
  private readonly control: Record<
    "begin" | "beginImmediate" | "commit" | "savepoint" | "release" | "rollbackTo",
    Database.Statement
  >;
  /** Writes waiting for their turn in the queue, and whether a turn (`runWrites`) is queued for them. */
  private readonly pending: PendingOp[] = [];
  private writesScheduled = false;
  /** The same for reads (`runReads`). */
  private readonly pendingReads: PendingOp[] = [];
  private readsScheduled = false;
  private readonly queue = new SerialQueue();
  private readonly locks: SqliteRunLocks;
  private checkpointOwed = false;
  private retry: NodeJS.Timeout | undefined;
  private closing = false;

  constructor(path: string) {
    const dir = dirname(path);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // Created 0600 before SQLite opens it: its -wal and -shm files copy the main file's mode.
    closeSync(openSync(path, "a", 0o600));
    this.db = new Database(path, { timeout: BUSY_TIMEOUT_MS });
    try {
      this.db.pragma("journal_mode = WAL");
      this.db.pragma("synchronous = NORMAL");
      this.db.pragma("secure_delete = ON");
      this.db.pragma("foreign_keys = ON");
      this.db.pragma("temp_store = MEMORY");
      migrateSqlite(this.db);
      // A crash between a scrub's commit and its checkpoint leaves old frames in the WAL: clear them now.
      this.checkpoint();
    } catch (error) {
      this.db.close();
      throw error;
    }
    this.tx = new SqliteTx(this.db);
    this.control = {
      begin: this.db.prepare("BEGIN"),
      beginImmediate: this.db.prepare("BEGIN IMMEDIATE"),
      commit: this.db.prepare("COMMIT"),
      savepoint: this.db.prepare("SAVEPOINT gatehouse_write"),
      release: this.db.prepare("RELEASE gatehouse_write"),
      rollbackTo: this.db.prepare("ROLLBACK TO gatehouse_write"),
    };
    this.locks = new SqliteRunLocks(path, join(dir, "locks"), this.queue);
    this.defaultTranscriptDir = join(dir, "transcripts");
  }

  /**
   * Reads that queue up together share one read transaction: one snapshot, taken after every write that
   * had completed when any of them was asked for. A read alone runs in a transaction of its own, as before.
   */
  read<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pendingReads.push({ fn, resolve: resolve as (value: unknown) => void, reject });
      this.scheduleReads();
    });
  }

  /**
   * Writes that queue up while others run share one transaction (a group commit): each runs in its own
   * savepoint, so one that throws is rolled back alone, and each settles only after the shared COMMIT.
   * Many sessions writing at once otherwise paid a WAL commit each, most of a write's cost. A write
   * that finds nothing else waiting runs in a transaction of its own, as before.
   */
  write<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ fn, resolve: resolve as (value: unknown) => void, reject });
      this.scheduleWrites();
    });
  }

  writeOne<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    return this.write(fn);
  }

  afterScrub(): Promise<void> {
    return this.queue.run(async () => {
      this.checkpoint();
    });
  }

  lockAcrossProcesses(sessionId: string, signal: AbortSignal | undefined): Promise<() => Promise<void>> {
    return this.locks.acquire(sessionId, signal);
  }

  async afterSessionDeleted(id: string): Promise<void> {
    this.locks.forget(id);
  }

  close(): Promise<void> {
    this.closing = true;
    clearTimeout(this.retry);
    return this.queue.run(async () => {
      this.locks.close();
      this.checkpoint(BUSY_TIMEOUT_MS);
      this.db.close();
    });
  }

  private scheduleWrites(): void {
    if (this.writesScheduled) return;
    this.writesScheduled = true;
    void this.queue.run(() => this.runWrites());
  }

  /** Takes the waiting writes, a group at a time; never rejects (each write's promise carries its outcome). */
  private async runWrites(): Promise<void> {
    this.writesScheduled = false;
    // While closing, finish everything written before close() here: a later turn would find the connection closed.
    do await this.writeGroup(this.pending.splice(0, MAX_GROUP));
    while (this.closing && this.pending.length > 0);
    // More arrived meanwhile: their turn comes after whatever queued up since (reads are not starved).
    if (this.pending.length > 0) this.scheduleWrites();
  }

  private scheduleReads(): void {
    if (this.readsScheduled) return;
    this.readsScheduled = true;
    void this.queue.run(() => this.runReads());
  }

  /** As `runWrites`, for reads; never rejects. */
  private async runReads(): Promise<void> {
    this.readsScheduled = false;
    do await this.readGroup(this.pendingReads.splice(0, MAX_GROUP));
    while (this.closing && this.pendingReads.length > 0);
    if (this.pendingReads.length > 0) this.scheduleReads();
  }

  private async readGroup(group: readonly PendingOp[]): Promise<void> {
    if (group.length === 1) {
      const only = group[0] as PendingOp;
      await this.transaction(this.control.begin, only.fn).then(only.resolve, only.reject);
      return;
    }
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
      try {
        if (this.db.inTransaction) this.db.exec("ROLLBACK");
      } catch {
        // The next transaction reports what is wrong with the connection.
      }
      for (const [read] of done) read.reject(error);
      for (const read of group.slice(next)) read.reject(error);
      return;
    }
    for (const [read, value] of done) read.resolve(value);
  }

  private async writeGroup(group: readonly PendingOp[]): Promise<void> {
    const done: [PendingOp, unknown][] = [];
    if (group.length === 1) {
      const only = group[0] as PendingOp;
      try {
        done.push([only, await this.transaction(this.control.beginImmediate, only.fn)]);
      } catch (error) {
        only.reject(error);
        return;
      }
    } else {
      let next = 0;
      try {
        this.control.beginImmediate.run();
        for (; next < group.length; next++) {
          const write = group[next] as PendingOp;
          this.control.savepoint.run();
          let value: unknown;
          try {
            value = await write.fn(this.tx);
          } catch (error) {
            // SQLite itself ended the transaction (an I/O error, say): the writes before this one are gone too.
            if (!this.db.inTransaction) throw error;
            this.control.rollbackTo.run();
            this.control.release.run();
            write.reject(error);
            continue;
          }
          this.control.release.run();
          done.push([write, value]);
        }
        this.control.commit.run();
      } catch (error) {
        try {
          if (this.db.inTransaction) this.db.exec("ROLLBACK");
        } catch {
          // The next transaction reports what is wrong with the connection.
        }
        for (const [write] of done) write.reject(error);
        (group[next] as PendingOp | undefined)?.reject(error);
        // Writes that never ran go back to the head of the line.
        this.pending.unshift(...group.slice(next + 1));
        return;
      }
    }
    try {
      if (this.checkpointOwed) this.checkpoint();
    } catch (error) {
      for (const [write] of done) write.reject(error);
      return;
    }
    for (const [write, value] of done) write.resolve(value);
  }

  // fn's statements are synchronous, so between BEGIN and COMMIT nothing else runs on this connection.
  private async transaction<T>(begin: Database.Statement, fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    begin.run();
    try {
      const result = await fn(this.tx);
      this.control.commit.run();
      return result;
    } catch (error) {
      if (this.db.inTransaction) this.db.exec("ROLLBACK");
      throw error;
    }
  }

  /**
   * TRUNCATE must wait for other connections' read snapshots to end. It waits briefly (this blocks the
   * event loop); if a reader still holds on, the cut is owed and retried shortly, after writes and at close.
   */
  private checkpoint(waitMs = CHECKPOINT_WAIT_MS): void {
    this.db.pragma(`busy_timeout = ${waitMs}`);
    try {
      const [result] = this.db.pragma("wal_checkpoint(TRUNCATE)") as { busy: number }[];
      this.checkpointOwed = (result?.busy ?? 0) !== 0;
    } finally {
      this.db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
    if (this.checkpointOwed && !this.retry && !this.closing) {
      this.retry = setTimeout(() => {
        this.retry = undefined;
        void this.queue.run(async () => {
          if (this.checkpointOwed && !this.closing) this.checkpoint();
        });
      }, CHECKPOINT_RETRY_MS);
      this.retry.unref();
    }
  }
}

export function openSqliteStore(options: SqliteStoreOptions): SessionStore {
  return new CoreStore(new SqliteBackend(options.path), options);
}
