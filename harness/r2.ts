import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { createGatehouse } from "../src/assembly/gatehouse.js";
import { NO_DECISION_BLOCK_REASON } from "../src/command-hooks/verdict.js";
import { attachmentOf } from "../src/core/message.js";
import type { HookSpec } from "../src/hooks/catalog.js";
import { HOOK_NAMES, HOOKS, type HookName } from "../src/hooks/index.js";
import { definePlugin, type PluginDefinition } from "../src/plugins/index.js";
import { notices } from "../src/runtime/notices.js";
import type { RunResult } from "../src/runtime/types.js";
import type { Message } from "../src/store/types.js";
import type { Tool } from "../src/tools/types.js";
import { captureLogger, captureStdio } from "./capture.js";
import { forScenario } from "./random.js";
import { openScenarioStore, type Sink, sinkHas, textSink } from "./sinks.js";
import { Timeline, tapPlugin } from "./timeline.js";
import { echoTool, harnessModel, lookupTool } from "./world.js";

/**
 * R2 — the fail-closed matrix. Every hook of the catalog gets a handler that fails in each way
 * (throws, times out, returns null, a malformed result, a result with an extra key); every
 * command-hook event gets each process and output fault, with `onFailure: "block"` and (on the
 * events that can block) without. A fail-closed cell must block as specified, attributed to the
 * failing handler, with nothing of the failure (the error's message, the late or bad result) in
 * any sink. A fail-open cell must leave the run exactly as it is without the fault.
 */

export const PLUGIN_FAULTS = ["throws", "timeout", "null", "malformed", "extra-key"] as const;
export type PluginFault = (typeof PLUGIN_FAULTS)[number];

/**
 * What a command hook can do wrong. The last three are well-formed answers of the wrong kind:
 * - `wrong-shape`: a JSON object whose known field has the wrong type (`{"decision": 5}`), which
 *   is an unreadable answer, a failure: it blocks under `onFailure: "block"`;
 * - `null`: JSON, but not an object; Claude Code's protocol reads stdout as JSON only when it
 *   starts with `{`, so it is plain text (like `plain-text`): no decision, nothing blocks;
 * - `extra-key`: an object with only a key the protocol does not know, tolerated (Claude Code
 *   keeps adding keys): no decision, nothing blocks, and its value is shown nowhere.
 */
export const COMMAND_FAULTS = [
  "missing",
  "missing-exec",
  "not-executable",
  "non-json",
  "plain-text",
  "signal",
  "flood",
  "timeout",
  "exit-1",
  "wrong-shape",
  "null",
  "extra-key",
] as const;
export type CommandFault = (typeof COMMAND_FAULTS)[number];

/** Faults that are answers without a decision rather than failures: they never block. */
const NO_DECISION_FAULTS: ReadonlySet<CommandFault> = new Set(["plain-text", "null", "extra-key"]);

/** The command-hook events whose failure `onFailure: "block"` turns into a block. */
export const BLOCKING_COMMAND_EVENTS = [
  "UserPromptSubmit",
  "PreToolUse",
  "PostToolUse",
  "PostToolUseFailure",
  "PermissionRequest",
  "PreCompact",
  "PostToolBatch",
] as const;
/**
 * Events a failure never blocks, whatever `onFailure` says: Stop and SubagentStop ignore it by
 * design (a failing check must not loop the agent), the others have no block to give.
 */
export const FAIL_OPEN_COMMAND_EVENTS = [
  "Stop",
  "SubagentStop",
  "SessionStart",
  "SessionEnd",
  "SubagentStart",
  "PostCompact",
  "Notification",
] as const;
export const COMMAND_EVENTS = [...BLOCKING_COMMAND_EVENTS, ...FAIL_OPEN_COMMAND_EVENTS] as const;
export type CommandEvent = (typeof COMMAND_EVENTS)[number];
type BlockingCommandEvent = (typeof BLOCKING_COMMAND_EVENTS)[number];
const blocking = (event: CommandEvent): event is BlockingCommandEvent =>
  (BLOCKING_COMMAND_EVENTS as readonly string[]).includes(event);

