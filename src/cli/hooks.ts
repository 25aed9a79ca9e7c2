// `gatehouse hooks list | check | test`. main.ts loads this module at start-up to register the
// commands, so its own imports stay light (commander's types, node builtins, the exit codes):
// config, command hooks and output helpers are imported when a command runs.
import { homedir } from "node:os";
import { resolve } from "node:path";
import type { Command } from "commander";
import type {
  CommandHookEvent,
  ConfiguredHandler,
  Diagnostic,
  EventInputs,
  HandlerOutcome,
  LoadedCommandHooks,
  MergedVerdict,
} from "../command-hooks/index.js";
import type { EnvPolicy } from "../core/env-policy.js";
import type { LoadedPermissions } from "../permissions/index.js";
import { type CommandHost, PROCESS_HOST } from "./common.js";
import { EXIT, type ExitCode } from "./exit.js";
import type { CliLogger } from "./output.js";
import { projectRelative } from "./paths.js";
import type { CliIO } from "./run.js";

/** Flags every `hooks` command takes: the same sources as `gatehouse run`. */
export interface HooksSourceFlags {
  readonly config?: string;
  readonly settings?: string;
}

export interface HooksListFlags extends HooksSourceFlags {
  readonly json?: boolean;
}

export interface HooksCheckFlags extends HooksSourceFlags {
  readonly json?: boolean;
}

export interface HooksTestFlags extends HooksSourceFlags {
  readonly input?: string;
  readonly tool?: string;
  readonly json?: boolean;
}

const SETTINGS_HELP =
  "command hooks settings: a file, or inline JSON starting with {; read after gatehouse.json's hooks";
const CONFIG_HELP = "config file (default: ./gatehouse.json, if present)";

const SOURCES_HELP = `
Hook sources, in order: ~/.claude/settings.json, .claude/settings.json,
.claude/settings.local.json, gatehouse.json "hooks", --settings,
~/.code_puppy/hooks.json when gatehouse.json sets commandHooks.codePuppy, and
Gemini CLI's (~/.gemini/settings.json, .gemini/settings.json), Codex's
(~/.codex/hooks.json, .codex/hooks.json) and Cursor's (~/.cursor/hooks.json,
.cursor/hooks.json) when it sets commandHooks.gemini, .codex or .cursor.`;

const LIST_EXIT_HELP = `
Exit status:
  0  listed (problems in the hook settings are printed on stderr; see gatehouse hooks check)
  2  bad input or configuration: a bad flag or gatehouse.json`;

const CHECK_EXIT_HELP = `
Exit status:
  0  no errors (warnings are printed)
  2  an error in the hook settings, a bad flag or gatehouse.json`;

const TEST_EXIT_HELP = `
The payload is what the runtime sends for EVENT (session_id "hooks-test", an empty transcript,
cwd the project folder; tool events default to tool_name "Bash" and tool_input {}), with the
--input object's fields over it; --tool sets tool_name. The matching handlers run as in a run,
in parallel, and each one's verdict is printed, then the merged verdict.

Exit status:
  0  the handlers ran (whatever they decided)
  2  bad input or configuration: an unknown event, --input that is not a JSON object,
     --tool on an event without tools, a bad flag or gatehouse.json`;

