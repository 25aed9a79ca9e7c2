import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  APICallError,
  type LanguageModelV3,
  type LanguageModelV3CallOptions,
  type LanguageModelV3Prompt,
  type LanguageModelV3StreamPart,
  type LanguageModelV3StreamResult,
} from "@ai-sdk/provider";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";
import { createGatehouse, type Gatehouse } from "../src/assembly/gatehouse.js";
import { COMMAND_HOOK_EVENTS } from "../src/command-hooks/events.js";
import { createScriptedModel, type ScriptInput } from "../src/models/index.js";
import { parseRule } from "../src/permissions/rules.js";
import type { HostLogger } from "../src/plugins/host.js";
import { definePlugin, type PluginDefinition } from "../src/plugins/index.js";
import type { ApprovalRequest, Approver } from "../src/runtime/types.js";
import { createBashSandbox } from "../src/sandbox/bash.js";
import { DEFAULT_SANDBOX_SETTINGS } from "../src/sandbox/settings.js";
import type { SessionStore } from "../src/store/types.js";
import { createBashTool } from "../src/tools/builtin/bash.js";
import { type Tool, ToolError } from "../src/tools/types.js";
import { COMMAND, MARK, MASKED_VARIABLE, type PlannedRun, RULES, type Scenario, type Target } from "./scenario.js";

/** The compaction call ends with this instruction (src/runtime/compaction.ts). */
const SUMMARY_INSTRUCTION = "Summarize the conversation above";
const TOKEN = /(?:CANARY|REDACTED|REASON|NOTICE)-[A-Za-z0-9-]+/g;

export const HOOK_SCRIPT = fileURLToPath(new URL("./hook.sh", import.meta.url));

/**
 * The scripted model, plus the adversarial summarizer: a compaction call is answered with every
 * canary the prompt holds, so a summary written from content that is later blocked or rewritten
 * carries that content (the store must drop such a summary). With `faults`, the provider fails
 * the planned calls once each (see ProviderFaults).
 */
export function harnessModel(
  script: ScriptInput,
  onCall?: (prompt: LanguageModelV3Prompt) => void,
  faults?: ProviderFaults,
  /** A canary the first summary carries, with the marker the store policy blocks it by (`summary-block`). */
  summaryCanary?: string,
): LanguageModelV3 {
  const scripted = createScriptedModel(script, { name: "harness" });
  let plant = summaryCanary === undefined ? "" : ` ${MARK.summaryBlock} ${summaryCanary}`;
  const summarize = (prompt: LanguageModelV3Prompt): LanguageModelV3 => {
    const tokens = new Set(JSON.stringify(prompt).match(TOKEN) ?? []);
    const text = `Summary: ${[...tokens].join(" ") || "nothing"}${plant}`;
    const partial = faults?.failSummary();
    // Written once, by the first summary that is not a failed attempt: later ones copy only what they are shown.
    if (partial === undefined) plant = "";
    return partial === undefined
      ? createScriptedModel({ runs: [{ turns: [{ text }] }] })
      : failingAfter(`${text} ${partial}`, overloaded(partial));
  };
  const pick = (options: LanguageModelV3CallOptions) => {
    onCall?.(options.prompt);
    if (isSummaryCall(options.prompt)) return summarize(options.prompt);
    faults?.failStep(options);
    return scripted;
  };
  return {
    specificationVersion: "v3",
    provider: "scripted",
    modelId: "harness",
    supportedUrls: {},
    doGenerate: async (options) => pick(options).doGenerate(options),
    doStream: async (options): Promise<LanguageModelV3StreamResult> => pick(options).doStream(options),
  };
}

/**
 * The provider's failures a scenario plans (`Scenario.providerFaults`), and what came of them.
 * A planned model call fails at its first attempt, before anything streams, with a 503 that asks
 * for an immediate retry (`retry-after-ms: 0`) and whose text holds a token; the runtime tries
 * it again (docs/lifecycle.md, "Retries"). The first compaction summary, when planned, streams
 * part of a summary (the token after every canary of its prompt) and then fails the same way;
 * compaction tries it again (nothing of a summary reaches anyone as it streams). Either way the
 * failed attempt is discarded: its token may be kept nowhere.
 */
