// Runtime benchmarks (issues 4 and 17, P6–P7), with the scripted model.
//
// P6: the runtime's own cost per model step. A run makes four model calls (three steps that
// call a trivial in-memory tool, then a final text). The same four model calls are also timed
// directly (`doStream` + `collectStream`, no runtime) in the same process; overhead per step =
// (median run round - median model-only round) / steps. The memory store and SQLite run in the
// same rounds (interleaved, the order rotating), and the SQLite figure is given as a ratio to the
// memory store's (goal <= 2x).
//
// P7: 1,000 sessions running 5 turns each, all sessions at once, on SQLite in a temp dir.
// Turns per second over the wall time, the median of three such rounds (new sessions each round),
// as a ratio to the raw better-sqlite3 floor for the same rows (bench/sql-floor.ts) measured in
// rounds interleaved with them, and next to the same rounds on a memory store (the runtime's own
// ceiling). SQL statements and transactions per turn are counted over the SQLite rounds. Memory
// per idle session from heapUsed after the first round and a forced GC, against a baseline taken
// after the Gatehouse ran one warm-up turn. CPU time per turn and the load average are printed
// too: on a shared machine they tell a slow run from a busy machine.
//
//   node --expose-gc --import tsx bench/runtime.bench.ts      (or: npm run bench -- runtime)
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import type { LanguageModelV3, LanguageModelV3CallOptions } from "@ai-sdk/provider";
import { z } from "zod";
import { createGatehouse, type Gatehouse } from "../src/assembly/gatehouse.js";
import { HOOK_NAMES } from "../src/hooks/catalog.js";
import { collectStream } from "../src/models/collect.js";
import { createScriptedModel, type ScriptInput } from "../src/models/index.js";
import { definePlugin, type PluginDefinition } from "../src/plugins/index.js";
import { openMemoryStore, openStore } from "../src/store/index.js";
import type { SessionStore } from "../src/store/types.js";
import type { Tool } from "../src/tools/types.js";
import { countSql, SqliteFloor } from "./sql-floor.js";

const started = performance.now();
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const silent = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const tempDirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-bench-"));
  tempDirs.push(dir);
  return dir;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

const echoTool: Tool<{ text: string }, { echoed: string }> = {
  name: "Echo",
  description: "Echoes its text",
  inputSchema: z.object({ text: z.string() }),
  async execute(input) {
    return { echoed: input.text };
  },
};

/** Wraps a model and records every call's options, to replay the same calls without the runtime. */
function recording(model: LanguageModelV3): { model: LanguageModelV3; calls: LanguageModelV3CallOptions[] } {
  const calls: LanguageModelV3CallOptions[] = [];
  return {
    calls,
    model: {
      specificationVersion: "v3",
      provider: model.provider,
      modelId: model.modelId,
      supportedUrls: model.supportedUrls,
      doGenerate: (options) => model.doGenerate(options),
      doStream: (options) => {
        calls.push(options);
        return model.doStream(options);
      },
    },
  };
}

/** Ten trusted plugins, each with a no-op handler (no opinion) on every hook of the catalog. */
function noopPlugins(count: number): PluginDefinition[] {
  return Array.from({ length: count }, (_, k) =>
    definePlugin({
      id: `noop-${k}`,
      setup(api) {
        for (const hook of HOOK_NAMES) api.on(hook, (() => undefined) as never);
      },
    }),
  );
}

// ─── P6: runtime overhead per model step ───────────────────────────────────────────────────────

const STEPS = 4;
const toolScript: ScriptInput = {
  runs: [
    {
      turns: [
        { toolCalls: [{ name: "Echo", input: { text: "{{prompt}} one" } }] },
        { toolCalls: [{ name: "Echo", input: { text: "{{prompt}} two" } }] },
        { toolCalls: [{ name: "Echo", input: { text: "{{prompt}} three" } }] },
        { text: "Done: {{lastToolResult}}" },
      ],
    },
  ],
};

