import { EventEmitter } from "node:events";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { ApprovalDecision } from "../runtime/types.js";
import type { StoreOptions } from "../store/index.js";
import {
  type ConsoleRecords,
  MemoryConsoleRecords,
  PostgresConsoleRecords,
  SqliteConsoleRecords,
} from "./console/records.js";

/**
 * What the service keeps beside the session store, in the same database: API keys (hashes
 * only), which principal owns which session (and its title), and — between instances — signals
 * for runs (a cancel, an approval answer) that reach whichever instance is running the run.
 * Kept in tables of their own (`server_*`) so the session store's schema and migrations stay
 * the runtime's.
 */
export interface ApiKeyRecord {
  readonly id: string;
  readonly principal: string;
  readonly name: string | null;
  /** An admin key's principal sees every session (reading) and may answer any run's approval asks. */
  readonly admin: boolean;
  readonly createdAt: string;
  readonly revokedAt: string | null;
}

export interface StoredApiKey extends ApiKeyRecord {
  /** sha256 of the secret, hex. */
  readonly hash: string;
}

export interface SessionOwner {
  readonly sessionId: string;
  readonly principal: string;
  readonly title: string | null;
  readonly createdAt: string;
}

/** A message for the instance running a run. */
export type RunSignal =
  | { readonly kind: "cancel"; readonly runId: string }
  | {
      readonly kind: "approval";
      readonly runId: string;
      readonly toolCallId: string;
      readonly decision: ApprovalDecision;
      /** Who answered: an API client or a person at the console (the audit trail says which). */
      readonly by?: "client" | "console";
    };

export interface ServiceRecords {
  createApiKey(key: StoredApiKey): Promise<void>;
  findApiKey(id: string): Promise<StoredApiKey | undefined>;
  listApiKeys(): Promise<ApiKeyRecord[]>;
  /** false when there is no such key or it was already revoked. */
  revokeApiKey(id: string, at: string): Promise<boolean>;
  /** How many keys were ever created, and how many are not revoked. */
  apiKeyCounts(): Promise<{ readonly all: number; readonly active: number }>;

  ownSession(owner: SessionOwner): Promise<void>;
  sessionOwner(sessionId: string): Promise<SessionOwner | undefined>;
  /** Newest first. */
  ownedSessions(principal: string, page: { limit: number; offset: number }): Promise<SessionOwner[]>;
  forgetSession(sessionId: string): Promise<void>;

  /** Delivered to every instance watching (this one included). */
  signal(signal: RunSignal): Promise<void>;
  /** Starts delivering signals; returns how to stop. */
  watch(onSignal: (signal: RunSignal) => void): Promise<() => Promise<void>>;
  /** Owners of these sessions (those that have one). */
  sessionOwners(sessionIds: readonly string[]): Promise<Map<string, SessionOwner>>;
  /** What the console keeps: run steps, runs in progress, pending approval asks, logins. */
  readonly console: ConsoleRecords;
  /** A cheap round trip to the database (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

const TABLES = (time: string, serial: string) => `
  CREATE TABLE IF NOT EXISTS server_api_keys (
    id TEXT PRIMARY KEY,
    principal TEXT NOT NULL,
    name TEXT,
    hash TEXT NOT NULL,
    created_at ${time} NOT NULL,
    revoked_at ${time},
    admin INTEGER NOT NULL DEFAULT 0
  );
  CREATE TABLE IF NOT EXISTS server_session_owners (
    session_id TEXT PRIMARY KEY,
    principal TEXT NOT NULL,
    title TEXT,
    created_at ${time} NOT NULL
  );
  CREATE INDEX IF NOT EXISTS server_session_owners_by_principal ON server_session_owners (principal, created_at);
  CREATE TABLE IF NOT EXISTS server_run_signals (
    id ${serial},
    body TEXT NOT NULL,
    created_at BIGINT NOT NULL
  );
`;

interface KeyRow {
  id: string;
  principal: string;
  name: string | null;
  hash: string;
  created_at: string;
  revoked_at: string | null;
  admin: number;
}
interface OwnerRow {
  session_id: string;
  principal: string;
  title: string | null;
  created_at: string;
}
const toKey = (r: KeyRow): StoredApiKey => ({
  id: r.id,
  principal: r.principal,
  name: r.name,
  admin: Number(r.admin) === 1,
  hash: r.hash,
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
});
const toOwner = (r: OwnerRow): SessionOwner => ({
  sessionId: r.session_id,
  principal: r.principal,
  title: r.title,
  createdAt: r.created_at,
});
const publicKey = ({ hash: _hash, ...rest }: StoredApiKey): ApiKeyRecord => rest;

/** Opens the records in the database the store uses (memory for the memory store). */
export async function openServiceRecords(options: StoreOptions): Promise<ServiceRecords> {
  switch (options.kind) {
    case "memory":
      return new MemoryRecords();
    case "sqlite":
      return SqliteRecords.open(options.path);
    case "postgres":
      return PostgresRecords.open(options.url, options.schema ?? "public");
  }
}

class MemoryRecords implements ServiceRecords {
  readonly console = new MemoryConsoleRecords();
  private readonly keys = new Map<string, StoredApiKey>();
  private readonly owners = new Map<string, SessionOwner>();
  private readonly bus = new EventEmitter();

