// The run lock across processes is a lease in the database (src/store/lease.ts), the same for SQLite and
// PostgreSQL: these check its rows, its expiry and heartbeat, take-overs, fairness between processes, and
// that an old SQLite data folder (lock files, a ticket table) still opens.
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { after, describe, test } from "node:test";
import Database from "better-sqlite3";
import { openStore, type SessionStore, type StoreOptions } from "../../src/store/index.js";
import { migrateSqlite } from "../../src/store/sqlite-schema.js";
import { eventually, spawnWorker, tempDir, withRawDatabase } from "./helpers.js";
import { dropSchema, PG_SKIP, PG_URL, testSchema } from "./pg.js";

/** An owner on a host this process cannot see into: only its expiry tells whether it is still there. */
const FOREIGN_OWNER = "0000000000000000:4242:123456:cafebabe";

/** The abandoned ones among a test's sessions (PostgreSQL's tests share one schema). */
async function abandonedOf(store: SessionStore, sessions: readonly string[]): Promise<string[]> {
  return (await store.abandonedRunLocks()).filter((id) => sessions.includes(id));
}

interface LeaseRow {
  owner: string;
  expires_at: number | string;
  now: number | string;
}

function leaseTests(label: string, options: () => StoreOptions, skip?: string): void {
  const nowSql = () =>
    options().kind === "postgres"
      ? "(extract(epoch FROM clock_timestamp()) * 1000)::bigint"
      : "CAST(unixepoch('subsec') * 1000 AS INTEGER)";
  const withStore =
    (fn: (store: SessionStore, options: StoreOptions) => Promise<void>, extra: Partial<StoreOptions> = {}) =>
    async () => {
      const chosen = { ...options(), ...extra } as StoreOptions;
      const store = await openStore(chosen);
      try {
        await fn(store, chosen);
      } finally {
        await store.close();
      }
    };
  const leaseOf = (o: StoreOptions, sessionId: string) =>
    withRawDatabase(o, async (db) => {
      const [row] = await db.all<LeaseRow>(
        `SELECT owner, expires_at, ${nowSql()} AS now FROM run_leases WHERE session_id = ?`,
        sessionId,
      );
      return row && { owner: row.owner, expiresAt: Number(row.expires_at), now: Number(row.now) };
    });
  /** Puts a lease for the session in the database as a process on another host would have left it. */
  const foreignLease = (o: StoreOptions, sessionId: string, expiresInMs: number) =>
    withRawDatabase(o, (db) =>
      db.all(
        `INSERT INTO run_leases (session_id, owner, acquired_at, expires_at) VALUES (?, ?, ${nowSql()}, ${nowSql()} + ?)`,
        sessionId,
        FOREIGN_OWNER,
        expiresInMs,
      ),
    );
  const waiters = (o: StoreOptions, sessionId: string) =>
    withRawDatabase(o, (db) =>
      db.all<{ owner: string }>("SELECT owner FROM run_lease_waiters WHERE session_id = ?", sessionId),
    );

  describe(`${label}: run leases`, { skip }, () => {
    test(
      "a run lock is one lease row with this store's owner and a future expiry on the database's clock, gone on release",
      withStore(async (store, o) => {
        const session = await store.createSession();
        const lock = await store.acquireRunLock(session.id);
        const row = await leaseOf(o, session.id);
        assert.equal(row?.owner, lock.owner);
        assert.ok(row && row.expiresAt > row.now, "the lease has not expired");
        assert.match(lock.owner, new RegExp(`^[0-9a-f]{16}:${process.pid}:\\d+:[0-9a-f]{8}$`));
        assert.equal(lock.interruptedRuns, 0);
        await lock.release();
        assert.equal(await leaseOf(o, session.id), undefined);
      }),
    );

    test(
      "the lock counts the runs its session left running, for the new holder to recover",
      withStore(async (store) => {
        const session = await store.createSession();
        const first = await store.acquireRunLock(session.id);
        await store.startRun({ sessionId: session.id });
        const finished = await store.startRun({ sessionId: session.id });
        await store.finishRun(finished.id, "completed");
        await first.release();
        const second = await store.acquireRunLock(session.id);
        assert.equal(second.interruptedRuns, 1);
        await second.release();
      }),
    );

    test(
      "the heartbeat keeps pushing a held lease's expiry forward, and a lease taken over meanwhile is reported lost",
      withStore(
        async (store, o) => {
          const session = await store.createSession();
          const lock = await store.acquireRunLock(session.id);
          const first = (await leaseOf(o, session.id))?.expiresAt as number;
          await eventually("a heartbeat", async () => ((await leaseOf(o, session.id))?.expiresAt ?? 0) > first);
          assert.equal(lock.lost.aborted, false);
          // Another owner takes it, as one that could not see this process would once its expiry passed.
          await withRawDatabase(o, (db) =>
            db.all("UPDATE run_leases SET owner = ? WHERE session_id = ?", FOREIGN_OWNER, session.id),
          );
          // (The heartbeat's timer does not keep a process alive; this wait does, meanwhile.)
          await eventually("the loss to be noticed", async () => lock.lost.aborted);
          await lock.release();
          assert.equal((await leaseOf(o, session.id))?.owner, FOREIGN_OWNER, "releasing a lost lease leaves it alone");
        },
        { runLock: { ttlMs: 300 } },
      ),
    );

    test(
      "a lease held on another host is waited for until it expires, then taken over with its interrupted runs",
      withStore(async (store, o) => {
        const session = await store.createSession();
        await store.startRun({ sessionId: session.id });
        await foreignLease(o, session.id, 400);
        assert.deepEqual(await abandonedOf(store, [session.id]), []);
        const lock = await store.acquireRunLock(session.id);
        const row = await leaseOf(o, session.id);
        assert.equal(row?.owner, lock.owner);
        assert.equal(lock.interruptedRuns, 1);
        await lock.release();
      }),
    );

    test(
      "an expired lease of another host's owner is listed as abandoned; a live one is not",
      withStore(async (store, o) => {
        const [expired, live] = [await store.createSession(), await store.createSession()];
        await foreignLease(o, expired.id, -1);
        await withRawDatabase(o, (db) =>
          db.all(
            `INSERT INTO run_leases (session_id, owner, acquired_at, expires_at) VALUES (?, ?, ${nowSql()}, ${nowSql()} + 60000)`,
            live.id,
            FOREIGN_OWNER.replace("4242", "4343"),
          ),
        );
        assert.deepEqual(await abandonedOf(store, [expired.id, live.id]), [expired.id]);
        const lock = await store.acquireRunLock(expired.id);
        assert.deepEqual(await abandonedOf(store, [expired.id, live.id]), []);
        await lock.release();
      }),
    );

    test(
      "a process killed while holding a lease leaves it abandoned, and the next holder takes it over at once",
      withStore(async (store, o) => {
        const session = await store.createSession();
        const child = spawnWorker(o, { mode: "hold-unchecked", sessionId: session.id, canary: "x" });
        await child.line("locked");
        child.kill("SIGKILL");
        await child.exited;
        assert.deepEqual(await abandonedOf(store, [session.id]), [session.id]);
        const lock = await store.acquireRunLock(session.id);
        assert.equal(lock.interruptedRuns, 1);
        await lock.release();
      }),
    );

    test(
      "processes are served in the order they queued: one that lets go and asks again waits behind a waiting one",
      withStore(async (store, o) => {
        const session = await store.createSession();
        const mine = await store.acquireRunLock(session.id);
        const child = spawnWorker(o, { mode: "wait-hold", sessionId: session.id });
        await eventually("the other process's ticket", async () => (await waiters(o, session.id)).length > 0);
        await mine.release();
        const again = store.acquireRunLock(session.id);
        const first = await Promise.race([
          child.line("acquired").then(() => "the waiting process"),
          again.then(() => "this process, again"),
        ]);
        assert.equal(first, "the waiting process");
        child.send("finish");
        await (await again).release();
        assert.equal((await child.exited).code, 0);
        assert.deepEqual(await waiters(o, session.id), []);
      }),
    );

    test(
      "closing a store removes its leases and its tickets",
      withStore(async (store, o) => {
        const session = await store.createSession();
        const other = await openStore(o);
        const held = await other.acquireRunLock((await other.createSession()).id);
        const mine = await store.acquireRunLock(session.id);
        const waiting = other.acquireRunLock(session.id).then(
          () => "granted",
          (error: { code?: string }) => error.code,
        );
        await eventually("the ticket", async () => (await waiters(o, session.id)).length > 0);
        await other.close();
        assert.equal(await waiting, "closed");
        assert.deepEqual(await waiters(o, session.id), []);
        assert.equal(await leaseOf(o, held.sessionId), undefined);
        await mine.release();
      }),
    );
  });
}

