import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { notices } from "../src/runtime/notices.js";
import type { ApprovalRequest, RunResult } from "../src/runtime/types.js";
import { resetSandbox, sandboxAvailability } from "../src/sandbox/runtime.js";
import { openMemoryStore } from "../src/store/index.js";
import type { SessionStore } from "../src/store/types.js";
import { captureLogger, captureSpans, captureStdio } from "./capture.js";
import { HttpSurface } from "./http.js";
import {
  type BlockKind,
  describeScenario,
  generateScenario,
  type Path,
  SANDBOX_KINDS,
  type Scenario,
  type StoreKind,
  type Target,
  UPS_NOTICE,
} from "./scenario.js";
import { dropSchema, filesUnder, openScenarioStore, SERVICE_TABLES, type Sink, sinkHas, textSink } from "./sinks.js";
import { type Entry, type MarkerKind, Timeline, tapPlugin } from "./timeline.js";
import {
  ProviderFaults,
  registerMcpResults,
  releaseMcpServer,
  releaseSinkServer,
  scenarioGatehouse,
  sinkBodies,
  useMcpServer,
  useSinkServer,
} from "./world.js";

/**
 * R1 — canary: blocked content never persists. Each scenario runs through the real runtime on
 * a fresh store, everything is closed, then every sink is searched for every canary. A
 * memory-store scenario is sometimes run in a child process that is SIGKILLed mid-way: then
 * nothing of it may outlive the process.
 */

export { hookSettings } from "./world.js";

const KILL_CHILD = fileURLToPath(new URL("./r1-kill.ts", import.meta.url));

export interface Leak {
  readonly canary: string;
  readonly kind: BlockKind | "reason" | "failed attempt" | "killed";
  readonly where: string;
  readonly sink: string;
  readonly excerpt: string;
}

export interface ScenarioReport {
  readonly scenario: Scenario;
  readonly description: string;
  readonly leaks: readonly Leak[];
  /** Verdicts that did not take effect, controls the scan did not find, runs that failed. */
  readonly failures: readonly string[];
  /** How often the permission and retry paths were taken (see COUNTS); none for a killed scenario. */
  readonly counts: Readonly<Partial<Record<Count, number>>>;
  /** Canaries of targets the scenario never got to write (a summary canary where nothing was compacted): not counted. */
  readonly unreached?: readonly string[];
  readonly ms: number;
}

/** What R1 counts besides canaries: the hooks a denial must reach, and the retries that happened. */
export const COUNTS = [
  "permission_denied",
  "PermissionDenied",
  "PermissionRequest",
  "retry told",
  "revisions",
  "provider retries",
  "summary retries",
  "approvals asked",
  "sandbox refusals audited",
] as const;
export type Count = (typeof COUNTS)[number];

export interface R1Options {
  readonly seed: number;
  readonly scenarios: number;
  /** First index (default 0): `--from` replays one scenario. */
  readonly from?: number;
  readonly stores?: readonly StoreKind[];
  readonly postgresUrl?: string;
  /** Scenarios run at once (default 4). */
  readonly concurrency?: number;
  /** See GenerateOptions.childDerived (default true). */
  readonly childDerived?: boolean;
  readonly onScenario?: (report: ScenarioReport) => void;
  /** The runtime's API (default) or `gatehouse serve`'s HTTP API. */
  readonly surface?: Surface;
}

/**
 * Whether R1 generates the sandbox kinds here: only where the OS sandbox runs (bubblewrap and
 * socat on Linux, macOS); elsewhere the reason, printed by the soak and the tests.
 */
export function sandboxUnavailable(): string | undefined {
  const availability = sandboxAvailability();
  return availability.available ? undefined : availability.reason;
}

export interface R1Figures {
  readonly scenarios: number;
  readonly targets: number;
  readonly controls: number;
  readonly leaks: number;
  readonly failures: number;
  readonly byStore: Readonly<Record<string, number>>;
  readonly byKind: Readonly<Record<string, number>>;
  /** Canaries planted on each path of issue 11 (memory-sigkill: in scenarios whose process was killed). */
  readonly byPath: Readonly<Record<string, number>>;
  /** Scenarios run in a process killed mid-way. */
  readonly killed: number;
  /** Summed over the scenarios: the `permission_denied` events and `PermissionDenied` payloads, the retries. */
  readonly counts: Readonly<Record<Count, number>>;
  readonly failed: readonly ScenarioReport[];
  readonly ms: number;
  /** Why the sandbox kinds were not generated (no sandbox on this platform), if they were not. */
  readonly sandboxSkipped?: string;
}

