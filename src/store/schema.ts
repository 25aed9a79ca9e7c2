// The tables, written once for both SQL dialects. A migration's text must never change once released:
// a database records only the number of the last migration it applied.

export interface Migration {
  readonly version: number;
  readonly description: string;
  readonly sql: string;
  /**
   * Columns that a table the migration adopts (created before it, by older code, with `IF NOT EXISTS`)
   * may lack: added after `sql` when missing.
   */
  readonly addMissingColumns?: readonly {
    readonly table: string;
    readonly column: string;
    readonly definition: string;
  }[];
}

export type Dialect = "sqlite" | "postgres";

interface Types {
  readonly time: string;
  /** PostgreSQL: `json`, not `jsonb`: it keeps the text as written (key order, and NUL escapes jsonb refuses). */
  readonly json: string;
  readonly serialKey: string;
  /** A key that only grows: a deleted ticket's number is never handed out again. */
  readonly ticketKey: string;
  /** Milliseconds since 1970. */
  readonly millis: string;
  readonly withoutRowid: string;
  readonly jsonArrayElements: string;
  readonly real: string;
  readonly bytes: string;
}

const TYPES: Record<Dialect, Types> = {
  sqlite: {
    time: "TEXT",
    json: "TEXT",
    serialKey: "INTEGER PRIMARY KEY",
    ticketKey: "INTEGER PRIMARY KEY AUTOINCREMENT",
    millis: "INTEGER",
    withoutRowid: "WITHOUT ROWID",
    jsonArrayElements: "json_each(c.run_ids) AS j",
    real: "REAL",
    bytes: "BLOB",
  },
  postgres: {
    time: "timestamptz",
    json: "json",
    serialKey: "bigserial PRIMARY KEY",
    ticketKey: "bigserial PRIMARY KEY",
    millis: "bigint",
    withoutRowid: "",
    jsonArrayElements: "json_array_elements_text(c.run_ids) AS j(value)",
    real: "DOUBLE PRECISION",
    bytes: "bytea",
  },
};

// Version 1's cross-process run lock for SQLite queued its waiters here (PostgreSQL used advisory
// locks); version 3 replaces both with run leases.
const RUN_LOCK_QUEUE = `
  CREATE TABLE run_lock_queue (
    ticket INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    owner TEXT NOT NULL
  );
  CREATE INDEX run_lock_queue_by_session ON run_lock_queue(session_id, ticket);
`;

// SQLite only: PostgreSQL has no afterScrub work to owe (see src/store/README.md, "Never persists").
const SCRUB_DEBT = `
  -- One row while a scrub's old bytes may still be in the database files. Written in the scrub's own
  -- transaction, so a crash cannot lose it; removed once VACUUM has rewritten the file and the WAL is cut.
  CREATE TABLE scrub_debt (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    scrubs INTEGER NOT NULL,             -- bumped by every scrub
    vacuumed INTEGER NOT NULL DEFAULT 0, -- the value of scrubs the last VACUUM covered
    pinned_at TEXT                       -- when another connection kept the files from being cleaned (audited once)
  );
`;

// Until version 7 the server kept these tables itself (its own connection, CREATE TABLE IF NOT EXISTS
// at every start): the migration adopts tables such a server made, as they are. Their time columns stay
// TEXT in both dialects for that reason.
const SERVICE_TABLES = (t: Types) => `
  CREATE TABLE IF NOT EXISTS server_api_keys (
    id TEXT PRIMARY KEY,
    principal TEXT NOT NULL,
    name TEXT,
    hash TEXT NOT NULL,
    created_at TEXT NOT NULL,
    revoked_at TEXT,
    admin INTEGER NOT NULL DEFAULT 0
  );
  CREATE TABLE IF NOT EXISTS server_session_owners (
    session_id TEXT PRIMARY KEY,
    principal TEXT NOT NULL,
    title TEXT,
    created_at TEXT NOT NULL
  );
  CREATE INDEX IF NOT EXISTS server_session_owners_by_principal ON server_session_owners (principal, created_at);
  CREATE TABLE IF NOT EXISTS server_run_signals (
    id ${t.ticketKey},
    body TEXT NOT NULL,
    created_at BIGINT NOT NULL
  );
  CREATE TABLE IF NOT EXISTS server_run_steps (
    run_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    at BIGINT NOT NULL,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    plugin_id TEXT,
    outcome TEXT,
    category TEXT,
    duration_ms ${t.real},
    tool_call_id TEXT,
    step INTEGER,
    ord BIGINT NOT NULL
  );
  CREATE INDEX IF NOT EXISTS server_run_steps_by_run ON server_run_steps (run_id, ord);
  CREATE INDEX IF NOT EXISTS server_run_steps_by_session ON server_run_steps (session_id);
  CREATE TABLE IF NOT EXISTS server_live_runs (
    run_id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    parent_run_id TEXT,
    depth INTEGER NOT NULL,
    instance TEXT NOT NULL,
    started_at BIGINT NOT NULL
  );
  CREATE TABLE IF NOT EXISTS server_pending_approvals (
    run_id TEXT NOT NULL,
    tool_call_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    tool_name TEXT NOT NULL,
    title TEXT NOT NULL,
    asked_at BIGINT NOT NULL,
    instance TEXT NOT NULL,
    PRIMARY KEY (run_id, tool_call_id)
  );
  CREATE TABLE IF NOT EXISTS server_console_logins (
    token_hash TEXT PRIMARY KEY,
    principal TEXT NOT NULL,
    admin INTEGER NOT NULL,
    key_id TEXT,
    csrf TEXT NOT NULL,
    expires_at BIGINT NOT NULL
  );
`;