export interface Cell {
  readonly layer: "plugin" | "command";
  readonly hook: string;
  readonly fault: string;
  /** closed: must block; open: must not change the run. */
  readonly policy: "closed" | "open";
  readonly expected: string;
  readonly observed: string;
  readonly ok: boolean;
  readonly problems: readonly string[];
}

/** A cell as found, before it is judged. */
type Found = Omit<Cell, "ok">;

const FAULT_TIMEOUT_MS = 80;
const PROMPT = "[r2] Please look k up. CANARY-r2-prompt";
/** Each cell's session: the scripted run, a manual compaction, then /reset (which ends the session). */
const PROMPTS = [PROMPT, "/compact", "/reset"];
const COMPACT_TURN = 1;
const OUTPUT = "CANARY-r2-output";
const SCRIPT = {
  runs: [
    { match: "^\\[r2c\\]", turns: [{ text: "child answer" }] },
    {
      match: "^\\[r2\\]",
      turns: [
        {
          text: "step CANARY-r2-step",
          toolCalls: [
            { id: "t_lookup", name: "Lookup", input: { key: "k" } },
            { id: "t_echo", name: "Echo", input: { text: "x" } },
            { id: "t_agent", name: "Agent", input: { description: "d", prompt: "[r2c] child task" } },
            { id: "t_fail", name: "Fail", input: {} },
            { id: "t_guarded", name: "Guarded", input: {} },
          ],
        },
        { text: "final CANARY-r2-final (saw {{lastToolResult}})" },
      ],
    },
  ],
};

interface Observation {
  readonly results: RunResult[];
  /** Every session's stored messages, without ids or times, for comparison with the baseline. */
  readonly stored: string;
  readonly lookupRuns: number;
  readonly echoRuns: number;
  /** Compactions recorded, in every session. */
  readonly compactions: number;
  readonly audit: { hook: string; pluginId: string; outcome: string }[];
  readonly hooksFired: ReadonlySet<string>;
  /** Sinks in which a secret was found. */
  readonly secretIn: string[];
}

interface CellSetup {
  readonly plugins?: PluginDefinition[];
  readonly settings?: string;
  readonly secrets: readonly string[];
  /** Searched only where users and the model look (the command line may appear in startup diagnostics). */
  readonly visibleSecrets?: readonly string[];
  readonly dir: string;
  readonly postgresUrl?: string;
}

function counting<T extends Tool>(tool: T, counter: { n: number }): T {
  const execute = (input: never, ctx: never) => {
    counter.n++;
    return tool.execute(input, ctx);
  };
  return { ...tool, execute } as T;
}

/** A tool a deny rule refuses: its call reaches permission_denied (PermissionDenied). */
const guardedTool: Tool<Record<string, never>, string> = {
  name: "Guarded",
  description: "Never allowed",
  inputSchema: z.object({}).strict(),
  async execute() {
    return "ran";
  },
};

/** What the failing tool prints: a PostToolUseFailure block must keep it from the store. */
const FAILURE = "the service is down";
/** A tool that always fails: its call reaches PostToolUseFailure. */
const failTool: Tool<Record<string, never>, never> = {
  name: "Fail",
  description: "Always fails",
  inputSchema: z.object({}).strict(),
  async execute() {
    throw new Error(FAILURE);
  },
};

const asker = definePlugin({
  id: "asker",
  setup: (api) => api.on("before_tool_call", () => ({ requireApproval: { title: "Run Echo?" } }), { matcher: "Echo" }),
});

