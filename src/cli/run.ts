import { text } from "node:stream/consumers";
import { createGatehouse, DEFAULTS, type Gatehouse } from "../assembly/gatehouse.js";
import { bashSandbox, type LoadedSources, loadSources, permissionPolicy } from "../assembly/sources.js";
import { pluginMcpServers } from "../command-hooks/claude-plugins.js";
// Not the command-hooks barrel: the dispatcher and executor load with the runtime, only when a hook is configured.
import { type Diagnostic, formatDiagnostic } from "../command-hooks/diagnostics.js";
import { MODEL_ENV, type ResolvedSettings } from "../config/index.js";
import type { GatehouseConfig } from "../config/schema.js";
import { untrustedNotice, type WorkspaceTrust } from "../config/trust.js";
import { maskSecrets } from "../core/secrets.js";
import { ModelSpecError } from "../models/errors.js";
import { unconfiguredModel } from "../models/unconfigured.js";
import type { PermissionPolicy } from "../permissions/index.js";
import { denialText } from "../runtime/doors/tool.js";
import type { Approver, RunResult } from "../runtime/types.js";
import type { BashSandbox } from "../sandbox/bash.js";
import type { SessionStore } from "../store/index.js";
import { builtinTools } from "../tools/builtin/index.js";
import { selectTools, unmatchedToolPatterns } from "../tools/select.js";
import type { Tool } from "../tools/types.js";
import { createTerminalApprover, interactive } from "./approver.js";
import { ClaudeOutput } from "./claude-output.js";
import { EXIT, type ExitCode } from "./exit.js";
import { type CliLogger, colorsFor, createCliLogger, type OutStream, writeOut } from "./output.js";
import { projectRelative } from "./paths.js";
import { type PermissionCliFlags, permissionFlagsOf } from "./permission-flags.js";
import { checkId, describe, loadProject, PLUGIN_NOT_LOADED, CliStop as Stop, storeOptionsFor } from "./project.js";
import { runEndLine, runExitCode } from "./run-end.js";
import { type OutputFormat, RunWatcher } from "./run-watch.js";
import { terminalText } from "./terminal.js";

type Env = Readonly<Record<string, string | undefined>>;

/** `gatehouse run`'s options as commander parses them. */
export interface RunFlags extends PermissionCliFlags {
  readonly prompt?: string;
  readonly session?: string;
  /** `--continue`: the project's most recent session. */
  readonly continue?: boolean;
  /** `--resume ID`: this session, which must exist. */
  readonly resume?: string;
  readonly model?: string;
  readonly config?: string;
  readonly dataDir?: string;
  /** `--settings FILE|JSON`: command hooks read after gatehouse.json's. */
  readonly settings?: string;
  readonly trigger: "user" | "cron" | "api";
  readonly jobId?: string;
  /** `--json`: the same as `--output-format json`. */
  readonly json?: boolean;
  readonly outputFormat?: OutputFormat;
  /** `--verbose`: debug lines (model calls, tool calls, hook decisions; metadata only) on stderr. */
  readonly verbose?: boolean;
}

/** The process around the command, injectable for tests. */
export interface CliIO {
  readonly cwd: string;
  readonly env: Env;
  readonly stdin: NodeJS.ReadableStream & { readonly isTTY?: boolean };
  readonly stdout: OutStream;
  readonly stderr: OutStream;
  /** Aborting it cancels the run (SIGINT). */
  readonly signal?: AbortSignal;
}

const NO_MODEL = `no model configured. Set one with --model <spec>, the ${MODEL_ENV} environment variable or "model" in gatehouse.json (e.g. --model openai:gpt-4o); to try Gatehouse offline, use --model scripted:echo`;

/**
 * One turn: configuration, model, prompt, then the run. Returns the exit status; every
 * diagnostic goes to stderr, and stdout gets only the reply (or the `--json` result).
 */
export async function runCommand(flags: RunFlags, io: CliIO): Promise<ExitCode> {
  const log = createCliLogger(io.stderr, io.env, { verbose: flags.verbose === true });
  try {
    return await runTurn(flags, io, log);
  } catch (error) {
    if (!(error instanceof Stop)) throw error;
    for (const line of error.message.split("\n")) log.error(line);
    return error.code;
  }
}