/** A migration that only one dialect applies: version numbers stay shared, the other skips it. */
type DialectMigration = Migration & { readonly only?: Dialect };

export function migrationsFor(dialect: Dialect): readonly Migration[] {
  const t = TYPES[dialect];
  const all: DialectMigration[] = [
    {
      version: 1,
      description: "sessions, runs, messages, compactions, injections, audit",
      sql: `
        -- No index on updated_at: every append touches it, and an index would turn those updates from
        -- in-place (PostgreSQL HOT) into index writes; listing sorts the sessions instead.
        CREATE TABLE sessions (
          id TEXT PRIMARY KEY,
          key TEXT,
          parent_session_id TEXT REFERENCES sessions(id) ON DELETE SET NULL,
          next_seq INTEGER NOT NULL DEFAULT 1,
          next_run_seq INTEGER NOT NULL DEFAULT 1,
          created_at ${t.time} NOT NULL,
          updated_at ${t.time} NOT NULL
        );
        CREATE INDEX sessions_by_key ON sessions(key, created_at);
        CREATE INDEX sessions_by_parent ON sessions(parent_session_id);

        CREATE TABLE runs (
          id TEXT PRIMARY KEY,
          session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
          seq INTEGER NOT NULL,
          status TEXT NOT NULL CHECK (status IN ('running', 'completed', 'blocked', 'claimed', 'failed', 'cancelled')),
          depth INTEGER NOT NULL,
          parent_run_id TEXT,
          trigger TEXT NOT NULL,
          job_id TEXT,
          started_at ${t.time} NOT NULL,
          ended_at ${t.time},
          UNIQUE (session_id, seq)
        );

        CREATE TABLE messages (
          id TEXT PRIMARY KEY,
          session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
          run_id TEXT REFERENCES runs(id) ON DELETE CASCADE,
          seq INTEGER NOT NULL,
          role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool', 'system', 'summary')),
          parts ${t.json} NOT NULL,
          metadata ${t.json} NOT NULL,
          idempotency_key TEXT,
          created_at ${t.time} NOT NULL,
          UNIQUE (session_id, seq)
        );
        CREATE INDEX messages_by_run ON messages(run_id, seq);
        CREATE UNIQUE INDEX messages_by_key ON messages(session_id, idempotency_key) WHERE idempotency_key IS NOT NULL;

        CREATE TABLE compactions (
          id TEXT PRIMARY KEY,
          session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
          message_id TEXT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
          from_seq INTEGER NOT NULL,
          to_seq INTEGER NOT NULL,
          run_ids ${t.json} NOT NULL,
          created_at ${t.time} NOT NULL
        );
        CREATE INDEX compactions_by_session ON compactions(session_id);
        CREATE INDEX compactions_by_message ON compactions(message_id);

        CREATE TABLE injections (
          ord ${t.serialKey},
          id TEXT NOT NULL UNIQUE,
          session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
          text TEXT NOT NULL,
          placement TEXT NOT NULL,
          idempotency_key TEXT,
          expires_at ${t.time},
          created_at ${t.time} NOT NULL,
          consumed_by_run_id TEXT,
          consumed_at ${t.time}
        );
        CREATE INDEX injections_by_session ON injections(session_id, ord);
        CREATE UNIQUE INDEX injections_by_key ON injections(session_id, idempotency_key) WHERE idempotency_key IS NOT NULL;

        CREATE TABLE audit (
          ord ${t.serialKey},
          id TEXT NOT NULL UNIQUE,
          hook TEXT NOT NULL,
          plugin_id TEXT NOT NULL,
          outcome TEXT NOT NULL,
          category TEXT,
          session_id TEXT,
          run_id TEXT,
          at ${t.time} NOT NULL
        );
        CREATE INDEX audit_by_session ON audit(session_id, ord);
        CREATE INDEX audit_by_run ON audit(run_id, ord);
        ${dialect === "sqlite" ? RUN_LOCK_QUEUE : ""}
      `,
    },
    {
      version: 2,
      description: "index summaries by covered run, so a block finds them without scanning every compaction",
      sql: `
        CREATE TABLE compaction_runs (
          run_id TEXT NOT NULL,
          compaction_id TEXT NOT NULL REFERENCES compactions(id) ON DELETE CASCADE,
          PRIMARY KEY (run_id, compaction_id)
        ) ${t.withoutRowid};
        CREATE INDEX compaction_runs_by_compaction ON compaction_runs(compaction_id);
        INSERT INTO compaction_runs (run_id, compaction_id)
          SELECT DISTINCT j.value, c.id FROM compactions c, ${t.jsonArrayElements};
      `,
    },
    {
      version: 3,
      description: "run leases: the cross-process run lock as rows, the same for SQLite and PostgreSQL",
      sql: `
        -- One row per session a run holds (lease.ts). No foreign key: deleting a session under its
        -- run lock must not take the lease from its holder. Times are milliseconds on the database's clock.
        CREATE TABLE run_leases (
          session_id TEXT PRIMARY KEY,
          owner TEXT NOT NULL,
          acquired_at ${t.millis} NOT NULL,
          expires_at ${t.millis} NOT NULL
        ) ${t.withoutRowid};
        CREATE TABLE run_lease_waiters (
          ticket ${t.ticketKey},
          session_id TEXT NOT NULL,
          owner TEXT NOT NULL,
          expires_at ${t.millis} NOT NULL
        );
        CREATE INDEX run_lease_waiters_by_session ON run_lease_waiters(session_id, ticket);
        -- Whoever takes a lease counts the session's runs left running; this keeps that count off the
        -- session's finished runs.
        CREATE INDEX runs_running ON runs(session_id) WHERE status = 'running';
        ${dialect === "sqlite" ? "DROP TABLE run_lock_queue;" : ""}
      `,
    },
    {
      version: 4,
      description: "record scrubs whose old bytes are not yet purged from the SQLite files",
      only: "sqlite",
      sql: SCRUB_DEBT,
    },
    {
      version: 5,
      description: "what a run cost and why it ended: model, usage, outcome detail, error kind",
      sql: `
        ALTER TABLE runs ADD COLUMN model TEXT;
        ALTER TABLE runs ADD COLUMN usage ${t.json};
        ALTER TABLE runs ADD COLUMN detail TEXT;
        ALTER TABLE runs ADD COLUMN error_kind TEXT;
      `,
    },
    {
      version: 6,
      description: "a session's title, as someone named it (sessions rename, the server's API)",
      sql: `
        ALTER TABLE sessions ADD COLUMN title TEXT;
      `,
    },
    {
      version: 7,
      description:
        "the server's records: API keys, session owners, run signals, run steps, live runs, approval asks, console logins",
      sql: SERVICE_TABLES(t),
      // Keys made before keys had an admin flag.
      addMissingColumns: [{ table: "server_api_keys", column: "admin", definition: "INTEGER NOT NULL DEFAULT 0" }],
    },
    {
      version: 8,
      description:
        "what the console shows beside a step and an ask: a failed run's error, an ask's input (masked) and its rules",
      sql: `
        ALTER TABLE server_run_steps ADD COLUMN detail TEXT;
        ALTER TABLE server_pending_approvals ADD COLUMN detail TEXT;
      `,
    },
    {
      version: 9,
      description:
        "OpenClaw plugins' runtime.state: keyed values (JSON) and blobs (bytes), by plugin, namespace and key",
      // Times are epoch milliseconds, as the plugin reads them back (createdAt, expiresAt).
      sql: `
        CREATE TABLE plugin_state (
          plugin_id TEXT NOT NULL,
          kind TEXT NOT NULL,
          namespace TEXT NOT NULL,
          key TEXT NOT NULL,
          value TEXT NOT NULL,
          bytes ${t.bytes},
          created_at ${t.millis} NOT NULL,
          expires_at ${t.millis},
          PRIMARY KEY (plugin_id, kind, namespace, key)
        ) ${t.withoutRowid};
      `,
    },
  ];
  return all.filter((m) => m.only === undefined || m.only === dialect).map(({ only, ...m }) => m);
}

/** The SQLite file's `user_version` once every migration is applied. */
export const SQLITE_SCHEMA_VERSION = (migrationsFor("sqlite").at(-1) as Migration).version;
