import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createGatehouse } from "../src/assembly/gatehouse.js";
import { createScriptedModel } from "../src/models/index.js";
import { openStore } from "../src/store/index.js";
import type { Message, SessionStore } from "../src/store/types.js";
import { captureLogger } from "./capture.js";
import { r3Scenario } from "./r3-plan.js";
import { forScenario } from "./random.js";
import type { BlockKind, Scenario } from "./scenario.js";
import { dropSchema, filesUnder, postgresRows, type Sink, sinkHas } from "./sinks.js";

/**
 * R3 — crashes. A child process runs R1 scenarios on one store while the harness kills it with
 * SIGKILL at a random moment. After each kill: the store opens; every finished run is whole; a
 * run left "running" by the dead process is counted (and must not hold content a verdict
 * already removed); no content a committed verdict removed is on disk; the next run on every
 * session the child touched completes, with a history a provider accepts (no tool call without
 * its result).
 */

const CHILD = fileURLToPath(new URL("./r3-child.ts", import.meta.url));

/** Verdicts that act before their content is written anywhere. */
const NEVER_WRITTEN: ReadonlySet<BlockKind> = new Set([
  "prompt-gate",
  "input-gate",
  "ups",
  "compact-block",
  "call-rewrite",
  "call-block",
  "deny-rule",
  "permreq-deny",
  "managed-deny",
  // before_message_write keeps these out of the store (issue 30).
  "summary-block",
  "write-block",
  "replacement-block",
  "ask-denied",
  "ask-unattended",
  "parser-refusal",
  // Masked before the store sees it; kept out of the process by the sandbox.
  "masked-secret",
  "sandbox-read",
  "sandbox-write",
  "sandbox-host",
]);

export interface R3Options {
  readonly seed: number;
  readonly kills: number;
  /** The first kill's number (default 0): kills [firstKill, firstKill + kills) are made, so a run can be split in parts. */
  readonly firstKill?: number;
  /** Latest kill, in ms after the child is ready (default 500). */
  readonly maxDelayMs?: number;
  readonly postgresUrl?: string;
  /** Every n-th kill runs on PostgreSQL (when a URL is given); default 3. */
  readonly postgresEvery?: number;
  readonly onKill?: (report: KillReport) => void;
}

export interface KillReport {
  readonly kill: number;
  readonly store: "sqlite" | "postgres";
  readonly delayMs: number;
  readonly scenarios: number;
  readonly runsStarted: number;
  readonly runsFinished: number;
  /** Runs the kill left with status "running". */
  readonly interrupted: number;
  /** Interrupted runs whose not-yet-gated content is still stored. */
  readonly ungatedStored: number;
  readonly problems: readonly string[];
}

export interface R3Figures {
  readonly kills: number;
  readonly runsStarted: number;
  readonly runsFinished: number;
  readonly interrupted: number;
  readonly ungatedStored: number;
  readonly failures: number;
  readonly failed: readonly KillReport[];
  readonly ms: number;
}

export async function runR3(options: R3Options): Promise<R3Figures> {
  const started = performance.now();
  const root = mkdtempSync(join(tmpdir(), "gatehouse-r3-"));
  const reports: KillReport[] = [];
  // Lanes run side by side, each with a store of its own kept across its kills (every crash lands
  // on what the earlier ones left); every third kill goes to PostgreSQL when there is one.
  const pgEvery = options.postgresEvery ?? 3;
  const lanes: { kind: "sqlite" | "postgres"; dir: string; schema: string; kills: number[]; next: number }[] = [];
  const first = options.firstKill ?? 0;
  for (let kill = first; kill < first + options.kills; kill++) {
    const pg = options.postgresUrl !== undefined && kill % pgEvery === pgEvery - 1;
    const name = pg ? "postgres" : `sqlite-${kill % 2}`;
    let lane = lanes.find((l) => l.dir.endsWith(name));
    if (!lane) {
      lane = {
        kind: pg ? "postgres" : "sqlite",
        dir: join(root, name),
        schema: `gh_r3_${process.pid}_${options.seed}`,
        kills: [],
        next: lanes.length * 100_000,
      };
      lanes.push(lane);
    }
    lane.kills.push(kill);
  }
  try {
    await Promise.all(
      lanes.map(async (lane) => {
        for (const kill of lane.kills) {
          const report = await killOnce(options, kill, lane.kind, lane.dir, lane.next, lane.schema);
          lane.next = report.nextIndex;
          reports.push(report.report);
          options.onKill?.(report.report);
        }
      }),
    );
  } finally {
    if (options.postgresUrl)
      await dropSchema(options.postgresUrl, `gh_r3_${process.pid}_${options.seed}`).catch(() => undefined);
    rmSync(root, { recursive: true, force: true });
  }
  reports.sort((a, b) => a.kill - b.kill);
  const failed = reports.filter((r) => r.problems.length > 0);
  const sum = (f: (r: KillReport) => number) => reports.reduce((n, r) => n + f(r), 0);
  return {
    kills: reports.length,
    runsStarted: sum((r) => r.runsStarted),
    runsFinished: sum((r) => r.runsFinished),
    interrupted: sum((r) => r.interrupted),
    ungatedStored: sum((r) => r.ungatedStored),
    failures: sum((r) => r.problems.length),
    failed,
    ms: performance.now() - started,
  };
}

