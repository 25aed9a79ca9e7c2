// Runtime benchmarks (issue 4, P6–P7), with the scripted model.
//
// P6: the runtime's own cost per model step. A run makes four model calls (three steps that
// call a trivial in-memory tool, then a final text). The same four model calls are also timed
// directly (`doStream` + `collectStream`, no runtime) in the same process, rounds interleaved;
// overhead per step = (median run round - median model-only round) / steps. Memory store for
// the figure (no disk), SQLite for information.
//
// P7: 1,000 sessions running 5 turns each, all sessions at once, on SQLite in a temp dir.
// Turns per second over the wall time, the median of three such rounds (new sessions each round);
// memory per idle session from heapUsed after the first round and a forced GC, against a baseline
// taken after the Gatehouse ran one warm-up turn. CPU time per turn and the load average are
// printed too: on a shared machine they tell a slow run from a busy machine.
//
//   node --expose-gc --import tsx bench/runtime.bench.ts      (or: npm run bench -- runtime)
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import type { LanguageModelV3, LanguageModelV3CallOptions } from "@ai-sdk/provider";
import { z } from "zod";
import { HOOK_NAMES } from "../src/hooks/catalog.js";
import { collectStream } from "../src/models/collect.js";
import { createScriptedModel, type ScriptInput } from "../src/models/index.js";
import { definePlugin, type PluginDefinition } from "../src/plugins/index.js";
import { createGatehouse, type Gatehouse } from "../src/runtime/gatehouse.js";
import { openMemoryStore, openStore } from "../src/store/index.js";
import type { SessionStore } from "../src/store/types.js";
import type { Tool } from "../src/tools/types.js";

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

async function stepOverhead(
  options: { plugins: number; store: () => SessionStore | Promise<SessionStore> },
  opts: { runs: number; rounds: number; warmup: number },
): Promise<StepFigure> {
  const rec = recording(createScriptedModel(toolScript));
  const store = await options.store();
  const gatehouse = createGatehouse({
    model: rec.model,
    store,
    tools: [echoTool],
    plugins: noopPlugins(options.plugins),
    logger: silent,
  });
  await gatehouse.ready();
  let n = 0;
  const first = await gatehouse.run({ prompt: `warm-up ${n++}` });
  if (first.outcome !== "completed" || first.steps !== STEPS) {
    throw new Error(`P6 setup: run ended ${first.outcome} after ${first.steps} steps (${first.error ?? ""})`);
  }
  // The calls of one run, replayed as they are for the model-only baseline.
  const calls = rec.calls.slice(-STEPS);
  rec.calls.length = 0;

  const runRound = async (): Promise<Timing> => {
    const timing = await timed(async () => {
      for (let i = 0; i < opts.runs; i++) await gatehouse.run({ prompt: `bench prompt ${n++}` });
      // Detached observers (model_call_started, …) run in the background: their work counts too.
      await gatehouse.engine.drain();
    });
    rec.calls.length = 0;
    return timing;
  };
  const model = createScriptedModel(toolScript);
  const modelRound = (): Promise<Timing> =>
    timed(async () => {
      for (let i = 0; i < opts.runs; i++)
        for (const call of calls) {
          const { stream } = await model.doStream(call);
          await collectStream(stream);
        }
    });

  for (let i = 0; i < opts.warmup; i++) {
    await runRound();
    await modelRound();
  }
  const runTimes: Timing[] = [];
  const modelTimes: Timing[] = [];
  for (let r = 0; r < opts.rounds; r++) {
    if (r % 2) {
      runTimes.push(await runRound());
      modelTimes.push(await modelRound());
    } else {
      modelTimes.push(await modelRound());
      runTimes.push(await runRound());
    }
  }
  await gatehouse.close();
  const perStep = (ms: number) => (ms * 1000) / (opts.runs * STEPS);
  const runUs = perStep(median(runTimes.map((t) => t.ms)));
  const modelUs = perStep(median(modelTimes.map((t) => t.ms)));
  const overheadCpuUs = perStep(median(runTimes.map((t) => t.cpuMs))) - perStep(median(modelTimes.map((t) => t.cpuMs)));
  return { overheadUs: runUs - modelUs, runUs, modelUs, overheadCpuUs };
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

async function p6(): Promise<void> {
  const memory = { runs: 100, rounds: 9, warmup: 2 };
  const sqliteStore = () => openStore({ kind: "sqlite", path: join(tempDir(), "p6.db") });
  stepLine("bare", await stepOverhead({ plugins: 0, store: openMemoryStore }, memory), 200);
  stepLine(
    "with 10 plugins on every hook",
    await stepOverhead({ plugins: 10, store: openMemoryStore }, { ...memory, runs: 50 }),
    1000,
  );
  stepLine("bare, SQLite", await stepOverhead({ plugins: 0, store: sqliteStore }, { ...memory, rounds: 5 }));
  stepLine(
    "with 10 plugins on every hook, SQLite",
    await stepOverhead({ plugins: 10, store: sqliteStore }, { ...memory, runs: 50, rounds: 5 }),
  );
}

// ─── P7: 1,000 concurrent sessions × 5 turns, SQLite ───────────────────────────────────────────

const SESSIONS = 1000;
const TURNS = 5;
const P7_ROUNDS = 3;

async function p7(): Promise<void> {
  const gatehouse: Gatehouse = createGatehouse({
    model: createScriptedModel({ runs: [{ turns: [{ text: "You said: {{prompt}}" }] }] }),
    store: await openStore({ kind: "sqlite", path: join(tempDir(), "p7.db") }),
    logger: silent,
  });
  const warm = await gatehouse.run({ prompt: "warm-up" });
  if (warm.outcome !== "completed") throw new Error(`P7 setup: warm-up run ${warm.outcome} (${warm.error ?? ""})`);
  gc();
  gc();
  const base = process.memoryUsage();

  let failed = 0;
  /** One round: SESSIONS new sessions, all at once, each running TURNS turns one after another. */
  const round = async (r: number) => {
    const session = async (i: number): Promise<void> => {
      let sessionId: string | undefined;
      for (let t = 0; t < TURNS; t++) {
        const result = await gatehouse.run({
          prompt: `round ${r} session ${i} turn ${t}`,
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
    return { seconds: (performance.now() - t0) / 1000, cpuUs: (cpu.user + cpu.system) / (SESSIONS * TURNS) };
  };

  // Memory: the first round's sessions, idle, against the baseline.
  const rounds = [await round(0)];
  gc();
  gc();
  const after = process.memoryUsage();
  // More rounds (new sessions each time) for a median throughput.
  for (let r = 1; r < P7_ROUNDS; r++) rounds.push(await round(r));
  await gatehouse.close();

  const rates = rounds.map((r) => (SESSIONS * TURNS) / r.seconds);
  const turnsPerSecond = median(rates);
  const perSession = (bytes: number) => bytes / SESSIONS / 1024;
  const heapKb = perSession(after.heapUsed - base.heapUsed);
  console.log(
    `P7 turns per second, ${SESSIONS} sessions x ${TURNS} turns, SQLite: ${Math.round(turnsPerSecond)} (goal >= 2000${
      turnsPerSecond >= 2000 ? "" : " MISSED"
    }) (median of ${P7_ROUNDS} rounds: ${rates.map(Math.round).join(", ")}; CPU per turn ${rounds
      .map((r) => `${Math.round(r.cpuUs)}`)
      .join(", ")} µs; load average ${loadavg()[0]?.toFixed(1)}${failed ? `; ${failed} turns not completed` : ""})`,
  );
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