export class ProviderFaults {
  /** Attempts of each planned call, by `tag#step`. */
  readonly attempts = new Map<string, number>();
  /** Attempts at a compaction summary (counted only when one is planned to fail). */
  summaryAttempts = 0;

  constructor(
    private readonly plan: Scenario["providerFaults"],
    /** How many attempts of each planned call fail (the harness's own tests fail them all). */
    private readonly failing = 1,
  ) {}

  /** Throws for the first attempt of a planned call (the first `failing` attempts). */
  failStep(options: LanguageModelV3CallOptions): void {
    const mark = options.providerOptions?.gatehouse as { runPrompt?: unknown; step?: unknown } | undefined;
    if (typeof mark?.runPrompt !== "string" || typeof mark.step !== "number") return;
    const tag = tagOf(mark.runPrompt);
    const fault = this.plan.steps.find((f) => f.tag === tag && f.step === mark.step);
    if (!fault) return;
    const key = `${fault.tag}#${fault.step}`;
    const attempt = (this.attempts.get(key) ?? 0) + 1;
    this.attempts.set(key, attempt);
    if (attempt <= this.failing) throw overloaded(fault.token);
  }

  /** The token the first summary streams before it fails, when one is planned; else undefined. */
  failSummary(): string | undefined {
    if (this.plan.summary === undefined) return undefined;
    return ++this.summaryAttempts === 1 ? this.plan.summary : undefined;
  }
}

function overloaded(token: string): APICallError {
  return new APICallError({
    message: `Overloaded while serving ${token}`,
    url: "https://provider.invalid/v1/messages",
    requestBodyValues: {},
    statusCode: 503,
    responseHeaders: { "retry-after-ms": "0" },
    responseBody: JSON.stringify({ error: { type: "overloaded_error", message: `overloaded: ${token}` } }),
    isRetryable: true,
  });
}

/** A model whose stream gives `text`, then fails with `error` (as a dropped connection would). */
function failingAfter(text: string, error: APICallError): LanguageModelV3 {
  const parts: LanguageModelV3StreamPart[] = [
    { type: "stream-start", warnings: [] },
    { type: "text-start", id: "0" },
    { type: "text-delta", id: "0", delta: text },
    { type: "error", error },
  ];
  return {
    specificationVersion: "v3",
    provider: "scripted",
    modelId: "harness",
    supportedUrls: {},
    doGenerate: async () => {
      throw error;
    },
    doStream: async () => ({
      stream: new ReadableStream<LanguageModelV3StreamPart>({
        start(controller) {
          for (const part of parts) controller.enqueue(part);
          controller.close();
        },
      }),
    }),
  };
}

function isSummaryCall(prompt: LanguageModelV3Prompt): boolean {
  const last = prompt.at(-1);
  if (last?.role !== "user") return false;
  const first = last.content[0];
  return first?.type === "text" && first.text.startsWith(SUMMARY_INSTRUCTION);
}

/** A tool whose output is not in its input: a canary there can only come from the output. */
export function lookupTool(table: Readonly<Record<string, string>>): Tool<{ key: string }, { value: string }> {
  return {
    name: "Lookup",
    description: "Looks a key up",
    inputSchema: z.object({ key: z.string() }),
    parallel: true,
    async execute(input) {
      return { value: table[input.key] ?? "nothing" };
    },
  };
}

/** A tool that fails, printing what its table holds: a canary in a failure (a non-zero exit's output). */
export function failTool(table: Readonly<Record<string, string>>): Tool<{ key: string }, never> {
  return {
    name: "Fail",
    description: "Fails, printing what it found",
    inputSchema: z.object({ key: z.string() }),
    parallel: true,
    async execute(input) {
      throw new ToolError(`exit 1: ${table[input.key] ?? "nothing"}`);
    },
  };
}

export const echoTool: Tool<{ text: string }, { echoed: string }> = {
  name: "Echo",
  description: "Echoes its text",
  inputSchema: z.object({ text: z.string() }),
  async execute(input) {
    return { echoed: input.text };
  },
};

// ─── The MCP server: one tool that answers `isError` with what a shared table holds ──────────────

const mcpTable = new Map<string, string>();

/**
 * A loopback HTTP server shared by every scenario running in this process: each `use` is matched
 * by a `release`, and the last release stops it.
 */
