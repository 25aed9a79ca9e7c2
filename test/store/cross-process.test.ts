import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { messageText } from "../../src/core/message.js";
import { openStore, type SessionStore, type StoreOptions } from "../../src/store/index.js";
import { eventually, spawnWorker, tempDir, withRawDatabase } from "./helpers.js";
import { dropSchema, PG_SKIP, PG_URL, testSchema } from "./pg.js";

const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

function crossProcessTests(label: string, options: () => StoreOptions, skip?: string): void {
  const withStore = (fn: (store: SessionStore, options: StoreOptions) => Promise<void>) => async () => {
    const chosen = options();
    const store = await openStore(chosen);
    try {
      await fn(store, chosen);
    } finally {
      await store.close();
    }
  };

  describe(`${label}: run lock across processes`, { skip }, () => {
    test(
      "two processes running turns on one session are serialized, never interleaved",
      withStore(async (store, options) => {
        const session = await store.createSession();
        const workers = ["A", "B"].map((tag) =>
          spawnWorker(options, { mode: "runs", sessionId: session.id, tag, runs: 12 }),
        );
        await Promise.all(workers.map((w) => w.line("ready")));
        for (const w of workers) w.send("go");
        await Promise.all(workers.map((w) => w.line("done")));
        for (const w of workers) assert.equal((await w.exited).code, 0);
        const texts = (await store.sessionMessages(session.id, { limit: 1000 })).map(messageText);
        assert.equal(texts.length, 48);
        for (let i = 0; i < texts.length; i += 2) {
          const start = texts[i] as string;
          assert.match(start, /:start$/);
          assert.equal(texts[i + 1], start.replace(/start$/, "end"), `turn at ${i} was interleaved`);
        }
        const runs = await store.listRuns(session.id);
        assert.equal(runs.length, 24);
        for (const run of runs) assert.equal((await store.runMessages(run.id)).length, 2);
      }),
    );

    test(
      "a run lock held by another process makes this one wait until it is released",
      withStore(async (store, options) => {
        const session = await store.createSession();
        const child = spawnWorker(options, { mode: "hold", sessionId: session.id });
        await child.line("locked");
        const ours = store.acquireRunLock(session.id).then(async (lock) => {
          const run = await store.startRun({ sessionId: session.id });
          await store.appendMessage({
            sessionId: session.id,
            runId: run.id,
            role: "user",
            parts: [{ type: "text", text: "parent-in" }],
          });
          return lock;
        });
        await turns(20);
        child.send("finish");
        await child.line("released");
        await (await ours).release();
        assert.deepEqual((await store.sessionMessages(session.id)).map(messageText), [
          "child-in",
          "child-out",
          "parent-in",
        ]);
        assert.equal((await child.exited).code, 0);
      }),
    );

    test(
      "waiting for a lock another process holds can be aborted, and leaves no trace in the queue",
      withStore(async (store, options) => {
        const session = await store.createSession();
        const child = spawnWorker(options, { mode: "hold", sessionId: session.id });
        await child.line("locked");
        const controller = new AbortController();
        const waiting = store.acquireRunLock(session.id, { signal: controller.signal });
        await turns(20);
        controller.abort();
        await assert.rejects(waiting, { name: "AbortError" });
        const next = store.acquireRunLock(session.id);
        child.send("finish");
        await child.line("released");
        await (await next).release();
        assert.equal((await child.exited).code, 0);
      }),
    );

    test(
      "a holder killed with SIGKILL does not leave the session locked",
      withStore(async (store, options) => {
        const session = await store.createSession();
        const child = spawnWorker(options, { mode: "hold", sessionId: session.id });
        await child.line("locked");
        child.kill("SIGKILL");
        assert.equal((await child.exited).signal, "SIGKILL");
        const lock = await store.acquireRunLock(session.id);
        await lock.release();
      }),
    );

    test(
      "a waiter killed while queued does not hold up the ones behind it",
      withStore(async (store, options) => {
        const session = await store.createSession();
        const holder = spawnWorker(options, { mode: "hold", sessionId: session.id });
        await holder.line("locked");
        const waiter = spawnWorker(options, { mode: "wait", sessionId: session.id });
        await eventually("the waiter's ticket", () =>
          withRawDatabase(
            options,
            async (db) => (await db.all("SELECT 1 FROM run_lease_waiters WHERE session_id = ?", session.id)).length > 0,
          ),
        );
        waiter.kill("SIGKILL");
        await waiter.exited;
        const ours = store.acquireRunLock(session.id);
        holder.send("finish");
        await holder.line("released");
        await (await ours).release();
      }),
    );
  });
}

const sqliteDir = tempDir();
after(() => sqliteDir.remove());
let files = 0;
crossProcessTests("sqlite", () => ({ kind: "sqlite", path: `${sqliteDir.path}/db${files++}/gatehouse.db` }));

const schema = testSchema();
if (PG_URL) after(() => dropSchema(PG_URL as string, schema));
crossProcessTests("postgres", () => ({ kind: "postgres", url: PG_URL ?? "", schema }), PG_URL ? undefined : PG_SKIP);
