// CLI start-up benchmark (issues 7 and 17, P8): whole-process wall time of `gatehouse --version`
// and of one `gatehouse run --model scripted:echo -p hi`, as ratios to `node -e 0` timed in the
// same rounds (goals: --version <= 2x, run <= 5x).
//
// Times the built CLI (dist/cli/main.js) and builds nothing: run `npm run build` first. Each
// round spawns, one after another, `node -e 0`, `--version`, a `run` on a data dir that already
// exists (the figure: steady state, the warm-up created it) and a `run` on a new data dir (first
// run: the SQLite file is created and migrated; for information). The median of each is printed
// with its ratio to `node -e 0`, which says more than milliseconds on a busy machine, and the best
// (least disturbed) time for information.
// The runs happen in a temp project dir with HOME pointing into it, so that neither a
// gatehouse.json nor the user's Claude Code / Code Puppy hook settings are read.
//
//   node --expose-gc --import tsx bench/cli.bench.ts      (or: npm run bench -- cli)
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const started = performance.now();
const ROUNDS = Number(process.env.CLI_BENCH_ROUNDS ?? 15);
const cli = fileURLToPath(new URL("../dist/cli/main.js", import.meta.url));
if (!existsSync(cli)) {
  console.error(`cli.bench: ${cli} is missing; run \`npm run build\` first`);
  process.exit(1);
}

const project = mkdtempSync(join(tmpdir(), "gatehouse-bench-cli-"));
const home = join(project, "home");
mkdirSync(home);
// Nothing from the caller's environment that Gatehouse reads (model, config, store, log level).
const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: home, NO_COLOR: "1" };

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/**
 * Reports the process's own CPU time (user + system, µs) on fd 3 as it exits: on a machine other work
 * keeps busy, CPU time says what a start costs better than wall time does. (Loading this costs the
 * same in every process timed, `node -e 0` included.)
 */
const REPORT_CPU =
  'data:text/javascript,import{writeSync}from"node:fs";process.on("exit",()=>{const u=process.cpuUsage();writeSync(3,String(u.user+u.system))})';

/** Wall and CPU time of one process, from spawn to exit, in ms; a wrong exit status or output stops the bench. */
function time(args: readonly string[], expect: string): { ms: number; cpuMs: number } {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, ["--import", REPORT_CPU, ...args], {
    cwd: project,
    env,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe", "pipe"],
  });
  const ms = performance.now() - t0;
  if (r.status !== 0 || r.stdout.trim() !== expect) {
    throw new Error(
      `node ${args.join(" ")}: exit ${r.status ?? r.signal}, stdout ${JSON.stringify(r.stdout)}\n${r.stderr}`,
    );
  }
  return { ms, cpuMs: Number(r.output[3]) / 1000 };
}

const { VERSION } = await import("../src/version.js");
const baseline = () => time(["-e", "0"], "");
const version = () => time([cli, "--version"], VERSION);
const run = (dataDir: string) =>
  time([cli, "run", "--model", "scripted:echo", "-p", "hi", "--data-dir", dataDir], "hi");

const steadyDir = join(project, "data");
let fresh = 0;
const firstDir = () => join(project, `first-${fresh++}`);
const times = {
  node: [] as { ms: number; cpuMs: number }[],
  version: [] as { ms: number; cpuMs: number }[],
  run: [] as { ms: number; cpuMs: number }[],
  first: [] as { ms: number; cpuMs: number }[],
};
try {
  // Warm-up: the OS file cache, and the steady data dir created and migrated.
  baseline();
  version();
  run(steadyDir);
  for (let r = 0; r < ROUNDS; r++) {
    times.node.push(baseline());
    times.version.push(version());
    times.run.push(run(steadyDir));
    times.first.push(run(firstDir()));
  }
} finally {
  rmSync(project, { recursive: true, force: true });
}

const wall = (k: keyof typeof times) => median(times[k].map((t) => t.ms));
const cpu = (k: keyof typeof times) => median(times[k].map((t) => t.cpuMs));
const node = wall("node");
const best = (k: keyof typeof times) => Math.round(Math.min(...times[k].map((t) => t.ms)));
/** The median as a ratio to `node -e 0`'s, against a goal given as such a ratio; the CPU-time ratio for information. */
const figure = (k: keyof typeof times, goal: number) => {
  const ratio = wall(k) / node;
  return (
    `${ratio.toFixed(2)}x node -e 0 (goal <= ${goal}x${ratio <= goal ? "" : " MISSED"}; ${Math.round(wall(k))} ms, ` +
    `best ${best(k)} ms; CPU time ${(cpu(k) / cpu("node")).toFixed(2)}x, ${Math.round(cpu(k))} ms)`
  );
};
console.log(
  `P8 gatehouse --version: ${figure("version", 2)} ` +
    `(node -e 0: ${Math.round(node)} ms, best ${best("node")} ms, CPU ${Math.round(cpu("node"))} ms)`,
);
console.log(
  `P8 gatehouse run scripted:echo: ${figure("run", 5)} (existing data dir; ` +
    `first run, new data dir: ${Math.round(wall("first"))} ms, ${(wall("first") / node).toFixed(1)}x)`,
);
console.log(
  `(cli.bench: median of ${ROUNDS} interleaved rounds; load average ${loadavg()[0]?.toFixed(1)}; ` +
    `${((performance.now() - started) / 1000).toFixed(1)} s)`,
);