async function runTurn(flags: RunFlags, io: CliIO, log: CliLogger): Promise<ExitCode> {
  checkId("--session", flags.session);
  checkId("--job-id", flags.jobId);
  const { checkResumeFlags, resolveSession } = await import("./resume.js");
  checkResumeFlags(flags);
  const prepared = await prepareGatehouse(flags, io, log);
  const prompt = await readPrompt(flags, io, log);
  const format = flags.outputFormat ?? (flags.json ? "json" : "text");
  const watcher = new RunWatcher(format, io.stdout, io.stderr, colorsFor(io.stderr, io.env).dim);
  // On a terminal the user is asked; without one, nobody is: what would ask is denied, visibly.
  const terminal = { input: io.stdin, output: io.stderr };
  const ask = interactive(terminal) ? createTerminalApprover(terminal) : undefined;
  const { gatehouse, close, tools, subagents } = await openGatehouse(prepared, io, log, {
    // The status line steps aside while the question is on screen.
    ...(ask ? { approver: ((request, signal) => watcher.aside(() => ask(request, signal))) satisfies Approver } : {}),
  });
  try {
    const picked = await resolveSession(gatehouse.store, flags, io);
    if (picked.note) log.warn(picked.note);
    const sessionId = picked.sessionId;
    // json and stream-json speak claude -p's messages (src/cli/claude-output.ts).
    const claude =
      format === "json" || format === "stream-json"
        ? new ClaudeOutput(
            format === "stream-json",
            io.stdout,
            {
              cwd: io.cwd,
              // The spec may carry credentials (a URL's password); the messages name the model, masked.
              model: maskSecrets(prepared.settings.model ?? ""),
              permissionMode: prepared.permissions.mode,
              tools,
              subagents,
            },
            async (runId) => await gatehouse.store.runMessages(runId),
          )
        : undefined;
    const result = await turn(
      gatehouse,
      { ...flags, ...(sessionId === undefined ? {} : { session: sessionId }) },
      prompt,
      watcher,
      io.signal,
      claude,
    );
    const code = await report(result, format, watcher.streamed, io, log, claude);
    // The process that ran the session is ending (Claude Code's SessionEnd, reason "other").
    await gatehouse.endSession(result.sessionId, "exit");
    return code;
  } finally {
    await close();
  }
}

/** The flags from which `run` and `chat` build the same Gatehouse. */
export interface GatehouseFlags extends PermissionCliFlags {
  readonly session?: string;
  readonly model?: string;
  readonly config?: string;
  readonly dataDir?: string;
  /** `--settings FILE|JSON`: command hooks read after gatehouse.json's. */
  readonly settings?: string;
  /** `--system-prompt`: replaces gatehouse.json's `systemPrompt` (and the default). */
  readonly systemPrompt?: string;
  /** `--append-system-prompt`: added after the system prompt, whichever it is. */
  readonly appendSystemPrompt?: string;
  /** `--max-turns N`: model calls per turn at most (gatehouse.json `maxSteps`). */
  readonly maxTurns?: string;
}

/** What is known before anything is opened: gatehouse.json, the resolved settings, the command hooks. */
export interface PreparedGatehouse {
  readonly config: GatehouseConfig;
  /** The config file read (absolute), if any. */
  readonly file?: string;
  /** No model only when `prepareGatehouse` was told one is not needed (the console's browsing). */
  readonly settings: ResolvedSettings;
  readonly commandHooks: ResolvedSettings["commandHooks"];
  /** The permission rules and mode every tool call is checked against. */
  readonly permissions: PermissionPolicy;
  /** The OS sandbox the Bash tool runs commands in (docs/security.md#sandbox). */
  readonly sandbox: BashSandbox;
  /** Whether the project's own settings may loosen the policy (docs/trust.md). */
  readonly trust: WorkspaceTrust;
}

/** The sandbox's "unavailable" line is printed once per process (`serve` prepares once, tests many times). */
let sandboxNoticePrinted = false;