export async function runR1(options: R1Options): Promise<R1Figures> {
  const started = performance.now();
  const stores = options.stores ?? defaultStores(options.postgresUrl);
  const byStore: Record<string, number> = {};
  const byKind: Record<string, number> = {};
  const byPath: Record<string, number> = {};
  const failed: ScenarioReport[] = [];
  let targets = 0;
  let controls = 0;
  let leaks = 0;
  let failures = 0;
  let killed = 0;
  const counts = Object.fromEntries(COUNTS.map((c) => [c, 0])) as Record<Count, number>;
  const from = options.from ?? 0;
  let next = from;
  // Scenarios run side by side (each with its own runtime, store and folder): most of a
  // scenario's time is spent waiting on files, processes and PostgreSQL.
  const schemas: string[] = [];
  const mcpUrl = await useMcpServer();
  const sandboxSkipped = sandboxUnavailable();
  const lane = async (k: number) => {
    const postgresSchema = `gh_r1_${process.pid}_${options.seed}_lane${k}`;
    schemas.push(postgresSchema);
    for (let index = next++; index < from + options.scenarios; index = next++) {
      const scenario = generateScenario(options.seed, index, {
        stores,
        ...(options.childDerived === false ? { childDerived: false } : {}),
        ...(sandboxSkipped ? { sandboxEvery: 0 } : {}),
      });
      const report = await runScenario(scenario, {
        mcpUrl,
        ...(options.postgresUrl ? { postgresUrl: options.postgresUrl, postgresSchema } : {}),
        ...(options.surface ? { surface: options.surface } : {}),
      });
      byStore[scenario.store] = (byStore[scenario.store] ?? 0) + 1;
      for (const t of scenario.targets) {
        if (report.unreached?.includes(t.canary)) continue;
        byKind[t.kind] = (byKind[t.kind] ?? 0) + 1;
        if (t.path) byPath[t.path] = (byPath[t.path] ?? 0) + 1;
      }
      for (const c of COUNTS) counts[c] += report.counts[c] ?? 0;
      if (!scenario.kill) for (const a of scenario.allowed) byPath[a.path] = (byPath[a.path] ?? 0) + 1;
      // The retries are counted where they happened (a plan the run never reached is a failure).
      byPath["provider-retry"] = (byPath["provider-retry"] ?? 0) + (report.counts["provider retries"] ?? 0);
      byPath["summary-retry"] = (byPath["summary-retry"] ?? 0) + (report.counts["summary retries"] ?? 0);
      if (scenario.kill) killed++;
      targets += scenario.targets.length;
      controls += scenario.controls.length;
      leaks += report.leaks.length;
      failures += report.failures.length;
      if (report.leaks.length || report.failures.length) failed.push(report);
      options.onScenario?.(report);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 4) }, (_, k) => lane(k)));
  } finally {
    await releaseMcpServer();
    // The sandbox runtime's proxies would keep the process alive.
    await resetSandbox();
    const url = options.postgresUrl;
    if (url) await Promise.all(schemas.map((schema) => dropSchema(url, schema).catch(() => undefined)));
  }
  failed.sort((a, b) => a.scenario.index - b.scenario.index);
  return {
    scenarios: options.scenarios,
    targets,
    controls,
    leaks,
    failures,
    byStore,
    byKind,
    byPath,
    killed,
    counts,
    failed,
    ms: performance.now() - started,
    ...(sandboxSkipped ? { sandboxSkipped } : {}),
  };
}

/** SQLite (the byte-level one) most of the time, memory for speed, PostgreSQL when there is one. */
export function defaultStores(postgresUrl: string | undefined): StoreKind[] {
  return postgresUrl ? ["sqlite", "sqlite", "sqlite", "memory", "postgres"] : ["sqlite", "sqlite", "sqlite", "memory"];
}

/** The verdict's moment for each kind; the kinds without one (the sandbox's, masking) keep their canary out of the process: nowhere, ever. */
const MARKER_OF: Partial<Record<BlockKind, MarkerKind>> = {
  "prompt-gate": "prompt-block",
  "input-gate": "prompt-block",
  ups: "prompt-block",
  "withhold-plugin": "withhold",
  "withhold-ptu": "withhold",
  "response-block": "response-block",
  "response-rewrite": "response-rewrite",
  "delivery-cancel": "delivery-cancel",
  "delivery-rewrite": "delivery-rewrite",
  "compact-block": "compaction-block",
  "call-rewrite": "call-rewrite",
  "call-block": "tool-block",
  "deny-rule": "permission-deny",
  "permreq-deny": "permission-deny",
  "managed-deny": "permission-deny",
  "summary-block": "write-block",
  "write-block": "write-block",
  "replacement-block": "write-block",
  "ask-denied": "permission-deny",
  "ask-unattended": "permission-deny",
  "parser-refusal": "permission-deny",
};

/** The denials a deny rule makes: no hook that could let the call through may see its input. */
const RULE_DENIALS: ReadonlySet<BlockKind> = new Set(["deny-rule", "managed-deny"]);

