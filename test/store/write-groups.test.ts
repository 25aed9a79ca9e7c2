// SQLite commits the writes asked for in one turn of the event loop in one transaction (no savepoint
// per write), and runs the reads asked for together in one read transaction. These check that a group
// behaves as the same operations one after another would: each settles with its own outcome, after the
// COMMIT that holds it; a failing write leaves nothing behind, and the others persist.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import type { StoreTx } from "../../src/store/backend.js";
import { openStore, type SessionStore, StoreError } from "../../src/store/index.js";
import { tempDir, text } from "./helpers.js";

const dir = tempDir();
after(() => dir.remove());
let files = 0;

async function withSqlite(fn: (store: SessionStore, path: string) => Promise<void>): Promise<void> {
  const path = `${dir.path}/db${files++}/gatehouse.db`;
  const store = await openStore({ kind: "sqlite", path });
  try {
    await fn(store, path);
  } finally {
    await store.close();
  }
}

type Raw = <T>(fn: (tx: StoreTx) => Promise<T>) => Promise<T>;

/** The backend's raw write and read, to run operations that fail part-way. */
function backend(store: SessionStore): { write: Raw; read: Raw } {
  const b = (store as unknown as { backend: { write: Raw; read: Raw } }).backend;
  return { write: (fn) => b.write(fn), read: (fn) => b.read(fn) };
}

/** Counts the backend's COMMITs of write groups (its prepared COMMIT statement). */
function countCommits(store: SessionStore): { readonly count: number } {
  const control = (store as unknown as { backend: { control: { commit: { run(): unknown } } } }).backend.control;
  const commit = control.commit;
  const counter = { count: 0 };
  control.commit = {
    run: () => {
      const result = commit.run();
      counter.count++;
      return result;
    },
  };
  return counter;
}

test("writes asked for in one turn of the event loop share one COMMIT, and each settles only after it", () =>
  withSqlite(async (store) => {
    const session = await store.createSession();
    const run = await store.startRun({ sessionId: session.id, trigger: "api" });
    const commits = countCommits(store);
    const settledAfter: number[] = [];
    const appends: Promise<unknown>[] = [];
    // Some asked for at once, some a few microtasks later: all within this turn.
    for (let i = 0; i < 30; i++) {
      if (i % 3 === 0) await Promise.resolve();
      appends.push(
        store
          .appendMessage({ sessionId: session.id, runId: run.id, role: "user", parts: [text(`m${i}`)] })
          .then(() => settledAfter.push(commits.count)),
      );
    }
    await Promise.all(appends);
    assert.equal(commits.count, 1);
    assert.deepEqual(settledAfter, Array(30).fill(1));
    // A failed write that changed nothing does not cost the others their group either.
    const outcomes = await Promise.allSettled([
      store.appendMessage({ sessionId: session.id, runId: run.id, role: "user", parts: [text("a")] }),
      store.startRun({ sessionId: "no-such-session", trigger: "api" }),
      store.appendMessage({ sessionId: session.id, runId: "no-such-run", role: "user", parts: [text("b")] }),
      store.appendMessage({ sessionId: session.id, runId: run.id, role: "user", parts: [text("c")] }),
    ]);
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ["fulfilled", "rejected", "rejected", "fulfilled"],
    );
    assert.equal(commits.count, 2);
    assert.equal((await store.sessionMessages(session.id)).length, 32);
  }));

test("writes issued together each settle with their own outcome, and only the successful ones persist", () =>
  withSqlite(async (store) => {
    const sessions = await Promise.all(Array.from({ length: 20 }, () => store.createSession()));
    const { write } = backend(store);
    const outcomes = await Promise.allSettled([
      ...sessions.map((s, i) => store.startRun({ sessionId: s.id, trigger: "api", id: `run-${i}` })),
      store.startRun({ sessionId: "no-such-session", trigger: "api" }),
      // Inserts a session, then fails: the group is rolled back, and the others run again without it.
      write(async (tx) => {
        await tx.insertSession({ id: "half-done", key: null, parentSessionId: null, createdAt: "x", updatedAt: "x" });
        throw new Error("failed after writing");
      }),
      store.createSession({ id: "after-the-failure" }),
    ]);
    const statuses = outcomes.map((o) => o.status);
    assert.deepEqual(statuses, [...sessions.map(() => "fulfilled"), "rejected", "rejected", "fulfilled"]);
    const notFound = outcomes[20] as PromiseRejectedResult;
    assert.ok(notFound.reason instanceof StoreError && notFound.reason.code === "not_found");
    assert.equal(((outcomes[21] as PromiseRejectedResult).reason as Error).message, "failed after writing");
    assert.equal(await store.getSession("half-done"), undefined);
    assert.ok(await store.getSession("after-the-failure"));
    for (const [i, s] of sessions.entries()) assert.equal((await store.getRun(`run-${i}`))?.sessionId, s.id);
  }));