interface StepFigure {
  readonly overheadUs: number;
  readonly runUs: number;
  readonly modelUs: number;
  /** The same difference from CPU time (both medians), for a machine busy with other work. */
  readonly overheadCpuUs: number;
}

/** Wall and CPU milliseconds of one round. */
interface Timing {
  readonly ms: number;
  readonly cpuMs: number;
}

async function timed(fn: () => Promise<void>): Promise<Timing> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await fn();
  const cpu = process.cpuUsage(cpu0);
  return { ms: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000 };
}

interface StepSetup {
  readonly plugins: number;
  readonly store: () => SessionStore | Promise<SessionStore>;
}

/**
 * Each setup's runs, and the same model calls without the runtime, in interleaved rounds (the order
 * rotates each round, so no setup always follows another): one figure per setup, against the one
 * model-only baseline.
 */
async function stepOverheads(
  setups: readonly StepSetup[],
  opts: { runs: number; rounds: number; warmup: number },
): Promise<StepFigure[]> {
  let n = 0;
  let calls: LanguageModelV3CallOptions[] = [];
  const runners: (() => Promise<Timing>)[] = [];
  const closers: (() => Promise<void>)[] = [];
  for (const setup of setups) {
    const rec = recording(createScriptedModel(toolScript));
    const gatehouse = createGatehouse({
      model: rec.model,
      store: await setup.store(),
      tools: [echoTool],
      plugins: noopPlugins(setup.plugins),
      logger: silent,
    });
    await gatehouse.ready();
    const first = await gatehouse.run({ prompt: `warm-up ${n++}` });
    if (first.outcome !== "completed" || first.steps !== STEPS) {
      throw new Error(
        `P6 setup: run ended ${first.outcome} after ${first.steps} steps (${first.error?.message ?? ""})`,
      );
    }
    // The calls of one run, replayed as they are for the model-only baseline.
    calls = rec.calls.slice(-STEPS);
    runners.push(async () => {
      const timing = await timed(async () => {
        for (let i = 0; i < opts.runs; i++) await gatehouse.run({ prompt: `bench prompt ${n++}` });
        // Detached observers (model_call_started, …) run in the background: their work counts too.
        await gatehouse.engine.drain();
      });
      rec.calls.length = 0;
      return timing;
    });
    closers.push(() => gatehouse.close());
  }
  const model = createScriptedModel(toolScript);
  runners.push(() =>
    timed(async () => {
      for (let i = 0; i < opts.runs; i++)
        for (const call of calls) {
          const { stream } = await model.doStream(call);
          await collectStream(stream);
        }
    }),
  );

  for (let i = 0; i < opts.warmup; i++) for (const runner of runners) await runner();
  const times: Timing[][] = runners.map(() => []);
  for (let r = 0; r < opts.rounds; r++) {
    for (let k = 0; k < runners.length; k++) {
      const i = (k + r) % runners.length;
      (times[i] as Timing[]).push(await (runners[i] as () => Promise<Timing>)());
    }
  }
  for (const close of closers) await close();
  const perStep = (ms: number) => (ms * 1000) / (opts.runs * STEPS);
  const modelTimes = times.at(-1) as Timing[];
  const modelUs = perStep(median(modelTimes.map((t) => t.ms)));
  const modelCpuUs = perStep(median(modelTimes.map((t) => t.cpuMs)));
  return times.slice(0, -1).map((runTimes) => {
    const runUs = perStep(median(runTimes.map((t) => t.ms)));
    const overheadCpuUs = perStep(median(runTimes.map((t) => t.cpuMs))) - modelCpuUs;
    return { overheadUs: runUs - modelUs, runUs, modelUs, overheadCpuUs };
  });
}

function stepLine(label: string, f: StepFigure, goalUs?: number): void {
  const goal =
    goalUs === undefined ? "for information" : `goal <= ${goalUs} µs${f.overheadUs <= goalUs ? "" : " MISSED"}`;
  console.log(
    `P6 runtime overhead per model step, ${label}: ${Math.round(f.overheadUs)} µs (${goal}) ` +
      `(${Math.round(f.runUs)} µs per step in a run, ${Math.round(f.modelUs)} µs of it the model's own; ` +
      `from process CPU time, all threads: ${Math.round(f.overheadCpuUs)} µs)`,
  );
}