function sharedServer(handler: Parameters<typeof createServer>[1]) {
  let running: Promise<{ server: Server; port: number; users: number }> | undefined;
  const start = async () => {
    const server = createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return { server, port: (server.address() as AddressInfo).port, users: 0 };
  };
  return {
    async use(): Promise<number> {
      running ??= start();
      const server = await running;
      server.users++;
      return server.port;
    },
    async release(): Promise<void> {
      const current = running;
      if (!current) return;
      const server = await current;
      if (--server.users > 0) return;
      running = undefined;
      server.server.closeAllConnections();
      await new Promise<void>((resolve) => server.server.close(() => resolve()));
    },
  };
}

/** An MCP server over streamable HTTP: its tool `fail` answers `isError: true` with the text a scenario registered for its key. */
const mcpServer = sharedServer(async (req, res) => {
  // Stateless: a server and a transport per request.
  const tools = new McpServer({ name: "canary", version: "1.0.0" });
  tools.registerTool(
    "fail",
    { description: "Fails, reporting what it found", inputSchema: { key: z.string() } },
    async ({ key }) => ({ content: [{ type: "text", text: mcpTable.get(key) ?? "nothing" }], isError: true }),
  );
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on("close", () => {
    void transport.close();
    void tools.close();
  });
  await tools.connect(transport);
  await transport.handleRequest(req, res);
});

/** The MCP server's URL; matched by `releaseMcpServer`. */
export async function useMcpServer(): Promise<string> {
  return `http://127.0.0.1:${await mcpServer.use()}/mcp`;
}

export const releaseMcpServer = (): Promise<void> => mcpServer.release();

// ─── The loopback sink: what a command that got out of the sandbox would post ──────────────────

/** Every body the sink server received, in this process (scenarios' canaries are unique). */
export const sinkBodies: string[] = [];

/** A loopback HTTP server that keeps every request body (a sink). */
const sinkServer = sharedServer((req, res) => {
  let body = "";
  req.setEncoding("utf8").on("data", (d: string) => {
    body += d;
  });
  req.on("end", () => {
    sinkBodies.push(`${req.url ?? ""} ${body}`);
    res.end("received");
  });
});

/** The sink server's port; matched by `releaseSinkServer`. */
export const useSinkServer = (): Promise<number> => sinkServer.use();
export const releaseSinkServer = (): Promise<void> => sinkServer.release();

/**
 * The scripted approver, the person a scenario can ask: yes to a call carrying MARK.approveYes,
 * no to anything else (a sandboxed command's host among them). Every request is recorded.
 */
export function scriptedApprover(asked: ApprovalRequest[], yesToAll = false): Approver {
  return async (request) => {
    asked.push(request);
    return yesToAll || JSON.stringify(request.params ?? null).includes(MARK.approveYes)
      ? "allow-once"
      : { decision: "deny", decidedBy: "approver" };
  };
}

/** Makes a scenario's MCP results known to the server (keys are unique across scenarios). */
export function registerMcpResults(table: Readonly<Record<string, string>>): () => void {
  for (const [key, value] of Object.entries(table)) mcpTable.set(key, value);
  return () => {
    for (const key of Object.keys(table)) mcpTable.delete(key);
  };
}

// ─── The policy ────────────────────────────────────────────────────────────────────────────────

/** The run tag an input names: `[tag] …`, or `/command [tag] …`. */
export function tagOf(input: string): string | undefined {
  return /^(?:\/[a-z-]+ )?\[([a-z0-9]+)\]/.exec(input)?.[1];
}

/**
 * The scenario's policies, deciding by content: an input gate and a run gate, claims and a
 * command answering with the planned replies, a tool-call guard that rewrites or blocks, a
 * withholder of outputs and failures, a compaction guard, a response gate that blocks or
 * rewrites, a delivery gate that cancels or rewrites. Notices are user-facing; reasons are
 * internal and must never be seen again.
 */