  async createApiKey(key: StoredApiKey) {
    this.keys.set(key.id, key);
  }
  async findApiKey(id: string) {
    return this.keys.get(id);
  }
  async listApiKeys() {
    return [...this.keys.values()].map(publicKey);
  }
  async revokeApiKey(id: string, at: string) {
    const key = this.keys.get(id);
    if (!key || key.revokedAt) return false;
    this.keys.set(id, { ...key, revokedAt: at });
    return true;
  }
  async apiKeyCounts() {
    const all = [...this.keys.values()];
    return { all: all.length, active: all.filter((k) => k.revokedAt === null).length };
  }
  async ownSession(owner: SessionOwner) {
    this.owners.set(owner.sessionId, owner);
  }
  async sessionOwner(sessionId: string) {
    return this.owners.get(sessionId);
  }
  async ownedSessions(principal: string, page: { limit: number; offset: number }) {
    return [...this.owners.values()]
      .filter((o) => o.principal === principal)
      .reverse()
      .slice(page.offset, page.offset + page.limit);
  }
  async sessionOwners(sessionIds: readonly string[]) {
    const found = new Map<string, SessionOwner>();
    for (const id of sessionIds) {
      const owner = this.owners.get(id);
      if (owner) found.set(id, owner);
    }
    return found;
  }
  async forgetSession(sessionId: string) {
    this.owners.delete(sessionId);
    await this.console.forgetSteps(sessionId);
  }
  async signal(signal: RunSignal) {
    this.bus.emit("signal", signal);
  }
  async watch(onSignal: (signal: RunSignal) => void) {
    this.bus.on("signal", onSignal);
    return async () => void this.bus.off("signal", onSignal);
  }
  async ping() {}
  async close() {}
}

/** How often a SQLite instance looks for signals from other processes on the same file. */
const SQLITE_SIGNAL_POLL_MS = 200;
/** Signals older than this are deleted (each is acted on within a poll). */
const SIGNAL_TTL_MS = 60_000;

class SqliteRecords implements ServiceRecords {
  readonly console: ConsoleRecords;

  private constructor(private readonly db: import("better-sqlite3").Database) {
    this.console = new SqliteConsoleRecords(db);
  }

  static async open(path: string): Promise<SqliteRecords> {
    const { default: Database } = await import("better-sqlite3");
    mkdirSync(dirname(path), { recursive: true });
    const db = new Database(path);
    db.pragma("journal_mode = WAL");
    db.pragma("busy_timeout = 5000");
    db.exec(TABLES("TEXT", "INTEGER PRIMARY KEY AUTOINCREMENT"));
    // Files made before keys had an admin flag.
    const columns = db.prepare("SELECT name FROM pragma_table_info('server_api_keys')").all() as { name: string }[];
    if (!columns.some((c) => c.name === "admin"))
      db.exec("ALTER TABLE server_api_keys ADD COLUMN admin INTEGER NOT NULL DEFAULT 0");
    return new SqliteRecords(db);
  }