const sqliteDir = tempDir();
after(() => sqliteDir.remove());
let files = 0;
leaseTests("sqlite", () => ({ kind: "sqlite", path: `${sqliteDir.path}/db${files++}/gatehouse.db` }));

const schema = testSchema();
if (PG_URL) after(() => dropSchema(PG_URL as string, schema));
leaseTests("postgres", () => ({ kind: "postgres", url: PG_URL ?? "", schema }), PG_URL ? undefined : PG_SKIP);

describe("sqlite: a data folder from before run leases", () => {
  test("opens and runs: the ticket table goes with the migration, the old lock files are left as they are", async () => {
    const dir = `${sqliteDir.path}/old`;
    mkdirSync(`${dir}/locks`, { recursive: true });
    const db = new Database(`${dir}/gatehouse.db`);
    migrateSqlite(db, 2);
    db.prepare("INSERT INTO run_lock_queue (session_id, owner) VALUES ('s', '1:2:3')").run();
    db.close();
    writeFileSync(`${dir}/locks/0123456789abcdef0123456789abcdef01234567.lock`, "");
    const store = await openStore({ kind: "sqlite", path: `${dir}/gatehouse.db` });
    try {
      const session = await store.createSession();
      await (await store.acquireRunLock(session.id)).release();
    } finally {
      await store.close();
    }
    assert.deepEqual(readdirSync(`${dir}/locks`), ["0123456789abcdef0123456789abcdef01234567.lock"]);
    assert.equal(readFileSync(`${dir}/locks/0123456789abcdef0123456789abcdef01234567.lock`, "utf8"), "");
    const after = new Database(`${dir}/gatehouse.db`, { readonly: true });
    const tables = after.prepare("SELECT name FROM sqlite_master WHERE name LIKE 'run_%'").all() as { name: string }[];
    after.close();
    assert.ok(!tables.some((t) => t.name === "run_lock_queue"), JSON.stringify(tables));
  });

  test("a new data folder gets no locks folder", async () => {
    const dir = `${sqliteDir.path}/new`;
    const store = await openStore({ kind: "sqlite", path: `${dir}/gatehouse.db` });
    const session = await store.createSession();
    await (await store.acquireRunLock(session.id)).release();
    await store.close();
    assert.ok(!readdirSync(dir).includes("locks"), readdirSync(dir).join(", "));
  });
});