async function observe(setup: CellSetup): Promise<Observation> {
  const timeline = new Timeline();
  const { logger, lines } = captureLogger();
  const stdio = captureStdio();
  const lookups = { n: 0 };
  const echoes = { n: 0 };
  const results: RunResult[] = [];
  const opened = await openScenarioStore({ kind: "sqlite", dir: setup.dir });
  let stored = "";
  let compactions = 0;
  let audit: Observation["audit"] = [];
  try {
    const gatehouse = createGatehouse({
      model: harnessModel(SCRIPT, (prompt) => timeline.push({ type: "model", prompt })),
      plugins: [tapPlugin(), asker, ...(setup.plugins ?? [])],
      store: opened.store,
      tools: [
        counting(lookupTool({ k: `data ${OUTPUT}` }), lookups),
        counting(echoTool, echoes),
        failTool,
        guardedTool,
      ],
      subagents: true,
      // Agent calls ask in default mode: a rule keeps them out of the approver this harness counts on;
      // Guarded is refused by a rule, so every run reaches permission_denied.
      permissions: { allow: ["Agent"], deny: ["Guarded"] },
      approver: async () => "allow-once",
      logger,
      config: { cwd: setup.dir, compaction: { contextTokens: 60, keepRecent: 1 } },
      env: { ...process.env, OPENAI_API_KEY: "sk-r2" },
      ...(setup.settings ? { commandHooks: { load: { homeDir: setup.dir, cliSettings: setup.settings } } } : {}),
    });
    timeline.tap(gatehouse);
    for (const prompt of PROMPTS) {
      const stream = gatehouse.stream({ prompt, ...(results[0] ? { sessionId: results[0].sessionId } : {}) });
      timeline.tapStream(stream);
      for await (const _ of stream) {
        // recorded by the tap
      }
      results.push(await stream.result);
    }
    await gatehouse.engine.drain();
    stored = await normalizedStore(gatehouse.store);
    for (const s of await gatehouse.store.listSessions({ limit: 1000 }))
      compactions += (await gatehouse.store.listCompactions(s.id)).length;
    audit = (await gatehouse.store.listAudit()).map(({ hook, pluginId, outcome }) => ({ hook, pluginId, outcome }));
    await gatehouse.close();
  } finally {
    stdio.restore();
  }
  const persisted = await opened.persisted();
  const all: Sink[] = [
    ...persisted,
    textSink("log", lines.join("\n")),
    textSink("stdout/stderr", stdio.text()),
    textSink("audit", JSON.stringify(audit)),
  ];
  const visible: Sink[] = [
    ...persisted,
    textSink("run results", JSON.stringify(results)),
    ...timeline.entries.map((e) => textSink(`${e.type} #${e.seq}`, timeline.text(e))),
  ];
  const secretIn: string[] = [];
  for (const secret of setup.secrets)
    for (const sink of [...all, ...visible]) if (sinkHas(sink, secret)) secretIn.push(sink.name);
  for (const secret of setup.visibleSecrets ?? [])
    for (const sink of visible) if (sinkHas(sink, secret)) secretIn.push(`${sink.name} (command line)`);
  const hooksFired = new Set(timeline.entries.flatMap((e) => (e.type === "hook" ? [e.hook] : [])));
  return { results, stored, lookupRuns: lookups.n, echoRuns: echoes.n, compactions, audit, hooksFired, secretIn };
}

/** Stored messages of every session, as role and parts, in order: what a fault must not change. */
async function normalizedStore(store: {
  listSessions(o: { limit: number }): Promise<{ id: string; parentSessionId: string | null; createdAt: string }[]>;
  sessionMessages(id: string): Promise<Message[]>;
}): Promise<string> {
  const sessions = (await store.listSessions({ limit: 1000 })).sort(
    (a, b) =>
      Number(a.parentSessionId !== null) - Number(b.parentSessionId !== null) || a.createdAt.localeCompare(b.createdAt),
  );
  const out: string[] = [];
  // The conversation: what a hook added for the transcript (a plain-text UserPromptSubmit answer is
  // context, recorded as an attachment) changes nothing the model or the user reads.
  for (const s of sessions)
    for (const m of await store.sessionMessages(s.id))
      if (attachmentOf(m) === undefined) out.push(`${m.role}: ${JSON.stringify(m.parts)}`);
  return out.join("\n");
}

function describe(o: Observation): string {
  const first = o.results[0];
  return `${first?.outcome}${first?.blockedBy ? ` by ${first.blockedBy.pluginId}@${first.blockedBy.hook}` : ""}, reply ${JSON.stringify(first?.reply)?.slice(0, 60)}, Lookup ran ${o.lookupRuns}x, Echo ran ${o.echoRuns}x`;
}

// Plugin faults

function secretFor(hook: string, fault: string, seed: number): string {
  return `SECRET-r2-${hook}-${fault}-${forScenario(seed, hook.length * 31 + fault.length).hex(8)}`;
}

