import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { openMemoryStore } from "../../src/store/index.js";
import { filesContaining, spawnWorker, tempDir, uniqueId } from "./helpers.js";

// The memory store's data dies with its process, and so must its transcripts: nothing could
// scrub a transcript whose session is gone (issue 11, path 10).

test("a memory store writes transcripts in a folder of its process, removed when it closes", async () => {
  const dir = tempDir();
  try {
    const store = openMemoryStore({ transcriptDir: dir.path });
    const session = await store.createSession();
    const path = await store.materializeTranscript(session.id);
    const folder = readdirSync(dir.path);
    assert.equal(folder.length, 1);
    assert.match(folder[0] as string, new RegExp(`^gatehouse-transcripts-${process.pid}-`));
    assert.ok(path.startsWith(join(dir.path, folder[0] as string)));
    await store.close();
    assert.deepEqual(readdirSync(dir.path), []);
  } finally {
    dir.remove();
  }
});

test("the transcript folder of a memory store whose process was killed is removed by the next memory store opened there", async () => {
  const dir = tempDir();
  try {
    const canary = `CANARY-${uniqueId("memory")}`;
    const worker = spawnWorker(
      { kind: "memory", transcriptDir: dir.path },
      { mode: "transcript-then-die", sessionId: "s-killed", canary, dieAt: "transcript-rename" },
    );
    await worker.line("run ");
    assert.equal((await worker.exited).signal, "SIGKILL");
    assert.ok(filesContaining(dir.path, canary).length > 0, "the dead process's transcript holds its unchecked answer");
    // A folder of a live process (this one) is not touched.
    const live = join(dir.path, `gatehouse-transcripts-${process.pid}-live`);
    mkdirSync(live);
    const store = openMemoryStore({ transcriptDir: dir.path });
    assert.deepEqual(filesContaining(dir.path, canary), []);
    assert.ok(existsSync(live));
    await store.close();
  } finally {
    dir.remove();
  }
});
