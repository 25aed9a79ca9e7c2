// The SQLite run lock's per-session files: made as empty databases, locked without a journal file,
// and an empty file left by an earlier version still locks.
import assert from "node:assert/strict";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { after, test } from "node:test";
import Database from "better-sqlite3";
import { openStore } from "../../src/store/index.js";
import { tempDir } from "./helpers.js";

const dir = tempDir();
after(() => dir.remove());

test("a run lock file is a database, and holding it leaves no journal file behind or beside it", async () => {
  const store = await openStore({ kind: "sqlite", path: `${dir.path}/a/gatehouse.db` });
  try {
    const session = await store.createSession();
    const lock = await store.acquireRunLock(session.id);
    const files = readdirSync(`${dir.path}/a/locks`);
    assert.equal(files.length, 1, files.join(", "));
    assert.equal(readFileSync(`${dir.path}/a/locks/${files[0]}`).subarray(0, 15).toString(), "SQLite format 3");
    await lock.release();
    // Released: another connection can take it.
    const other = new Database(`${dir.path}/a/locks/${files[0]}`, { timeout: 0 });
    other.exec("BEGIN EXCLUSIVE");
    other.close();
    const again = await store.acquireRunLock(session.id);
    await again.release();
    assert.deepEqual(readdirSync(`${dir.path}/a/locks`), files);
  } finally {
    await store.close();
  }
});

test("an empty lock file (as earlier versions made them) still locks, without a journal file", async () => {
  const store = await openStore({ kind: "sqlite", path: `${dir.path}/b/gatehouse.db` });
  try {
    const session = await store.createSession();
    const first = await store.acquireRunLock(session.id);
    await first.release();
    const [file] = readdirSync(`${dir.path}/b/locks`);
    writeFileSync(`${dir.path}/b/locks/${file}`, "");
    const lock = await store.acquireRunLock(session.id);
    assert.deepEqual(readdirSync(`${dir.path}/b/locks`), [file]);
    const other = new Database(`${dir.path}/b/locks/${file}`, { timeout: 0 });
    assert.throws(() => other.exec("BEGIN EXCLUSIVE"), /locked/);
    other.close();
    await lock.release();
  } finally {
    await store.close();
  }
});