function storeRatioLine(label: string, memory: StepFigure, sqlite: StepFigure, goal?: number): void {
  const ratio = sqlite.overheadUs / memory.overheadUs;
  const verdict = goal === undefined ? "for information" : `goal <= ${goal}x${ratio <= goal ? "" : " MISSED"}`;
  console.log(
    `P6 SQLite overhead per step against the memory store's, ${label}: ${ratio.toFixed(2)}x (${verdict}) ` +
      `(CPU time: ${(sqlite.overheadCpuUs / memory.overheadCpuUs).toFixed(2)}x)`,
  );
}

async function p6(): Promise<void> {
  const memory = { runs: 100, rounds: 9, warmup: 2 };
  const sqliteStore = () => openStore({ kind: "sqlite", path: join(tempDir(), "p6.db") });
  const [bare, bareSqlite] = (await stepOverheads(
    [
      { plugins: 0, store: openMemoryStore },
      { plugins: 0, store: sqliteStore },
    ],
    memory,
  )) as [StepFigure, StepFigure];
  stepLine("bare", bare, 200);
  stepLine("bare, SQLite", bareSqlite);
  storeRatioLine("bare", bare, bareSqlite, 2);
  const [plugins, pluginsSqlite] = (await stepOverheads(
    [
      { plugins: 10, store: openMemoryStore },
      { plugins: 10, store: sqliteStore },
    ],
    { ...memory, runs: 50 },
  )) as [StepFigure, StepFigure];
  stepLine("with 10 plugins on every hook", plugins, 1000);
  stepLine("with 10 plugins on every hook, SQLite", pluginsSqlite);
  storeRatioLine("with 10 plugins on every hook", plugins, pluginsSqlite);
}

// ─── P7: 1,000 concurrent sessions × 5 turns, SQLite ───────────────────────────────────────────

const SESSIONS = 1000;
const TURNS = 5;
const P7_ROUNDS = 3;
const echoScript: ScriptInput = { runs: [{ turns: [{ text: "You said: {{prompt}}" }] }] };

/** One round: SESSIONS new sessions, all at once, each running TURNS turns one after another. */
async function p7Round(gatehouse: Gatehouse, label: string): Promise<{ rate: number; cpuUs: number; failed: number }> {
  let failed = 0;
  const session = async (i: number): Promise<void> => {
    let sessionId: string | undefined;
    for (let t = 0; t < TURNS; t++) {
      const result = await gatehouse.run({
        prompt: `${label} session ${i} turn ${t}`,
        ...(sessionId ? { sessionId } : {}),
      });
      if (result.outcome !== "completed") failed++;
      sessionId = result.sessionId;
    }
  };
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: SESSIONS }, (_, i) => session(i)));
  await gatehouse.engine.drain();
  const cpu = process.cpuUsage(cpu0);
  return {
    rate: (SESSIONS * TURNS) / ((performance.now() - t0) / 1000),
    cpuUs: (cpu.user + cpu.system) / (SESSIONS * TURNS),
    failed,
  };
}

/**
 * P7 on SQLite, in rounds interleaved with the same rounds on a memory store (the runtime's own
 * ceiling) and with the raw better-sqlite3 floor for the same rows (bench/sql-floor.ts); every round
 * uses new sessions, so each database grows alike. Statements and transactions are counted over the
 * SQLite rounds.
 */
