/**
 * The guarantee harness at any size:
 *   node --import tsx harness/soak.ts [--seed N | --seeds N] [--scenarios N] [--only R1|R2|R3|R4|R5|R6]
 *     [--postgres URL] [--from INDEX] [--kills N] [--flood-mib N] [--surface runtime|http]
 * Prints one line per figure; on a leak or a failure, the seed, the scenario and what leaked
 * where. Exits 1 on any failure. `--from I --scenarios 1` replays one R1 scenario. `--seeds N`
 * runs everything selected once per fresh random seed (each printed, so any failure replays
 * with `--seed`) and ends with R1's totals over all of them.
 */
import { randomInt } from "node:crypto";
import { parseArgs } from "node:util";
import { COUNTS, runR1 } from "./r1.js";
import { matrixTable, runR2 } from "./r2.js";
import { runR3 } from "./r3.js";
import { runR4 } from "./r4.js";
import { runR5 } from "./r5.js";
import { runR6 } from "./r6.js";
import { PATHS } from "./scenario.js";

const { values } = parseArgs({
  options: {
    seed: { type: "string" },
    seeds: { type: "string" },
    scenarios: { type: "string", default: "2000" },
    from: { type: "string", default: "0" },
    only: { type: "string" },
    postgres: { type: "string", default: process.env.GATEHOUSE_TEST_DATABASE_URL },
    kills: { type: "string" },
    "flood-mib": { type: "string", default: "2048" },
    surface: { type: "string", default: "runtime" },
  },
});
const scenarios = Number(values.scenarios);
const only = values.only?.toUpperCase();
const postgresUrl = values.postgres || undefined;
const want = (r: string) => only === undefined || only === r;
const line = (text: string) => process.stdout.write(`${text}\n`);
const usage = (text: string): never => {
  process.stderr.write(`soak: ${text}\n`);
  process.exit(2);
};
const count = (flag: string, text: string | undefined): number | undefined => {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 0) usage(`--${flag}: expected a whole number, got ${JSON.stringify(text)}`);
  return n;
};
if (values.seed !== undefined && values.seeds !== undefined) usage("--seed and --seeds: give one or the other");
const seedCount = count("seeds", values.seeds);
if (seedCount === 0) usage("--seeds: expected at least 1");
const seeds =
  seedCount === undefined
    ? [count("seed", values.seed) ?? Date.now() % 1_000_000]
    : Array.from({ length: seedCount }, () => randomInt(1, 1_000_000_000));
let failed = false;
/** R1 summed over every seed, for the closing line of `--seeds`. */
const r1Total = { scenarios: 0, targets: 0, controls: 0, leaks: 0, failures: 0, ms: 0 };

for (const [k, seed] of seeds.entries()) {
  const of = seeds.length > 1 ? ` (${k + 1} of ${seeds.length})` : "";
  line(`seed ${seed}${of}${postgresUrl ? " (with PostgreSQL)" : ""}`);
  await soak(seed);
}
if (seeds.length > 1 && want("R1")) {
  const t = r1Total;
  line(
    `R1 over ${seeds.length} seeds (${seeds.join(", ")}): ${t.scenarios} scenarios, ${t.targets} canaries blocked or rewritten, ${t.controls} controls, ${t.leaks} leaks, ${t.failures} other failures, ${(t.ms / 1000).toFixed(1)} s`,
  );
}
process.exitCode = failed ? 1 : 0;