interface Started {
  readonly index: number;
  readonly tag: string;
  readonly sessionId: string;
  readonly runId: string;
}

async function killOnce(
  options: R3Options,
  kill: number,
  kind: "sqlite" | "postgres",
  dir: string,
  from: number,
  schema: string,
): Promise<{ report: KillReport; nextIndex: number }> {
  const rng = forScenario(options.seed ^ 0x5eed, kill);
  const delayMs = rng.int(0, options.maxDelayMs ?? 500);
  const args = [CHILD, String(options.seed), String(from), dir];
  if (kind === "postgres") args.push(options.postgresUrl as string, schema);
  const lines = await runAndKill(args, delayMs);
  const problems: string[] = [];
  const scenarios = lines.filter((l) => l.startsWith("SCENARIO ")).map((l) => Number(l.split(" ")[1]));
  const started: Started[] = lines
    .filter((l) => l.startsWith("RUN "))
    .map((l) => {
      const [, index, tag, sessionId, runId] = l.split(" ");
      return { index: Number(index), tag: tag as string, sessionId: sessionId as string, runId: runId as string };
    });
  const finished = lines.filter((l) => l.startsWith("DONE ")).length;

  let store: SessionStore;
  try {
    store = await openStore(
      kind === "postgres"
        ? {
            kind: "postgres",
            url: options.postgresUrl as string,
            schema,
            transcriptDir: join(dir, "data", "transcripts"),
          }
        : { kind: "sqlite", path: join(dir, "data", "gatehouse.db") },
    );
  } catch (error) {
    problems.push(`the store does not open after the kill: ${(error as Error).message}`);
    return {
      report: {
        kill,
        store: kind,
        delayMs,
        scenarios: scenarios.length,
        runsStarted: started.length,
        runsFinished: finished,
        interrupted: 0,
        ungatedStored: 0,
        problems,
      },
      nextIndex: (scenarios.at(-1) ?? from) + 1,
    };
  }
  let interrupted = 0;
  let ungatedStored = 0;
  try {
    // What is on disk now that the store has opened (and, for SQLite, replayed or cleared its WAL).
    const readDisk = async (): Promise<Sink[]> =>
      kind === "postgres"
        ? await postgresRows(options.postgresUrl as string, schema)
        : filesUnder(join(dir, "data")).map((f) => ({ name: f.path, bytes: f.bytes }));
    const disk = await readDisk();
    // Where a canary is found, relative to the store's folder (or the PostgreSQL table), for the report.
    const foundIn = (sinks: readonly Sink[], needle: string) =>
      sinks.find((s) => sinkHas(s, needle))?.name.replace(`${dir}/`, "");
    const ungated: { canary: string; what: string }[] = [];
    const sessions = new Set(started.map((s) => s.sessionId));
    for (const index of scenarios) {
      const scenario = r3Scenario(options.seed, index);
      const mine = started.filter((s) => s.index === index);
      const runIds = await runIdsByTag(store, scenario, mine);
      const statuses = new Map<string, string>();
      for (const runId of runIds.values()) statuses.set(runId, (await store.getRun(runId))?.status ?? "missing");
      for (const target of scenario.targets) {
        const runId = runIds.get(target.runTag);
        if (runId === undefined) continue; // never started: its content was never written
        const status = statuses.get(runId);
        // Never written: a blocked input, a withheld tool output or failure, a refused or rewritten
        // call's input, /compact's blocked instructions, a reply nothing stores. Written, then removed
        // once the verdict runs: a blocked, rewritten or undelivered answer (a claim's too), a
        // sub-agent's answer the parent withholds.
        const neverWritten =
          NEVER_WRITTEN.has(target.kind) ||
          target.stored === false ||
          ((target.kind === "withhold-plugin" || target.kind === "withhold-ptu") &&
            !target.where.includes("sub-agent"));
        const applied = neverWritten || status === "blocked" || status === "completed";
        const where = foundIn(disk, target.canary);
        if (where === undefined) continue;
        if (applied)
          problems.push(
            `${target.kind} of ${target.where} in run ${target.runTag} (${status}) is on disk after the kill, in ${where}`,
          );
        else {
          ungatedStored++;
          ungated.push({ canary: target.canary, what: `${target.kind} of ${target.where} in run ${target.runTag}` });
        }
      }
    }
    // Runs the kill left "running" are counted; every finished one must be whole.
    for (const run of await allRuns(store, [...sessions])) {
      if (run.status === "running") interrupted++;
      else {
        const dangling = danglingCalls(await store.runMessages(run.id));
        if (dangling.length)
          problems.push(`finished run ${run.id} (${run.status}) has calls without results: ${dangling.join(", ")}`);
      }
    }
    problems.push(...(await nextRunWorks(store, [...sessions], dir)));
    // The next run recovered what the dead process left: nothing running, nothing unchecked on disk.
    for (const run of await allRuns(store, [...sessions]))
      if (run.status === "running") problems.push(`run ${run.id} is still running after the next run on its session`);
    const after = await readDisk();
    for (const u of ungated) {
      const where = foundIn(after, u.canary);
      if (where !== undefined) problems.push(`${u.what}: unchecked output still on disk after recovery, in ${where}`);
    }
  } finally {
    await store.close();
  }
  return {
    report: {
      kill,
      store: kind,
      delayMs,
      scenarios: scenarios.length,
      runsStarted: started.length,
      runsFinished: finished,
      interrupted,
      ungatedStored,
      problems,
    },
    nextIndex: (scenarios.at(-1) ?? from - 1) + 1,
  };
}