/** Adds `gatehouse hooks` and its subcommands to the program. */
export function registerHooksCommand(program: Command, host: CommandHost = PROCESS_HOST): void {
  const hooks = program
    .command("hooks")
    .summary("list, check and try the command hooks")
    .description("List, check and try the Claude Code command hooks that `gatehouse run` would use.")
    .addHelpText("after", SOURCES_HELP);

  hooks
    .command("list")
    .summary("every configured handler by event, with its source and dialect")
    .description("Every configured command hook handler by event, with its source and dialect.")
    .option("--config <file>", CONFIG_HELP)
    .option("--settings <file|json>", SETTINGS_HELP)
    .option("--json", "print a JSON array instead of a table")
    .addHelpText("after", `${SOURCES_HELP}\n${LIST_EXIT_HELP}`)
    .action(async (flags: HooksListFlags) => {
      host.exit(await hooksList(flags, host.io()));
    });

  hooks
    .command("check")
    .summary("validate the hook settings")
    .description("Validate the command hook settings: each problem on a line, then a summary.")
    .option("--config <file>", CONFIG_HELP)
    .option("--settings <file|json>", SETTINGS_HELP)
    .option("--json", "print { errors, warnings, handlers, disabled, managedOnly, diagnostics } as JSON")
    .addHelpText("after", `${SOURCES_HELP}\n${CHECK_EXIT_HELP}`)
    .action(async (flags: HooksCheckFlags) => {
      host.exit(await hooksCheck(flags, host.io()));
    });

  hooks
    .command("test")
    .summary("run the handlers matching EVENT on a payload and print their verdicts")
    .description(
      "Run the handlers that match EVENT on a payload and print each one's verdict, reason, duration and exit code.",
    )
    .argument("<event>", "PreToolUse, PostToolUse, UserPromptSubmit, Stop, … (as in settings.json)")
    .option("--input <file|->", "a JSON object merged over the default payload; - reads stdin")
    .option("--tool <name>", "tool_name for tool events (PreToolUse, PermissionRequest, PostToolUse…)")
    .option("--config <file>", CONFIG_HELP)
    .option("--settings <file|json>", SETTINGS_HELP)
    .option("--json", "print { event, payload, merged, handlers } as JSON")
    .addHelpText("after", TEST_EXIT_HELP)
    .action(async (event: string, flags: HooksTestFlags) => {
      const controller = new AbortController();
      // Ctrl-C stops the handlers (their process groups are killed) instead of orphaning them.
      const off = host.onInterrupt(() => controller.abort());
      try {
        host.exit(await hooksTest(event, flags, { ...host.io(), signal: controller.signal }));
      } finally {
        off();
      }
    });
}

/** A problem that ends the command with an exit status, reported on stderr. */
class Stop extends Error {
  constructor(
    readonly code: ExitCode,
    message: string,
  ) {
    super(message);
  }
}

async function lib() {
  const [sources, config, hooks, json, secrets, output, mcpName, project] = await Promise.all([
    import("../assembly/sources.js"),
    import("../config/index.js"),
    import("../command-hooks/index.js"),
    import("../core/json.js"),
    import("../core/secrets.js"),
    import("./output.js"),
    import("../tools/mcp-name.js"),
    import("./project.js"),
  ]);
  return {
    loadSources: sources.loadSources,
    ...config,
    ...hooks,
    parseJsonText: json.parseJsonText,
    jsonErrorText: json.jsonErrorText,
    maskSecrets: secrets.maskSecrets,
    maskValue: secrets.maskValue,
    mcpToolName: mcpName.mcpToolName,
    projectTrust: project.projectTrust,
    ...output,
  };
}
type Lib = Awaited<ReturnType<typeof lib>>;

/** Runs a command body, turning a `Stop` into its message on stderr and its exit status. */
async function guarded(io: CliIO, body: (L: Lib, log: CliLogger) => Promise<ExitCode>): Promise<ExitCode> {
  const L = await lib();
  const log = L.createCliLogger(io.stderr, io.env);
  try {
    return await body(L, log);
  } catch (error) {
    if (!(error instanceof Stop)) throw error;
    for (const line of error.message.split("\n")) log.error(line);
    return error.code;
  }
}

interface Loaded extends LoadedCommandHooks {
  readonly projectDir: string;
  readonly envPolicy: EnvPolicy;
  /** The permission rules and mode, as a run reads them (a hook's agent meets them). */
  readonly permissions: LoadedPermissions;
  /** The project's model spec, when one is set: `prompt` and `agent` handlers ask it. */
  readonly model: string | undefined;
}