  async createApiKey(k: StoredApiKey) {
    this.db
      .prepare("INSERT INTO server_api_keys (id, principal, name, hash, created_at, admin) VALUES (?, ?, ?, ?, ?, ?)")
      .run(k.id, k.principal, k.name, k.hash, k.createdAt, k.admin ? 1 : 0);
  }
  async findApiKey(id: string) {
    const row = this.db.prepare("SELECT * FROM server_api_keys WHERE id = ?").get(id) as KeyRow | undefined;
    return row && toKey(row);
  }
  async listApiKeys() {
    return (this.db.prepare("SELECT * FROM server_api_keys ORDER BY created_at").all() as KeyRow[])
      .map(toKey)
      .map(publicKey);
  }
  async revokeApiKey(id: string, at: string) {
    return (
      this.db.prepare("UPDATE server_api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL").run(at, id)
        .changes > 0
    );
  }
  async apiKeyCounts() {
    return this.db
      .prepare('SELECT count(*) AS "all", count(*) FILTER (WHERE revoked_at IS NULL) AS active FROM server_api_keys')
      .get() as { all: number; active: number };
  }
  async ownSession(o: SessionOwner) {
    this.db
      .prepare("INSERT INTO server_session_owners (session_id, principal, title, created_at) VALUES (?, ?, ?, ?)")
      .run(o.sessionId, o.principal, o.title, o.createdAt);
  }
  async sessionOwner(sessionId: string) {
    const row = this.db.prepare("SELECT * FROM server_session_owners WHERE session_id = ?").get(sessionId) as
      | OwnerRow
      | undefined;
    return row && toOwner(row);
  }
  async ownedSessions(principal: string, page: { limit: number; offset: number }) {
    return (
      this.db
        .prepare(
          "SELECT * FROM server_session_owners WHERE principal = ? ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?",
        )
        .all(principal, page.limit, page.offset) as OwnerRow[]
    ).map(toOwner);
  }
  async sessionOwners(sessionIds: readonly string[]) {
    const found = new Map<string, SessionOwner>();
    const query = this.db.prepare("SELECT * FROM server_session_owners WHERE session_id = ?");
    for (const id of sessionIds) {
      const row = query.get(id) as OwnerRow | undefined;
      if (row) found.set(id, toOwner(row));
    }
    return found;
  }
  async forgetSession(sessionId: string) {
    this.db.prepare("DELETE FROM server_session_owners WHERE session_id = ?").run(sessionId);
    await this.console.forgetSteps(sessionId);
  }
  async signal(signal: RunSignal) {
    const now = Date.now();
    this.db.prepare("INSERT INTO server_run_signals (body, created_at) VALUES (?, ?)").run(JSON.stringify(signal), now);
    this.db.prepare("DELETE FROM server_run_signals WHERE created_at < ?").run(now - SIGNAL_TTL_MS);
  }
  async watch(onSignal: (signal: RunSignal) => void) {
    const last = this.db.prepare("SELECT coalesce(max(id), 0) AS id FROM server_run_signals").get() as { id: number };
    let cursor = last.id;
    const next = this.db.prepare("SELECT id, body FROM server_run_signals WHERE id > ? ORDER BY id");
    const timer = setInterval(() => {
      for (const row of next.all(cursor) as { id: number; body: string }[]) {
        cursor = row.id;
        onSignal(JSON.parse(row.body) as RunSignal);
      }
    }, SQLITE_SIGNAL_POLL_MS);
    timer.unref();
    return async () => clearInterval(timer);
  }
  async ping() {
    this.db.prepare("SELECT 1").get();
  }
  async close() {
    this.db.close();
  }
}

class PostgresRecords implements ServiceRecords {
  readonly console: ConsoleRecords;

  private constructor(
    private readonly pool: import("pg").Pool,
    private readonly url: string,
    private readonly channel: string,
  ) {
    this.console = new PostgresConsoleRecords(pool);
  }

  static async open(url: string, schema: string): Promise<PostgresRecords> {
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(schema)) throw new Error(`invalid PostgreSQL schema name: ${schema}`);
    const { default: pg } = await import("pg");
    const pool = new pg.Pool({ connectionString: url, max: 4, options: `-c search_path=${schema}` });
    const client = await pool.connect();
    try {
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      // Several instances may start at once: one of them creates the tables.
      await client.query("SELECT pg_advisory_lock(hashtext('gatehouse server records'))");
      try {
        await client.query(TABLES("TEXT", "bigserial PRIMARY KEY"));
        // Schemas made before keys had an admin flag.
        await client.query("ALTER TABLE server_api_keys ADD COLUMN IF NOT EXISTS admin INTEGER NOT NULL DEFAULT 0");
        await client.query(PostgresConsoleRecords.tables());
      } finally {
        await client.query("SELECT pg_advisory_unlock(hashtext('gatehouse server records'))");
      }
    } finally {
      client.release();
    }
    return new PostgresRecords(pool, url, `gatehouse_runs_${schema}`);
  }

