// `gatehouse serve` under a churn of sessions: create, run (with a plugin and a command hook), delete,
// for --minutes (default 60). It samples the server's own heap from /metrics
// (gatehouse_nodejs_heap_size_used_bytes) every 15 s and prints, per 5-minute window, the lowest
// sample (the heap after collection, near enough) with the sessions done so far. Flat means the
// last window's floor is within noise of the first's; the figure is printed, never asserted.
//
//   node --import tsx bench/serve-churn.ts [--minutes 60] [--concurrency 2]
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: { minutes: { type: "string", default: "60" }, concurrency: { type: "string", default: "2" } },
});
const minutes = Number(values.minutes);
const concurrency = Number(values.concurrency);
const CLI = fileURLToPath(new URL("../dist/cli/main.js", import.meta.url));
const line = (text: string) => process.stdout.write(`${text}\n`);

const dir = mkdtempSync(join(tmpdir(), "gh-churn-"));
writeFileSync(
  join(dir, "policy.mjs"),
  `export default { id: "churn-policy", setup(api) { api.on("before_response_emit", (e) => ({ allContent: e.allContent.map((t) => t.replaceAll("secret", "[x]")) })); } };\n`,
);
writeFileSync(
  join(dir, "gatehouse.json"),
  JSON.stringify({ model: "scripted:echo", plugins: [{ path: "./policy.mjs" }] }),
);
writeFileSync(
  join(dir, "settings.json"),
  JSON.stringify({ hooks: { UserPromptSubmit: [{ hooks: [{ type: "command", command: "cat >/dev/null" }] }] } }),
);

function startServer(): Promise<{ child: ChildProcess; base: string }> {
  const child = spawn(process.execPath, [CLI, "serve", "--port", "0", "--settings", join(dir, "settings.json")], {
    cwd: dir,
    env: { ...process.env, GATEHOUSE_TRUST_WORKSPACE: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) resolve({ child, base: `http://127.0.0.1:${m[1]}` });
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code) => reject(new Error(`serve exited ${code}: ${out}`)));
  });
}

async function json(base: string, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(base + path, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.status === 204 ? undefined : res.json();
}

async function heapUsed(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const m = /^gatehouse_nodejs_heap_size_used_bytes (\d+(?:\.\d+)?)/m.exec(text);
  if (!m) throw new Error("no gatehouse_nodejs_heap_size_used_bytes in /metrics");
  return Number(m[1]);
}

const { child, base } = await startServer();
const endAt = Date.now() + minutes * 60_000;
let sessions = 0;
let failures = 0;

async function worker(): Promise<void> {
  while (Date.now() < endAt) {
    try {
      const session = (await json(base, "POST", "/v1/sessions", {})) as { id: string };
      await json(base, "POST", `/v1/sessions/${session.id}/runs`, { prompt: `churn ${sessions} secret` });
      await json(base, "DELETE", `/v1/sessions/${session.id}`);
      sessions++;
    } catch (err) {
      failures++;
      if (failures < 5) line(`failure: ${(err as Error).message}`);
    }
  }
}

const windowMs = 5 * 60_000;
const started = Date.now();
const floors: { window: number; heapMiB: number; sessions: number }[] = [];
const sampler = setInterval(async () => {
  const window = Math.floor((Date.now() - started) / windowMs);
  const heapMiB = (await heapUsed(base).catch(() => Number.NaN)) / 2 ** 20;
  const current = floors[window];
  if (!current) floors[window] = { window, heapMiB, sessions };
  else if (heapMiB < current.heapMiB) floors[window] = { window, heapMiB, sessions };
}, 15_000);

await Promise.all(Array.from({ length: concurrency }, worker));
clearInterval(sampler);
child.kill("SIGTERM");
for (const f of floors.filter(Boolean)) {
  line(
    `minutes ${f.window * 5}-${f.window * 5 + 5}: heap floor ${f.heapMiB.toFixed(1)} MiB after ${f.sessions} sessions`,
  );
}
const first = floors.find(Boolean);
const last = floors.at(-1);
if (first && last) {
  line(
    `serve churn: ${sessions} sessions created, run and deleted in ${minutes} min (${failures} failures); heap floor ${first.heapMiB.toFixed(1)} → ${last.heapMiB.toFixed(1)} MiB (${(last.heapMiB / first.heapMiB).toFixed(2)}×)`,
  );
}
rmSync(dir, { recursive: true, force: true });
