import { createHash } from "node:crypto";
import pg from "pg";
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
import { PostgresPluginState } from "./plugin-state-postgres.js";
import { POSTGRES_MIGRATIONS, POSTGRES_SCHEMA_VERSION } from "./postgres-schema.js";
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
import { PostgresServiceTables } from "./service-postgres.js";
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

export interface PostgresStoreOptions extends CoreStoreOptions {
  readonly url: string;
  /** The schema holding the tables (created if missing); "public" by default. */
  readonly schema?: string;
  /** Connections for queries (run leases use them too). */
  readonly poolSize?: number;
}

interface Queryable {
  query<R extends pg.QueryResultRow>(config: pg.QueryConfig): Promise<pg.QueryResult<R>>;
}

const statementNames = new Map<string, string>();

/**
 * Every statement is a named prepared statement: pg prepares it once per connection, and the server
 * then skips parsing and planning (the append statement runs about twice as fast).
 */
function prepared(text: string, values: unknown[]): pg.QueryConfig {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `gh_${createHash("sha1").update(text).digest("hex").slice(0, 16)}`;
    statementNames.set(text, name);
  }
  return { name, text, values };
}

class PgTx implements StoreTx, LeaseStatements {
  /** In a write transaction, reads of a session or run row lock it until commit. */
  constructor(
    private readonly db: Queryable,
    private readonly locking: boolean,
  ) {}

