// gatehouse serve benchmarks (issue 14, P9–P10, SSE, fault run), on loopback with the scripted model.
//
// P9: a non-streamed run through `serve` (POST /v1/sessions/{id}/runs, keep-alive) against the same
//     run in process (gatehouse.run on the same Gatehouse), rounds interleaved; each run in a fresh
//     session made outside the timing. HTTP overhead = serve − in process, at p50 and p99.
// SSE: time to the first byte of the body and to the first assistant text, with and without an
//     output gate, for a model that streams 10 chunks 20 ms apart.
// P10: runs/s with 1 and then 2 `gatehouse serve` processes on one PostgreSQL (a fresh database),
//     many sessions, same-session requests sent concurrently and spread over the instances; then
//     every session is checked: 0 lost or duplicated turns, 0 interleaved runs.
// Fault: the same load on 2 instances; one is SIGKILLed mid-load; one more turn per session on
//     the survivor recovers the interrupted runs; every session must be consistent and no row of
//     the database may hold the unchecked output of a recovered run.
//
//   GATEHOUSE_TEST_DATABASE_URL=postgres://… node --import tsx bench/server.bench.ts   (npm run bench -- server)
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { LanguageModelV3, LanguageModelV3StreamPart } from "@ai-sdk/provider";
import pg from "pg";
import { postgresRows, sinkHas } from "../harness/sinks.js";
import { createGatehouse, type Gatehouse } from "../src/assembly/gatehouse.js";
import { createScriptedModel } from "../src/models/index.js";
import { definePlugin } from "../src/plugins/index.js";
import { openService, type RunningServer } from "../src/server/index.js";
import { openMemoryStore } from "../src/store/index.js";

const MAIN = fileURLToPath(new URL("../src/cli/main.ts", import.meta.url));
const silent = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const agent = new Agent({ keepAlive: true, maxSockets: 64 });
const line = (text: string) => process.stdout.write(`${text}\n`);

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

interface Response {
  readonly status: number;
  readonly body: string;
  /** ms from the request to the first body byte, and to the first chunk holding `marker`. */
  readonly firstByteMs: number;
  readonly markerMs: number | undefined;
}