/** A value that fails `schema` and carries the secret, if there is one. */
function wrongValue(schema: z.ZodType, secret: string): unknown {
  for (const candidate of [secret, { nested: secret }, [secret], [{ nested: secret }]])
    if (!schema.safeParse(candidate).success) return candidate;
  return undefined;
}

/** A result of the hook's shape with one field of the wrong type (carrying the secret). */
function malformed(hook: HookName, secret: string): unknown {
  const spec: HookSpec = HOOKS[hook];
  if (spec.kind === "gate") return { outcome: "block", reason: [secret], message: { text: secret } };
  const shape = (spec.result as z.ZodObject | undefined)?.shape as Record<string, z.ZodType> | undefined;
  if (!shape) return { result: secret };
  for (const [field, schema] of Object.entries(shape)) {
    const value = wrongValue(schema, secret);
    if (value !== undefined) return { [field]: value };
  }
  // A field the schema does not check (a Message): a value of the wrong shape all the same.
  return { [Object.keys(shape)[0] ?? "x"]: { nested: secret } };
}

/** A result that would change the run if it were honoured after its timeout. */
function lateResult(hook: HookName, secret: string): unknown {
  const spec: HookSpec = HOOKS[hook];
  if (spec.kind === "gate") return { outcome: "block", reason: secret, message: secret };
  if (spec.kind === "claim") return { handled: true, reply: hook === "inbound_claim" ? secret : { text: secret } };
  const shape = (spec.result as z.ZodObject | undefined)?.shape as Record<string, z.ZodType> | undefined;
  for (const [field, schema] of Object.entries(shape ?? {}))
    if (schema.safeParse(secret).success) return { [field]: secret };
  return undefined;
}

export function faultyPlugin(hook: HookName, fault: PluginFault, secret: string): PluginDefinition {
  const sync = HOOKS[hook].kind === "sync";
  const extraKey = `extra_${secret.slice(-8)}`;
  const value = (): unknown => {
    switch (fault) {
      case "throws":
        throw new Error(`handler failed on ${secret}`);
      case "null":
        return null;
      case "malformed":
        return malformed(hook, secret);
      case "extra-key":
        return HOOKS[hook].kind === "gate" ? { outcome: "pass", [extraKey]: secret } : { [extraKey]: secret };
      case "timeout":
        return undefined;
    }
  };
  const handler = sync
    ? // A sync hook that "times out" is one that returns a Promise: an error by the catalog's rules.
      () => (fault === "timeout" ? Promise.resolve(lateResult(hook, secret)) : value())
    : async (_event: unknown, ctx: { signal?: AbortSignal }) => {
        if (fault !== "timeout") return value();
        await new Promise<void>((resolve) => {
          if (ctx.signal?.aborted) resolve();
          ctx.signal?.addEventListener("abort", () => resolve(), { once: true });
          setTimeout(resolve, 2000).unref();
        });
        return lateResult(hook, secret);
      };
  return definePlugin({
    id: "faulty",
    setup: (api) => {
      api.on(hook, handler as never, { timeoutMs: FAULT_TIMEOUT_MS });
    },
  });
}

const AUDIT_OUTCOME: Record<PluginFault, string> = {
  throws: "error",
  timeout: "timeout",
  null: "invalid",
  malformed: "invalid",
  "extra-key": "invalid",
};

const CLOSED_EFFECT: Record<string, string> = {
  before_input: "input blocked before anything acts on it: notice stored, outcome blocked",
  before_agent_run: "prompt blocked: no model call, notice stored, outcome blocked",
  before_tool_call: "every call blocked: no tool runs, the model gets the notice",
  after_tool_call: "outputs withheld: notice instead of the output, everywhere",
  before_response_emit: "response blocked: notice stored and delivered, outcome blocked",
  message_sending: "delivery cancelled: nothing delivered, a notice stored in the answer's place",
};