/** The same sources, in the same order, as `gatehouse run` reads. */
async function loadHooks(L: Lib, flags: HooksSourceFlags, io: CliIO): Promise<Loaded> {
  let settings: ReturnType<Lib["resolveSettings"]>;
  let permissions: unknown;
  let configFile: string | undefined;
  try {
    const { config, file } = await L.loadConfig({
      cwd: io.cwd,
      ...(flags.config === undefined ? {} : { file: flags.config }),
      env: io.env,
    });
    settings = L.resolveSettings({
      config,
      ...(file === undefined ? {} : { file }),
      cwd: io.cwd,
      env: io.env,
      ...(flags.settings === undefined ? {} : { settings: flags.settings }),
    });
    permissions = config.permissions;
    configFile = file;
  } catch (error) {
    if (error instanceof L.ConfigError) throw new Stop(EXIT.usage, error.message);
    throw error;
  }
  const { load = {} } = settings.commandHooks;
  const { envPolicy } = settings;
  // The permission mode and rules decide whether a PermissionRequest hook can ever fire.
  const {
    commandHooks,
    permissions: loadedPermissions,
    diagnostics,
  } = L.loadSources({
    projectDir: io.cwd,
    commandHooks: { ...load, homeDir: load.homeDir ?? (io.env.HOME || homedir()) },
    config: { file: configFile ?? "gatehouse.json", ...(permissions === undefined ? {} : { permissions }) },
    // As in a run: a project not trusted enables no Claude Code plugins, and its allow rules wait.
    permissions: untrustedFilesOf(L, flags, io, configFile),
    envPolicy,
  });
  const { hookModelProblem } = await import("../models/aliases.js");
  // A prompt or agent hook whose model cannot be resolved fails each time it runs (its onFailure decides).
  const models = commandHooks.handlers.flatMap((h): Diagnostic[] => {
    const def = h.definition;
    if (def.type !== "prompt" && def.type !== "agent") return [];
    const problem = hookModelProblem(def.model, settings.model, io.cwd, io.env);
    if (problem === undefined) return [];
    const at = def.model === undefined ? h.path : `${h.path}.model`;
    const effect =
      h.onFailure === "block" ? "each event it runs for is blocked" : "it fails each time and the action goes ahead";
    return [
      {
        level: "warning",
        file: h.file,
        path: at,
        message: `${def.type} hook: ${problem}: ${effect} (onFailure "${h.onFailure}")`,
      },
    ];
  });
  return {
    ...commandHooks,
    diagnostics: [...diagnostics, ...models],
    projectDir: io.cwd,
    envPolicy,
    permissions: loadedPermissions,
    model: settings.model,
  };
}

/** The project's settings files that wait for trust, when it is not trusted. */
function untrustedFilesOf(
  L: Lib,
  flags: HooksSourceFlags,
  io: CliIO,
  configFile: string | undefined,
): { untrustedFiles?: readonly string[] } {
  const trust = L.projectTrust(flags, io, configFile);
  return trust.trusted ? {} : { untrustedFiles: trust.paths };
}

function formatted(L: Lib, cwd: string, d: Diagnostic): string {
  return L.formatDiagnostic({ ...d, file: projectRelative(cwd, d.file) });
}

/** Diagnostics on stderr, as `gatehouse run` prints them. */
function logDiagnostics(L: Lib, log: CliLogger, cwd: string, loaded: LoadedCommandHooks): void {
  for (const d of loaded.diagnostics) (d.level === "error" ? log.error : log.warn)(formatted(L, cwd, d));
  if (loaded.disabled) log.warn("disableAllHooks is set: no command hook runs");
}

// ---- list -----------------------------------------------------------------------------------

/** `gatehouse hooks list`. */
export function hooksList(flags: HooksListFlags, io: CliIO): Promise<ExitCode> {
  return guarded(io, async (L, log) => {
    const loaded = await loadHooks(L, flags, io);
    logDiagnostics(L, log, io.cwd, loaded);
    const handlers = inRunOrder(loaded.handlers, L.COMMAND_HOOK_EVENTS);
    if (flags.json) {
      await L.writeJson(
        io.stdout,
        handlers.map((h) => describeHandler(L, io.cwd, h)),
      );
      return EXIT.ok;
    }
    if (handlers.length === 0) {
      await L.writeOut(io.stdout, "no command hooks configured\n");
      return EXIT.ok;
    }
    const rows = handlers.map((h) => [
      h.nativeEvent === h.event ? h.event : `${h.nativeEvent} (${h.event})`,
      matcherText(L, h),
      sourceText(h),
      h.dialect,
      h.definition.type,
      L.terminalLine(commandText(L, h)),
      seconds(h.timeoutMs),
    ]);
    await L.writeOut(
      io.stdout,
      table([["EVENT", "MATCHER", "SOURCE", "DIALECT", "TYPE", "COMMAND/URL", "TIMEOUT"], ...rows]),
    );
    return EXIT.ok;
  });
}