async function soak(seed: number): Promise<void> {
  if (want("R1")) {
    const f = await runR1({
      seed,
      scenarios,
      from: Number(values.from),
      ...(postgresUrl ? { postgresUrl } : {}),
      surface: values.surface === "http" ? "http" : "runtime",
      onScenario: (r) => {
        if (!r.leaks.length && !r.failures.length) return;
        line(
          `R1 FAILED seed ${r.scenario.seed} --from ${r.scenario.index} --scenarios 1${values.surface === "http" ? " --surface http" : ""}: ${r.description}`,
        );
        for (const l of r.leaks) line(`  leak: ${l.kind} canary from ${l.where} found in ${l.sink}: …${l.excerpt}…`);
        for (const f of r.failures) line(`  failure: ${f}`);
      },
    });
    line(
      `R1 scenarios run${values.surface === "http" ? " through HTTP (JSON and SSE)" : ""}: ${f.scenarios} (${Object.entries(
        f.byStore,
      )
        .map(([k, v]) => `${k} ${v}`)
        .join(", ")})`,
    );
    line(`R1 canaries planted: ${f.targets} blocked or rewritten, ${f.controls} controls`);
    line(
      `R1 by verdict: ${Object.entries(f.byKind)
        .map(([k, v]) => `${k} ${v}`)
        .join(", ")}`,
    );
    line(
      `R1 by path: ${PATHS.map((p) => `${p} ${f.byPath[p] ?? 0}`).join(", ")}; scenarios killed mid-way (memory store): ${f.killed}`,
    );
    line(`R1 permission hooks and retries: ${COUNTS.map((c) => `${c} ${f.counts[c]}`).join(", ")}`);
    line(`R1 leaks found: ${f.leaks}`);
    line(`R1 other failures (verdict not applied, control not found, run failed): ${f.failures}`);
    line(`R1 time: ${(f.ms / 1000).toFixed(1)} s (${(f.scenarios / (f.ms / 1000)).toFixed(2)} scenarios/s)`);
    if (f.sandboxSkipped) line(`R1 sandbox kinds not generated: ${f.sandboxSkipped}`);
    failed ||= f.leaks > 0 || f.failures > 0;
    for (const key of ["scenarios", "targets", "controls", "leaks", "failures", "ms"] as const) r1Total[key] += f[key];
  }

  if (want("R2")) {
    const f = await runR2({ seed });
    line(matrixTable(f.cells));
    for (const c of f.cells.filter((x) => !x.ok))
      line(`R2 FAILED ${c.layer} ${c.hook} / ${c.fault}: ${c.problems.join("; ")}`);
    line(`R2 matrix cells: ${f.cells.length}, failed: ${f.failed}`);
    line(`R2 time: ${(f.ms / 1000).toFixed(1)} s`);
    failed ||= f.failed > 0;
  }

  if (want("R3")) {
    const kills = Number(values.kills ?? Math.min(1000, scenarios));
    const f = await runR3({ seed, kills, ...(postgresUrl ? { postgresUrl } : {}) });
    for (const r of f.failed)
      for (const p of r.problems) line(`R3 FAILED seed ${seed} kill ${r.kill} (${r.store}, +${r.delayMs} ms): ${p}`);
    line(`R3 crash runs (SIGKILL): ${f.kills}; runs started ${f.runsStarted}, finished ${f.runsFinished}`);
    line(
      `R3 runs left running by a kill: ${f.interrupted} (unchecked content stored: ${f.ungatedStored}); recovered at the next run`,
    );
    line(`R3 failures: ${f.failures}`);
    line(`R3 time: ${(f.ms / 1000).toFixed(1)} s`);
    failed ||= f.failures > 0;
  }

  if (want("R4")) {
    // The corpus is data, not random: every case runs at any size.
    const f = await runR4({ seed, concurrency: 4 });
    for (const r of f.failed) line(`R4 FAILED [${r.case.family}] ${r.case.name}: ${r.problems.join("; ")}`);
    for (const r of f.results.filter((x) => !x.ok && x.case.todo))
      line(`R4 todo [${r.case.family}] ${r.case.name}: ${r.case.todo}`);
    line(
      `R4 by family: ${Object.entries(f.byFamily)
        .map(([k, v]) => `${k} ${v}`)
        .join(", ")}`,
    );
    line(`R4 bad input: ${f.cases} cases, ${f.passed} passed, ${f.todo} todo, ${f.failed.length} failed`);
    line(`R4 time: ${(f.ms / 1000).toFixed(1)} s`);
    failed ||= f.failed.length > 0;
  }

  if (want("R5")) {
    const big = scenarios >= 1000;
    for (const store of postgresUrl ? (["sqlite", "postgres"] as const) : (["sqlite"] as const)) {
      const f = await runR5({
        store,
        ...(postgresUrl ? { postgresUrl } : {}),
        processes: big ? 4 : 3,
        turnsPerProcess: big ? 60 : 12,
        concurrency: 3,
        sessions: big ? 6 : 4,
      });
      for (const p of f.problems) line(`R5 FAILED (${store}): ${p}`);
      line(
        `R5 ${store}: ${f.turns} turns, ${f.stored} stored, ${f.lost} lost, ${f.interleaved} interleaved, ${f.overlapsWithinSession} overlapping within a session, ${f.parallelPairs} parallel pairs across sessions (${(f.ms / 1000).toFixed(1)} s)`,
      );
      failed ||= f.problems.length > 0;
    }
  }

  if (want("R6")) {
    const f = await runR6({ floodBytes: Number(values["flood-mib"]) * 1024 * 1024 });
    for (const c of f.cases)
      line(`R6 ${c.ok ? "ok" : "FAILED"}: ${c.name}: ${c.detail}${c.note ? ` (note: ${c.note})` : ""}`);
    line(
      `R6 cases: ${f.cases.length}, failed: ${f.failed}; processes started ${f.processesStarted}, left ${f.processesLeft}; secret variables leaked ${f.variablesLeaked} (${(f.ms / 1000).toFixed(1)} s)`,
    );
    failed ||= f.failed > 0;
  }
}