function closedProblems(hook: HookName, o: Observation): string[] {
  const p: string[] = [];
  const r = o.results[0] as RunResult;
  const blockedByFaulty = r.blockedBy?.pluginId === "faulty" && r.blockedBy.hook === hook;
  switch (hook) {
    case "before_input":
    case "before_agent_run":
      if (r.outcome !== "blocked" || !blockedByFaulty) p.push("the run was not blocked by the failing gate");
      if (r.reply !== notices.promptBlocked("faulty")) p.push("the reply is not the generic notice");
      if (o.stored.includes("CANARY-r2-prompt")) p.push("the blocked prompt is stored");
      break;
    case "before_tool_call":
      if (o.lookupRuns + o.echoRuns > 0) p.push("a tool ran");
      if (!o.stored.includes(notices.toolBlocked("Lookup", "faulty"))) p.push("no blocked-call notice stored");
      break;
    case "after_tool_call":
      if (o.lookupRuns !== 1) p.push("Lookup did not run once");
      if (o.stored.includes(OUTPUT)) p.push("the withheld output is stored");
      if (!o.stored.includes("withheld by a policy (faulty)")) p.push("no withheld notice stored");
      break;
    case "before_response_emit":
      if (r.outcome !== "blocked" || !blockedByFaulty) p.push("the response was not blocked by the failing hook");
      if (r.reply !== notices.responseBlocked("faulty")) p.push("the reply is not the generic notice");
      if (o.stored.includes("CANARY-r2-final")) p.push("the blocked answer is stored");
      break;
    case "message_sending":
      // The store keeps what was delivered: nothing, and a notice saying so.
      if (r.reply !== null) p.push("something was delivered");
      if (o.stored.includes("CANARY-r2-final")) p.push("the answer that was not delivered is stored");
      if (!o.stored.includes(notices.notDelivered("faulty"))) p.push("no not-delivered notice stored");
      break;
  }
  return p;
}

export interface R2Options extends CommandCellsOptions {
  readonly seed: number;
  /** Only these layers (default both). */
  readonly layers?: readonly ("plugin" | "command")[];
  readonly onCell?: (cell: Cell) => void;
}

export interface R2Figures {
  readonly cells: readonly Cell[];
  readonly failed: number;
  readonly ms: number;
}