/** The source column: a Claude Code plugin's hooks name their plugin. */
const sourceText = (h: ConfiguredHandler) => (h.plugin === undefined ? h.source : `plugin ${h.plugin}`);

/** By event (in the events' order), then in source order: the order they run and merge in. */
export function inRunOrder(
  handlers: readonly ConfiguredHandler[],
  events: readonly CommandHookEvent[],
): ConfiguredHandler[] {
  const order = (h: ConfiguredHandler) => events.indexOf(h.event);
  return handlers
    .map((h, i) => ({ h, i }))
    .sort((a, b) => order(a.h) - order(b.h) || a.i - b.i)
    .map(({ h }) => h);
}

/**
 * A handler as `list --json` and `test --json` show it, credentials masked (the console's
 * configuration view shows the same).
 */
export function describeHandler(L: Pick<Lib, "maskSecrets" | "maskValue">, cwd: string, h: ConfiguredHandler) {
  const def = h.definition;
  return {
    event: h.event,
    ...(h.nativeEvent === h.event ? {} : { nativeEvent: h.nativeEvent }),
    matcher: h.matcher ?? null,
    source: h.source,
    ...(h.plugin === undefined ? {} : { plugin: h.plugin }),
    file: projectRelative(cwd, h.file),
    path: h.path,
    dialect: h.dialect,
    type: def.type,
    command: def.type === "command" ? L.maskSecrets(def.command) : null,
    ...(def.type === "command" && def.args !== undefined ? { args: L.maskValue(def.args) } : {}),
    url: def.type === "http" ? L.maskSecrets(def.url) : null,
    timeoutMs: h.timeoutMs,
    onFailure: h.onFailure,
    ...(def.if === undefined ? {} : { if: def.if }),
  };
}

function matcherText(L: Lib, h: ConfiguredHandler): string {
  if (L.EVENT_SPECS[h.event].matcherField === null) return "-";
  return h.matcher === undefined || h.matcher === "" ? "*" : L.terminalLine(h.matcher);
}

/** The command line or URL, credentials masked (a URL password, `--token X`, `Bearer X`). */
function commandText(L: Lib, h: ConfiguredHandler): string {
  const def = h.definition;
  if (def.type === "http") return L.maskSecrets(def.url);
  if (def.type === "prompt" || def.type === "agent")
    return `${def.type}${def.model === undefined ? "" : ` (${def.model})`}`;
  if (def.type === "mcp_tool") return L.mcpToolName(def.server, def.tool);
  return L.maskSecrets(def.args === undefined ? def.command : [def.command, ...def.args].join(" "));
}

