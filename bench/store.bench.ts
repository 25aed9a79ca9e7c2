// Session store benchmarks (issue 3).
//   P5: rewriting and blocking a run when the session holds 100,000 prior messages vs 100 (goal <= 1.5x:
//       the cost follows the run, not the history). Iterations on the two sessions are interleaved; the
//       figure is the ratio of the medians.
//       On SQLite every scrub also purges the file (VACUUM, then cut the WAL: issue 20), which costs in
//       proportion to the whole file, the same for both sessions; the ratio still isolates the run's part.
//   P5 purge (SQLite): a block on the 100,000-message file against a bare VACUUM + TRUNCATE checkpoint of
//       that file on a raw connection (goal <= 1.5x: one purge per block, nothing else that follows the file).
//   Appends: messages per second, one writer and 50 concurrent sessions, against raw inserts of the same
//       rows measured in the same process.
//
//   node --expose-gc --import tsx bench/store.bench.ts      (or: npm run bench -- store)
// PostgreSQL figures need GATEHOUSE_BENCH_DATABASE_URL or GATEHOUSE_TEST_DATABASE_URL.
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import type { Part } from "../src/core/message.js";
import { openStore, type SessionStore, type StoreOptions } from "../src/store/index.js";

const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const PG_URL = process.env.GATEHOUSE_BENCH_DATABASE_URL || process.env.GATEHOUSE_TEST_DATABASE_URL || undefined;
const BIG = 100_000;
const SMALL = 100;
const NOTICE = { notice: "withheld", blockedBy: "bench", hook: "before_response_emit" };
const answer = (i: number): Part[] => [{ type: "text", text: `answer ${i} `.padEnd(200, "x") }];

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

const ms = (ns: number) => `${(ns / 1e6).toFixed(2)} ms`;

/** Prior history written straight into the tables (setup only): runs of ten messages, all completed. */
interface Seeder {
  seed(sessionId: string, messages: number): Promise<void>;
}

function sqliteSeeder(path: string): Seeder {
  return {
    async seed(sessionId, messages) {
      const db = new Database(path);
      const runs = Math.ceil(messages / 10);
      const at = new Date().toISOString();
      db.transaction(() => {
        const run = db.prepare(
          "INSERT INTO runs (id, session_id, seq, status, depth, trigger, started_at) VALUES (?, ?, ?, 'completed', 0, 'user', ?)",
        );
        const message = db.prepare(
          "INSERT INTO messages (id, session_id, run_id, seq, role, parts, metadata, created_at) VALUES (?, ?, ?, ?, ?, ?, '{}', ?)",
        );
        for (let r = 0; r < runs; r++) {
          const runId = `${sessionId}-r${r}`;
          run.run(runId, sessionId, r + 1, at);
          for (let k = 0; k < 10 && r * 10 + k < messages; k++) {
            const seq = r * 10 + k + 1;
            message.run(
              randomUUID(),
              sessionId,
              runId,
              seq,
              k === 0 ? "user" : "assistant",
              JSON.stringify(answer(seq)),
              at,
            );
          }
        }
        db.prepare("UPDATE sessions SET next_seq = ?, next_run_seq = ? WHERE id = ?").run(
          messages + 1,
          runs + 1,
          sessionId,
        );
      })();
      db.close();
    },
  };
}