export async function runR2(options: R2Options): Promise<R2Figures> {
  const started = performance.now();
  const cells: Cell[] = [];
  const push = (found: Found) => {
    const cell: Cell = { ...found, ok: found.problems.length === 0 };
    cells.push(cell);
    options.onCell?.(cell);
  };
  const layers = options.layers ?? ["plugin", "command"];
  const root = mkdtempSync(join(tmpdir(), "gatehouse-r2-"));
  try {
    const baseline = await observe({ secrets: [], dir: mkdir(root, "baseline") });
    const missing = [...HOOK_NAMES].filter((h) => !baseline.hooksFired.has(h));
    if (missing.length) throw new Error(`the R2 run does not reach every hook: ${missing.join(", ")}`);
    if (layers.includes("plugin")) for (const cell of await pluginCells(options.seed, root, baseline)) push(cell);
    if (layers.includes("command")) {
      await checkCommandEventsFire(root, options.events ?? COMMAND_EVENTS);
      for (const cell of await commandCells(options.seed, root, baseline, options)) push(cell);
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  return { cells, failed: cells.filter((c) => !c.ok).length, ms: performance.now() - started };
}

let dirs = 0;
function mkdir(root: string, name: string): string {
  const dir = join(root, `${name}-${dirs++}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

async function pluginCells(seed: number, root: string, baseline: Observation): Promise<Found[]> {
  const cells: Found[] = [];
  for (const hook of HOOK_NAMES) {
    const spec: HookSpec = HOOKS[hook];
    for (const fault of PLUGIN_FAULTS) {
      const secret = secretFor(hook, fault, seed);
      const o = await observe({
        plugins: [faultyPlugin(hook, fault, secret)],
        secrets: [secret],
        dir: mkdir(root, hook),
      });
      const problems: string[] = [];
      const closed = spec.failure === "closed";
      if (closed) {
        problems.push(...closedProblems(hook, o));
        const want = AUDIT_OUTCOME[fault];
        if (!o.audit.some((a) => a.hook === hook && a.pluginId === "faulty" && a.outcome === want))
          problems.push(`no audit record ${hook}/faulty/${want}`);
      } else {
        if (o.stored !== baseline.stored) problems.push("the stored conversation differs from the baseline");
        if (!sameResults(o, baseline))
          problems.push(`the run differs from the baseline: ${describe(o)} vs ${describe(baseline)}`);
      }
      for (const where of new Set(o.secretIn)) problems.push(`the failure's content reached ${where}`);
      cells.push({
        layer: "plugin",
        hook,
        fault,
        policy: closed ? "closed" : "open",
        expected: closed ? (CLOSED_EFFECT[hook] ?? "block") : "run unchanged",
        observed: describe(o),
        problems,
      });
    }
  }
  return cells;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

function comparable(r: RunResult) {
  return { outcome: r.outcome, reply: r.reply?.replace(UUID, "<id>") ?? null, blockedBy: r.blockedBy, steps: r.steps };
}

// Command-hook faults

/** Writes the fault's handler under a folder whose name is a secret (the command line must never be shown). */
function commandHandler(fault: CommandFault, dir: string, secret: string): Record<string, unknown> {
  const home = join(dir, `CMDLINE-${secret.slice(-8)}`);
  mkdirSync(home, { recursive: true });
  const script = (name: string, body: string, mode = 0o755) => {
    const path = join(home, name);
    writeFileSync(path, `#!/bin/sh\ncat > /dev/null\n${body}\n`);
    chmodSync(path, mode);
    return path;
  };
  switch (fault) {
    case "missing":
      return { command: join(home, "no-such-hook.sh") };
    case "missing-exec":
      return { command: join(home, "no-such-hook"), args: [] };
    case "not-executable":
      return { command: script("hook.sh", "exit 0", 0o644), args: [] };
    case "non-json":
      return { command: script("hook.sh", `printf '{"decision": ${secret}'`) };
    case "plain-text":
      return { command: script("hook.sh", "echo 'all fine, nothing to say'") };
    case "signal":
      return { command: script("hook.sh", "kill -KILL $$") };
    case "flood":
      return {
        command: script(
          "hook.sh",
          `printf '{"decision":"'; yes '${secret}' | head -c 3000000; yes '${secret}' | head -c 3000000 >&2`,
        ),
      };
    case "timeout":
      return { command: script("hook.sh", "sleep 5"), timeout: 0.3 };
    case "exit-1":
      return { command: script("hook.sh", "echo 'the hook crashed' >&2; exit 1") };
    case "wrong-shape":
      return { command: script("hook.sh", `printf '{"decision": 5, "reason": "${secret}"}'`) };
    case "null":
      return { command: script("hook.sh", "echo null") };
    case "extra-key":
      return { command: script("hook.sh", `printf '{"extra_${secret.slice(-8)}": "${secret}"}'`) };
  }
}

/** Faults whose secret is in what the hook printed (the others print nothing secret). */
const PRINTS_SECRET: ReadonlySet<CommandFault> = new Set(["non-json", "flood", "wrong-shape", "extra-key"]);

const SIGNAL_REASON = "Killed";

/** Where a command hook's block is enforced, and so audited. */
const AUDITED_AT: Partial<Record<CommandEvent, string>> = {
  UserPromptSubmit: "before_input",
  PreToolUse: "before_tool_call",
  PostToolUse: "after_tool_call",
  PostToolUseFailure: "after_tool_call",
};

const COMMAND_CLOSED_EFFECT: Record<BlockingCommandEvent, string> = {
  UserPromptSubmit: "input blocked at the input door, fixed reason (or the hook's stderr)",
  PreToolUse: "calls denied: no tool runs",
  PostToolUse: "outputs withheld",
  PostToolUseFailure: "failures withheld",
  PermissionRequest: "approval denied: Echo does not run",
  PreCompact: "compaction blocked (/compact says by whom); the run otherwise unchanged",
  PostToolBatch: "the run ends after the tool step, blocked (category stop), the reason as its reply",
};

const COMPACTION_BLOCKED = "Compaction was blocked by a policy (command-hooks).";

/** What `onFailure: "block"` must do for this fault on an event that can block. */
function commandProblems(
  event: BlockingCommandEvent,
  fault: CommandFault,
  o: Observation,
  baseline: Observation,
): string[] {
  const p: string[] = [];
  const r = o.results[0] as RunResult;
  // A non-zero exit shows the process's stderr: under `sh -c` a hook killed by a signal leaves the
  // shell's own "Killed" there (exit 137), which the protocol passes on as the reason.
  const reason =
    fault === "exit-1" ? "the hook crashed" : fault === "signal" ? SIGNAL_REASON : NO_DECISION_BLOCK_REASON;
  switch (event) {
    case "UserPromptSubmit":
      if (r.outcome !== "blocked" || r.blockedBy?.pluginId !== "command-hooks") p.push("the prompt was not blocked");
      if (r.reply !== reason) p.push(`the reply is not "${reason}"`);
      if (o.stored.includes("CANARY-r2-prompt")) p.push("the blocked prompt is stored");
      break;
    case "PreToolUse":
      if (o.lookupRuns + o.echoRuns > 0) p.push("a tool ran");
      if (!o.stored.includes(reason)) p.push("the denial reason is not what the model got");
      break;
    case "PostToolUse":
      if (o.stored.includes(OUTPUT)) p.push("the output is stored");
      if (!o.stored.includes("withheld by a policy (command-hooks)")) p.push("no withheld notice");
      break;
    case "PostToolUseFailure":
      if (o.stored.includes(FAILURE)) p.push("the failure is stored");
      if (!o.stored.includes("output of this Fail call was withheld by a policy (command-hooks)"))
        p.push("no withheld notice for the failure");
      break;
    case "PermissionRequest":
      if (o.echoRuns !== 0) p.push("Echo ran without approval");
      // Who denied: an audit record, or the notice the model got.
      if (!o.audit.some((a) => a.pluginId === "command-hooks") && !/not approved[^"]*command-hooks/.test(o.stored))
        p.push("the denial is not attributed (no audit record, and the notice does not name command-hooks)");
      break;
    case "PostToolBatch":
      if (r.outcome !== "blocked" || r.blockedBy?.category !== "stop" || r.blockedBy.pluginId !== "command-hooks")
        p.push(`the run was not stopped by command-hooks (${r.outcome})`);
      if (r.reply !== reason) p.push(`the reply is not "${reason}"`);
      break;
    case "PreCompact":
      if (o.compactions !== 0) p.push(`${o.compactions} compactions recorded`);
      if (o.results[COMPACT_TURN]?.reply !== COMPACTION_BLOCKED) p.push("/compact does not say who blocked it");
      // The same messages, without the summaries the baseline's compactions wrote.
      if (withoutSummaries(o.stored) !== withoutSummaries(baseline.stored))
        p.push("the stored conversation differs from the baseline");
      if (!sameResults(o, baseline, COMPACT_TURN)) p.push(`the run differs from the baseline: ${describe(o)}`);
      break;
  }
  return p;
}

function withoutSummaries(stored: string): string {
  return stored
    .split("\n")
    .filter((line) => !line.startsWith("summary: "))
    .join("\n");
}

function sameResults(o: Observation, baseline: Observation, except?: number): boolean {
  const keep = (r: RunResult, i: number) => (i === except ? null : comparable(r));
  return JSON.stringify(o.results.map(keep)) === JSON.stringify(baseline.results.map(keep));
}

/** The command-hook events a run of the matrix covers (default all). */
export interface CommandCellsOptions {
  readonly events?: readonly CommandEvent[];
}

async function commandCells(
  seed: number,
  root: string,
  baseline: Observation,
  options: CommandCellsOptions,
): Promise<Found[]> {
  const cells: Found[] = [];
  const events = options.events ?? COMMAND_EVENTS;
  for (const onFailure of ["block", "continue"] as const) {
    // On an event that cannot block, `continue` is what every failure does anyway; `block` is the
    // setting that must not make it block.
    for (const event of events.filter((e) => onFailure === "block" || blocking(e))) {
      for (const fault of COMMAND_FAULTS) {
        const secret = secretFor(event, fault, seed + (onFailure === "block" ? 0 : 1));
        const dir = mkdir(root, `${event}-${fault}`);
        const handler = { type: "command", ...commandHandler(fault, dir, secret), onFailure };
        const settings = JSON.stringify({ hooks: { [event]: [{ hooks: [handler] }] } });
        const o = await observe({
          settings,
          secrets: PRINTS_SECRET.has(fault) ? [secret] : [],
          visibleSecrets: [`CMDLINE-${secret.slice(-8)}`],
          dir,
        });
        const blocks = onFailure === "block" && !NO_DECISION_FAULTS.has(fault) && blocking(event);
        const problems = blocks && blocking(event) ? commandProblems(event, fault, o, baseline) : [];
        const auditedAt = AUDITED_AT[event];
        if (blocks && auditedAt && !o.audit.some((a) => a.hook === auditedAt && a.pluginId === "command-hooks"))
          problems.push(`no audit record ${auditedAt}/command-hooks`);
        if (!blocks) {
          if (o.stored !== baseline.stored) problems.push("the stored conversation differs from the baseline");
          if (o.compactions !== baseline.compactions) problems.push("compaction differs from the baseline");
          if (!sameResults(o, baseline))
            problems.push(`the run differs from the baseline: ${describe(o)} vs ${describe(baseline)}`);
        }
        for (const where of new Set(o.secretIn)) problems.push(`the failure's content reached ${where}`);
        cells.push({
          layer: "command",
          hook: `${event} (onFailure ${onFailure})`,
          fault,
          policy: blocks ? "closed" : "open",
          expected: blocks
            ? COMMAND_CLOSED_EFFECT[event as BlockingCommandEvent]
            : NO_DECISION_FAULTS.has(fault)
              ? "run unchanged (an answer without a decision)"
              : "run unchanged",
          observed: describe(o),
          problems,
        });
      }
    }
  }
  return cells;
}

/**
 * Every event of the matrix must fire in its run: one run with a recording hook on each, which
 * must see them all (a cell on an event that never fires would pass without testing anything).
 */
async function checkCommandEventsFire(root: string, events: readonly CommandEvent[]): Promise<void> {
  const dir = mkdir(root, "events");
  const log = join(dir, "fired.log");
  const recorder = join(dir, "record.sh");
  writeFileSync(recorder, `#!/bin/sh\ncat > /dev/null\necho "$1" >> '${log}'\n`);
  chmodSync(recorder, 0o755);
  const hooks = Object.fromEntries(
    events.map((e) => [e, [{ hooks: [{ type: "command", command: recorder, args: [e] }] }]]),
  );
  await observe({ settings: JSON.stringify({ hooks }), secrets: [], dir });
  const fired = new Set(existsSync(log) ? readFileSync(log, "utf8").split("\n") : []);
  const missing = events.filter((e) => !fired.has(e));
  if (missing.length) throw new Error(`the R2 run does not fire every command-hook event: ${missing.join(", ")}`);
}

/** The matrix as a Markdown table: one row per hook, one column per fault. */
export function matrixTable(cells: readonly Cell[]): string {
  const out: string[] = [];
  for (const layer of ["plugin", "command"] as const) {
    const mine = cells.filter((c) => c.layer === layer);
    if (!mine.length) continue;
    const faults = [...new Set(mine.map((c) => c.fault))];
    out.push(`| ${layer === "plugin" ? "plugin hook" : "command hook"} | policy | ${faults.join(" | ")} |`);
    out.push(`|---|---|${faults.map(() => "---").join("|")}|`);
    for (const hook of [...new Set(mine.map((c) => c.hook))]) {
      const row = mine.filter((c) => c.hook === hook);
      const policy = row.every((c) => c.policy === row[0]?.policy) ? (row[0]?.policy ?? "") : "mixed";
      const marks = faults.map((f) => {
        const c = row.find((x) => x.fault === f);
        if (!c) return "";
        const word = c.policy === "closed" ? "blocks" : "no change";
        return c.ok ? `${word} ✓` : "**FAIL**";
      });
      out.push(
        `| ${hook} | ${policy === "closed" ? "fail closed" : policy === "open" ? "fail open" : policy} | ${marks.join(" | ")} |`,
      );
    }
    out.push("");
  }
  return out.join("\n");
}