test("many sessions appending at once: every message lands once, in order within its session", () =>
  withSqlite(async (store) => {
    const sessions = await Promise.all(Array.from({ length: 300 }, () => store.createSession()));
    const runs = await Promise.all(sessions.map((s) => store.startRun({ sessionId: s.id, trigger: "api" })));
    await Promise.all(
      sessions.map(async (s, i) => {
        for (let m = 0; m < 4; m++)
          await store.appendMessage({
            sessionId: s.id,
            runId: (runs[i] as { id: string }).id,
            role: "user",
            parts: [text(`${i}:${m}`)],
          });
      }),
    );
    for (const [i, s] of sessions.entries()) {
      const messages = await store.sessionMessages(s.id);
      assert.deepEqual(
        messages.map((m) => [m.seq, m.parts]),
        [0, 1, 2, 3].map((m) => [m + 1, [text(`${i}:${m}`)]]),
      );
    }
  }));

test("writes still waiting when the store closes are finished first", () =>
  withSqlite(async (store, path) => {
    const session = await store.createSession();
    const run = await store.startRun({ sessionId: session.id, trigger: "api" });
    // More than one group's worth, all queued before close().
    const appends = Array.from({ length: 600 }, (_, i) =>
      store.appendMessage({ sessionId: session.id, runId: run.id, role: "user", parts: [text(`m${i}`)] }),
    );
    await store.close();
    assert.equal((await Promise.allSettled(appends)).filter((o) => o.status === "fulfilled").length, 600);
    const reopened = await openStore({ kind: "sqlite", path });
    try {
      assert.equal((await reopened.sessionMessages(session.id)).length, 600);
    } finally {
      await reopened.close();
    }
  }));

test("reads issued together each get their own result; a failing one does not affect the others", () =>
  withSqlite(async (store) => {
    const sessions = await Promise.all(Array.from({ length: 10 }, () => store.createSession()));
    const { read } = backend(store);
    const outcomes = await Promise.allSettled([
      ...sessions.map((s) => store.getSession(s.id)),
      read(async () => {
        throw new Error("read failed");
      }),
      store.getSession("no-such-session"),
      ...sessions.map((s) => store.listRuns(s.id)),
    ]);
    assert.deepEqual(
      outcomes.slice(0, 10).map((o) => (o as PromiseFulfilledResult<{ id: string }>).value.id),
      sessions.map((s) => s.id),
    );
    assert.equal(((outcomes[10] as PromiseRejectedResult).reason as Error).message, "read failed");
    assert.deepEqual(outcomes[11], { status: "fulfilled", value: undefined });
    for (const o of outcomes.slice(12)) assert.deepEqual(o, { status: "fulfilled", value: [] });
  }));

test("a read asked for after a write completed sees it, and reads waiting at close still run", () =>
  withSqlite(async (store) => {
    const session = await store.createSession();
    const run = await store.startRun({ sessionId: session.id, trigger: "api" });
    const seen = await Promise.all(
      Array.from({ length: 600 }, async (_, i) => {
        await store.appendMessage({ sessionId: session.id, runId: run.id, role: "user", parts: [text(`m${i}`)] });
        const messages = await store.runMessages(run.id);
        return messages.some((m) => m.parts[0]?.type === "text" && m.parts[0].text === `m${i}`);
      }),
    );
    assert.ok(seen.every(Boolean));
    // More than one group's worth, all asked for before close().
    const pending = Array.from({ length: 600 }, () => store.getSession(session.id));
    await store.close();
    for (const o of await Promise.allSettled(pending)) assert.equal(o.status, "fulfilled");
  }));