  private async rows<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
    return (await this.exec<R>(text, values)).rows;
  }

  private exec<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<pg.QueryResult<R>> {
    return this.db.query<R>(prepared(text, values));
  }

  private async one<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R | undefined> {
    return (await this.rows<R>(text, values))[0];
  }

  private get forUpdate(): string {
    return this.locking ? "FOR UPDATE" : "";
  }

  // Sessions

  async getSession(id: string): Promise<Session | undefined> {
    const row = await this.one<SessionRow>(`SELECT * FROM sessions WHERE id = $1 ${this.forUpdate}`, [id]);
    return row && toSession(row);
  }

  async latestSessionByKey(key: string): Promise<Session | undefined> {
    const row = await this.one<SessionRow>("SELECT * FROM sessions WHERE key = $1 ORDER BY created_at DESC LIMIT 1", [
      key,
    ]);
    return row && toSession(row);
  }

  async insertSession(s: Session): Promise<void> {
    try {
      await this.exec(
        "INSERT INTO sessions (id, key, parent_session_id, created_at, updated_at, title) VALUES ($1, $2, $3, $4, $5, $6)",
        [s.id, s.key, s.parentSessionId, s.createdAt, s.updatedAt, s.title ?? null],
      );
    } catch (error) {
      if (pgCode(error) === UNIQUE_VIOLATION) throw sessionExists(s.id);
      if (pgCode(error) === FOREIGN_KEY_VIOLATION) throw notFound("parent session", s.parentSessionId ?? "");
      throw error;
    }
  }

  async listSessions(
    options: Required<Pick<ListSessionsOptions, "limit" | "offset">> & ListSessionsOptions,
  ): Promise<SessionListing[]> {
    const rows = await this.rows<SessionRow & { run_count: number; message_count: number }>(
      `SELECT s.*,
         (SELECT count(*)::int FROM runs r WHERE r.session_id = s.id) AS run_count,
         (SELECT count(*)::int FROM messages m WHERE m.session_id = s.id) AS message_count
       FROM sessions s
       WHERE ($1::text IS NULL OR s.key = $1)
         AND (NOT $2::boolean OR s.parent_session_id IS NOT DISTINCT FROM $3::text)
       ORDER BY s.updated_at DESC, s.id LIMIT $4 OFFSET $5`,
      [
        options.key ?? null,
        options.parentSessionId !== undefined,
        options.parentSessionId ?? null,
        options.limit,
        options.offset,
      ],
    );
    return rows.map((r) => ({ ...toSession(r), runCount: r.run_count, messageCount: r.message_count }));
  }

  async childSessionIds(id: string): Promise<string[]> {
    return (await this.rows<{ id: string }>("SELECT id FROM sessions WHERE parent_session_id = $1", [id])).map(
      (r) => r.id,
    );
  }

  async deleteSession(id: string): Promise<boolean> {
    return ((await this.exec("DELETE FROM sessions WHERE id = $1", [id])).rowCount ?? 0) > 0;
  }

  async setSessionTitle(id: string, title: string | null): Promise<boolean> {
    return ((await this.exec("UPDATE sessions SET title = $1 WHERE id = $2", [title, id])).rowCount ?? 0) > 0;
  }

  // Runs

  async getRun(id: string): Promise<Run | undefined> {
    const row = await this.one<RunRow>(`SELECT * FROM runs WHERE id = $1 ${this.forUpdate}`, [id]);
    return row && toRun(row);
  }

  async insertRun(run: NewRun): Promise<Run> {
    const row = await this.one<RunRow>(
      `WITH s AS (
         UPDATE sessions SET next_run_seq = next_run_seq + 1, updated_at = $9 WHERE id = $2
         RETURNING next_run_seq - 1 AS seq
       )
       INSERT INTO runs (id, session_id, seq, status, depth, parent_run_id, trigger, job_id, started_at, ended_at)
       SELECT $1, $2, s.seq, $3, $4, $5, $6, $7, $9, $8 FROM s
       RETURNING *`,
      [
        run.id,
        run.sessionId,
        run.status,
        run.depth,
        run.parentRunId,
        run.trigger,
        run.jobId,
        run.endedAt,
        run.startedAt,
      ],
    ).catch((error: unknown) => {
      throw pgCode(error) === UNIQUE_VIOLATION ? runExists(run.id) : error;
    });
    if (!row) throw notFound("session", run.sessionId);
    return toRun(row);
  }

  async setRunStatus(id: string, status: RunStatus, endedAt: string | null): Promise<Run | undefined> {
    const row = await this.one<RunRow>("UPDATE runs SET status = $1, ended_at = $2 WHERE id = $3 RETURNING *", [
      status,
      endedAt,
      id,
    ]);
    return row && toRun(row);
  }

  async finishRun(id: string, status: RunStatus, endedAt: string, summary: RunSummary): Promise<Run | undefined> {
    const row = await this.one<RunRow>(
      `UPDATE runs SET status = CASE status WHEN 'blocked' THEN 'blocked' ELSE $1 END, ended_at = $2,
         model = $3, usage = $4, detail = $5, error_kind = $6
       WHERE id = $7 RETURNING *`,
      [status, endedAt, ...summaryColumns(summary), id],
    );
    return row && toRun(row);
  }

  async listRuns(sessionId: string): Promise<Run[]> {
    return (await this.rows<RunRow>("SELECT * FROM runs WHERE session_id = $1 ORDER BY seq", [sessionId])).map(toRun);
  }

  // Messages

  /** One statement when the position is allocated here, so it is atomic even outside a transaction. */
  async appendMessage(m: NewMessage): Promise<Message> {
    const values = [
      m.id,
      m.sessionId,
      m.runId,
      m.role,
      JSON.stringify(m.parts),
      JSON.stringify(m.metadata),
      m.idempotencyKey,
      m.createdAt,
    ];
    const row =
      m.seq === undefined
        ? await this.one<{ seq: number }>(
            `WITH s AS (
               UPDATE sessions SET next_seq = next_seq + 1, updated_at = $8 WHERE id = $2
               RETURNING next_seq - 1 AS seq
             )
             INSERT INTO messages (${MESSAGE_COLUMNS})
             SELECT $1, $2, $3, s.seq, $4, $5, $6, $7, $8 FROM s
             WHERE $3::text IS NULL OR EXISTS (SELECT 1 FROM runs WHERE id = $3 AND session_id = $2)
             ON CONFLICT (session_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
             RETURNING seq`,
            values,
          )
        : await this.one<{ seq: number }>(
            `WITH s AS (UPDATE sessions SET updated_at = $8 WHERE id = $2)
             INSERT INTO messages (${MESSAGE_COLUMNS}) VALUES ($1, $2, $3, $9, $4, $5, $6, $7, $8)
             RETURNING seq`,
            [...values, m.seq],
          );
    if (row) return insertedMessage(m, row.seq);
    const existing = m.idempotencyKey === null ? undefined : await this.messageByKey(m.sessionId, m.idempotencyKey);
    if (existing) return existing;
    if (!(await this.getSession(m.sessionId))) throw notFound("session", m.sessionId);
    throw notFound(`run in session ${m.sessionId}:`, m.runId ?? "");
  }

  async messageByKey(sessionId: string, key: string): Promise<Message | undefined> {
    const row = await this.one<MessageRow>(
      `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE session_id = $1 AND idempotency_key = $2`,
      [sessionId, key],
    );
    return row && toMessage(row);
  }

  async runMessages(runId: string): Promise<Message[]> {
    return (
      await this.rows<MessageRow>(`SELECT ${MESSAGE_COLUMNS} FROM messages WHERE run_id = $1 ORDER BY seq`, [runId])
    ).map(toMessage);
  }

  async sessionMessages(sessionId: string, afterSeq: number, limit: number): Promise<Message[]> {
    return (
      await this.rows<MessageRow>(
        `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
        [sessionId, afterSeq, limit],
      )
    ).map(toMessage);
  }

  async countMessages(sessionId: string): Promise<number> {
    return (
      (await this.one<{ n: number }>("SELECT count(*)::int AS n FROM messages WHERE session_id = $1", [sessionId]))
        ?.n ?? 0
    );
  }

  async historyMessages(sessionId: string): Promise<Message[]> {
    return (
      await this.rows<MessageRow>(
        `SELECT ${MESSAGE_COLUMNS} FROM messages m
         WHERE m.session_id = $1 AND m.role <> 'summary'
           AND NOT EXISTS (SELECT 1 FROM compactions c
                           WHERE c.session_id = m.session_id AND m.seq BETWEEN c.from_seq AND c.to_seq)
           AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = m.run_id AND r.error_kind IS NOT NULL)
         ORDER BY m.seq`,
        [sessionId],
      )
    ).map(toMessage);
  }

  async runIdsInRange(sessionId: string, fromSeq: number, toSeq: number): Promise<string[]> {
    return (
      await this.rows<{ run_id: string }>(
        `SELECT DISTINCT run_id FROM messages
         WHERE session_id = $1 AND seq BETWEEN $2 AND $3 AND role <> 'summary' AND run_id IS NOT NULL`,
        [sessionId, fromSeq, toSeq],
      )
    ).map((r) => r.run_id);
  }

  async updateMessageParts(id: string, parts: readonly Part[]): Promise<void> {
    await this.exec("UPDATE messages SET parts = $1 WHERE id = $2", [JSON.stringify(parts), id]);
  }

  async deleteMessages(ids: readonly string[]): Promise<void> {
    if (ids.length > 0) await this.exec("DELETE FROM messages WHERE id = ANY($1::text[])", [ids]);
  }

  // Compactions

  async insertCompaction(c: CompactionRow): Promise<void> {
    await this.exec(
      `WITH c AS (
         INSERT INTO compactions (id, session_id, message_id, from_seq, to_seq, run_ids, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
       )
       INSERT INTO compaction_runs (run_id, compaction_id) SELECT unnest($8::text[]), $1`,
      [c.id, c.sessionId, c.messageId, c.fromSeq, c.toSeq, JSON.stringify(c.runIds), c.createdAt, c.runIds],
    );
  }

  async listCompactions(sessionId: string): Promise<CompactionSummary[]> {
    return (
      await this.rows<CompactionWithMessageRow>(
        `SELECT c.*, ${PREFIXED_MESSAGE_COLUMNS}
         FROM compactions c JOIN messages m ON m.id = c.message_id
         WHERE c.session_id = $1 ORDER BY m.seq`,
        [sessionId],
      )
    ).map(toCompactionSummary);
  }

  async compactionsCoveringRun(runId: string): Promise<CompactionRow[]> {
    return (
      await this.rows<CompactionDbRow>(
        "SELECT c.* FROM compaction_runs cr JOIN compactions c ON c.id = cr.compaction_id WHERE cr.run_id = $1",
        [runId],
      )
    ).map(toCompaction);
  }

  async deleteCompactions(rows: readonly CompactionRow[]): Promise<void> {
    // The compaction row (and its run index) goes with its summary message, by cascade.
    await this.deleteMessages(rows.map((r) => r.messageId));
  }

  // Injections

  async insertInjection(i: InjectionRow): Promise<InjectionRow> {
    const inserted = await this.one<InjectionDbRow>(
      `INSERT INTO injections (id, session_id, text, placement, idempotency_key, expires_at, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (session_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
       RETURNING *`,
      [i.id, i.sessionId, i.text, i.placement, i.idempotencyKey, i.expiresAt, i.createdAt],
    );
    if (inserted) return toInjection(inserted);
    const existing = await this.one<InjectionDbRow>(
      "SELECT * FROM injections WHERE session_id = $1 AND idempotency_key = $2",
      [i.sessionId, i.idempotencyKey],
    );
    return toInjection(existing as InjectionDbRow);
  }

  async pendingInjections(sessionId: string, now: string): Promise<InjectionRow[]> {
    return (
      await this.rows<InjectionDbRow>(
        `SELECT * FROM injections
         WHERE session_id = $1 AND consumed_at IS NULL AND (expires_at IS NULL OR expires_at > $2)
         ORDER BY ord`,
        [sessionId, now],
      )
    ).map(toInjection);
  }

  async consumeInjections(ids: readonly string[], runId: string, sessionId: string, at: string): Promise<number> {
    const result = await this.exec(
      `UPDATE injections SET text = '', consumed_by_run_id = $1, consumed_at = $2
       WHERE id = ANY($3::text[]) AND session_id = $4 AND consumed_at IS NULL`,
      [runId, at, ids, sessionId],
    );
    return result.rowCount ?? 0;
  }

  async deleteExpiredInjections(now: string, sessionId: string | undefined): Promise<number> {
    const result = await this.exec(
      `DELETE FROM injections WHERE consumed_at IS NULL AND expires_at IS NOT NULL AND expires_at <= $1
         AND ($2::text IS NULL OR session_id = $2)`,
      [now, sessionId ?? null],
    );
    return result.rowCount ?? 0;
  }

  // Audit

  async insertAudit(a: AuditRecord): Promise<void> {
    await this.exec(
      `INSERT INTO audit (id, hook, plugin_id, outcome, category, session_id, run_id, at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [a.id, a.hook, a.pluginId, a.outcome, a.category, a.sessionId, a.runId, a.at],
    );
  }

  async listAudit(filter: AuditFilter): Promise<AuditRecord[]> {
    return (
      await this.rows<AuditRow>(
        `SELECT * FROM (
           SELECT * FROM audit WHERE ($1::text IS NULL OR session_id = $1) AND ($2::text IS NULL OR run_id = $2)
           ORDER BY ord DESC LIMIT $3
         ) a ORDER BY ord`,
        [filter.sessionId ?? null, filter.runId ?? null, filter.limit ?? null],
      )
    ).map(toAudit);
  }

  // Run leases (lease.ts)

  async takeLease(sessionId: string, owner: string, ttlMs: number, ticket: number | null): Promise<number | undefined> {
    const row = await this.one<{ running: number }>(
      `INSERT INTO run_leases (session_id, owner, acquired_at, expires_at)
       SELECT $1, $2, ${NOW_MS}, ${NOW_MS} + $3
       WHERE NOT EXISTS (SELECT 1 FROM run_lease_waiters
                         WHERE session_id = $1 AND ($4::bigint IS NULL OR ticket < $4))
       ON CONFLICT (session_id) DO UPDATE SET acquired_at = excluded.acquired_at, expires_at = excluded.expires_at
         WHERE run_leases.owner = excluded.owner
       RETURNING ${RUNNING_RUNS} AS running`,
      [sessionId, owner, ttlMs, ticket],
    );
    return row?.running;
  }

  async takeOverLease(sessionId: string, from: string, owner: string, ttlMs: number): Promise<number | undefined> {
    const row = await this.one<{ running: number }>(
      `UPDATE run_leases SET owner = $2, acquired_at = ${NOW_MS}, expires_at = ${NOW_MS} + $3
       WHERE session_id = $1 AND owner = $4
       RETURNING ${RUNNING_RUNS} AS running`,
      [sessionId, owner, ttlMs, from],
    );
    return row?.running;
  }

  async leaseState(sessionId: string, ticket: number | null): Promise<LeaseState> {
    const row = (await this.one<{
      now: string;
      owner: string | null;
      expires_at: string | null;
      waiters: { ticket: number; owner: string; expires_at: number }[];
    }>(
      `SELECT ${NOW_MS} AS now, l.owner, l.expires_at,
         COALESCE((SELECT json_agg(json_build_object('ticket', w.ticket, 'owner', w.owner, 'expires_at', w.expires_at)
                                   ORDER BY w.ticket)
                   FROM run_lease_waiters w
                   WHERE w.session_id = $1 AND ($2::bigint IS NULL OR w.ticket < $2)), '[]'::json) AS waiters
       FROM (SELECT 1) one LEFT JOIN run_leases l ON l.session_id = $1`,
      [sessionId, ticket],
    )) as { now: string; owner: string | null; expires_at: string | null; waiters: LeaseWaiterRow[] };
    return {
      now: Number(row.now),
      holder: row.owner === null ? undefined : { owner: row.owner, expiresAt: Number(row.expires_at) },
      waiters: row.waiters.map((w) => ({ ticket: Number(w.ticket), owner: w.owner, expiresAt: Number(w.expires_at) })),
    };
  }

  async releaseLease(sessionId: string, owner: string): Promise<boolean> {
    return (
      ((await this.exec("DELETE FROM run_leases WHERE session_id = $1 AND owner = $2", [sessionId, owner])).rowCount ??
        0) > 0
    );
  }

  async queueForLease(sessionId: string, owner: string, ttlMs: number): Promise<number> {
    const row = await this.one<{ ticket: string }>(
      `INSERT INTO run_lease_waiters (session_id, owner, expires_at) VALUES ($1, $2, ${NOW_MS} + $3) RETURNING ticket`,
      [sessionId, owner, ttlMs],
    );
    return Number(row?.ticket);
  }

  async leaveLeaseQueue(ticket: number): Promise<void> {
    await this.exec("DELETE FROM run_lease_waiters WHERE ticket = $1", [ticket]);
  }

  async renewLeases(owner: string, ttlMs: number): Promise<string[]> {
    const rows = await this.rows<{ session_id: string }>(
      `WITH waiting AS (UPDATE run_lease_waiters SET expires_at = ${NOW_MS} + $2 WHERE owner = $1)
       UPDATE run_leases SET expires_at = ${NOW_MS} + $2 WHERE owner = $1 RETURNING session_id`,
      [owner, ttlMs],
    );
    return rows.map((r) => r.session_id);
  }

  async dropLeaseOwner(owner: string): Promise<void> {
    await this.exec(
      `WITH leases AS (DELETE FROM run_leases WHERE owner = $1)
       DELETE FROM run_lease_waiters WHERE owner = $1`,
      [owner],
    );
  }

  async leasesNotOwnedBy(owner: string): Promise<{ now: number; leases: LeaseRow[] }> {
    const rows = await this.rows<{ session_id: string | null; owner: string; expires_at: string; now: string }>(
      `SELECT l.session_id, l.owner, l.expires_at, ${NOW_MS} AS now
       FROM (SELECT 1) one LEFT JOIN run_leases l ON l.owner <> $1`,
      [owner],
    );
    return {
      now: Number(rows[0]?.now),
      leases: rows.flatMap((r) =>
        r.session_id === null ? [] : [{ sessionId: r.session_id, owner: r.owner, expiresAt: Number(r.expires_at) }],
      ),
    };
  }
}

type LeaseWaiterRow = { ticket: number; owner: string; expires_at: number };

/** The current time on the database's clock, in milliseconds since 1970 (run leases use it). */
const NOW_MS = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint";
const RUNNING_RUNS = "(SELECT count(*)::int FROM runs WHERE session_id = $1 AND status = 'running')";
const UNIQUE_VIOLATION = "23505";
const FOREIGN_KEY_VIOLATION = "23503";
const pgCode = (error: unknown): string | undefined => (error as { code?: unknown }).code as string | undefined;

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * "Never persists" for PostgreSQL: deleted and overwritten rows leave the table's visible rows at commit.
 * (Dead tuples stay in the heap files until vacuum reuses the space; that is the server's business.)
 * Run locks: leases in the database (lease.ts), each of their statements one autocommit round trip.
 */
class PostgresBackend implements StoreBackend {
  readonly kind = "postgres" as const;
  readonly defaultTranscriptDir = undefined;
  readonly service: PostgresServiceTables;
  readonly pluginState: PostgresPluginState;
  private readonly leases: RunLeases;

  private constructor(
    private readonly pool: pg.Pool,
    schema: string,
    leaseOptions: RunLeaseOptions,
  ) {
    this.service = new PostgresServiceTables(pool, schema);
    this.pluginState = new PostgresPluginState(pool);
    const statements = new PgTx(pool, false);
    this.leases = new RunLeases(
      { write: (fn) => Promise.resolve(fn(statements)), read: (fn) => Promise.resolve(fn(statements)) },
      leaseOptions,
    );
  }

  static async open(options: PostgresStoreOptions): Promise<PostgresBackend> {
    foldSslModeWarning();
    const schema = options.schema ?? "public";
    if (!SCHEMA_NAME.test(schema)) throw new StoreError("invalid", `invalid PostgreSQL schema name ${schema}`);
    const config: pg.PoolConfig = { connectionString: options.url, options: `-c search_path=${schema}` };
    const pool = new pg.Pool({ ...config, max: options.poolSize ?? 10 });
    // An idle connection dropped by the server must not crash the process; the next query reconnects.
    pool.on("error", () => undefined);
    try {
      await migratePostgres(pool, schema);
    } catch (error) {
      await pool.end();
      throw unreachable(options.url, error);
    }
    return new PostgresBackend(pool, schema, options.runLock ?? {});
  }

  async read<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    return this.transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", false, fn);
  }

  async write<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    return this.transaction("BEGIN", true, fn);
  }

  writeOne<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    return fn(new PgTx(this.pool, false));
  }

  async afterScrub(): Promise<void> {}

  acquireLease(sessionId: string, signal: AbortSignal | undefined, onWait?: () => void): Promise<HeldLease> {
    return this.leases.acquire(sessionId, signal, onWait);
  }

  abandonedLeases(): Promise<string[]> {
    return this.leases.abandoned();
  }

  async close(): Promise<void> {
    try {
      await this.leases.close();
    } finally {
      await this.pool.end();
    }
  }

  private async transaction<T>(begin: string, locking: boolean, fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query(begin);
      const result = await fn(new PgTx(client, locking));
      await client.query("COMMIT");
      client.release();
      return result;
    } catch (error) {
      const broken = await client.query("ROLLBACK").then(
        () => false,
        () => true,
      );
      client.release(broken);
      throw error;
    }
  }
}

