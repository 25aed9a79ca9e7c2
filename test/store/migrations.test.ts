import assert from "node:assert/strict";
import { statSync, writeFileSync } from "node:fs";
import { after, describe, test } from "node:test";
import Database from "better-sqlite3";
import pg from "pg";
import { openStore, type SessionStore, SQLITE_SCHEMA_VERSION, StoreError } from "../../src/store/index.js";
import { migratePostgres } from "../../src/store/postgres.js";
import { POSTGRES_MIGRATIONS } from "../../src/store/postgres-schema.js";
import { migrateSqlite } from "../../src/store/sqlite-schema.js";
import { tempDir } from "./helpers.js";
import { dropSchema, PG_SKIP, PG_URL, testSchema, withClient } from "./pg.js";

const T0 = "2026-01-01T00:00:00.000Z";

/** Rows as version 1 wrote them: two runs, the second's first message covered by a summary (run ids as JSON only). */
const V1_ROWS: [string, unknown[]][] = [
  [
    "INSERT INTO sessions (id, key, next_seq, next_run_seq, created_at, updated_at) VALUES ('s1', 'k', 5, 3, $t, $t)",
    [],
  ],
  [
    "INSERT INTO runs (id, session_id, seq, status, depth, trigger, started_at) VALUES ('r1', 's1', 1, 'completed', 0, 'user', $t)",
    [],
  ],
  [
    "INSERT INTO runs (id, session_id, seq, status, depth, trigger, started_at) VALUES ('r2', 's1', 2, 'running', 0, 'user', $t)",
    [],
  ],
  [
    "INSERT INTO messages (id, session_id, run_id, seq, role, parts, metadata, created_at) VALUES ('m1', 's1', 'r1', 1, 'user', '[{\"type\":\"text\",\"text\":\"hi\"}]', '{}', $t)",
    [],
  ],
  [
    "INSERT INTO messages (id, session_id, run_id, seq, role, parts, metadata, created_at) VALUES ('m2', 's1', 'r2', 2, 'assistant', '[{\"type\":\"text\",\"text\":\"leak\"}]', '{}', $t)",
    [],
  ],
  [
    "INSERT INTO messages (id, session_id, run_id, seq, role, parts, metadata, created_at) VALUES ('m3', 's1', NULL, 3, 'summary', '[{\"type\":\"text\",\"text\":\"sum\"}]', '{}', $t)",
    [],
  ],
  [
    "INSERT INTO messages (id, session_id, run_id, seq, role, parts, metadata, created_at) VALUES ('m4', 's1', 'r2', 4, 'assistant', '[{\"type\":\"text\",\"text\":\"more\"}]', '{}', $t)",
    [],
  ],
  [
    "INSERT INTO compactions (id, session_id, message_id, from_seq, to_seq, run_ids, created_at) VALUES ('c1', 's1', 'm3', 1, 2, '[\"r1\",\"r2\"]', $t)",
    [],
  ],
];

async function assertMigratedData(store: SessionStore): Promise<void> {
  assert.deepEqual(
    (await store.history("s1")).map((m) => m.id),
    ["m3", "m4"],
  );
  const block = await store.blockRun("r2", { notice: "withheld", blockedBy: "p", hook: "before_response_emit" });
  assert.equal(block.droppedSummaries, 1, "the backfilled run index finds the summary covering r2");
  assert.deepEqual(
    (await store.history("s1")).map((m) => m.id),
    ["m1", block.replacement.id],
  );
  const next = await store.appendMessage({
    sessionId: "s1",
    runId: "r2",
    role: "user",
    parts: [{ type: "text", text: "x" }],
  });
  assert.equal(next.seq, 5);
}