const DECIDER: Partial<Record<BlockKind, string>> = {
  "prompt-gate": "policy",
  "input-gate": "policy",
  ups: "command-hooks",
  "withhold-plugin": "policy",
  "withhold-ptu": "command-hooks",
  "response-block": "policy",
  "compact-block": "policy",
  "call-block": "policy",
  "deny-rule": "permissions",
  "managed-deny": "permissions",
  "permreq-deny": "command-hooks",
  "summary-block": "store-policy",
  "write-block": "store-policy",
  "replacement-block": "store-policy",
};

export interface ScenarioOptions {
  readonly postgresUrl?: string;
  /** A PostgreSQL schema to use and leave emptied (one per lane); default: one of its own, dropped after. */
  readonly postgresSchema?: string;
  /** The MCP server to use (runR1 shares one); default: one started for this scenario. */
  readonly mcpUrl?: string;
  /** For the harness's own tests: a store that misbehaves, to show the checks can fail. */
  readonly sabotage?: (store: SessionStore) => SessionStore;
  /** For the harness's own tests: how many attempts of each planned provider failure fail (default 1). */
  readonly failingAttempts?: number;
  /** Where runs are sent: the runtime's API (default), or `gatehouse serve`'s HTTP API (JSON and SSE). */
  readonly surface?: Surface;
  /** For the harness's own tests: a sandboxed scenario's Bash runs unsandboxed, so its canaries get out. */
  readonly noSandbox?: boolean;
  /** For the harness's own tests: the approver says yes to every ask. */
  readonly approveAll?: boolean;
  /** The loopback sink's port (runScenario starts one for a sandboxed scenario). */
  readonly sinkPort?: number;
}

export type Surface = "runtime" | "http";

export async function runScenario(scenario: Scenario, options: ScenarioOptions = {}): Promise<ScenarioReport> {
  const usesMcp = Object.keys(scenario.mcp).length > 0;
  const ownMcp = usesMcp && options.mcpUrl === undefined;
  const mcpUrl = ownMcp ? await useMcpServer() : options.mcpUrl;
  const unregister = registerMcpResults(scenario.mcp);
  const sinkPort = scenario.sandbox ? await useSinkServer() : undefined;
  try {
    const scenarioOptions = { ...options, ...(usesMcp && mcpUrl ? { mcpUrl } : {}), ...(sinkPort ? { sinkPort } : {}) };
    return scenario.kill ? await runKilled(scenario, scenarioOptions) : await runInProcess(scenario, scenarioOptions);
  } finally {
    unregister();
    if (ownMcp) await releaseMcpServer();
    if (sinkPort) await releaseSinkServer();
  }
}