export function policyPlugin(
  runs: readonly PlannedRun[],
  targets: readonly Target[],
  replies: Readonly<Record<string, string>> = {},
): PluginDefinition {
  const byTag = new Map(runs.map((r) => [r.tag, r]));
  const runOf = (input: string) => byTag.get(tagOf(input) ?? "");
  const replacer = (kind: Target["kind"]) => {
    const pairs = targets
      .filter((t) => t.kind === kind && t.replacement)
      .map((t) => [t.canary, t.replacement as string]);
    return (text: string) => {
      let out = text;
      for (const [canary, replacement] of pairs) out = out.replaceAll(canary as string, replacement as string);
      return out;
    };
  };
  const rewriteResponse = replacer("response-rewrite");
  const rewriteDelivery = replacer("delivery-rewrite");
  const rewriteCall = replacer("call-rewrite");
  const runPrompts = new Map<string, string>();
  const gateBlock = (input: string, marker: string) => {
    if (!input.includes(marker)) return undefined;
    const run = runOf(input);
    return {
      outcome: "block" as const,
      reason: run?.reason ?? "internal",
      ...(run?.notice ? { message: run.notice } : {}),
      category: "canary",
    };
  };
  return definePlugin({
    id: "policy",
    setup(api) {
      api.on("message_received", (e, ctx) => void runPrompts.set(ctx.runId, e.content));
      api.on("agent_end", (_e, ctx) => void runPrompts.delete(ctx.runId));
      api.on("before_input", (e) => gateBlock(e.prompt, MARK.inputGate));
      api.on("before_agent_run", (e) => gateBlock(e.prompt, MARK.promptGate));
      api.on("inbound_claim", (e) =>
        e.content.includes(MARK.inbound) ? { handled: true, reply: replies[tagOf(e.content) ?? ""] ?? "" } : undefined,
      );
      api.on("before_agent_reply", (e) =>
        e.cleanedBody.includes(MARK.claim)
          ? { handled: true, reply: { text: replies[tagOf(e.cleanedBody) ?? ""] ?? "" } }
          : undefined,
      );
      api.registerCommand(COMMAND, {
        description: "answers with the run's planned reply",
        run: (args) => replies[tagOf(args) ?? ""] ?? "no reply",
      });
      api.on("before_compaction", (e) =>
        (e.instructions ?? "").includes(MARK.compactBlock) ? { block: true } : undefined,
      );
      api.on("before_tool_call", (e) => {
        const input = JSON.stringify(e.params);
        if (input.includes(MARK.callBlock)) return { block: true, blockReason: "that call is not allowed" };
        if (!input.includes(MARK.callRewrite)) return undefined;
        return { params: JSON.parse(rewriteCall(input)) as unknown };
      });
      // A failure's output counts as much as a result's.
      api.on("after_tool_call", (e) =>
        `${JSON.stringify(e.result ?? null)}${e.error ?? ""}`.includes(MARK.withholdPlugin)
          ? { block: true }
          : undefined,
      );
      api.on("before_response_emit", (e, ctx) => {
        if (e.content.includes(MARK.responseBlock)) {
          const run = runOf(runPrompts.get(ctx.runId) ?? "");
          // blockReason is internal; the notice the user sees is `message`.
          return {
            block: true,
            blockReason: run?.reason ?? "internal",
            ...(run?.notice ? { message: run.notice } : {}),
          };
        }
        const allContent = e.allContent.map(rewriteResponse);
        return allContent.some((t, i) => t !== e.allContent[i]) ? { allContent } : undefined;
      });
      // A denial the model may try again, by content (the PermissionDenied hook answers its own marker).
      api.on("permission_denied", (e) =>
        JSON.stringify(e.params ?? null).includes(MARK.retryPlugin) ? { retry: true } : undefined,
      );
      // One more pass for a draft answer, by content (the Stop hook answers its own marker).
      api.on("before_agent_finalize", (e) =>
        e.attempt === 0 && e.lastAssistantMessage.includes(MARK.revisePlugin)
          ? { action: "revise", retry: { instruction: "Please look at your answer again." } }
          : undefined,
      );
      api.on("message_sending", (e, ctx) => {
        if (e.content.includes(MARK.cancel)) {
          const run = runOf(runPrompts.get(ctx.runId) ?? "");
          return { cancel: true, cancelReason: run?.reason ?? "internal" };
        }
        const content = rewriteDelivery(e.content);
        return content === e.content ? undefined : { content };
      });
    },
  });
}

/**
 * The persistence gate's policy (issue 30, `DOOR_KINDS`), by content: `before_message_write`
 * keeps out of the store a summary marked `summaryBlock`, a tool result marked `writeBlock` (its
 * replacement is stored) and one marked `replacementBlock`, whose replacement — the same call's
 * result, as the tool door offers it — it keeps out too.
 */