  private async rows<R>(text: string, values: unknown[] = []): Promise<R[]> {
    return (await this.pool.query(text, values)).rows as R[];
  }

  async createApiKey(k: StoredApiKey) {
    await this.rows(
      "INSERT INTO server_api_keys (id, principal, name, hash, created_at, admin) VALUES ($1, $2, $3, $4, $5, $6)",
      [k.id, k.principal, k.name, k.hash, k.createdAt, k.admin ? 1 : 0],
    );
  }
  async findApiKey(id: string) {
    const [row] = await this.rows<KeyRow>("SELECT * FROM server_api_keys WHERE id = $1", [id]);
    return row && toKey(row);
  }
  async listApiKeys() {
    return (await this.rows<KeyRow>("SELECT * FROM server_api_keys ORDER BY created_at")).map(toKey).map(publicKey);
  }
  async revokeApiKey(id: string, at: string) {
    const result = await this.pool.query(
      "UPDATE server_api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL",
      [at, id],
    );
    return (result.rowCount ?? 0) > 0;
  }
  async apiKeyCounts() {
    const [row] = await this.rows<{ all: number; active: number }>(
      'SELECT count(*)::int AS "all", (count(*) FILTER (WHERE revoked_at IS NULL))::int AS active FROM server_api_keys',
    );
    return row ?? { all: 0, active: 0 };
  }
  async ownSession(o: SessionOwner) {
    await this.rows(
      "INSERT INTO server_session_owners (session_id, principal, title, created_at) VALUES ($1, $2, $3, $4)",
      [o.sessionId, o.principal, o.title, o.createdAt],
    );
  }
  async sessionOwner(sessionId: string) {
    const [row] = await this.rows<OwnerRow>("SELECT * FROM server_session_owners WHERE session_id = $1", [sessionId]);
    return row && toOwner(row);
  }
  async ownedSessions(principal: string, page: { limit: number; offset: number }) {
    return (
      await this.rows<OwnerRow>(
        "SELECT * FROM server_session_owners WHERE principal = $1 ORDER BY created_at DESC, session_id LIMIT $2 OFFSET $3",
        [principal, page.limit, page.offset],
      )
    ).map(toOwner);
  }
  async sessionOwners(sessionIds: readonly string[]) {
    const rows = await this.rows<OwnerRow>("SELECT * FROM server_session_owners WHERE session_id = ANY($1)", [
      [...sessionIds],
    ]);
    return new Map(rows.map((r) => [r.session_id, toOwner(r)]));
  }
  async forgetSession(sessionId: string) {
    await this.rows("DELETE FROM server_session_owners WHERE session_id = $1", [sessionId]);
    await this.console.forgetSteps(sessionId);
  }
  /** PostgreSQL's NOTIFY reaches every instance listening on the schema's channel, at once. */
  async signal(signal: RunSignal) {
    await this.rows("SELECT pg_notify($1, $2)", [this.channel, JSON.stringify(signal)]);
  }
  async watch(onSignal: (signal: RunSignal) => void) {
    const { default: pg } = await import("pg");
    let stopped = false;
    let client: import("pg").Client | undefined;
    // The listening connection is its own; if it drops, it is opened again.
    const connect = async (): Promise<void> => {
      const c = new pg.Client({ connectionString: this.url });
      c.on("notification", (n) => {
        if (n.channel === this.channel && n.payload) onSignal(JSON.parse(n.payload) as RunSignal);
      });
      c.on("error", () => {
        if (!stopped) setTimeout(() => void connect().catch(() => undefined), 500).unref();
      });
      await c.connect();
      await c.query(`LISTEN "${this.channel}"`);
      client = c;
    };
    await connect();
    return async () => {
      stopped = true;
      await client?.end().catch(() => undefined);
    };
  }
  async ping() {
    await this.pool.query("SELECT 1");
  }
  async close() {
    await this.pool.end();
  }
}
