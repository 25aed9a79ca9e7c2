import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import Database from "better-sqlite3";
import pg from "pg";
import { openServiceRecords } from "../../src/server/records.js";
import { openStore, SQLITE_SCHEMA_VERSION, type StoreOptions } from "../../src/store/index.js";
import { migratePostgres } from "../../src/store/postgres.js";
import { POSTGRES_SCHEMA_VERSION } from "../../src/store/postgres-schema.js";
import { migrateSqlite } from "../../src/store/sqlite-schema.js";
import { filesContaining, tempDir } from "./helpers.js";
import { dropSchema, PG_SKIP, PG_URL, rowsContaining, testSchema } from "./pg.js";

// The server's tables as a server before version 7 made them itself, beside a store at version 6:
// made before keys had an admin flag (that server added the column at its next start).
const OLD_SERVER_TABLES = (serial: string) => `
  CREATE TABLE IF NOT EXISTS server_api_keys (
    id TEXT PRIMARY KEY, principal TEXT NOT NULL, name TEXT, hash TEXT NOT NULL,
    created_at TEXT NOT NULL, revoked_at TEXT
  );
  CREATE TABLE IF NOT EXISTS server_session_owners (
    session_id TEXT PRIMARY KEY, principal TEXT NOT NULL, title TEXT, created_at TEXT NOT NULL
  );
  CREATE INDEX IF NOT EXISTS server_session_owners_by_principal ON server_session_owners (principal, created_at);
  CREATE TABLE IF NOT EXISTS server_run_signals (id ${serial}, body TEXT NOT NULL, created_at BIGINT NOT NULL);
  CREATE TABLE IF NOT EXISTS server_run_steps (
    run_id TEXT NOT NULL, session_id TEXT NOT NULL, at BIGINT NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL,
    plugin_id TEXT, outcome TEXT, category TEXT, duration_ms REAL, tool_call_id TEXT, step INTEGER, ord BIGINT NOT NULL
  );
  INSERT INTO server_api_keys (id, principal, name, hash, created_at) VALUES ('k1', 'alice', 'old', 'abc', '2026-01-01T00:00:00.000Z');
  INSERT INTO server_session_owners (session_id, principal, title, created_at) VALUES ('s1', 'alice', 'kept', '2026-01-01T00:00:00.000Z');
  INSERT INTO server_run_steps (run_id, session_id, at, kind, name, ord) VALUES ('r1', 's1', 1, 'run-start', 'user', 1);
`;

/** What a database written by the previous version holds must read back, and take the new columns. */
async function assertAdopted(options: StoreOptions): Promise<void> {
  const store = await openStore(options);
  const records = await openServiceRecords(store);
  try {
    assert.deepEqual(await records.findApiKey("k1"), {
      id: "k1",
      principal: "alice",
      name: "old",
      admin: false,
      hash: "abc",
      createdAt: "2026-01-01T00:00:00.000Z",
      revokedAt: null,
    });
    assert.equal((await records.sessionOwner("s1"))?.title, "kept");
    assert.deepEqual(
      (await records.console.stepsOf(["r1"])).map((s) => s.kind),
      ["run-start"],
    );
    await records.createApiKey({
      id: "k2",
      principal: "root",
      name: null,
      admin: true,
      hash: "def",
      createdAt: "2026-01-02T00:00:00.000Z",
      revokedAt: null,
    });
    assert.equal((await records.findApiKey("k2"))?.admin, true);
    assert.deepEqual(await records.apiKeyCounts(), { all: 2, active: 2 });
    // The tables it never had are there too.
    await records.console.createLogin({
      tokenHash: "t",
      principal: "root",
      admin: true,
      keyId: "k2",
      csrf: "c",
      expiresAt: Date.now() + 60_000,
    });
    assert.equal((await records.console.login("t", Date.now()))?.keyId, "k2");
  } finally {
    await records.close();
    await store.close();
  }
}

const approval = (title: string) => ({
  runId: "r9",
  toolCallId: "c9",
  sessionId: "s9",
  toolName: "Bash",
  title,
  askedAt: 1,
  instance: "here",
});