export function storePolicyPlugin(): PluginDefinition {
  return definePlugin({
    id: "store-policy",
    setup(api) {
      const replaced = new Set<string>();
      api.on("before_message_write", ({ message }) => {
        const text = JSON.stringify(message.parts);
        if (message.role === "summary") return text.includes(MARK.summaryBlock) ? { block: true } : undefined;
        if (message.role !== "tool") return undefined;
        const ids = message.parts.flatMap((p) => (p.type === "tool_result" ? [p.toolCallId] : []));
        if (text.includes(MARK.replacementBlock)) {
          for (const id of ids) replaced.add(id);
          return { block: true };
        }
        return text.includes(MARK.writeBlock) || ids.some((id) => replaced.has(id)) ? { block: true } : undefined;
      });
    },
  });
}

/**
 * The events the hook script runs on: every one Gatehouse fires but SessionEnd (after the
 * scenario's last run), Notification (no person is ever asked), StopFailure (no run fails) and
 * PostToolBatch (a process after every step, for nothing the scenarios check).
 */
const HOOK_EVENTS = COMMAND_HOOK_EVENTS.filter(
  (e) => e !== "SessionEnd" && e !== "Notification" && e !== "StopFailure" && e !== "PostToolBatch",
);

/** `--settings` JSON running the hook script on every event Gatehouse maps. */
export function hookSettings(extra: Record<string, unknown> = {}): string {
  return JSON.stringify(hookSettingsObject(extra));
}

function hookSettingsObject(extra: Record<string, unknown> = {}): { hooks: Record<string, unknown> } {
  const hooks = Object.fromEntries(
    HOOK_EVENTS.map((e) => [e, [{ hooks: [{ type: "command", command: "/bin/sh", args: [HOOK_SCRIPT], ...extra }] }]]),
  );
  return { hooks };
}

/**
 * The settings files of a scenario's folder, from every source (docs/permissions.md): the deny
 * rule on `curl` goes to the scenario's `denySource` (the code allows `curl`); managed settings
 * (`GATEHOUSE_MANAGED_SETTINGS`) deny `scp`, which the user, project, local, `--settings` and
 * code sources all allow; the project allows `echo RAN`. Returns what the Gatehouse is given:
 * the home folder, the managed file and the `--settings` JSON (with the hook script when the
 * scenario has command hooks). Written again for each scenario (R3 runs many in one folder).
 */
export function writeSettings(scenario: Scenario, dir: string): { homeDir: string; managed: string; cli: string } {
  const homeDir = join(dir, "home");
  const managed = join(dir, "managed-settings.json");
  const permissions = (source: string, allow: string[] = []) => ({
    permissions: {
      allow: [RULES.managedDenied, ...allow],
      ...(scenario.denySource === source ? { deny: [RULES.denied] } : {}),
    },
  });
  const write = (file: string, value: unknown) => {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
  };
  write(join(homeDir, ".claude", "settings.json"), permissions("user"));
  const project = permissions("project", [RULES.allowed]);
  write(join(dir, ".claude", "settings.json"), {
    permissions: { ...project.permissions, deny: [...(project.permissions.deny ?? []), RULES.readDenied] },
  });
  write(join(dir, ".claude", "settings.local.json"), permissions("local"));
  write(managed, { permissions: { deny: [RULES.managedDenied] } });
  const cli = { ...permissions("cli"), ...(scenario.commandHooks ? hookSettingsObject() : {}) };
  return { homeDir, managed, cli: JSON.stringify(cli) };
}

