// `gatehouse hook claude` cost per call (issue 28): the warm path (the project's daemon keeps the
// plugins loaded; the hook process is a Node client of its socket), the cold path (`--no-daemon`:
// the hook process loads the project itself), as ratios to a bare `sh -c true` hook and to
// `node -e 0`, timed in the same interleaved rounds. Also, for information, the socket round trip
// alone (what a lighter client than Node would pay): a call from this process to the daemon.
//
// Times the built CLI (dist/cli/main.js): run `npm run build` first.
//   node --expose-gc --import tsx bench/host-hooks.bench.ts      (or: npm run bench -- host-hooks)
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { askDaemon, pidFileOf, socketPathFor } from "../src/host-hooks/warm.js";

const started = performance.now();
const ROUNDS = Number(process.env.HOOK_BENCH_ROUNDS ?? 15);
const cli = fileURLToPath(new URL("../dist/cli/main.js", import.meta.url));
if (!existsSync(cli)) {
  console.error(`host-hooks.bench: ${cli} is missing; run \`npm run build\` first`);
  process.exit(1);
}

const project = mkdtempSync(join(tmpdir(), "gatehouse-bench-hook-"));
const home = join(project, "home");
mkdirSync(home);
writeFileSync(
  join(project, "guard.mjs"),
  `export default { id: "guard", setup(api) {
    api.on("before_tool_call", (e) => /rm -rf/.test(String(e.params.command)) ? { outcome: "block", reason: "r", message: "no" } : undefined);
  } };\n`,
);
writeFileSync(join(project, "gatehouse.json"), JSON.stringify({ plugins: [{ path: "./guard.mjs" }] }));
const env: NodeJS.ProcessEnv = {
  PATH: process.env.PATH,
  HOME: home,
  NO_COLOR: "1",
  GATEHOUSE_TRUST_WORKSPACE: "1",
  CLAUDE_PROJECT_DIR: project,
  GATEHOUSE_HOOK_IDLE_SECONDS: "120",
};
const payload = {
  hook_event_name: "PreToolUse",
  session_id: "s",
  tool_use_id: "t",
  tool_name: "Bash",
  tool_input: { command: "rm -rf build" },
};
const input = JSON.stringify(payload);

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Wall time of one hook process fed the payload on stdin, in ms; a wrong answer stops the bench. */
function time(command: string, args: readonly string[], expect: RegExp): number {
  const t0 = performance.now();
  const r = spawnSync(command, args, { cwd: project, env, input, encoding: "utf8" });
  const ms = performance.now() - t0;
  if (r.status !== 0 || !expect.test(r.stdout))
    throw new Error(`${args.join(" ")}: exit ${r.status}, ${r.stdout}${r.stderr}`);
  return ms;
}

const bare = () => time("sh", ["-c", "true"], /^$/);
const node = () => time(process.execPath, ["-e", "0"], /^$/);
const warm = () => time(process.execPath, [cli, "hook", "claude"], /"permissionDecision":"deny"/);
const cold = () => time(process.execPath, [cli, "hook", "claude", "--no-daemon"], /"permissionDecision":"deny"/);
const socketPath = socketPathFor(project);
async function socketOnly(): Promise<number> {
  const t0 = performance.now();
  const answer = await askDaemon(socketPath, { agent: "claude", payload }, 10_000);
  if (!answer?.stdout.includes('"deny"')) throw new Error("the daemon did not answer");
  return performance.now() - t0;
}

const times = {
  bare: [] as number[],
  node: [] as number[],
  warm: [] as number[],
  cold: [] as number[],
  socket: [] as number[],
};
try {
  // Warm-up: the OS file cache; the first warm call starts the daemon, wait until it listens.
  bare();
  node();
  cold();
  warm();
  while (!existsSync(pidFileOf(socketPath))) await new Promise((r) => setTimeout(r, 20));
  warm();
  for (let r = 0; r < ROUNDS; r++) {
    times.bare.push(bare());
    times.node.push(node());
    times.warm.push(warm());
    times.cold.push(cold());
    times.socket.push(await socketOnly());
  }
} finally {
  const pidFile = pidFileOf(socketPath);
  if (existsSync(pidFile)) process.kill(Number(readFileSync(pidFile, "utf8")), "SIGTERM");
  rmSync(project, { recursive: true, force: true });
}

const m = (k: keyof typeof times) => median(times[k]);
const ratio = (k: keyof typeof times, base: keyof typeof times) => (m(k) / m(base)).toFixed(1);
console.log(
  `gatehouse hook claude, warm (daemon): ${ratio("warm", "bare")}x sh -c true, ${ratio("warm", "node")}x node -e 0 (${Math.round(m("warm"))} ms)`,
);
console.log(
  `gatehouse hook claude, cold (--no-daemon): ${ratio("cold", "bare")}x sh -c true, ${ratio("cold", "node")}x node -e 0 (${Math.round(m("cold"))} ms); warm is ${ratio("cold", "warm")}x faster`,
);
console.log(
  `socket round trip to the daemon alone: ${m("socket").toFixed(2)} ms (${(m("socket") / m("bare")).toFixed(2)}x sh -c true); sh -c true ${m("bare").toFixed(1)} ms, node -e 0 ${Math.round(m("node"))} ms`,
);
console.log(
  `(host-hooks.bench: median of ${ROUNDS} interleaved rounds; load average ${loadavg()[0]?.toFixed(1)}; ${((performance.now() - started) / 1000).toFixed(1)} s)`,
);