describe("the server's records as store tables (sqlite)", () => {
  const dir = tempDir();
  after(() => dir.remove());

  test("a database written by the previous version (server tables made by the server, no admin column) migrates: its keys, owners and steps read back", async () => {
    const path = `${dir.path}/old.db`;
    const db = new Database(path);
    migrateSqlite(db, 6);
    db.exec(OLD_SERVER_TABLES("INTEGER PRIMARY KEY AUTOINCREMENT"));
    db.close();
    await assertAdopted({ kind: "sqlite", path });
    const migrated = new Database(path, { readonly: true });
    assert.equal(migrated.pragma("user_version", { simple: true }), SQLITE_SCHEMA_VERSION);
    migrated.close();
  });

  test("the records share the store's connection: opened on an open store, closing them leaves it open", async () => {
    const store = await openStore({ kind: "sqlite", path: `${dir.path}/shared.db` });
    const records = await openServiceRecords(store);
    await records.ownSession({ sessionId: "s", principal: "p", title: null, createdAt: "2026-01-01T00:00:00.000Z" });
    await records.close();
    assert.equal((await store.service.sessionOwner("s"))?.principal, "p");
    await store.createSession();
    await store.close();
  });

  test("an approval ask's title and a session owner's title leave no bytes in the database files once removed", async () => {
    const folder = `${dir.path}/scrub`;
    const store = await openStore({ kind: "sqlite", path: `${folder}/gatehouse.db` });
    const records = await openServiceRecords(store);
    try {
      await records.console.addPendingApproval(approval("CANARY-ASK-7f3a"));
      await records.ownSession({
        sessionId: "s9",
        principal: "p",
        title: "CANARY-TITLE-91bc",
        createdAt: "2026-01-01T00:00:00.000Z",
      });
      assert.ok(filesContaining(folder, "CANARY-ASK-7f3a").length > 0, "control: the ask's title was written");
      await records.console.removePendingApproval("r9", "c9");
      await records.forgetSession("s9");
      await store.close();
      assert.deepEqual(filesContaining(folder, "CANARY-ASK-7f3a"), []);
      assert.deepEqual(filesContaining(folder, "CANARY-TITLE-91bc"), []);
    } finally {
      await store.close();
    }
  });

  test("signals posted by one store reach a watcher on another store of the same file", async () => {
    const path = `${dir.path}/signals.db`;
    const [a, b] = [await openStore({ kind: "sqlite", path }), await openStore({ kind: "sqlite", path })];
    try {
      let delivered: (body: string) => void = () => {};
      const got = new Promise<string>((resolve) => {
        delivered = resolve;
      });
      // Once watchSignals has resolved, whatever is posted from then on is delivered.
      const stop = await b.service.watchSignals((body) => delivered(body));
      await a.service.postSignal("hello");
      // The poller's timer does not keep a process alive; this test's wait must.
      const alive = setInterval(() => {}, 1000);
      assert.equal(await got.finally(() => clearInterval(alive)), "hello");
      await stop();
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe("the server's records as store tables (postgres)", { skip: PG_URL ? undefined : PG_SKIP }, () => {
  const url = PG_URL as string;
  const schema = testSchema();
  after(() => dropSchema(url, schema));

  test("a schema written by the previous version (server tables made by the server, no admin column) migrates: its keys, owners and steps read back", async () => {
    const pool = new pg.Pool({ connectionString: url, options: `-c search_path=${schema}` });
    try {
      await migratePostgres(pool, schema, 6);
      await pool.query(OLD_SERVER_TABLES("bigserial PRIMARY KEY"));
    } finally {
      await pool.end();
    }
    await assertAdopted({ kind: "postgres", url, schema });
    const check = new pg.Pool({ connectionString: url });
    try {
      const { rows } = await check.query(`SELECT max(version) AS v FROM ${schema}.schema_migrations`);
      assert.equal(rows[0].v, POSTGRES_SCHEMA_VERSION);
    } finally {
      await check.end();
    }
  });

  test("an answered approval ask's title is gone from every row of the schema", async () => {
    const store = await openStore({ kind: "postgres", url, schema });
    try {
      await store.service.addPendingApproval(approval("CANARY-PG-ASK-55e1"));
      assert.equal((await rowsContaining(url, schema, "CANARY-PG-ASK-55e1")).length, 1, "control");
      await store.service.removePendingApproval("r9", "c9");
      assert.deepEqual(await rowsContaining(url, schema, "CANARY-PG-ASK-55e1"), []);
    } finally {
      await store.close();
    }
  });
});