function postgresSeeder(url: string, schema: string): Seeder {
  return {
    async seed(sessionId, messages) {
      const client = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` });
      await client.connect();
      const runs = Math.ceil(messages / 10);
      await client.query(
        `INSERT INTO runs (id, session_id, seq, status, depth, trigger, started_at)
         SELECT $1 || '-r' || r, $1, r + 1, 'completed', 0, 'user', now() FROM generate_series(0, $2 - 1) r`,
        [sessionId, runs],
      );
      await client.query(
        `INSERT INTO messages (id, session_id, run_id, seq, role, parts, metadata, created_at)
         SELECT gen_random_uuid()::text, $1, $1 || '-r' || ((s - 1) / 10), s,
                CASE WHEN (s - 1) % 10 = 0 THEN 'user' ELSE 'assistant' END,
                json_build_array(json_build_object('type', 'text', 'text', rpad('answer ' || s || ' ', 200, 'x'))),
                '{}'::json, now()
         FROM generate_series(1, $2) s`,
        [sessionId, messages],
      );
      await client.query("UPDATE sessions SET next_seq = $2 + 1, next_run_seq = $3 + 1 WHERE id = $1", [
        sessionId,
        messages,
        runs,
      ]);
      await client.query("ANALYZE");
      await client.end();
    },
  };
}

/** One P5 iteration: a fresh run with tool use, then the timed part: rewrite its texts, then block it. */
async function scrubOnce(store: SessionStore, sessionId: string): Promise<number> {
  const run = await store.startRun({ sessionId });
  const say = (role: "user" | "assistant" | "tool", parts: Part[]) =>
    store.appendMessage({ sessionId, runId: run.id, role, parts });
  await say("user", [{ type: "text", text: "question" }]);
  await say("assistant", [
    { type: "text", text: "let me look" },
    { type: "tool_call", toolCallId: "c1", toolName: "Read", input: { file_path: "/x" } },
  ]);
  await say("tool", [{ type: "tool_result", toolCallId: "c1", toolName: "Read", output: "contents".repeat(50) }]);
  await say("assistant", [{ type: "text", text: "the answer" }]);
  const start = process.hrtime.bigint();
  await store.rewriteRun(run.id, ["let me look [redacted]", "the answer [redacted]"]);
  await store.blockRun(run.id, NOTICE);
  const elapsed = Number(process.hrtime.bigint() - start);
  await store.finishRun(run.id, "blocked");
  return elapsed;
}

async function p5(label: string, options: StoreOptions, seeder: Seeder): Promise<void> {
  const store = await openStore(options);
  const sessions: Record<"big" | "small", string> = { big: "", small: "" };
  for (const [size, count] of [
    ["big", BIG],
    ["small", SMALL],
  ] as const) {
    const session = await store.createSession();
    await seeder.seed(session.id, count);
    // A summary over most of the history, as after auto-compaction: blocks must find it by run, cheaply.
    await store.recordCompaction({ sessionId: session.id, fromSeq: 1, toSeq: count - 10, summary: "earlier turns" });
    sessions[size] = session.id;
  }
  for (let i = 0; i < 5; i++) for (const id of Object.values(sessions)) await scrubOnce(store, id);
  gc();
  const samples = { big: [] as number[], small: [] as number[] };
  for (let i = 0; i < 40; i++) {
    const order = i % 2 ? (["big", "small"] as const) : (["small", "big"] as const);
    for (const size of order) samples[size].push(await scrubOnce(store, sessions[size]));
  }
  await store.close();
  const big = median(samples.big);
  const small = median(samples.small);
  const ratio = big / small;
  console.log(
    `P5 block+rewrite, ${BIG} vs ${SMALL} prior messages (${label}): ${ratio.toFixed(2)}x (goal <= 1.5x${ratio <= 1.5 ? "" : " MISSED"}) (${ms(big)} vs ${ms(small)} per run)`,
  );
}

/** P5 purge: blocks on the P5 file, interleaved with bare purges of it; the ratio of the medians. */
async function sqlitePurgeFigure(path: string): Promise<void> {
  const store = await openStore({ kind: "sqlite", path });
  const session = await store.createSession();
  const raw = new Database(path);
  const samples = { block: [] as number[], bare: [] as number[] };
  for (let i = 0; i < 6; i++) {
    const run = await store.startRun({ sessionId: session.id });
    await store.appendMessage({ sessionId: session.id, runId: run.id, role: "assistant", parts: answer(i) });
    let start = process.hrtime.bigint();
    await store.blockRun(run.id, NOTICE);
    samples.block.push(Number(process.hrtime.bigint() - start));
    start = process.hrtime.bigint();
    raw.exec("VACUUM");
    raw.pragma("wal_checkpoint(TRUNCATE)");
    samples.bare.push(Number(process.hrtime.bigint() - start));
  }
  raw.close();
  await store.close();
  const mb = statSync(path).size / 2 ** 20;
  const ratio = median(samples.block) / median(samples.bare);
  console.log(
    `P5 purge (sqlite, ${mb.toFixed(0)} MB file): a block ${ms(median(samples.block))}, a bare VACUUM + checkpoint ${ms(median(samples.bare))}: ${ratio.toFixed(2)}x (goal <= 1.5x${ratio <= 1.5 ? "" : " MISSED"})`,
  );
}

/** Appends `perSession` messages to each of `sessions` sessions, the sessions concurrently; returns msg/s. */
async function appendRate(store: SessionStore, sessions: number, perSession: number): Promise<number> {
  const targets = await Promise.all(
    Array.from({ length: sessions }, async () => {
      const session = await store.createSession();
      return { sessionId: session.id, runId: (await store.startRun({ sessionId: session.id })).id };
    }),
  );
  const start = process.hrtime.bigint();
  await Promise.all(
    targets.map(async ({ sessionId, runId }) => {
      for (let i = 0; i < perSession; i++) {
        await store.appendMessage({ sessionId, runId, role: "assistant", parts: answer(i) });
      }
    }),
  );
  return (sessions * perSession) / (Number(process.hrtime.bigint() - start) / 1e9);
}

/** The same rows inserted with plain statements, one autocommit insert each, at the same concurrency. */
type RawInsert = (sessionId: string, seq: number) => Promise<void> | void;
async function rawRate(insert: RawInsert, sessions: number, perSession: number): Promise<number> {
  const start = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: sessions }, async (_, s) => {
      const sessionId = randomUUID();
      for (let i = 0; i < perSession; i++) await insert(`${sessionId}-${s}`, i + 1);
    }),
  );
  return (sessions * perSession) / (Number(process.hrtime.bigint() - start) / 1e9);
}

const RAW_TABLE = `CREATE TABLE raw_messages (
  id TEXT PRIMARY KEY, session_id TEXT NOT NULL, run_id TEXT, seq INTEGER NOT NULL, role TEXT NOT NULL,
  parts TEXT NOT NULL, metadata TEXT NOT NULL, created_at TEXT NOT NULL, UNIQUE (session_id, seq))`;

function rateLine(label: string, rate: number, baseline: number, baselineLabel: string): void {
  console.log(
    `${label}: ${Math.round(rate)} msg/s (${(rate / baseline).toFixed(2)}x ${baselineLabel}: ${Math.round(baseline)} msg/s)`,
  );
}

/** Warms up, then prints the single-writer and 50-session figures for one backend against its raw inserts. */
async function appendFigures(
  kind: string,
  store: SessionStore,
  rawInsert: RawInsert,
  baselineLabel: string,
  sizes: { single: number; perSession: number },
): Promise<void> {
  await appendRate(store, 1, sizes.single / 10);
  await rawRate(rawInsert, 1, sizes.single / 10);
  const single = await appendRate(store, 1, sizes.single);
  rateLine(`append ${kind} single writer`, single, await rawRate(rawInsert, 1, sizes.single), baselineLabel);
  const concurrent = await appendRate(store, 50, sizes.perSession);
  rateLine(
    `append ${kind} 50 concurrent sessions`,
    concurrent,
    await rawRate(rawInsert, 50, sizes.perSession),
    baselineLabel,
  );
}

async function sqliteAppends(dir: string): Promise<void> {
  const raw = new Database(join(dir, "raw.db"));
  raw.pragma("journal_mode = WAL");
  raw.pragma("synchronous = NORMAL");
  raw.exec(RAW_TABLE);
  const insert = raw.prepare("INSERT INTO raw_messages VALUES (?, ?, NULL, ?, 'assistant', ?, '{}', ?)");
  const rawInsert: RawInsert = (sessionId, seq) => {
    insert.run(randomUUID(), sessionId, seq, JSON.stringify(answer(seq)), new Date().toISOString());
  };
  const store = await openStore({ kind: "sqlite", path: join(dir, "append.db") });
  await appendFigures("sqlite", store, rawInsert, "raw better-sqlite3 insert", { single: 20_000, perSession: 400 });
  await store.close();
  raw.close();
}

async function postgresAppends(url: string, schema: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: url, options: `-c search_path=${schema}`, max: 10 });
  await pool.query(RAW_TABLE);
  const rawInsert: RawInsert = async (sessionId, seq) => {
    await pool.query({
      name: "raw_insert",
      text: "INSERT INTO raw_messages VALUES ($1, $2, NULL, $3, 'assistant', $4, '{}', $5)",
      values: [randomUUID(), sessionId, seq, JSON.stringify(answer(seq)), new Date().toISOString()],
    });
  };
  const store = await openStore({ kind: "postgres", url, schema, poolSize: 10 });
  await appendFigures("postgres", store, rawInsert, "raw pg prepared insert, pool of 10", {
    single: 3000,
    perSession: 100,
  });
  await store.close();
  await pool.end();
}

const dir = mkdtempSync(join(tmpdir(), "gatehouse-store-bench-"));
try {
  const sqlitePath = join(dir, "p5.db");
  await p5("sqlite", { kind: "sqlite", path: sqlitePath }, sqliteSeeder(sqlitePath));
  await sqlitePurgeFigure(sqlitePath);
  await sqliteAppends(dir);
  if (PG_URL) {
    const schema = `bench_${process.pid}`;
    try {
      await p5("postgres", { kind: "postgres", url: PG_URL, schema }, postgresSeeder(PG_URL, schema));
      await postgresAppends(PG_URL, schema);
    } finally {
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
    }
  } else {
    console.log("postgres figures skipped: set GATEHOUSE_BENCH_DATABASE_URL or GATEHOUSE_TEST_DATABASE_URL");
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