/** Spawns the child, waits until it is ready, lets it work `delayMs`, kills it; returns its stdout lines. */
function runAndKill(args: string[], delayMs: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    let timer: NodeJS.Timeout | undefined;
    const guard = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
      if (timer === undefined && out.includes("READY\n")) timer = setTimeout(() => child.kill("SIGKILL"), delayMs);
    });
    child.stderr.on("data", (chunk: Buffer) => {
      err += chunk.toString("utf8");
    });
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      clearTimeout(guard);
      if (timer) clearTimeout(timer);
      if (signal !== "SIGKILL")
        reject(new Error(`the R3 child exited on its own (${code ?? signal}): ${err.slice(-2000)}`));
      // A line cut by the kill is not a whole line.
      else resolve(out.split("\n").slice(0, -1));
    });
  });
}

/** Top-level runs from the child's RUN lines; sub-agent runs from their sessions' first message. */
async function runIdsByTag(store: SessionStore, scenario: Scenario, started: Started[]): Promise<Map<string, string>> {
  const ids = new Map(started.map((s) => [s.tag, s.runId]));
  for (const child of scenario.children) {
    const parentTag = child.tag.replace(/c\d+$/, "");
    const parent = started.find((s) => s.tag === parentTag);
    if (!parent) continue;
    for (const session of await store.listSessions({ parentSessionId: parent.sessionId, limit: 1000 })) {
      const [first] = await store.sessionMessages(session.id, { limit: 1 });
      const text = first?.parts.find((p) => p.type === "text");
      if (first?.runId && text?.type === "text" && text.text.startsWith(`[${child.tag}]`))
        ids.set(child.tag, first.runId);
    }
  }
  return ids;
}

/** Every run of the sessions and of their sub-agent sessions. */
async function allRuns(store: SessionStore, sessions: string[]) {
  const runs = [];
  for (const queue = [...sessions]; queue.length; ) {
    const id = queue.shift() as string;
    runs.push(...(await store.listRuns(id)));
    for (const child of await store.listSessions({ parentSessionId: id, limit: 10_000 })) queue.push(child.id);
  }
  return runs;
}

/** Tool calls with no result after them, in order: what a provider rejects. */
export function danglingCalls(messages: readonly Message[]): string[] {
  const answered = new Set<string>();
  for (const m of messages) for (const p of m.parts) if (p.type === "tool_result") answered.add(p.toolCallId);
  return messages.flatMap((m) =>
    m.parts.flatMap((p) => (p.type === "tool_call" && !answered.has(p.toolCallId) ? [p.toolCallId] : [])),
  );
}

async function nextRunWorks(store: SessionStore, sessions: string[], dir: string): Promise<string[]> {
  const problems: string[] = [];
  const gatehouse = createGatehouse({
    model: createScriptedModel({ runs: [{ turns: [{ text: "after the crash" }] }] }),
    store,
    logger: captureLogger().logger,
    config: { cwd: dir },
  });
  for (const sessionId of sessions) {
    const result = await gatehouse.run({ prompt: "[after] still there?", sessionId });
    if (result.outcome !== "completed" || result.reply !== "after the crash")
      problems.push(
        `the next run on session ${sessionId} did not complete: ${result.outcome} ${result.error?.message ?? ""}`,
      );
    const dangling = danglingCalls(await store.history(sessionId));
    if (dangling.length)
      problems.push(
        `session ${sessionId}: history has tool calls without results (${dangling.join(", ")}): providers reject it`,
      );
  }
  await gatehouse.engine.drain();
  return problems;
}