export interface ScenarioWorld {
  readonly store: SessionStore;
  /** The scenario's folder: the project folder of its runs (and the command hooks' home). */
  readonly dir: string;
  readonly hookLog: string;
  readonly logger: HostLogger;
  /** The MCP server's URL, when the scenario uses its tool. */
  readonly mcpUrl?: string;
  readonly plugins?: readonly PluginDefinition[];
  readonly onModelCall?: (prompt: LanguageModelV3Prompt) => void;
  /** Where the provider failures the scenario plans are counted (default: a fresh one nobody reads). */
  readonly faults?: ProviderFaults;
  /** Where the approver's requests are recorded (an attended scenario's; default: a list nobody reads). */
  readonly asked?: ApprovalRequest[];
  /** A folder outside the project a sandboxed command tries to write to (`$R1_OUTSIDE`). */
  readonly outside?: string;
  /** The loopback sink server's port (`$R1_PORT`). */
  readonly sinkPort?: number;
  /** For the harness's own tests: run a sandboxed scenario's Bash unsandboxed, to show the checks can fail. */
  readonly noSandbox?: boolean;
  /** For the harness's own tests: the approver says yes to everything, to show the checks can fail. */
  readonly approveAll?: boolean;
}

/**
 * The Bash tool of a scenario: in the OS sandbox for a sandboxed scenario, its policy from the
 * project's Read deny rule (the vault is unreadable), writes limited to the project and the temp
 * folder, and every host not named asked about. Its environment names the outside folder and the
 * sink's port.
 */
function scenarioBash(scenario: Scenario, world: ScenarioWorld): Tool {
  const projectDir = realpathSync(world.dir);
  const parsed = parseRule(RULES.readDenied, "deny");
  if (typeof parsed === "string") throw new Error(parsed);
  const sandbox =
    scenario.sandbox && !world.noSandbox
      ? createBashSandbox({
          projectDir,
          homeDir: join(projectDir, "home"),
          settings: DEFAULT_SANDBOX_SETTINGS,
          rules: [
            {
              behavior: "deny",
              rule: RULES.readDenied,
              parsed,
              id: "project.deny.0",
              source: "project",
              baseDir: projectDir,
            },
          ],
        })
      : undefined;
  const env = {
    ...process.env,
    ...(world.outside ? { R1_OUTSIDE: world.outside } : {}),
    ...(world.sinkPort ? { R1_PORT: String(world.sinkPort) } : {}),
  };
  return createBashTool({ shell: "/bin/sh", env, ...(sandbox ? { sandbox } : {}) }) as Tool;
}

/**
 * A scenario's Gatehouse: its script, its policies and tools (Bash among them), sub-agents two
 * deep, its settings files (permission rules from every source, managed ones included), and the
 * hook script if it has one.
 */
export function scenarioGatehouse(scenario: Scenario, world: ScenarioWorld): Gatehouse {
  const settings = writeSettings(scenario, world.dir);
  for (const [name, content] of Object.entries(scenario.files)) writeFileSync(join(world.dir, name), content);
  const env = {
    ...process.env,
    HOOK_LOG: world.hookLog,
    GATEHOUSE_MANAGED_SETTINGS: settings.managed,
    // The runtime holds a provider key the tools were not given: a tool that prints its value is masked.
    ...(scenario.maskedSecret ? { [MASKED_VARIABLE]: scenario.maskedSecret } : {}),
  };
  return createGatehouse({
    model: harnessModel(
      scenario.script,
      world.onModelCall,
      world.faults ?? new ProviderFaults(scenario.providerFaults),
      scenario.summaryCanary,
    ),
    plugins: [
      ...(world.plugins ?? []),
      policyPlugin([...scenario.runs, ...scenario.children], scenario.targets, scenario.replies),
      storePolicyPlugin(),
    ],
    store: world.store,
    tools: [lookupTool(scenario.lookup), failTool(scenario.failing), echoTool, scenarioBash(scenario, world)],
    ...(scenario.attended ? { approver: scriptedApprover(world.asked ?? [], world.approveAll) } : {}),
    ...(world.mcpUrl ? { mcpServers: { canary: { type: "http", url: world.mcpUrl } } } : {}),
    subagents: { maxDepth: 2 },
    // Agent and MCP calls ask in default mode and the harness has no person to ask: rules allow
    // them, so the generated paths reach the sub-agents and the canary server. The code allows
    // the Bash commands the settings deny: a deny anywhere wins.
    permissions: { allow: ["Agent", "mcp__canary", RULES.denied, RULES.managedDenied] },
    logger: world.logger,
    config: { cwd: world.dir, compaction: scenario.compaction },
    env,
    // The settings files are read as the CLI reads them (the hook script, when there is one, is in `--settings`).
    commandHooks: { load: { homeDir: settings.homeDir, cliSettings: settings.cli, env } },
  });
}
