// Sandbox bench (issue 25): the cost of one Bash tool call in the sandbox (bubblewrap, the
// network proxy, the seccomp filter) against the same call unsandboxed, as a ratio of medians
// timed in the same rounds. The command is `true`, so the figure is the sandbox's own cost per
// call; the runtime's one-time start (its proxies) is paid in the warm-up and reported apart.
//
//   node --import tsx bench/sandbox.bench.ts      (or: npm run bench -- sandbox)
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createBashSandbox } from "../src/sandbox/bash.js";
import { resetSandbox, sandboxAvailability } from "../src/sandbox/runtime.js";
import { DEFAULT_SANDBOX_SETTINGS } from "../src/sandbox/settings.js";
import { createBashTool } from "../src/tools/builtin/bash.js";

const ROUNDS = Number(process.env.SANDBOX_BENCH_ROUNDS ?? 15);
const availability = sandboxAvailability();
if (!availability.available) {
  console.log(`sandbox.bench: skipped, the sandbox is unavailable here (${availability.reason})`);
  process.exit(0);
}

const project = realpathSync(mkdtempSync(join(tmpdir(), "gatehouse-bench-sandbox-")));
const ctx = { cwd: project, signal: new AbortController().signal };
const sandboxed = createBashTool({
  sandbox: createBashSandbox({ projectDir: project, settings: DEFAULT_SANDBOX_SETTINGS }),
});
const plain = createBashTool();

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

async function time(tool: typeof plain): Promise<number> {
  const t0 = performance.now();
  await tool.execute({ command: "true" }, ctx);
  return performance.now() - t0;
}

const first = await time(sandboxed);
await time(plain);
const sandboxedMs: number[] = [];
const plainMs: number[] = [];
for (let i = 0; i < ROUNDS; i++) {
  plainMs.push(await time(plain));
  sandboxedMs.push(await time(sandboxed));
}
const ratio = median(sandboxedMs) / median(plainMs);
console.log(
  `sandbox.bench: Bash \`true\`, ${ROUNDS} rounds (load ${loadavg()[0]?.toFixed(1)}): ` +
    `unsandboxed median ${median(plainMs).toFixed(1)} ms, sandboxed median ${median(sandboxedMs).toFixed(1)} ms ` +
    `(best ${Math.min(...sandboxedMs).toFixed(1)} ms); ratio ${ratio.toFixed(1)}x. ` +
    `First sandboxed call (starts the runtime's proxies): ${first.toFixed(0)} ms.`,
);
await resetSandbox();
rmSync(project, { recursive: true, force: true });
