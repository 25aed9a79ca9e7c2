import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, describe, test } from "node:test";
import Database from "better-sqlite3";
import { openStore, type StoreOptions } from "../../src/store/index.js";
import { spawnWorker, tempDir } from "./helpers.js";
import { dropSchema, PG_SKIP, PG_URL, testSchema } from "./pg.js";

/** Kills a worker that is writing large multi-part messages, then checks every stored message is whole. */
async function killWriterAndCheck(options: StoreOptions, sessionId: string): Promise<number> {
  const writer = spawnWorker(options, { mode: "crash-writer", sessionId });
  await writer.line("writing");
  writer.kill("SIGKILL");
  assert.equal((await writer.exited).signal, "SIGKILL");

  const store = await openStore(options);
  try {
    const messages = await store.sessionMessages(sessionId, { limit: 100_000 });
    assert.ok(messages.length >= 3);
    for (const message of messages) {
      assert.equal(message.parts.length, message.metadata.partCount);
      const checksum = createHash("sha256").update(JSON.stringify(message.parts)).digest("hex");
      assert.equal(checksum, message.metadata.checksum, `message ${message.seq} is not whole`);
    }
    // The writer died holding the session's run lock; it must not stay locked.
    await (await store.acquireRunLock(sessionId)).release();
    return messages.length;
  } finally {
    await store.close();
  }
}

describe("crash safety", () => {
  const dir = tempDir();
  after(() => dir.remove());

  test("sqlite: writers killed with SIGKILL mid-write leave a file that opens, passes integrity check and holds only whole messages", async () => {
    const path = `${dir.path}/.gatehouse/gatehouse.db`;
    const options: StoreOptions = { kind: "sqlite", path };
    const store = await openStore(options);
    const session = await store.createSession();
    await store.close();
    let previous = 0;
    for (let round = 0; round < 3; round++) {
      const count = await killWriterAndCheck(options, session.id);
      assert.ok(count > previous);
      previous = count;
      const db = new Database(path, { readonly: true });
      try {
        assert.equal(db.pragma("integrity_check", { simple: true }), "ok");
      } finally {
        db.close();
      }
    }
  });

  test("postgres: a writer killed with SIGKILL mid-write leaves only whole messages", {
    skip: PG_URL ? undefined : PG_SKIP,
  }, async () => {
    const schema = testSchema();
    const options: StoreOptions = { kind: "postgres", url: PG_URL as string, schema };
    try {
      const store = await openStore(options);
      const session = await store.createSession();
      await store.close();
      await killWriterAndCheck(options, session.id);
    } finally {
      await dropSchema(PG_URL as string, schema);
    }
  });
});
