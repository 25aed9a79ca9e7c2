import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { messageText } from "../src/core/message.js";
import { openStore } from "../src/store/index.js";
import type { Run, SessionStore } from "../src/store/types.js";
import { dropSchema } from "./sinks.js";

/**
 * R5 — concurrency. Several processes (each running several turns at once) work on the same
 * sessions of one store. Afterwards: every turn is in the store, whole and completed (none
 * lost); each session's runs did not overlap in time and their messages are not interleaved
 * (serialized per session); and runs of different sessions did overlap (parallel).
 */

const WORKER = fileURLToPath(new URL("./r5-worker.ts", import.meta.url));

export interface R5Options {
  readonly store: "sqlite" | "postgres";
  readonly postgresUrl?: string;
  readonly processes: number;
  readonly turnsPerProcess: number;
  /** Turns each process runs at once. */
  readonly concurrency: number;
  readonly sessions: number;
}

export interface R5Figures {
  readonly store: string;
  readonly turns: number;
  readonly stored: number;
  readonly lost: number;
  readonly interleaved: number;
  readonly overlapsWithinSession: number;
  /** Pairs of runs of different sessions that ran at the same time. */
  readonly parallelPairs: number;
  readonly problems: readonly string[];
  readonly ms: number;
}

interface Turn {
  readonly tag: string;
  readonly prompt: string;
  readonly sessionId: string;
  readonly runId: string;
  readonly outcome: string;
  readonly reply: string | null;
}

export async function runR5(options: R5Options): Promise<R5Figures> {
  const started = performance.now();
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-r5-"));
  const schema = `gh_r5_${process.pid}_${Date.now() % 1_000_000}`;
  const pg = options.store === "postgres";
  if (pg && !options.postgresUrl) throw new Error("R5 on PostgreSQL needs a URL");
  const open = () =>
    openStore(
      pg
        ? { kind: "postgres", url: options.postgresUrl as string, schema }
        : { kind: "sqlite", path: join(dir, "data", "gatehouse.db") },
    );
  try {
    const setup = await open();
    const sessions: string[] = [];
    for (let i = 0; i < options.sessions; i++) sessions.push((await setup.createSession({ key: `r5-${i}` })).id);
    await setup.close();
    const args = (worker: number) => {
      const a = [
        WORKER,
        String(worker),
        String(options.turnsPerProcess),
        String(options.concurrency),
        sessions.join(","),
        dir,
      ];
      if (pg) a.push(options.postgresUrl as string, schema);
      return a;
    };
    const outputs = await Promise.all(Array.from({ length: options.processes }, (_, w) => runWorker(args(w))));
    const turns = outputs.flat();
    const store = await open();
    try {
      return {
        store: options.store,
        ...(await check(store, sessions, turns, options)),
        ms: performance.now() - started,
      };
    } finally {
      await store.close();
    }
  } finally {
    if (pg) await dropSchema(options.postgresUrl as string, schema).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

function runWorker(args: string[]): Promise<Turn[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString("utf8");
    });
    child.stderr.on("data", (c: Buffer) => {
      err += c.toString("utf8");
    });
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code !== 0) reject(new Error(`an R5 worker failed (${code}): ${err.slice(-2000)}`));
      else
        resolve(
          out
            .split("\n")
            .filter(Boolean)
            .map((l) => JSON.parse(l) as Turn),
        );
    });
  });
}

async function check(store: SessionStore, sessions: string[], turns: Turn[], options: R5Options) {
  const problems: string[] = [];
  const expected = options.processes * options.turnsPerProcess;
  if (turns.length !== expected) problems.push(`workers reported ${turns.length} turns, expected ${expected}`);
  let lost = 0;
  let interleaved = 0;
  let overlapsWithinSession = 0;
  let stored = 0;
  const intervals: { session: string; run: Run }[] = [];
  for (const turn of turns) {
    if (turn.outcome !== "completed" || turn.reply !== `done ${turn.prompt}`)
      problems.push(`turn ${turn.tag}: ${turn.outcome} ${JSON.stringify(turn.reply)}`);
  }
  for (const sessionId of sessions) {
    const runs = await store.listRuns(sessionId);
    const mine = turns.filter((t) => t.sessionId === sessionId);
    stored += runs.length;
    if (runs.length !== mine.length)
      problems.push(`session ${sessionId}: ${runs.length} runs stored, ${mine.length} turns run`);
    for (const turn of mine) {
      const run = runs.find((r) => r.id === turn.runId);
      const messages = run ? await store.runMessages(run.id) : [];
      const texts = messages.map((m) => (m.role === "tool" ? "(tool)" : messageText(m)));
      const whole = JSON.stringify(texts) === JSON.stringify([turn.prompt, "working", "(tool)", `done ${turn.prompt}`]);
      if (run?.status !== "completed" || !whole) {
        lost++;
        problems.push(
          `turn ${turn.tag} is not whole in the store: ${run?.status ?? "no run"} ${JSON.stringify(texts)}`,
        );
      }
    }
    // Not interleaved: each run's messages are one block of consecutive positions, in run order.
    const messages = await store.sessionMessages(sessionId, { limit: 100_000 });
    const order: string[] = [];
    for (const m of messages) if (m.runId && order.at(-1) !== m.runId) order.push(m.runId);
    const blocks = new Set(order);
    if (blocks.size !== order.length) {
      interleaved += order.length - blocks.size;
      problems.push(`session ${sessionId}: runs' messages are interleaved`);
    }
    const bySeq = [...runs].sort((a, b) => a.seq - b.seq).map((r) => r.id);
    if (JSON.stringify(order) !== JSON.stringify(bySeq.filter((id) => blocks.has(id))))
      problems.push(`session ${sessionId}: messages are not in run order`);
    // Serialized: one run ends before the next one of the session starts.
    const sorted = [...runs].sort((a, b) => a.startedAt.localeCompare(b.startedAt));
    for (let i = 1; i < sorted.length; i++) {
      const prev = sorted[i - 1] as Run;
      const cur = sorted[i] as Run;
      if (prev.endedAt === null || prev.endedAt > cur.startedAt) overlapsWithinSession++;
    }
    for (const run of runs) intervals.push({ session: sessionId, run });
  }
  if (overlapsWithinSession)
    problems.push(`${overlapsWithinSession} runs started before the previous run of their session ended`);
  let parallelPairs = 0;
  for (let i = 0; i < intervals.length; i++)
    for (let j = i + 1; j < intervals.length; j++) {
      const a = intervals[i] as { session: string; run: Run };
      const b = intervals[j] as { session: string; run: Run };
      if (a.session === b.session) continue;
      if (a.run.startedAt < (b.run.endedAt ?? "") && b.run.startedAt < (a.run.endedAt ?? "")) parallelPairs++;
    }
  if (sessions.length > 1 && parallelPairs === 0) problems.push("no two sessions ever ran at the same time");
  return { turns: turns.length, stored, lost, interleaved, overlapsWithinSession, parallelPairs, problems };
}