/** One HTTP request on a keep-alive agent (node:http, so the client adds little of its own). */
function call(
  url: string,
  method: string,
  path: string,
  body?: unknown,
  marker?: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  const started = performance.now();
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${path}`,
      {
        method,
        agent,
        headers: {
          ...(payload ? { "content-type": "application/json", "content-length": Buffer.byteLength(payload) } : {}),
          ...headers,
        },
      },
      (res) => {
        let text = "";
        let firstByteMs: number | undefined;
        let markerMs: number | undefined;
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          firstByteMs ??= performance.now() - started;
          text += chunk;
          if (marker !== undefined && markerMs === undefined && text.includes(marker))
            markerMs = performance.now() - started;
        });
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, body: text, firstByteMs: firstByteMs ?? 0, markerMs }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

async function inProcessServer(
  gatehouse: Gatehouse,
  service: Awaited<ReturnType<typeof openService>>,
): Promise<RunningServer> {
  return service.listen(gatehouse, { host: "127.0.0.1", port: 0 });
}

// ---------------------------------------------------------------- P9

async function p9(): Promise<void> {
  // One store for the Gatehouse and the server's records, as `gatehouse serve` has.
  const shared = await openMemoryStore();
  const service = await openService({
    store: shared,
    config: { limits: { runsPerPrincipal: 64, runsPerInstance: 64 } },
  });
  const gatehouse = createGatehouse({
    model: "scripted:echo",
    store: shared,
    logger: silent,
    approver: service.approver,
  });
  const server = await inProcessServer(gatehouse, service);
  const { store } = gatehouse;
  const ROUNDS = 3000;
  const http: number[] = [];
  const local: number[] = [];
  const session = async () =>
    (JSON.parse((await call(server.url, "POST", "/v1/sessions", {})).body) as { id: string }).id;
  for (let i = 0; i < ROUNDS + 300; i++) {
    const a = await session();
    let t = performance.now();
    const r = await call(server.url, "POST", `/v1/sessions/${a}/runs`, { prompt: `hello ${i}` });
    const httpMs = performance.now() - t;
    if (r.status !== 200) throw new Error(`P9: HTTP ${r.status} ${r.body}`);
    const b = (await store.createSession()).id;
    t = performance.now();
    await gatehouse.run({ prompt: `hello ${i}`, sessionId: b });
    const localMs = performance.now() - t;
    if (i >= 300) {
      http.push(httpMs);
      local.push(localMs);
    }
  }
  const [h50, h99, l50, l99] = [
    percentile(http, 50),
    percentile(http, 99),
    percentile(local, 50),
    percentile(local, 99),
  ];
  line(
    `P9 in process: p50 ${l50.toFixed(3)} ms, p99 ${l99.toFixed(3)} ms (${ROUNDS} runs, memory store, scripted:echo)`,
  );
  line(`P9 through serve: p50 ${h50.toFixed(3)} ms, p99 ${h99.toFixed(3)} ms`);
  line(
    `P9 HTTP overhead added: p50 ${(h50 - l50).toFixed(3)} ms, p99 ${(h99 - l99).toFixed(3)} ms (goal: ≤ 1 ms at p50)`,
  );
  await server.close(0);
  await gatehouse.close();
}

// ---------------------------------------------------------------- SSE time to first byte

/** The scripted model with each stream part after the first text delayed: a model that takes time to answer. */
function slowModel(chunkMs: number): LanguageModelV3 {
  const scripted = createScriptedModel({
    runs: [{ turns: [{ text: "one two three four five six seven eight nine ten", chunks: 10 }] }],
  });
  return {
    ...scripted,
    specificationVersion: "v3",
    provider: scripted.provider,
    modelId: scripted.modelId,
    supportedUrls: scripted.supportedUrls,
    doGenerate: (o) => scripted.doGenerate(o),
    async doStream(options) {
      const result = await scripted.doStream(options);
      const reader = result.stream.getReader();
      const stream = new ReadableStream<LanguageModelV3StreamPart>({
        async pull(controller) {
          const { value, done } = await reader.read();
          if (done) return controller.close();
          if (value.type === "text-delta") await new Promise((r) => setTimeout(r, chunkMs));
          controller.enqueue(value);
        },
      });
      return { ...result, stream };
    },
  };
}

async function sseFirstByte(): Promise<void> {
  for (const gated of [false, true]) {
    const shared = await openMemoryStore();
    const service = await openService({ store: shared });
    const gate = definePlugin({ id: "gate", setup: (api) => api.on("before_response_emit", () => undefined) });
    const gatehouse = createGatehouse({
      model: slowModel(20),
      store: shared,
      logger: silent,
      approver: service.approver,
      ...(gated ? { plugins: [gate] } : {}),
    });
    const server = await inProcessServer(gatehouse, service);
    const firstByte: number[] = [];
    const firstText: number[] = [];
    for (let i = 0; i < 25; i++) {
      const id = (JSON.parse((await call(server.url, "POST", "/v1/sessions", {})).body) as { id: string }).id;
      const r = await call(
        server.url,
        "POST",
        `/v1/sessions/${id}/runs`,
        { prompt: "hi", stream: true },
        gated ? "event: final" : "event: text-delta",
      );
      firstByte.push(r.firstByteMs);
      firstText.push(r.markerMs ?? Number.NaN);
    }
    line(
      `SSE ${gated ? "with an output gate" : "without an output gate"}: first byte p50 ${percentile(firstByte, 50).toFixed(2)} ms, first assistant text p50 ${percentile(firstText, 50).toFixed(1)} ms (model: 10 chunks, 20 ms apart)`,
    );
    await server.close(0);
    await gatehouse.close();
  }
}

// ---------------------------------------------------------------- P10 and the fault run

const FAULT_SCRIPT = {
  runs: [
    {
      turns: [
        { text: "UNCHECKED {{lastUserMessage}}", toolCalls: [{ name: "Slow", input: {} }] },
        { text: "final {{lastUserMessage}}" },
      ],
    },
  ],
};
/** An output gate (so output counts only once checked) and a tool that takes a few ms. */
const FAULT_PLUGIN = `
export default {
  id: "bench",
  setup(api) {
    api.on("before_response_emit", () => undefined);
    api.registerTool({
      name: "Slow",
      description: "takes a little while",
      inputSchema: { type: "object", properties: {} },
      async execute() {
        await new Promise((r) => setTimeout(r, 5));
        return "ok";
      },
    });
  },
};
`;

async function freshDatabase(base: string, name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

async function dropDatabase(base: string, name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}

interface Instance {
  readonly child: ChildProcess;
  readonly url: string;
}

async function startInstance(dir: string): Promise<Instance> {
  const child = spawn(process.execPath, ["--import", import.meta.resolve("tsx"), MAIN, "serve", "--port", "0"], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "", HOME: dir },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr?.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
      const m = /serving on (http:\/\/\S+)/.exec(stderr);
      if (m) resolve(m[1] as string);
    });
    child.on("close", () => reject(new Error(`serve exited: ${stderr}`)));
  });
  return { child, url };
}

function project(database: string): string {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-bench-serve-"));
  writeFileSync(
    join(dir, "gatehouse.json"),
    JSON.stringify({
      model: "scripted:model.json",
      store: database,
      plugins: [{ path: "./bench.mjs" }],
      server: { limits: { runsPerPrincipal: 10_000, runsPerInstance: 10_000 } },
    }),
  );
  writeFileSync(join(dir, "model.json"), JSON.stringify(FAULT_SCRIPT));
  writeFileSync(join(dir, "bench.mjs"), FAULT_PLUGIN);
  return dir;
}

interface Load {
  readonly sessions: string[];
  readonly sent: Map<string, string[]>;
  completed: number;
  errors: number;
}

/**
 * `turns` rounds; in each, every session gets `perSession` requests at once, spread over the
 * instances (so same-session requests race on different instances); `concurrency` requests in
 * flight at most.
 */
async function drive(
  label: string,
  instances: readonly Instance[],
  load: Load,
  turns: number,
  perSession: number,
  concurrency: number,
  onHalf?: () => void,
): Promise<number> {
  const jobs: { url: string; session: string; prompt: string }[] = [];
  let k = 0;
  for (let t = 0; t < turns; t++)
    for (const session of load.sessions)
      for (let j = 0; j < perSession; j++) {
        const prompt = `${label}-${session.slice(0, 8)}-${t}-${j}`;
        jobs.push({ url: (instances[k++ % instances.length] as Instance).url, session, prompt });
      }
  let next = 0;
  let done = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < jobs.length) {
      const job = jobs[next++] as (typeof jobs)[number];
      try {
        const r = await call(job.url, "POST", `/v1/sessions/${job.session}/runs`, { prompt: job.prompt });
        if (r.status === 200) {
          load.sent.get(job.session)?.push(job.prompt);
          load.completed++;
        } else load.errors++;
      } catch {
        load.errors++;
      }
      if (++done === Math.floor(jobs.length / 2)) onHalf?.();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return jobs.length / ((performance.now() - started) / 1000);
}

interface Check {
  lost: number;
  duplicated: number;
  interleaved: number;
  running: number;
  recovered: number;
  recoveredIds: string[];
}

/** Every session as stored: each completed request's prompt once, each run's messages contiguous, no run left running. */
async function checkSessions(url: string, load: Load): Promise<Check> {
  const c: Check = { lost: 0, duplicated: 0, interleaved: 0, running: 0, recovered: 0, recoveredIds: [] };
  for (const session of load.sessions) {
    const detail = JSON.parse((await call(url, "GET", `/v1/sessions/${session}`)).body) as {
      runs: { id: string; status: string }[];
      messages: { runId: string; role: string; parts: { type: string; text?: string }[] }[];
    };
    const prompts = detail.messages.filter((m) => m.role === "user").map((m) => m.parts[0]?.text ?? "");
    for (const p of load.sent.get(session) ?? []) {
      const n = prompts.filter((x) => x === p).length;
      if (n === 0) c.lost++;
      if (n > 1) c.duplicated++;
    }
    const seen = new Set<string>();
    let last = "";
    for (const m of detail.messages) {
      if (m.runId !== last && seen.has(m.runId)) c.interleaved++;
      seen.add(m.runId);
      last = m.runId;
    }
    for (const r of detail.runs) {
      if (r.status === "running") c.running++;
      if (r.status === "blocked") {
        c.recovered++;
        c.recoveredIds.push(r.id);
      }
    }
  }
  return c;
}

async function p10(base: string): Promise<void> {
  for (const count of [1, 2]) {
    const name = `gh_bench_p10_${process.pid}_${count}`;
    const database = await freshDatabase(base, name);
    const dir = project(database);
    const instances: Instance[] = [];
    try {
      for (let i = 0; i < count; i++) instances.push(await startInstance(dir));
      const load: Load = { sessions: [], sent: new Map(), completed: 0, errors: 0 };
      for (let s = 0; s < 40; s++) {
        const id = (
          JSON.parse((await call((instances[s % count] as Instance).url, "POST", "/v1/sessions", {})).body) as {
            id: string;
          }
        ).id;
        load.sessions.push(id);
        load.sent.set(id, []);
      }
      await drive("warm", instances, load, 1, 1, 16);
      const cpu = process.cpuUsage();
      const rate = await drive("load", instances, load, 4, 2, 32);
      const used = process.cpuUsage(cpu);
      const c = await checkSessions((instances[0] as Instance).url, load);
      line(
        `P10 ${count} instance${count > 1 ? "s" : ""} on one PostgreSQL: ${rate.toFixed(1)} runs/s (40 sessions, 320 runs with 2 concurrent requests per session${count > 1 ? " on different instances" : ""}, 32 in flight); lost ${c.lost}, duplicated ${c.duplicated}, interleaved ${c.interleaved}, left running ${c.running}, errors ${load.errors}; load generator CPU ${((used.user + used.system) / 1000).toFixed(0)} ms; load average ${loadavg()[0]?.toFixed(2)}`,
      );
    } finally {
      for (const i of instances) i.child.kill("SIGTERM");
      await Promise.all(
        instances.map((i) => new Promise((r) => (i.child.exitCode !== null ? r(null) : i.child.once("close", r)))),
      );
      rmSync(dir, { recursive: true, force: true });
      await dropDatabase(base, name);
    }
  }
}

async function faultRun(base: string): Promise<void> {
  const name = `gh_bench_fault_${process.pid}`;
  const database = await freshDatabase(base, name);
  const dir = project(database);
  const instances: Instance[] = [];
  try {
    instances.push(await startInstance(dir), await startInstance(dir));
    const [a, b] = instances as [Instance, Instance];
    const load: Load = { sessions: [], sent: new Map(), completed: 0, errors: 0 };
    for (let s = 0; s < 40; s++) {
      const id = (JSON.parse((await call(b.url, "POST", "/v1/sessions", {})).body) as { id: string }).id;
      load.sessions.push(id);
      load.sent.set(id, []);
    }
    await drive("load", instances, load, 4, 2, 32, () => a.child.kill("SIGKILL"));
    // One more turn per session on the survivor: its admission recovers what the dead instance left running.
    await drive("after", [b], load, 1, 1, 16);
    const c = await checkSessions(b.url, load);
    // The unchecked output of a recovered run is "UNCHECKED <its prompt>": no row may hold it.
    const rows = await postgresRows(database, "public");
    let left = 0;
    let controls = 0;
    for (const session of load.sessions) {
      const detail = JSON.parse((await call(b.url, "GET", `/v1/sessions/${session}`)).body) as {
        messages: { runId: string; role: string; parts: { text?: string }[] }[];
      };
      for (const m of detail.messages) {
        if (m.role !== "user") continue;
        const found = rows.some((s) => sinkHas(s, `UNCHECKED ${m.parts[0]?.text}`));
        if (c.recoveredIds.includes(m.runId)) left += found ? 1 : 0;
        else controls += found ? 1 : 0;
      }
    }
    line(
      `Fault run (2 instances, SIGKILL one at half the load): ${load.completed} runs answered, ${load.errors} requests to the dead instance failed (in flight at the kill, or sent after it), ${c.recovered} interrupted runs recovered by the survivor; lost ${c.lost}, duplicated ${c.duplicated}, interleaved ${c.interleaved}, left running ${c.running}; unchecked output of recovered runs found in the database (every row scanned): ${left} (control: checked output of completed runs found: ${controls})`,
    );
  } finally {
    for (const i of instances) if (i.child.exitCode === null && i.child.signalCode === null) i.child.kill("SIGTERM");
    await Promise.all(
      instances.map(
        (i) =>
          new Promise((r) =>
            i.child.exitCode !== null || i.child.signalCode !== null ? r(null) : i.child.once("close", r),
          ),
      ),
    );
    rmSync(dir, { recursive: true, force: true });
    await dropDatabase(base, name);
  }
}

const base = process.env.GATEHOUSE_TEST_DATABASE_URL;
const only = process.argv[2];
if (!only || only === "p9") await p9();
if (!only || only === "sse") await sseFirstByte();
if (base) {
  if (!only || only === "p10") await p10(base);
  if (!only || only === "fault") await faultRun(base);
} else line("P10 and the fault run need GATEHOUSE_TEST_DATABASE_URL (PostgreSQL): skipped");
agent.destroy();