/** Brings the schema up to date, under a transaction-scoped advisory lock so concurrent openers take turns. */
export async function migratePostgres(pool: pg.Pool, schema: string, target = POSTGRES_SCHEMA_VERSION): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`gatehouse-migrate:${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${schema}.schema_migrations (
         version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const current =
      (await client.query<{ v: number | null }>(`SELECT max(version) AS v FROM ${schema}.schema_migrations`)).rows[0]
        ?.v ?? 0;
    if (current > POSTGRES_SCHEMA_VERSION) {
      throw new StoreError(
        "invalid",
        `schema ${schema} has version ${current}, newer than this Gatehouse knows (${POSTGRES_SCHEMA_VERSION})`,
      );
    }
    for (const migration of POSTGRES_MIGRATIONS) {
      if (migration.version <= current || migration.version > target) continue;
      await client.query(migration.sql);
      for (const { table, column, definition } of migration.addMissingColumns ?? [])
        await client.query(`ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS ${column} ${definition}`);
      await client.query(`INSERT INTO ${schema}.schema_migrations (version, description) VALUES ($1, $2)`, [
        migration.version,
        migration.description,
      ]);
    }
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/**
 * A store that could not be opened, named: the driver's own words (`connect ECONNREFUSED
 * 127.0.0.1:5432`) do not say which store was meant. The URL is shown without its password.
 */
function unreachable(url: string, error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const code = (error as { code?: unknown }).code;
  // A socket error (ECONNREFUSED, ENOTFOUND, ETIMEDOUT) has no SQLSTATE: the server was not reached.
  const reached = typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) && !code.startsWith("E");
  const named = `${reached ? "cannot open" : "cannot reach"} the PostgreSQL store at ${shownUrl(url)}: ${error.message}`;
  return Object.assign(new Error(maskSecrets(named), { cause: error }), code === undefined ? {} : { code });
}

/** `postgres://bob@db:5432/app (password hidden)`: the URL a person can recognise, minus its password. */
function shownUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return maskSecrets(url);
  }
  const hadPassword = parsed.password !== "";
  parsed.password = "";
  return `${maskSecrets(parsed.href)}${hadPassword ? " (password hidden)" : ""}`;
}

export async function openPostgresStore(options: PostgresStoreOptions): Promise<SessionStore> {
  return new CoreStore(await PostgresBackend.open(options), options);
}

const SSLMODE_WARNING = "SECURITY WARNING: The SSL modes 'prefer', 'require', and 'verify-ca'";
let sslModeWarningFolded = false;

/**
 * pg (through pg-connection-string) warns once per process, in nine lines, that `sslmode=require`
 * (and prefer, verify-ca) currently means verify-full. The same news in one line: the other
 * warnings pass through untouched.
 */
function foldSslModeWarning(): void {
  if (sslModeWarningFolded) return;
  sslModeWarningFolded = true;
  const original = process.emitWarning;
  process.emitWarning = function emitWarning(this: unknown, warning: string | Error, ...rest: unknown[]) {
    if (typeof warning === "string" && warning.startsWith(SSLMODE_WARNING)) {
      process.stderr.write(
        "gatehouse: warning: pg reads sslmode=require, prefer and verify-ca as verify-full (the server certificate is verified); write sslmode=verify-full to say so, or add uselibpqcompat=true for libpq's meaning\n",
      );
      return;
    }
    return (original as (...args: unknown[]) => void).call(process, warning, ...rest);
  } as typeof process.emitWarning;
}
