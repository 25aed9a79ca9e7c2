import assert from "node:assert/strict";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import Database from "better-sqlite3";
import { openStore, type SessionStore } from "../../src/store/index.js";
import { filesContaining, reasoning, spawnWorker, tempDir, text, toolCall, toolResult, uniqueId } from "./helpers.js";

// Byte-level checks of "never persists" for SQLite: every file of the data folder (main database, -wal,
// -shm, any -journal, lock files, transcripts) is searched for the blocked text.

const NOTICE = { notice: "withheld", blockedBy: "dlp", hook: "before_response_emit" };

async function fillerRun(store: SessionStore, sessionId: string, i: number): Promise<void> {
  const run = await store.startRun({ sessionId });
  await store.appendMessage({ sessionId, runId: run.id, role: "user", parts: [text(`question ${i}`)] });
  await store.appendMessage({
    sessionId,
    runId: run.id,
    role: "assistant",
    parts: [text(`answer ${i} `.repeat(1 + ((i * 37) % 400)))],
  });
  await store.finishRun(run.id, "completed");
}

describe("sqlite: blocked text at the byte level", () => {
  const dir = tempDir();
  after(() => dir.remove());
  let n = 0;
  const dataDir = () => join(dir.path, `case${n++}`, ".gatehouse");

  test("a block and a rewrite amid hundreds of messages leave no byte of the old text in the main file, WAL or journal, open or closed", async () => {
    const data = dataDir();
    const store = await openStore({ kind: "sqlite", path: join(data, "gatehouse.db") });
    const canary = `CANARY-${uniqueId("bytes")}`;
    const session = await store.createSession();
    for (let i = 0; i < 150; i++) await fillerRun(store, session.id, i);

    const blocked = await store.startRun({ sessionId: session.id });
    await store.appendMessage({ sessionId: session.id, runId: blocked.id, role: "user", parts: [text("go")] });
    await store.appendMessage({
      sessionId: session.id,
      runId: blocked.id,
      role: "assistant",
      parts: [reasoning(canary), text(`a ${canary}`), toolCall("c1", { path: canary })],
    });
    await store.appendMessage({
      sessionId: session.id,
      runId: blocked.id,
      role: "tool",
      parts: [toolResult("c1", `${canary}\n`.repeat(5000))],
    });
    for (let i = 150; i < 300; i++) await fillerRun(store, session.id, i);
    const rewritten = await store.startRun({ sessionId: session.id });
    await store.appendMessage({
      sessionId: session.id,
      runId: rewritten.id,
      role: "assistant",
      parts: [text(`b ${canary}`), text(canary.repeat(3))],
    });
    assert.ok(filesContaining(data, canary).length > 0, "the text is on disk before the scrub");

    await store.blockRun(blocked.id, NOTICE);
    await store.rewriteRun(rewritten.id, ["b [redacted]"]);
    assert.deepEqual(filesContaining(data, canary), []);
    await store.close();
    assert.deepEqual(filesContaining(data, canary), []);
  });

  test("a scrub while another connection holds a read snapshot owes the WAL cut and makes it at the next write", async () => {
    const data = dataDir();
    const path = join(data, "gatehouse.db");
    const store = await openStore({ kind: "sqlite", path });
    const canary = `CANARY-${uniqueId("reader")}`;
    const session = await store.createSession();
    const run = await store.startRun({ sessionId: session.id });
    await store.appendMessage({ sessionId: session.id, runId: run.id, role: "assistant", parts: [text(canary)] });

    const reader = new Database(path, { readonly: true });
    reader.exec("BEGIN");
    reader.prepare("SELECT count(*) FROM messages").get();
    await store.blockRun(run.id, NOTICE);
    assert.ok(filesContaining(data, canary).includes("gatehouse.db-wal"), "the open snapshot pins the old frames");
    reader.exec("COMMIT");
    reader.close();

    await store.appendMessage({ sessionId: session.id, runId: null, role: "system", parts: [text("later")] });
    assert.deepEqual(filesContaining(data, canary), []);
    await store.close();
  });

  test("old WAL frames left by a process killed between a scrub's commit and its checkpoint are cut when the store opens", async () => {
    const data = dataDir();
    const path = join(data, "gatehouse.db");
    const canary = `CANARY-${uniqueId("crash")}`;
    const setup = await openStore({ kind: "sqlite", path });
    const session = await setup.createSession();
    await setup.close();

    const child = spawnWorker({ kind: "sqlite", path }, { mode: "scrub-then-die", sessionId: session.id, canary });
    await child.line("scrubbed");
    child.kill("SIGKILL");
    await child.exited;
    assert.deepEqual(filesContaining(data, canary), ["gatehouse.db-wal"]);

    const store = await openStore({ kind: "sqlite", path });
    assert.deepEqual(filesContaining(data, canary), []);
    assert.equal(await store.getSession(session.id).then((s) => s?.id), session.id);
    await store.close();
  });
});