/** Checks the flags and reads the configuration; every problem is a `CliStop` (exit 2). */
export async function prepareGatehouse(
  flags: GatehouseFlags,
  io: Pick<CliIO, "cwd" | "env">,
  log: CliLogger,
  options: { readonly modelOptional?: boolean } = {},
): Promise<PreparedGatehouse> {
  checkId("--session", flags.session);
  if (flags.model !== undefined && flags.model.trim() === "") throw new Stop(EXIT.usage, "--model: empty model spec");
  const maxSteps = maxTurnsOf(flags.maxTurns);
  const { config, file, settings, trust } = await loadProject(flags, io);
  const { model } = settings;
  if (model === undefined && !options.modelOptional) throw new Stop(EXIT.usage, NO_MODEL);
  const sources = readSources({ config, ...(file === undefined ? {} : { file }), settings, trust }, flags, io, log);
  if (!trust.trusted) log.warn(untrustedNotice(trust));
  const { load: _, ...rest } = settings.commandHooks;
  const commandHooks = { ...rest, handlers: [...(rest.handlers ?? []), ...sources.commandHooks.handlers] };
  const sandbox = bashSandbox(sources.permissions, io.cwd);
  if (sandbox.mustNotStart)
    throw new Stop(EXIT.usage, `${sandbox.unavailable} (sandbox.failIfUnavailable: not starting)`);
  if (sandbox.unavailable && !sandboxNoticePrinted) {
    sandboxNoticePrinted = true;
    log.warn(sandbox.unavailable);
  }
  const permissions = permissionPolicy(sources.permissions, io.cwd, true, sandbox);
  const runtime = {
    ...settings.runtime,
    ...(maxSteps === undefined ? {} : { maxSteps }),
    ...systemPromptOf(flags, settings.runtime.systemPrompt),
  };
  const pluginServers = pluginMcpServers(sources.commandHooks.plugins);
  return {
    // Enabled Claude Code plugins' MCP servers start with gatehouse.json's (whose names win).
    config:
      Object.keys(pluginServers).length === 0
        ? config
        : { ...config, mcpServers: { ...pluginServers, ...config.mcpServers } },
    ...(file === undefined ? {} : { file }),
    settings: { ...settings, runtime },
    commandHooks,
    permissions,
    sandbox,
    trust,
  };
}

function maxTurnsOf(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 1000)
    throw new Stop(EXIT.usage, `--max-turns: expected a whole number from 1 to 1000, got "${raw}"`);
  return n;
}

/** `--system-prompt` replaces the configured prompt; `--append-system-prompt` adds to whichever applies. */
function systemPromptOf(flags: GatehouseFlags, configured: string | undefined): { systemPrompt?: string } {
  const base = flags.systemPrompt ?? configured;
  if (flags.appendSystemPrompt === undefined) return base === undefined ? {} : { systemPrompt: base };
  return { systemPrompt: [base ?? DEFAULTS.systemPrompt, flags.appendSystemPrompt].join("\n\n") };
}

/**
 * The Gatehouse `run` and `chat` use: the store, built-in and MCP tools, plugins, command hooks
 * and the model, started (a problem is a `CliStop`). `close` stops it and the MCP servers.
 */
