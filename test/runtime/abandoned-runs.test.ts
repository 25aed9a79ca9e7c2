// A run whose process died holds its session's run lease until someone takes it over. Its next run
// does (crash recovery at admission, R3); `recoverAbandonedRuns()` does it without waiting for one,
// as a `serve` instance will for a dead instance's sessions: the lease is taken over and the run's
// unchecked output removed, the same way.
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { messageText } from "../../src/core/message.js";
import { notices } from "../../src/runtime/notices.js";
import { openStore, type StoreOptions } from "../../src/store/index.js";
import { filesContaining, spawnWorker, tempDir, withRawDatabase } from "../store/helpers.js";
import { dropSchema, PG_SKIP, PG_URL, rowsContaining, testSchema } from "../store/pg.js";
import { testGatehouse } from "./helpers.js";

const CANARY = "ABANDONED-7f3a";

function abandonedRunTests(label: string, options: () => StoreOptions, skip?: string): void {
  /** Whether the canary is anywhere at rest: the SQLite folder's files, or any row of the schema. */
  const atRest = async (o: StoreOptions): Promise<string[]> => {
    if (o.kind === "sqlite") return filesContaining(o.path.replace(/\/gatehouse\.db$/, ""), CANARY);
    if (o.kind === "postgres") return rowsContaining(o.url, o.schema as string, CANARY);
    throw new Error("these tests need SQLite or PostgreSQL");
  };

  describe(`${label}: recovering abandoned runs`, { skip }, () => {
    test("a run whose process was killed is recovered without a new run on its session: unchecked output gone, a notice in its place", async () => {
      const o = options();
      const store = await openStore(o);
      const { gatehouse } = testGatehouse({ runs: [{ turns: [{ text: "unused" }] }] }, { store });
      try {
        const session = await store.createSession();
        const child = spawnWorker(o, { mode: "hold-unchecked", sessionId: session.id, canary: CANARY });
        const runId = (await child.line("locked ")).split(" ")[1] as string;
        child.kill("SIGKILL");
        await child.exited;
        assert.deepEqual(await gatehouse.recoverAbandonedRuns(), [session.id]);
        // Interrupted, not a policy block: failed, with the detail saying why.
        assert.equal((await store.getRun(runId))?.status, "failed");
        assert.equal((await store.getRun(runId))?.detail, "interrupted");
        assert.deepEqual((await store.runMessages(runId)).map(messageText), ["question", notices.interrupted]);
        assert.deepEqual(await atRest(o), []);
        assert.deepEqual(await gatehouse.recoverAbandonedRuns(), [], "nothing is left to recover");
      } finally {
        await gatehouse.close();
      }
    });

    test("a run under another host's lease is recovered once that lease has expired, not before", async () => {
      const o = options();
      const store = await openStore(o);
      const { gatehouse } = testGatehouse({ runs: [{ turns: [{ text: "unused" }] }] }, { store });
      try {
        const session = await store.createSession();
        const run = await store.startRun({ sessionId: session.id });
        await store.appendMessage({ sessionId: session.id, runId: run.id, role: "user", parts: [text("q")] });
        await store.appendMessage({
          sessionId: session.id,
          runId: run.id,
          role: "assistant",
          parts: [text(`unchecked ${CANARY}`)],
        });
        const expireIn = (ms: number) =>
          withRawDatabase(o, (db) =>
            db.all(
              `INSERT INTO run_leases (session_id, owner, acquired_at, expires_at) VALUES (?, ?, 0, ${
                o.kind === "postgres"
                  ? "(extract(epoch FROM clock_timestamp()) * 1000)::bigint"
                  : "CAST(unixepoch('subsec') * 1000 AS INTEGER)"
              } + ?)
               ON CONFLICT (session_id) DO UPDATE SET expires_at = excluded.expires_at`,
              session.id,
              "0000000000000000:4242:123456:cafebabe",
              ms,
            ),
          );
        await expireIn(60_000);
        assert.deepEqual(await gatehouse.recoverAbandonedRuns(), []);
        assert.equal((await store.getRun(run.id))?.status, "running");
        await expireIn(-1);
        assert.deepEqual(await gatehouse.recoverAbandonedRuns(), [session.id]);
        assert.equal((await store.getRun(run.id))?.status, "failed");
        assert.equal((await store.getRun(run.id))?.detail, "interrupted");
        assert.deepEqual(await atRest(o), []);
      } finally {
        await gatehouse.close();
      }
    });
  });
}

const text = (t: string) => ({ type: "text" as const, text: t });

const dir = tempDir("gatehouse-abandoned-");
after(() => dir.remove());
let n = 0;
abandonedRunTests("sqlite", () => ({ kind: "sqlite", path: `${dir.path}/case${n++}/gatehouse.db` }));

// A schema per test: each test looks for its canary in every row of its schema.
const schemas: string[] = [];
after(() => Promise.all(schemas.map((s) => dropSchema(PG_URL as string, s))));
abandonedRunTests(
  "postgres",
  () => {
    schemas.push(testSchema());
    return { kind: "postgres", url: PG_URL ?? "", schema: schemas.at(-1) as string };
  },
  PG_URL ? undefined : PG_SKIP,
);