describe("sqlite migrations", () => {
  const dir = tempDir();
  after(() => dir.remove());

  test("a store on a path that does not exist yet creates a private folder and a file at the current version", async () => {
    const path = `${dir.path}/fresh/.gatehouse/gatehouse.db`;
    const store = await openStore({ kind: "sqlite", path });
    await store.createSession();
    await store.close();
    assert.equal(statSync(`${dir.path}/fresh/.gatehouse`).mode & 0o777, 0o700);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    const db = new Database(path, { readonly: true });
    assert.equal(db.pragma("user_version", { simple: true }), SQLITE_SCHEMA_VERSION);
    assert.equal(db.pragma("journal_mode", { simple: true }), "wal");
    db.close();
  });

  test("an existing empty file is migrated from nothing", async () => {
    const path = `${dir.path}/empty.db`;
    writeFileSync(path, "");
    const store = await openStore({ kind: "sqlite", path });
    assert.equal((await store.listSessions()).length, 0);
    await store.close();
  });

  test("a file at version 1 is migrated to the current version, its data kept and its summaries indexed by run", async () => {
    const path = `${dir.path}/v1.db`;
    const db = new Database(path);
    migrateSqlite(db, 1);
    assert.equal(db.pragma("user_version", { simple: true }), 1);
    for (const [sql] of V1_ROWS) db.prepare(sql.replaceAll("$t", "@t")).run({ t: T0 });
    db.close();
    const store = await openStore({ kind: "sqlite", path });
    try {
      await assertMigratedData(store);
    } finally {
      await store.close();
    }
    const after = new Database(path, { readonly: true });
    assert.equal(after.pragma("user_version", { simple: true }), SQLITE_SCHEMA_VERSION);
    after.close();
  });

  test("a file written by a newer Gatehouse is refused and keeps its version", async () => {
    const path = `${dir.path}/future.db`;
    const db = new Database(path);
    db.pragma(`user_version = ${SQLITE_SCHEMA_VERSION + 1}`);
    db.close();
    await assert.rejects(
      openStore({ kind: "sqlite", path }),
      (e: unknown) => e instanceof StoreError && e.code === "invalid",
    );
    const untouched = new Database(path, { readonly: true });
    assert.equal(untouched.pragma("user_version", { simple: true }), SQLITE_SCHEMA_VERSION + 1);
    assert.equal((untouched.prepare("SELECT count(*) AS n FROM sqlite_master").get() as { n: number }).n, 0);
    untouched.close();
  });
});

describe("postgres migrations", { skip: PG_URL ? undefined : PG_SKIP }, () => {
  const url = PG_URL as string;
  const schema = testSchema();
  after(() => dropSchema(url, schema));

  test("a schema at version 1 is migrated to the current version, its data kept and its summaries indexed by run", async () => {
    const pool = new pg.Pool({ connectionString: url, options: `-c search_path=${schema}` });
    try {
      await migratePostgres(pool, schema, 1);
      for (const [sql, values] of V1_ROWS) await pool.query(sql.replaceAll("$t", `'${T0}'`), values);
    } finally {
      await pool.end();
    }
    const store = await openStore({ kind: "postgres", url, schema });
    try {
      await assertMigratedData(store);
    } finally {
      await store.close();
    }
    const versions = await withClient(url, (c) =>
      c.query(`SELECT version FROM ${schema}.schema_migrations ORDER BY 1`),
    );
    assert.deepEqual(
      versions.rows.map((r) => r.version),
      // Every PostgreSQL migration: a SQLite-only one (4) has no number here.
      POSTGRES_MIGRATIONS.map((m) => m.version),
    );
  });

  test("a new schema is created at the current version by concurrent openers without conflict", async () => {
    const fresh = testSchema();
    try {
      const stores = await Promise.all([1, 2, 3].map(() => openStore({ kind: "postgres", url, schema: fresh })));
      await Promise.all(stores.map((s) => s.close()));
      const versions = await withClient(url, (c) => c.query(`SELECT version FROM ${fresh}.schema_migrations`));
      assert.equal(versions.rowCount, POSTGRES_MIGRATIONS.length);
    } finally {
      await dropSchema(url, fresh);
    }
  });
});