export async function openGatehouse(
  { config, settings, commandHooks, permissions, sandbox }: PreparedGatehouse,
  io: Pick<CliIO, "cwd" | "env">,
  log: CliLogger,
  options: { readonly approver?: Approver; readonly store?: SessionStore },
): Promise<{
  readonly gatehouse: Gatehouse;
  close(): Promise<void>;
  /** The tools the model is offered (MCP servers' once they have started), the runtime's Agent aside. */
  readonly tools: Promise<Tool[]>;
  readonly subagents: boolean;
}> {
  // The store's notices (another connection holding its files, say) are the CLI's warnings.
  const store = options.store ?? { ...storeOptionsFor(settings, io), warn: log.warn };
  const cleanup: (() => Promise<void>)[] = [];
  const close = async () => {
    for (const step of cleanup.splice(0)) {
      await step().catch((error: unknown) => log.warn(`while closing: ${describe(error)}`));
    }
  };
  try {
    const { tools, lateTools, onToolsWait } = await toolsFor(config, settings, sandbox, io, log, cleanup);
    // Claude Code's Agent tool comes from the runtime; tools.allow / tools.deny decide on it too.
    const subagents = selectTools([{ name: "Agent" }], config.tools ?? {}).length > 0 && (settings.subagents ?? true);
    const gatehouse = createGatehouse({
      // Only the console opens without a model: a run it is asked for fails saying so.
      model: settings.model ?? unconfiguredModel(NO_MODEL),
      pluginEntries: settings.pluginEntries,
      store,
      tools,
      ...(lateTools === undefined ? {} : { lateTools, onToolsWait }),
      subagents,
      optionalTools: [...(config.tools?.allow ?? []), ...(config.tools?.alsoAllow ?? [])],
      commandHooks,
      permissions,
      sandboxReads: sandbox.policy.filesystem,
      ...(options.approver ? { approver: options.approver } : {}),
      logger: log,
      config: settings.runtime,
      env: io.env as NodeJS.ProcessEnv,
      envPolicy: settings.envPolicy,
    });
    cleanup.unshift(() => gatehouse.close());
    await start(gatehouse, settings);
    const offered = (lateTools ?? Promise.resolve([])).then((late) => [...tools, ...late]);
    return { gatehouse, close, tools: offered, subagents: subagents !== false };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * The settings sources (docs/permissions.md) — command hooks and permissions from the user,
 * project and local settings, gatehouse.json, `--settings` and the flags — are read here, before
 * anything starts, so that their problems are printed first: warnings, and the run goes on; any
 * error, and it does not start (a guard that failed to load must not be silently missing).
 * `hooks`, `permissions` and the console read them the same way.
 */
export function readSources(
  {
    config,
    file,
    settings,
    trust,
  }: { config: GatehouseConfig; file?: string; settings: ResolvedSettings; trust?: WorkspaceTrust },
  flags: GatehouseFlags,
  io: Pick<CliIO, "cwd">,
  log: Pick<CliLogger, "error" | "warn">,
  what = "not running without the configured hooks and permissions",
): LoadedSources {
  // `--settings` reached `load` through resolveSettings, as for `hooks` and the console: one route.
  const { load = {} } = settings.commandHooks;
  const loaded = loadSources({
    projectDir: io.cwd,
    commandHooks: load,
    config: {
      file: file ?? "gatehouse.json",
      ...(config.permissions === undefined ? {} : { permissions: config.permissions }),
    },
    permissions: {
      ...permissionFlagsOf(flags),
      // Where the project is not trusted, its settings files apply only what tightens.
      ...(trust === undefined || trust.trusted ? {} : { untrustedFiles: trust.paths }),
    },
    envPolicy: settings.envPolicy,
  });
  const shown = (d: Diagnostic) => formatDiagnostic({ ...d, file: projectRelative(io.cwd, d.file) });
  const warnings = loaded.diagnostics.filter((d) => d.level === "warning");
  for (const d of loaded.diagnostics) if (d.level === "error") log.error(shown(d));
  // Settings Claude Code accepts are not worth a screenful before every run: one line, the first named.
  if (warnings.length > 0) log.warn(warningsLine(warnings.length, shown(warnings[0] as Diagnostic)));
  const errors = loaded.diagnostics.length - warnings.length;
  if (errors > 0) {
    const count = errors === 1 ? "an error" : `${errors} errors`;
    throw new Stop(EXIT.usage, `settings: ${count} in the hook or permission settings; ${what}`);
  }
  return loaded;
}

function warningsLine(count: number, first: string): string {
  const more = count === 1 ? "" : ` (and ${count - 1} more)`;
  return `${first}${more}; \`gatehouse hooks check\` lists them`;
}

/** `-p`, else all of stdin (one final newline dropped). */
async function readPrompt(flags: RunFlags, io: CliIO, log: CliLogger): Promise<string> {
  let prompt = flags.prompt;
  if (prompt === undefined) {
    if (io.stdin.isTTY) log.warn("reading the prompt from stdin; end it with Ctrl-D (or pass -p PROMPT)");
    prompt = (await text(io.stdin)).replace(/\r?\n$/, "");
  }
  if (prompt.trim() === "") throw new Stop(EXIT.usage, "empty prompt: pass it with -p PROMPT or on stdin");
  return prompt;
}

/**
 * Built-in tools plus MCP servers' tools, filtered by `tools.allow` / `tools.deny`. A server that
 * cannot start is reported and left out; the run goes on without it.
 */
/**
 * The built-in tools now, and the MCP servers' tools later: the servers start concurrently in the
 * background (each within its own startup timeout), so the run's input gates do not wait for
 * them; the first model call does (see `lateTools`). `tools.allow` / `tools.deny` select from both.
 */
async function toolsFor(
  config: GatehouseConfig,
  { envPolicy }: ResolvedSettings,
  sandbox: BashSandbox,
  io: Pick<CliIO, "cwd" | "env">,
  log: CliLogger,
  cleanup: (() => Promise<void>)[],
): Promise<{ readonly tools: Tool[]; readonly lateTools?: Promise<Tool[]>; readonly onToolsWait?: () => void }> {
  const webFetch = config.tools?.webFetch;
  const builtins: Tool[] = builtinTools({
    bash: { env: io.env, envPolicy, sandbox },
    ...(webFetch ? { webFetch } : {}),
  });
  const selection = config.tools ?? {};
  const warnUnmatched = (all: readonly { name: string }[]) => {
    for (const pattern of unmatchedToolPatterns([...all, { name: "Agent" }], selection))
      log.warn(`tools: "${pattern}" matches no tool`);
  };
  if (!config.mcpServers || Object.keys(config.mcpServers).length === 0) {
    warnUnmatched(builtins);
    return { tools: selectTools(builtins, selection) };
  }
  const { startMcpServers } = await import("../tools/mcp.js");
  const warned: string[] = [];
  const mcpLog = {
    warn: (obj: Record<string, unknown>, msg: string) => {
      warned.push(msg);
      log.mcp.warn(obj, msg);
    },
    debug: log.mcp.debug,
  };
  const pool = startMcpServers(config.mcpServers, {
    cwd: io.cwd,
    logger: mcpLog,
    env: io.env,
    envPolicy,
    sandbox,
    ...mcpStartupTimeout(io.env, log),
  });
  cleanup.push(() => pool.close());
  const lateTools = pool.settled().then(() => {
    for (const d of pool.diagnostics) {
      if (!warned.some((w) => w.includes(d.message))) log.warn(`MCP server "${d.server}": ${d.message}`);
    }
    warnUnmatched([...builtins, ...pool.tools]);
    return selectTools([...pool.tools], selection);
  });
  // A hung server can hold the first model call up to its startup timeout: say so, not a silent pause.
  const onToolsWait = () => {
    const starting = pool.servers().filter((s) => s.status === "starting");
    if (starting.length > 0)
      log.warn(
        `waiting for MCP server${starting.length > 1 ? "s" : ""} ${starting.map((s) => `"${s.name}"`).join(", ")} to start`,
      );
  };
  return { tools: selectTools(builtins, selection), lateTools, onToolsWait };
}

/** `MCP_TIMEOUT` (milliseconds), as Claude Code reads it: how long a server has to start and answer. */
export function mcpStartupTimeout(env: Env, log: CliLogger): { startupTimeoutMs?: number } {
  const raw = env.MCP_TIMEOUT?.trim();
  if (raw === undefined || raw === "") return {};
  const ms = Number(raw);
  if (Number.isInteger(ms) && ms > 0) return { startupTimeoutMs: ms };
  log.warn("MCP_TIMEOUT: expected a whole number of milliseconds; using the default (30000)");
  return {};
}

/** Loads plugins, resolves the model and opens the store, mapping what went wrong to an exit status. */
async function start(gatehouse: Gatehouse, settings: ResolvedSettings): Promise<void> {
  try {
    await gatehouse.ready();
  } catch (error) {
    if (error instanceof ModelSpecError) {
      const from = settings.modelFrom === undefined ? "" : ` (model from ${settings.modelFrom})`;
      throw new Stop(EXIT.usage, `${error.message}${from}`);
    }
    throw new Stop(EXIT.failed, `cannot start: ${describe(error)}`);
  }
  // The host already logged each problem. A policy plugin that did not load, or registered a
  // handler that cannot run (an unknown hook, a bad matcher), must not be silently missing from
  // the run: refuse to run without it. Permission refusals are warnings and do not stop the run.
  const broken = gatehouse.plugins.diagnostics.filter((d) => d.level === "error");
  if (broken.length > 0) {
    // Name each plugin's file too, so the operator knows where to look.
    const sources = new Map(gatehouse.plugins.list().map((p) => [p.id, p.source]));
    const ids = [...new Set(broken.map((d) => d.pluginId))].map((id) => {
      const source = sources.get(id);
      return source && source !== "code" && source !== id ? `${id} (${source})` : id;
    });
    const what = ids.length === 1 ? `plugin ${ids[0]} was` : `plugins ${ids.join(", ")} were`;
    const how = broken.every((d) => PLUGIN_NOT_LOADED.has(d.code)) ? "not loaded" : "not loaded as configured";
    throw new Stop(EXIT.usage, `${what} ${how}; not running without the configured plugins`);
  }
}

/** The run, streamed: the watcher shows its progress (or prints its events, with gatehouse-events). */
async function turn(
  gatehouse: Gatehouse,
  flags: RunFlags,
  prompt: string,
  watcher: RunWatcher,
  signal?: AbortSignal,
  claude?: ClaudeOutput,
): Promise<RunResult> {
  watcher.start();
  const interrupted = () => watcher.interrupted();
  signal?.addEventListener("abort", interrupted, { once: true });
  try {
    const stream = gatehouse.stream({
      prompt,
      trigger: flags.trigger,
      channel: "cli",
      ...(flags.session === undefined ? {} : { sessionId: flags.session }),
      ...(flags.jobId === undefined ? {} : { jobId: flags.jobId }),
      ...(signal === undefined ? {} : { signal }),
    });
    for await (const event of stream) {
      watcher.onEvent(event);
      claude?.onEvent(event);
    }
    return await stream.result;
  } catch (error) {
    if (signal?.aborted) throw new Stop(EXIT.failed, "run cancelled");
    throw new Stop(EXIT.failed, `run failed: ${describe(error)}`);
  } finally {
    signal?.removeEventListener("abort", interrupted);
    await watcher.finish();
  }
}

async function report(
  result: RunResult,
  format: OutputFormat,
  streamed: boolean,
  io: CliIO,
  log: CliLogger,
  claude?: ClaudeOutput,
): Promise<ExitCode> {
  const c = colorsFor(io.stdout, io.env);
  const json = format !== "text";
  // Every denial is visible: in text output, one line naming the tool and the rule. The structured
  // formats list them in their output (`permission_denials`), and stderr stays quiet, as `claude -p`'s.
  for (const d of json ? [] : result.permissionDenials) {
    const hint =
      d.reason === "nobody" && d.suggestions?.length
        ? ` (to allow it: --allowedTools "${d.suggestions.join('" "')}")`
        : "";
    log.warn(`permission denied: ${terminalText(d.toolName)}: ${terminalText(denialText(d))}${terminalText(hint)}`);
  }
  // gatehouse-events' last line, the run-end event, already carries the result.
  if (claude) await claude.finish(result, runEndLine(result));
  else if (format === "text" && result.reply !== null && !(streamed && result.outcome === "completed")) {
    // Model text, sanitized: it must not repaint the screen, write the clipboard or reorder itself.
    const reply = terminalText(result.reply).replace(/\n$/, "");
    await writeOut(io.stdout, `${result.outcome === "blocked" ? c.yellow(reply) : reply}\n`);
  }
  // The session id lets a person continue the conversation; scripts use --json or --session.
  if (!json && io.stderr.isTTY)
    await writeOut(io.stderr, `${colorsFor(io.stderr, io.env).dim(`session: ${result.sessionId}`)}\n`);
  const line = runEndLine(result);
  if (line !== undefined) log.error(line);
  return runExitCode(result);
}