async function p7(): Promise<void> {
  const sql = countSql();
  const gatehouse: Gatehouse = createGatehouse({
    model: createScriptedModel(echoScript),
    store: await openStore({ kind: "sqlite", path: join(tempDir(), "p7.db") }),
    logger: silent,
  });
  const warm = await gatehouse.run({ prompt: "warm-up" });
  if (warm.outcome !== "completed")
    throw new Error(`P7 setup: warm-up run ${warm.outcome} (${warm.error?.message ?? ""})`);
  const floor = new SqliteFloor(join(tempDir(), "floor.db"));
  floor.round("warm-up", 100, TURNS);
  gc();
  gc();
  const base = process.memoryUsage();

  const sqliteRound = async (r: number) => {
    sql.on();
    try {
      return await p7Round(gatehouse, `round ${r}`);
    } finally {
      sql.off();
    }
  };
  const memoryRound = async (r: number) => {
    const memory = createGatehouse({
      model: createScriptedModel(echoScript),
      store: openMemoryStore(),
      logger: silent,
    });
    try {
      return await p7Round(memory, `memory round ${r}`);
    } finally {
      await memory.close();
    }
  };
  // Memory: the first round's sessions, idle, against the baseline (before any other kind of round).
  const sqliteRounds = [await sqliteRound(0)];
  gc();
  gc();
  const after = process.memoryUsage();
  const floorRates: number[] = [];
  const memoryRates: number[] = [];
  for (let r = 0; r < P7_ROUNDS; r++) {
    floorRates.push(floor.round(`floor round ${r}`, SESSIONS, TURNS));
    memoryRates.push((await memoryRound(r)).rate);
    if (r > 0) sqliteRounds.push(await sqliteRound(r));
  }
  await gatehouse.close();
  floor.close();

  const turns = sqliteRounds.length * SESSIONS * TURNS;
  const rates = sqliteRounds.map((r) => r.rate);
  const failed = sqliteRounds.reduce((n, r) => n + r.failed, 0);
  const turnsPerSecond = median(rates);
  const floorRate = median(floorRates);
  const ratio = turnsPerSecond / floorRate;
  console.log(
    `P7 turns per second, ${SESSIONS} sessions x ${TURNS} turns, SQLite: ${Math.round(turnsPerSecond)} = ${ratio.toFixed(2)}x ` +
      `the raw better-sqlite3 floor for the same rows (goal >= 0.6x${ratio >= 0.6 ? "" : " MISSED"}) ` +
      `(floor ${Math.round(floorRate)} turns/s, ${SqliteFloor.TURNS_PER_TRANSACTION} turns a transaction; ` +
      `memory store ${Math.round(median(memoryRates))} turns/s = ${(median(memoryRates) / floorRate).toFixed(2)}x the floor; ` +
      `median of ${rates.length} rounds: ${rates.map(Math.round).join(", ")}; CPU per turn ${sqliteRounds
        .map((r) => `${Math.round(r.cpuUs)}`)
        .join(", ")} µs; load average ${loadavg()[0]?.toFixed(1)}${failed ? `; ${failed} turns not completed` : ""})`,
  );
  const perTurn = (n: number) => (n / turns).toFixed(2);
  const statements = sql.counts.statements / turns;
  console.log(
    `P7 SQL statements per turn: ${perTurn(sql.counts.statements)} (goal <= 15${statements <= 15 ? "" : " MISSED"}) ` +
      `(${perTurn(sql.counts.control)} of them BEGIN/COMMIT/ROLLBACK/SAVEPOINT/RELEASE; ` +
      `transactions per turn: ${perTurn(sql.counts.writeTransactions)} writing, ${perTurn(sql.counts.readTransactions)} reading)`,
  );
  const perSession = (bytes: number) => bytes / SESSIONS / 1024;
  const heapKb = perSession(after.heapUsed - base.heapUsed);
  console.log(
    `P7 memory per idle session: ${heapKb.toFixed(1)} KB (goal <= 50 KB${heapKb <= 50 ? "" : " MISSED"}) ` +
      `(heapUsed; RSS ${perSession(after.rss - base.rss).toFixed(1)} KB per session, for information)`,
  );
}

// `RUNTIME_BENCH=p6` or `=p7` runs one part only (when working on one of them).
const only = process.env.RUNTIME_BENCH;
try {
  if (only !== "p7") await p6();
  gc();
  if (only !== "p6") await p7();
} finally {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
}
console.log(`(runtime.bench: ${((performance.now() - started) / 1000).toFixed(1)} s)`);