function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))}s`;
}

/** Left-aligned columns two spaces apart; the last column is not padded. */
function table(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  }
  return rows
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
        .join("  ")
        .trimEnd(),
    )
    .map((line) => `${line}\n`)
    .join("");
}

// ---- check ----------------------------------------------------------------------------------

/**
 * `gatehouse hooks check`: every diagnostic, then a note for each guard that fails open, then a
 * summary; exit 2 on any error.
 */
export function hooksCheck(flags: HooksCheckFlags, io: CliIO): Promise<ExitCode> {
  return guarded(io, async (L) => {
    const loaded = await loadHooks(L, flags, io);
    const errors = loaded.diagnostics.filter((d) => d.level === "error").length;
    const warnings = loaded.diagnostics.length - errors;
    const status = errors > 0 ? EXIT.usage : EXIT.ok;
    const failOpen = failingOpen(L, loaded.handlers);
    // Whether the Bash tool's commands run sandboxed here (docs/security.md#sandbox).
    const { bashSandbox } = await import("../assembly/sources.js");
    const sandbox = bashSandbox(loaded.permissions, loaded.projectDir);
    if (flags.json) {
      const diagnostics = loaded.diagnostics.map((d) => ({
        severity: d.level,
        file: projectRelative(io.cwd, d.file),
        path: d.path,
        ...(d.line === undefined ? {} : { line: d.line, column: d.column }),
        message: d.message,
      }));
      const notes = failOpen.map((h) => ({
        severity: "note",
        file: projectRelative(io.cwd, h.file),
        path: h.path,
        event: h.event,
        message: FAILS_OPEN,
      }));
      const report = {
        errors,
        warnings,
        handlers: loaded.handlers.length,
        disabled: loaded.disabled,
        managedOnly: loaded.managedOnly,
        diagnostics,
        failOpen: failOpen.length,
        notes,
        sandbox: { active: sandbox.active, status: sandbox.status },
      };
      await L.writeJson(io.stdout, report);
      return status;
    }
    const lines = loaded.diagnostics.map((d) => formatted(L, io.cwd, d));
    for (const h of failOpen)
      lines.push(`note: ${projectRelative(io.cwd, h.file)}: ${h.path}: ${h.event} ${FAILS_OPEN}`);
    const counts =
      loaded.diagnostics.length === 0 ? "no problems" : `${plural(errors, "error")}, ${plural(warnings, "warning")}`;
    const disabled = loaded.disabled
      ? " (all disabled by disableAllHooks)"
      : loaded.managedOnly
        ? " (managed hooks only: allowManagedHooksOnly)"
        : "";
    const open = failOpen.length === 0 ? "" : ` (${failOpen.length} fail${failOpen.length === 1 ? "s" : ""} open)`;
    lines.push(`${counts}; ${plural(loaded.handlers.length, "handler")}${open}${disabled}; sandbox ${sandbox.status}`);
    await L.writeOut(io.stdout, lines.map((l) => `${L.terminalLine(l)}\n`).join(""));
    return status;
  });
}

const FAILS_OPEN =
  'guard fails open: if it times out, cannot start or answers nonsense, the action goes ahead (Claude Code\'s rule). Set "onFailure": "block" on it, or "commandHooks": {"onFailure": "block"} in gatehouse.json for every guard, to fail closed';

/** Handlers on events where a failure could block that are left to fail open (`onFailure` continue). */
function failingOpen(L: Lib, handlers: readonly ConfiguredHandler[]): ConfiguredHandler[] {
  return handlers.filter((h) => L.EVENT_SPECS[h.event].failureCanBlock && h.onFailure === "continue");
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

// ---- test -----------------------------------------------------------------------------------

const TEST_SESSION = "hooks-test";

/** What an event's payload holds when --input says nothing. */
function defaultInputs(event: CommandHookEvent, toolName: string): EventInputs[CommandHookEvent] {
  const call = { toolName, toolInput: {}, toolUseId: "toolu_hooks_test" };
  const stop = { stopHookActive: false, lastAssistantMessage: "", loopCount: 0 };
  const agent = { agentId: "hooks-test-agent", agentType: "general-purpose" };
  const inputs: { [E in CommandHookEvent]: EventInputs[E] } = {
    SessionStart: { source: "startup" },
    SessionEnd: { reason: "other" },
    UserPromptSubmit: { prompt: "" },
    PreToolUse: call,
    PermissionRequest: { toolName, toolInput: {} },
    PermissionDenied: { ...call, reason: "Permission to use the tool was denied (hooks test)." },
    PostToolUse: { ...call, toolResponse: "" },
    PostToolUseFailure: { ...call, error: "the tool failed" },
    Stop: stop,
    SubagentStop: { ...stop, ...agent },
    SubagentStart: agent,
    PreCompact: { trigger: "manual" },
    PostCompact: { trigger: "manual", compactSummary: "" },
    Notification: { message: "hooks test", notificationType: "permission_prompt" },
    StopFailure: { error: "unknown", errorDetails: "hooks test" },
    PostToolBatch: { toolCalls: [{ ...call, toolResponse: "" }] },
  };
  return inputs[event];
}

/** `gatehouse hooks test EVENT`. */
export function hooksTest(eventName: string, flags: HooksTestFlags, io: CliIO): Promise<ExitCode> {
  return guarded(io, async (L, log) => {
    if (!L.isCommandHookEvent(eventName)) {
      throw new Stop(
        EXIT.usage,
        `unknown event "${L.terminalLine(eventName)}"; expected one of ${L.COMMAND_HOOK_EVENTS.join(", ")}`,
      );
    }
    const event = eventName;
    const field = L.EVENT_SPECS[event].matcherField;
    if (flags.tool !== undefined && field !== "tool_name")
      throw new Stop(EXIT.usage, `--tool: ${event} is not a tool event`);
    if (flags.tool !== undefined && flags.tool.trim() === "") throw new Stop(EXIT.usage, "--tool: empty tool name");
    const input = flags.input === undefined ? {} : await readInput(L, flags.input, io);
    if (input.hook_event_name !== undefined && input.hook_event_name !== event)
      throw new Stop(
        EXIT.usage,
        `--input: hook_event_name is ${JSON.stringify(input.hook_event_name)}, not "${event}"`,
      );
    if (field !== null && input[field] !== undefined && typeof input[field] !== "string")
      throw new Stop(EXIT.usage, `--input: ${field} must be a string`);

    const loaded = await loadHooks(L, flags, io);
    logDiagnostics(L, log, io.cwd, loaded);

    const { mkdtemp, rm, writeFile } = await import("node:fs/promises");
    const { tmpdir } = await import("node:os");
    const dir = await mkdtemp(resolve(tmpdir(), "gatehouse-hooks-test-"));
    try {
      const transcriptPath = resolve(dir, "transcript.jsonl");
      await writeFile(transcriptPath, "");
      const toolName = flags.tool ?? (typeof input.tool_name === "string" ? input.tool_name : "Bash");
      const base = L.buildPayload(
        event,
        { sessionId: TEST_SESSION, transcriptPath, cwd: loaded.projectDir, runId: TEST_SESSION, depth: 0 },
        defaultInputs(event, toolName),
      );
      const payload = { ...base, ...input, ...(flags.tool === undefined ? {} : { tool_name: flags.tool }) };
      const merged = await L.runCommandHooks(event, undefined, payload, loaded.handlers, {
        projectDir: loaded.projectDir,
        sessionId: TEST_SESSION,
        env: io.env,
        envPolicy: loaded.envPolicy,
        ...(await modelEvaluators(event, loaded, io)),
        ...(io.signal === undefined ? {} : { signal: io.signal }),
      });
      if (flags.json) {
        const report = {
          event,
          payload,
          merged: mergedJson(merged),
          handlers: merged.runs.map((r) => ({ ...describeHandler(L, io.cwd, r.handler), ...outcomeJson(r.outcome) })),
        };
        await L.writeJson(io.stdout, report);
      } else {
        await L.writeOut(io.stdout, testReport(L, event, payload, merged));
      }
      return EXIT.ok;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
}

/**
 * The project's model for the event's `prompt` and `agent` handlers, as a run's hooks ask it (its
 * permission rules for an agent's reads). Loaded only when such a handler is configured for the
 * event; without a model they fail as they would in a run, under their onFailure.
 */
async function modelEvaluators(event: CommandHookEvent, loaded: Loaded, io: CliIO) {
  const evaluated = loaded.handlers.some(
    (h) => h.event === event && (h.definition.type === "prompt" || h.definition.type === "agent"),
  );
  if (!evaluated || loaded.model === undefined) return {};
  const [{ hookEvaluators }, { permissionPolicy, sandboxReads }] = await Promise.all([
    import("../assembly/hook-evaluators.js"),
    import("../assembly/sources.js"),
  ]);
  const policy = permissionPolicy(loaded.permissions, loaded.projectDir, false);
  const reads = sandboxReads(loaded.permissions, loaded.projectDir);
  return hookEvaluators(loaded.model, policy, reads, loaded.projectDir, io.env);
}

/** `--input FILE|-`: a JSON object. */
async function readInput(L: Lib, from: string, io: CliIO): Promise<Record<string, unknown>> {
  let text: string;
  const label = from === "-" ? "--input (stdin)" : `--input ${from}`;
  if (from === "-") {
    const { text: readAll } = await import("node:stream/consumers");
    text = await readAll(io.stdin);
  } else {
    const { readFile } = await import("node:fs/promises");
    try {
      text = await readFile(resolve(io.cwd, from), "utf8");
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new Stop(EXIT.usage, `${label}: ${code === "ENOENT" ? "no such file" : `cannot be read (${code})`}`);
    }
  }
  const parsed = L.parseJsonText(text);
  if (!parsed.ok) {
    const { line, column } = parsed.error;
    throw new Stop(EXIT.usage, `${label}:${line}:${column}: ${L.jsonErrorText(parsed.error)}`);
  }
  const value = parsed.value;
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new Stop(EXIT.usage, `${label}: expected a JSON object`);
  return value as Record<string, unknown>;
}

function exitText(o: HandlerOutcome): string {
  if (o.aborted) return "aborted";
  if (o.timedOut) return "timeout";
  if (o.httpStatus !== undefined) return `HTTP ${o.httpStatus}`;
  if (o.exitCode !== null) return `exit ${o.exitCode}`;
  if (o.signal !== null) return o.signal;
  return "not run";
}

/** One handler's result: how it ended and its verdict (reasons are the user-safe ones). */
function outcomeJson(o: HandlerOutcome) {
  const { decision, reason, error, errorDetail, ...rest } = o.verdict;
  return {
    exitCode: o.exitCode,
    signal: o.signal,
    timedOut: o.timedOut,
    ...(o.httpStatus === undefined ? {} : { httpStatus: o.httpStatus }),
    durationMs: Math.round(o.durationMs),
    truncated: o.truncated,
    droppedBytes: o.droppedBytes,
    decision: decision ?? null,
    reason: reason ?? null,
    ...rest,
    error: error ?? null,
    ...(errorDetail === undefined ? {} : { errorDetail }),
  };
}

function mebibytes(bytes: number): string {
  return `${Number((bytes / (1024 * 1024)).toFixed(2))} MiB`;
}

function mergedJson(m: MergedVerdict) {
  const { runs: _runs, decidedBy, decision, reason, ...rest } = m;
  return {
    decision: decision ?? null,
    reason: reason ?? null,
    ...rest,
    decidedBy: decidedBy === undefined ? null : decidedBy.id,
  };
}

function testReport(L: Lib, event: CommandHookEvent, payload: Record<string, unknown>, m: MergedVerdict): string {
  const field = L.EVENT_SPECS[event].matcherField;
  const value = field === null ? undefined : payload[field];
  const what = typeof value === "string" ? `${event} (${field} ${L.terminalLine(JSON.stringify(value))})` : event;
  const out: string[] = [];
  if (m.runs.length === 0) out.push(`no handler matches ${what}\n`);
  else {
    out.push(`${what}: ${plural(m.runs.length, "handler")}\n`);
    const rows = m.runs.map(({ handler, outcome }) => {
      const v = outcome.verdict;
      const error = v.error === undefined ? "" : `${v.error}${v.errorDetail ? `: ${v.errorDetail}` : ""}`;
      return [
        handler.source,
        L.terminalLine(commandText(L, handler)),
        exitText(outcome),
        `${Math.round(outcome.durationMs)} ms`,
        v.decision ?? "-",
        L.terminalLine(v.reason ?? ""),
        L.terminalLine(error),
      ];
    });
    out.push(table([["SOURCE", "COMMAND/URL", "EXIT", "TIME", "DECISION", "REASON", "ERROR"], ...rows]));
    for (const { handler, outcome } of m.runs) {
      if (!outcome.truncated) continue;
      out.push(
        `truncated: ${L.terminalLine(commandText(L, handler))}: output over the ${mebibytes(L.DEFAULT_MAX_OUTPUT_BYTES)} cap; ${outcome.droppedBytes} bytes dropped, the verdict read from what was kept\n`,
      );
    }
  }
  out.push(`merged: ${m.decision ?? "no decision"}${m.reason === undefined ? "" : `: ${L.terminalLine(m.reason)}`}\n`);
  const extra: [string, unknown][] = [
    ["additionalContext", m.additionalContext],
    ["updatedInput", m.updatedInput],
    ["updatedToolOutput", m.updatedToolOutput],
    ["continue", m.continue],
    ["stopReason", m.stopReason],
    ["systemMessage", m.systemMessage],
    ["feedback", m.feedback],
    ["interrupt", m.interrupt],
    ["retry", m.retry],
  ];
  for (const [key, value] of extra) {
    if (value === undefined) continue;
    out.push(`  ${key}: ${L.terminalLine(typeof value === "string" ? value : JSON.stringify(value))}\n`);
  }
  return out.join("");
}
