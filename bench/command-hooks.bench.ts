// Command-hook benchmarks (issue 6, P4): what running a hook through Gatehouse costs over
// spawning the same program by hand, how 8 matching hooks compare with 1 (they run in
// parallel), and the latency of an http hook on loopback. Subjects and baselines are
// interleaved in rounds after a warm-up; ratios are of medians.
//
//   node --expose-gc --import tsx bench/command-hooks.bench.ts   (or: npm run bench -- command-hooks)
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { runCommandHooks } from "../src/command-hooks/dispatch.js";
import { hookEnv } from "../src/command-hooks/env.js";
import { runCommandHandler } from "../src/command-hooks/executor.js";
import { buildPayload } from "../src/command-hooks/payload.js";
import { configureHandler } from "../src/command-hooks/sources.js";

const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const projectDir = tmpdir();
const opts = { projectDir, sessionId: "bench-session", env: { PATH: process.env.PATH } };
const payload = buildPayload(
  "PreToolUse",
  { sessionId: "bench-session", transcriptPath: "/dev/null", cwd: projectDir, runId: "r", depth: 0 },
  { toolName: "Bash", toolInput: { command: "npm test" }, toolUseId: "tu-1" },
);
const input = `${JSON.stringify(payload)}\n`;

function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/** Median ms per op of each subject, `rounds` interleaved rounds of `n` sequential ops. */
async function compare(subjects: (() => Promise<unknown>)[], n: number, rounds: number): Promise<number[]> {
  for (const s of subjects) for (let i = 0; i < 3; i++) await s();
  const samples = subjects.map(() => [] as number[]);
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < subjects.length; k++) {
      const i = (k + r) % subjects.length;
      gc();
      const t = performance.now();
      for (let j = 0; j < n; j++) await (subjects[i] as () => Promise<unknown>)();
      samples[i]?.push((performance.now() - t) / n);
    }
  }
  return samples.map(median);
}

function ratioLine(label: string, subject: number, baseline: number, goal: number): void {
  const r = subject / baseline;
  const missed = r <= goal ? "" : " MISSED";
  console.log(
    `${label}: ${r.toFixed(2)}x (goal <= ${goal}x${missed}) (${subject.toFixed(2)} ms vs ${baseline.toFixed(2)} ms)`,
  );
}

// The same environment the hook gets, so the comparison measures the runtime, not env size.
const directEnv = hookEnv(opts);

/** Spawns the program the way a careful caller would without Gatehouse: pipe stdin, collect output. */
function directSpawn(script: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/sh", ["-c", script], {
      cwd: projectDir,
      env: directEnv,
      stdio: ["pipe", "pipe", "pipe"],
    });
    child.stdout.on("data", () => {});
    child.stderr.on("data", () => {});
    child.stdin.on("error", () => {});
    child.stdin.end(input);
    child.on("error", reject);
    child.on("close", () => resolve());
  });
}

const shellHandler = (command: string) =>
  configureHandler({ type: "command", command }, { event: "PreToolUse", matcher: "Bash" });

async function oneVsDirect(): Promise<void> {
  const script = "cat >/dev/null";
  const handler = shellHandler(script);
  const [hook, direct] = await compare(
    [() => runCommandHandler(handler, payload, opts), () => directSpawn(script)],
    20,
    15,
  );
  ratioLine("P4 one command hook vs direct spawn", hook as number, direct as number, 1.1);
}

async function eightVsOne(): Promise<void> {
  // A hook that waits ~50 ms on I/O (a policy lookup, a linter); distinct commands so none dedup.
  const slow = Array.from({ length: 8 }, (_, i) => shellHandler(`cat >/dev/null; sleep 0.05 # hook ${i}`));
  const [eight, one] = await compare(
    [
      () => runCommandHooks("PreToolUse", "Bash", payload, slow, opts),
      () => runCommandHooks("PreToolUse", "Bash", payload, slow.slice(0, 1), opts),
    ],
    4,
    7,
  );
  ratioLine("P4 8 matching hooks vs 1 (50 ms hooks)", eight as number, one as number, 1.5);
  const quick = Array.from({ length: 8 }, (_, i) => shellHandler(`cat >/dev/null # hook ${i}`));
  const [eightQuick, oneQuick] = await compare(
    [
      () => runCommandHooks("PreToolUse", "Bash", payload, quick, opts),
      () => runCommandHooks("PreToolUse", "Bash", payload, quick.slice(0, 1), opts),
    ],
    5,
    9,
  );
  const r = (eightQuick as number) / (oneQuick as number);
  console.log(
    `P4 8 matching hooks vs 1 (instant hooks, spawn-bound; info): ${r.toFixed(2)}x (${(eightQuick as number).toFixed(2)} ms vs ${(oneQuick as number).toFixed(2)} ms)`,
  );
}

async function httpLoopback(): Promise<void> {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => res.end(""));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  const handler = configureHandler({ type: "http", url }, { event: "PreToolUse" });
  for (let i = 0; i < 200; i++) await runCommandHandler(handler, payload, opts);
  const times: number[] = [];
  for (let i = 0; i < 2000; i++) {
    const t = performance.now();
    await runCommandHandler(handler, payload, opts);
    times.push(performance.now() - t);
  }
  server.close();
  const p50 = median(times);
  const missed = p50 <= 1 ? "" : " MISSED";
  console.log(`P4 http hook on loopback p50: ${p50.toFixed(3)} ms (goal <= 1 ms${missed})`);
}

await oneVsDirect();
await eightVsOne();
await httpLoopback();
