import assert from "node:assert/strict";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { openStore, type StoreOptions } from "../../src/store/index.js";
import { filesContaining, spawnWorker, tempDir, uniqueId } from "./helpers.js";
import { dropSchema, PG_SKIP, PG_URL, testSchema } from "./pg.js";

// A transcript is a copy of the session outside the database: a process that dies at the wrong moment
// must not leave a blocked answer in one. The worker kills itself (SIGKILL) at an exact file operation.

const NOTICE = { notice: "withheld", blockedBy: "dlp", hook: "before_response_emit" };

async function dieAndOpen(options: StoreOptions, transcriptDir: string, dieAt: string) {
  const canary = `CANARY-${uniqueId("transcript")}`;
  const setup = await openStore(options);
  const session = await setup.createSession();
  await setup.close();
  const worker = spawnWorker(options, { mode: "transcript-then-die", sessionId: session.id, canary, dieAt });
  const runId = (await worker.line("run ")).slice("run ".length);
  assert.equal((await worker.exited).signal, "SIGKILL");
  return { canary, sessionId: session.id, runId, store: await openStore(options), transcriptDir };
}

for (const kind of ["sqlite", "postgres"] as const) {
  describe(`${kind}: transcripts across a crash`, {
    skip: kind === "postgres" && !PG_URL ? PG_SKIP : undefined,
  }, () => {
    const dir = tempDir();
    const schemas: string[] = [];
    after(async () => {
      for (const schema of schemas) await dropSchema(PG_URL as string, schema);
      dir.remove();
    });
    let n = 0;
    const options = (): { options: StoreOptions; transcriptDir: string } => {
      const data = join(dir.path, `case${n++}`);
      const transcriptDir = join(data, "transcripts");
      if (kind === "sqlite")
        return { options: { kind, path: join(data, "gatehouse.db"), transcriptDir }, transcriptDir };
      const schema = testSchema();
      schemas.push(schema);
      return { options: { kind, url: PG_URL as string, schema, transcriptDir }, transcriptDir };
    };

    test("a process killed right after a block commits leaves no transcript holding the blocked answer", async () => {
      const o = options();
      const { canary, runId, store } = await dieAndOpen(o.options, o.transcriptDir, "block-transcript-write");
      try {
        assert.equal((await store.getRun(runId))?.status, "blocked", "the block committed before the process died");
        assert.deepEqual(filesContaining(o.transcriptDir, canary), []);
      } finally {
        await store.close();
      }
    });

    test("a transcript half-way into place when the process died is cleared by the block that recovers its run", async () => {
      const o = options();
      const { canary, sessionId, runId, store } = await dieAndOpen(o.options, o.transcriptDir, "transcript-rename");
      try {
        assert.ok(
          filesContaining(o.transcriptDir, canary).length > 0,
          "the dead writer's temporary file holds the answer",
        );
        await store.blockRun(runId, NOTICE);
        assert.deepEqual(filesContaining(o.transcriptDir, canary), []);
        const path = await store.materializeTranscript(sessionId);
        assert.deepEqual(filesContaining(o.transcriptDir, canary), []);
        assert.ok(path.startsWith(o.transcriptDir));
      } finally {
        await store.close();
      }
    });
  });
}