async function runInProcess(scenario: Scenario, options: ScenarioOptions): Promise<ScenarioReport> {
  const { postgresUrl } = options;
  const started = performance.now();
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-r1-"));
  // Outside the project: where a sandboxed command tries to write.
  const outside = `${dir}-outside`;
  mkdirSync(outside);
  const asked: ApprovalRequest[] = [];
  const hookLog = join(dir, "hook.log");
  writeFileSync(hookLog, "");
  const timeline = new Timeline(hookLog);
  const { logger, lines } = captureLogger();
  const stdio = captureStdio();
  // Spans are recorded where there is a tracing interceptor: `gatehouse serve` (the HTTP surface).
  const spans = await captureSpans();
  const results: RunResult[] = [];
  const errors: string[] = [];
  const failures: string[] = [];
  const faults = new ProviderFaults(scenario.providerFaults, options.failingAttempts);
  const opened = await openScenarioStore({
    kind: scenario.store,
    dir,
    ...(postgresUrl ? { postgresUrl } : {}),
    schema: options.postgresSchema ?? `gh_r1_${process.pid}_${scenario.seed}_${scenario.index}`,
    reuseSchema: options.postgresSchema !== undefined,
  });
  let audit = "";
  let http: HttpSurface | undefined;
  let consolePages: string[] = [];
  try {
    const gatehouse = scenarioGatehouse(scenario, {
      store: options.sabotage ? options.sabotage(opened.store) : opened.store,
      dir,
      hookLog,
      logger,
      ...(options.mcpUrl ? { mcpUrl: options.mcpUrl } : {}),
      plugins: [tapPlugin()],
      onModelCall: (prompt) => timeline.push({ type: "model", prompt }),
      faults,
      asked,
      outside,
      ...(options.sinkPort ? { sinkPort: options.sinkPort } : {}),
      ...(options.noSandbox ? { noSandbox: true } : {}),
      ...(options.approveAll ? { approveAll: true } : {}),
    });
    timeline.tap(gatehouse);
    if (options.surface === "http") {
      await gatehouse.ready();
      http = await HttpSurface.start(gatehouse, (s) => timeline.tapStream(s));
    }
    const sessions = new Map<number, string>();
    for (const run of scenario.runs) {
      const sessionId = sessions.get(run.session);
      const input = { prompt: run.prompt, ...(sessionId ? { sessionId } : {}) };
      try {
        let result: RunResult;
        if (http) result = await http.run(input, run.stream);
        else if (run.stream) {
          const stream = gatehouse.stream(input);
          timeline.tapStream(stream);
          for await (const _ of stream) {
            // Events are recorded as the run pushes them.
          }
          result = await stream.result;
        } else result = await gatehouse.run(input);
        results.push(result);
        sessions.set(run.session, result.sessionId);
        failures.push(...checkOutcome(run, result));
      } catch (error) {
        errors.push(error instanceof Error ? `${error.name}: ${error.message}\n${error.stack}` : String(error));
        failures.push(`run ${run.tag || run.prompt} threw: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    consolePages = (await http?.consolePages()) ?? [];
    await http?.close();
    failures.push(...(http?.mismatches ?? []));
    await gatehouse.engine.drain();
    audit = JSON.stringify(await opened.store.listAudit());
    await opened.beforeClose();
    await gatehouse.close();
  } finally {
    stdio.restore();
    spans.restore();
  }
  const persisted = await opened.persisted();
  const hookText = readFileSync(hookLog, "utf8");
  await opened.dispose();
  const escaped: Sink[] = [
    ...filesUnder(outside).map((f) => ({ name: `${f.path} (outside the project)`, bytes: f.bytes })),
    ...(scenario.sandbox ? [textSink("the loopback sink server's requests", sinkBodies.join("\n"))] : []),
  ];
  rmSync(dir, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });

  const leaks = check(scenario, {
    timeline,
    persisted,
    logs: [
      textSink("log", lines.join("\n")),
      textSink("stdout/stderr", stdio.text()),
      textSink("trace spans (OpenTelemetry)", spans.text()),
    ],
    audit: textSink("audit records", audit),
    results: textSink(
      "run results and errors (and every JSON answer over HTTP)",
      JSON.stringify(results) + errors.join("\n") + (http?.answers.join("\n") ?? ""),
    ),
    results_: results,
    wire: textSink("SSE bodies as the client received them", http?.streams.join("\n") ?? ""),
    console: textSink("pages the web console serves (HTML and JSON)", consolePages.join("\n")),
    hookText,
    failures,
    escaped,
    asked,
    auditRecords: audit,
    served: { sessions: http?.sessions ?? [], runs: http?.runs ?? [] },
  });
  const counts = count(scenario, timeline, hookText, faults, failures);
  counts["approvals asked"] = asked.length;
  counts["sandbox refusals audited"] = sandboxRecords(audit).length;
  return {
    scenario,
    description: describeScenario(scenario),
    leaks,
    failures,
    counts,
    unreached: unreachedSummaries(scenario, timeline),
    ms: performance.now() - started,
  };
}

/**
 * The permission and retry paths a scenario took: each `permission_denied` event (the tap plugin
 * makes the runtime emit it) and `PermissionDenied` / `PermissionRequest` payload, each denial the
 * model was told it may retry, each revision, each provider failure tried again. A planned
 * provider failure that was not tried again (or never reached) is a failure of the scenario.
 */
function count(
  scenario: Scenario,
  timeline: Timeline,
  hookText: string,
  faults: ProviderFaults,
  failures: string[],
): Partial<Record<Count, number>> {
  const payloads = (event: string) => hookText.split(`"hook_event_name":"${event}"`).length - 1;
  const markers = timeline.markers();
  let retried = 0;
  for (const f of scenario.providerFaults.steps) {
    const attempts = faults.attempts.get(`${f.tag}#${f.step}`) ?? 0;
    if (attempts >= 2) retried++;
    else
      failures.push(
        attempts === 0
          ? `the provider failure planned at model call ${f.step} of run ${f.tag} was never reached`
          : `the provider failure at model call ${f.step} of run ${f.tag} was not tried again`,
      );
  }
  if (faults.summaryAttempts === 1) failures.push("the compaction summary that failed part-way was not tried again");
  return {
    permission_denied: timeline.entries.filter((e) => e.type === "hook" && e.hook === "permission_denied").length,
    PermissionDenied: payloads("PermissionDenied"),
    PermissionRequest: payloads("PermissionRequest"),
    "retry told": markers.filter((m) => m.denial?.retry).length,
    revisions: markers.filter((m) => m.kind === "revise").length,
    "provider retries": retried,
    "summary retries": faults.summaryAttempts >= 2 ? 1 : 0,
  };
}

/**
 * A memory-store scenario in a child process that SIGKILLs itself at a hook emission: its store
 * dies with it, so nothing of it — transcripts above all — may be left on disk once the next
 * memory store has opened in the same place (which clears what a dead process left).
 */
async function runKilled(scenario: Scenario, options: ScenarioOptions): Promise<ScenarioReport> {
  const started = performance.now();
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-r1-killed-"));
  const failures: string[] = [];
  const leaks: Leak[] = [];
  try {
    mkdirSync(join(dir, "data"), { recursive: true });
    const child = spawn(
      process.execPath,
      ["--import", "tsx", KILL_CHILD, JSON.stringify({ scenario, dir, mcpUrl: options.mcpUrl })],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
    });
    const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on("exit", (code, signal) => resolve({ code, signal })),
    );
    if (exit.signal !== "SIGKILL" && exit.code !== 0)
      failures.push(`the killed scenario's process ended ${exit.code ?? exit.signal}: ${stderr.slice(-500)}`);
    // The next memory store opened on the same data folder clears what the dead process left.
    await openMemoryStore({ transcriptDir: join(dir, "data", "transcripts") }).close();
    const own = readdirSync(tmpdir()).filter((n) => n.startsWith(`gatehouse-transcripts-${child.pid}-`));
    const sinks: Sink[] = [
      ...filesUnder(join(dir, "data")).map((f) => ({ name: f.path.replace(`${dir}/`, ""), bytes: f.bytes })),
      ...own.flatMap((n) => filesUnder(join(tmpdir(), n)).map((f) => ({ name: f.path, bytes: f.bytes }))),
    ];
    const everything = [
      ...scenario.targets.map((t) => ({ canary: t.canary, where: t.where })),
      ...scenario.controls.map((canary) => ({ canary, where: "a control" })),
      ...scenario.reasons.map((canary) => ({ canary, where: "an internal reason" })),
      ...failedAttempts(scenario),
    ];
    for (const { canary, where } of everything)
      for (const sink of sinks)
        if (sinkHas(sink, canary))
          leaks.push({
            canary,
            kind: "killed",
            where,
            sink: `${sink.name} (after the process was killed)`,
            excerpt: excerpt(sink.bytes, canary),
          });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    scenario,
    description: describeScenario(scenario),
    leaks,
    failures,
    counts: {},
    ms: performance.now() - started,
  };
}

function checkOutcome(run: Scenario["runs"][number], result: RunResult): string[] {
  const problems: string[] = [];
  const say = (what: string) => problems.push(`run ${run.tag || run.prompt}: ${what} (got ${JSON.stringify(result)})`);
  if (run.tag === "") {
    if (result.outcome !== "completed") say("/compact did not complete");
    return problems;
  }
  if (run.interrupted) {
    // The run ends where the PermissionRequest hook's deny said so, its notice the reply.
    const notice = notices.permissionInterrupted("Bash", "command-hooks");
    if (result.outcome !== "blocked") say("expected outcome blocked (a PermissionRequest deny with interrupt)");
    if (result.reply !== notice) say(`expected the reply to be the notice ${notice}`);
    if (result.blockedBy?.pluginId !== "command-hooks") say("expected the stop attributed to command-hooks");
    return problems;
  }
  const answered = run.via === "claim" || run.via === "inbound" ? "claimed" : "completed";
  switch (run.block) {
    case "prompt-gate":
    case "input-gate":
    case "ups":
    case "response-block": {
      const notice = run.block === "ups" ? UPS_NOTICE : run.notice;
      const by = run.block === "ups" ? "command-hooks" : "policy";
      if (result.outcome !== "blocked") say("expected outcome blocked");
      if (result.reply !== notice) say(`expected the reply to be the notice ${notice}`);
      if (result.blockedBy?.pluginId !== by) say(`expected the block attributed to ${by}`);
      break;
    }
    case "compact-block":
      if (result.outcome !== "completed") say("expected outcome completed");
      if (result.reply !== "Compaction was blocked by a policy (policy)." && result.reply !== "Nothing to compact yet.")
        say("expected /compact to say the policy blocked it");
      break;
    case "delivery-cancel":
      if (result.outcome !== answered) say(`expected outcome ${answered}`);
      if (result.reply !== null) say("expected nothing delivered");
      break;
    default:
      if (result.outcome !== answered) say(`expected outcome ${answered}`);
      if (result.reply === null) say("expected a reply");
  }
  return problems;
}

interface Sinks {
  readonly timeline: Timeline;
  readonly persisted: readonly Sink[];
  readonly logs: readonly Sink[];
  readonly audit: Sink;
  readonly results: Sink;
  readonly results_: readonly RunResult[];
  /** Streams as a client received them: checked for reasons (their events are checked on the timeline). */
  readonly wire: Sink;
  /** What the web console shows: the store through the API, so like the store, and never a reason. */
  readonly console: Sink;
  readonly hookText: string;
  readonly failures: string[];
  /** What got out of the process another way: files outside the project, the loopback sink's requests. */
  readonly escaped: readonly Sink[];
  /** What the scripted approver was asked. */
  readonly asked: readonly ApprovalRequest[];
  /** The audit records, as JSON. */
  readonly auditRecords: string;
  /** The sessions and runs the HTTP surface served: their ids must be in the server's own tables. */
  readonly served: { readonly sessions: readonly string[]; readonly runs: readonly string[] };
}

/** The audit trail's sandbox refusals: `{runId, category}` of each. */
function sandboxRecords(auditJson: string): { runId?: string; category?: string }[] {
  if (auditJson === "") return [];
  const records = JSON.parse(auditJson) as { runId?: string; pluginId?: string; outcome?: string; category?: string }[];
  return records.filter((r) => r.pluginId === "sandbox" && r.outcome === "deny");
}

function excerpt(bytes: Buffer, needle: string): string {
  const at = bytes.indexOf(needle, 0, "utf8");
  if (at < 0) return "";
  return bytes
    .subarray(Math.max(0, at - 80), at + needle.length + 40)
    .toString("utf8")
    .replace(/[^\x20-\x7e]+/g, "·");
}

function check(scenario: Scenario, s: Sinks): Leak[] {
  const leaks: Leak[] = [];
  const { timeline } = s;
  const leak = (target: { canary: string; kind: Leak["kind"]; where: string }, sink: Sink) =>
    leaks.push({
      canary: target.canary,
      kind: target.kind,
      where: target.where,
      sink: sink.name,
      excerpt: excerpt(sink.bytes, target.canary),
    });
  const scan = (target: { canary: string; kind: Leak["kind"]; where: string }, sinks: readonly Sink[]) => {
    for (const sink of sinks) if (sinkHas(sink, target.canary)) leak(target, sink);
  };
  const entrySink = (e: Entry) =>
    textSink(
      `${e.type}${e.type === "hook" ? ` ${e.hook}` : e.type === "stream" ? ` ${e.event.type}` : ""} #${e.seq} (after the verdict)`,
      timeline.text(e),
    );

  const everywhere = () => [
    ...s.persisted,
    ...s.logs,
    s.audit,
    s.results,
    s.wire,
    s.console,
    ...s.escaped,
    textSink("command-hook payloads", s.hookText),
    ...timeline.entries.map((e) => textSink(`${e.type} #${e.seq}`, timeline.text(e))),
  ];
  for (const target of scenario.targets) {
    if (MARKER_OF[target.kind] === undefined) {
      // Kept out of the process (the sandbox), or masked before anything read it: nowhere, ever.
      scan(target, everywhere());
      s.failures.push(...checkContained(target, s));
      continue;
    }
    // Every verdict, message_sending's too, acts on what is stored as well as on what is delivered.
    scan(target, [...s.persisted, s.console, ...s.logs, s.audit, s.results, ...s.escaped]);
    const marker = findMarker(timeline, target);
    if (!marker) {
      if (!nothingToCompact(scenario, target, s) && !unreachedSummaries(scenario, timeline).includes(target.canary))
        s.failures.push(`verdict did not take effect: ${target.kind} for ${target.where} in run ${target.runTag}`);
      continue;
    }
    const decider = DECIDER[target.kind];
    if (decider && marker.pluginId !== decider)
      s.failures.push(`${target.kind} in run ${target.runTag} attributed to ${marker.pluginId}, expected ${decider}`);
    if (marker.denial) s.failures.push(...checkDenial(scenario, target, marker, s));
    if (target.kind === "replacement-block" && !replacementRegated(timeline, marker))
      s.failures.push(
        `replacement-block in run ${target.runTag}: the replacement did not meet before_message_write again`,
      );
    if (target.revisedBy && !timeline.markers().some((m) => m.kind === "revise" && m.runId === marker.runId))
      s.failures.push(`run ${target.runTag}: the draft was not sent back for revision (by ${target.revisedBy})`);
    for (const e of timeline.entries) {
      if (e.seq <= marker.seq || e.type === "marker") continue;
      if (timeline.text(e).includes(target.canary)) leak(target, entrySink(e));
    }
    const later = s.hookText.slice(marker.hookLogBytes).split("\n");
    const at = later.findIndex((l) => l.includes(target.canary));
    if (at >= 0) {
      // A payload line starts with "{"; the lines after it are the canaries its transcript held.
      const payload = later.slice(0, at + 1).findLast((l) => l.startsWith("{")) ?? "";
      const event = /"hook_event_name":"(\w+)"/.exec(payload)?.[1] ?? "?";
      const where = later[at]?.startsWith("{") ? "payload" : "transcript";
      leak(target, textSink(`command-hook ${event} ${where} (after the verdict)`, later[at] as string));
    }
    if (target.replacement) {
      const present = target.stored === false || s.persisted.some((p) => sinkHas(p, target.replacement as string));
      if (!present)
        s.failures.push(`rewrite of ${target.where} in run ${target.runTag}: the replacement is not in the store`);
      if (target.inReply && !sinkHas(s.results, target.replacement))
        s.failures.push(`rewrite of ${target.where} in run ${target.runTag}: the replacement is not in the reply`);
    }
  }
  s.failures.push(...checkAllowed(scenario, s), ...checkServiceTables(scenario, s));
  for (const control of scenario.controls) {
    if (!s.persisted.some((p) => sinkHas(p, control))) s.failures.push(`control ${control} not found by the scan`);
    // The console shows the store: what the store kept, its pages show (else the scan proves nothing).
    if (s.console.bytes.length > 0 && !sinkHas(s.console, control))
      s.failures.push(`control ${control} not found in the console's pages`);
  }
  const everything = everywhere();
  for (const reason of scenario.reasons)
    scan({ canary: reason, kind: "reason", where: "an internal reason" }, everything);
  for (const attempt of failedAttempts(scenario)) scan({ ...attempt, kind: "failed attempt" }, everything);
  return leaks;
}

/** The `after_tool_call` event of a call: proof that it ran, and whether it failed. */
function afterToolCall(timeline: Timeline, callId: string): { error?: unknown } | undefined {
  const entry = timeline.entries.find(
    (e) =>
      e.type === "hook" && e.hook === "after_tool_call" && (e.event as { toolCallId?: unknown }).toolCallId === callId,
  );
  return entry?.type === "hook" ? (entry.event as { error?: unknown }) : undefined;
}

/**
 * A sandbox refusal reaches the model as a tool error, and the audit as a decision of its kind
 * for the run (no content: the scan above found no canary in the audit). A masked value's call ran.
 */
function checkContained(target: Target, s: Sinks): string[] {
  const problems: string[] = [];
  const say = (what: string) => problems.push(`${target.kind} in run ${target.runTag}: ${what}`);
  const call = target.callId === undefined ? undefined : afterToolCall(s.timeline, target.callId);
  if (!call) say(`the call ${target.callId} never ran`);
  else if (SANDBOX_KINDS.includes(target.kind) && typeof call.error !== "string")
    say("the sandbox's refusal did not reach the model as a tool error");
  if (target.audited) {
    const runId = s.timeline.runIdOf(target.runTag);
    const category = `sandbox:${target.audited}`;
    if (!sandboxRecords(s.auditRecords).some((r) => r.runId === runId && r.category === category))
      say(`no ${category} decision in the audit trail (the call's error: ${String(call?.error).slice(0, 300)})`);
  }
  return problems;
}

/**
 * The calls the permission check must let run: each ran; one allowed by a rule or the read-only
 * set was never asked about (no approver, no `permission_request`); one asked about reached the
 * approver. (Their controls must be in the store: checked with every control.)
 */
function checkAllowed(scenario: Scenario, s: Sinks): string[] {
  const problems: string[] = [];
  for (const a of scenario.allowed) {
    const say = (what: string) => problems.push(`${a.path} call ${a.callId} in run ${a.runTag}: ${what}`);
    if (!afterToolCall(s.timeline, a.callId)) say("did not run");
    const approverAsked = s.asked.some((r) => r.toolCallId === a.callId);
    const requested = s.timeline.entries.some(
      (e) =>
        e.type === "hook" &&
        e.hook === "permission_request" &&
        (e.event as { toolCallId?: unknown }).toolCallId === a.callId,
    );
    if (a.asked && !approverAsked) say("the approver was never asked");
    if (!a.asked && (approverAsked || requested)) say("was asked about, although it needs no one's approval");
  }
  return problems;
}

/**
 * The server's and console's records are store tables (src/store/service.ts): each must be among
 * the sinks read back (a row of each table of the SQLite file and the PostgreSQL schema, the memory
 * store's through their API). Over HTTP, each session the server made must be found in its owners'
 * table and each run it served in its steps' table (else those sinks were read empty).
 */
function checkServiceTables(scenario: Scenario, s: Sinks): string[] {
  const problems: string[] = [];
  const table = (name: (typeof SERVICE_TABLES)[number]) =>
    s.persisted.find((p) =>
      scenario.store === "memory"
        ? p.name.startsWith("memory store service tables")
        : p.name.endsWith(` ${name}`) || p.name.endsWith(`.${name}`),
    );
  for (const name of SERVICE_TABLES)
    if (!table(name)) problems.push(`the service table ${name} is not among the sinks read`);
  const owners = table("server_session_owners");
  const steps = table("server_run_steps");
  for (const id of s.served.sessions)
    if (!owners || !sinkHas(owners, id)) problems.push(`session ${id}, made over HTTP, has no owner row in the sinks`);
  for (const id of s.served.runs)
    if (!steps || !sinkHas(steps, id)) problems.push(`run ${id}, served over HTTP, has no steps in the sinks`);
  return problems;
}

/** The tokens of the provider's failed attempts: the attempt is discarded, so nothing may hold them. */
function failedAttempts(scenario: Scenario): { canary: string; where: string }[] {
  const { steps, summary } = scenario.providerFaults;
  return [
    ...steps.map((f) => ({ canary: f.token, where: `a failed attempt of model call ${f.step} of run ${f.tag}` })),
    ...(summary ? [{ canary: summary, where: "a compaction summary that failed part-way" }] : []),
  ];
}

/**
 * A denial, beyond "nothing after it holds the input": a deny rule's comes from the source the
 * scenario wrote it to (managed settings for `scp`), and no hook that could let the call through
 * (`before_tool_call` / `PreToolUse`, `permission_request` / `PermissionRequest`) ever saw it;
 * with command hooks, `PermissionDenied` was told; a retry the model was to be told of was told,
 * and reached the stored result.
 */
function checkDenial(scenario: Scenario, target: Target, marker: Marker, s: Sinks): string[] {
  const problems: string[] = [];
  const say = (what: string) => problems.push(`${target.kind} in run ${target.runTag}: ${what}`);
  const denial = marker.denial as NonNullable<Marker["denial"]>;
  const hookSaw = (event: string) =>
    s.hookText.split("\n").some((l) => l.includes(`"hook_event_name":"${event}"`) && l.includes(target.canary));
  if (RULE_DENIALS.has(target.kind)) {
    const source = target.kind === "managed-deny" ? "managed" : scenario.denySource;
    if (denial.deniedBy !== "rule" || denial.source !== source)
      say(`denied by ${denial.deniedBy} from ${denial.source ?? "nowhere"}, expected a rule from ${source} settings`);
    const saw = s.timeline.entries.find(
      (e) =>
        e.type === "hook" &&
        (e.hook === "before_tool_call" || e.hook === "permission_request") &&
        s.timeline.text(e).includes(target.canary),
    );
    if (saw?.type === "hook") say(`${saw.hook} saw a call a deny rule refuses`);
    for (const event of ["PreToolUse", "PermissionRequest"])
      if (hookSaw(event)) say(`the ${event} hook saw a call a deny rule refuses`);
  } else if (target.kind === "permreq-deny") {
    if (denial.deniedBy !== "hook") say(`denied by ${denial.deniedBy}, expected the PermissionRequest hook`);
  } else {
    // An ask: the approver's no where someone can be asked, else nobody's (never a rule, never allowed).
    const expected = target.kind === "ask-unattended" || !scenario.attended ? "nobody" : "user";
    if (denial.deniedBy !== expected) say(`denied by ${denial.deniedBy}, expected ${expected}`);
    if (scenario.attended && !s.asked.some((r) => r.toolCallId === target.callId)) say("the approver was never asked");
  }
  if (scenario.commandHooks && !hookSaw("PermissionDenied"))
    say("the PermissionDenied hook was not told of the denial");
  if (target.retryBy) {
    if (!denial.retry) say(`the model was not told it may try again (by ${target.retryBy})`);
    if (!s.persisted.some((p) => sinkHas(p, notices.permissionRetry)))
      say("the stored result does not say the model may try again");
  }
  return problems;
}

/**
 * A summary canary no gate ever saw: nothing was compacted in the scenario, so the summarizer
 * never wrote it. (A summary written but stored ungated would have shown it to after_compaction.)
 */
function unreachedSummaries(scenario: Scenario, timeline: Timeline): string[] {
  const canary = scenario.summaryCanary;
  if (canary === undefined) return [];
  return timeline.entries.some((e) => e.type === "hook" && timeline.text(e).includes(canary)) ? [] : [canary];
}

/** The tool door offered a replacement for the blocked result, and it met `before_message_write` (and was blocked) too. */
function replacementRegated(timeline: Timeline, marker: Marker): boolean {
  const message = (marker.event as { message?: { parts?: { toolCallId?: string }[] } }).message;
  const id = message?.parts?.find((p) => p.toolCallId !== undefined)?.toolCallId;
  if (id === undefined) return false;
  return timeline
    .markers()
    .some(
      (m) =>
        m.seq > marker.seq &&
        m.kind === "write-block" &&
        timeline.text(m).includes(`"toolCallId":"${id}"`) &&
        timeline.text(m).includes(notices.resultNotStored),
    );
}

/** `/compact` with nothing to compact never shows its instructions to any gate after the input door. */
function nothingToCompact(scenario: Scenario, target: Target, s: Sinks): boolean {
  if (target.kind !== "compact-block") return false;
  const i = scenario.runs.findIndex((r) => r.tag === target.runTag);
  return s.results_[i]?.reply === "Nothing to compact yet.";
}

type Marker = Extract<Entry, { type: "marker" }>;

function findMarker(timeline: Timeline, target: Target): Marker | undefined {
  // A summary is written in whichever run compacts (a model run, or a plain /compact): found by content alone.
  if (target.kind === "summary-block")
    return timeline.markers().find((m) => m.kind === "write-block" && timeline.text(m).includes(target.canary));
  const runId = timeline.runIdOf(target.runTag);
  if (runId === undefined) return undefined;
  const kind = MARKER_OF[target.kind];
  const canary = target.markerCanary ?? target.canary;
  const byContent =
    kind === "withhold" ||
    kind === "tool-block" ||
    kind === "call-rewrite" ||
    kind === "permission-deny" ||
    kind === "write-block";
  return timeline
    .markers()
    .find((m) => m.runId === runId && m.kind === kind && (!byContent || timeline.text(m).includes(canary)));
}

export type { Path };
