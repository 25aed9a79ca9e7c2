import { homedir } from "node:os";
import type { LanguageModelV3 } from "@ai-sdk/provider";
import { DEFAULT_ENV_POLICY, type EnvPolicy } from "../core/env-policy.js";
import { envMasker, withheldValues } from "../core/secret-values.js";
import { maskSecrets } from "../core/secrets.js";
import { HookEngine } from "../hooks/engine.js";
import type { TimeoutOverrides } from "../hooks/registry.js";
import { newTraceparent, type RunContext, runWithContext } from "../hooks/run-context.js";
import { DEFAULT_MAX_RETRIES } from "../models/retry.js";
import { PermissionPolicy } from "../permissions/index.js";
import type { PluginEntry, PluginHookOptions } from "../plugins/config.js";
import type { PluginDefinition } from "../plugins/define.js";
import { type HostLogger, PluginHost } from "../plugins/host.js";
import { type SandboxPolicy, sandboxPolicy } from "../sandbox/policy.js";
import { DEFAULT_SANDBOX_SETTINGS } from "../sandbox/settings.js";
import { openStore, resolveStoreOptions, type StoreOptions } from "../store/index.js";
import type { SessionStore, StoreView } from "../store/types.js";
import type { McpLogger, McpServerPool } from "../tools/mcp.js";
import type { McpServersConfig } from "../tools/mcp-config.js";
import { toolNameMatcher } from "../tools/select.js";
import type { Tool } from "../tools/types.js";
import { auditInterceptor, debugInterceptor } from "./audit.js";
import type { ModelResolver, RuntimeConfig, RuntimeDeps } from "./deps.js";
import { Doors } from "./doors/outbox.js";
import { recoverAbandonedRuns } from "./doors/unchecked.js";
import { dropEvents, RunEventChannel } from "./events.js";
import { hookAgentCall, hookMcpCall, hookModelCall, type UsageSink } from "./hook-model.js";
import { modelResolver } from "./model-resolver.js";
import { pluginTool } from "./plugin-tool.js";
import { executeRun } from "./run.js";
import { SlashCommands } from "./slash.js";
import { createAgentTool } from "./subagent.js";
import type { Approver, RunEvent, RunInput, RunResult } from "./types.js";

/** A plugin handed over in code, with what gatehouse.json would otherwise say about it. */
export interface PluginSpec {
  readonly plugin: PluginDefinition;
  readonly id?: string;
  readonly config?: unknown;
  readonly hooks?: PluginHookOptions;
  /** Plugins given in code are trusted (conversation hooks allowed) unless this says false. */
  readonly trusted?: boolean;
}

/**
 * The runtime's own options: everything already loaded. `createGatehouse` (src/assembly/) reads
 * the settings sources, command hooks and permissions and hands them over here.
 */
export interface RuntimeOptions {
  /** A `provider:model` spec (`scripted:echo`, `openai:gpt-4o`, …) or an AI SDK model. */
  readonly model: string | LanguageModelV3;
  readonly plugins?: readonly (PluginDefinition | PluginSpec)[];
  /** gatehouse.json `plugins` entries (files and packages, not trusted unless granted). */
  readonly pluginEntries?: readonly PluginEntry[];
  /**
   * A store, or how to open one: options, or the string gatehouse.json's `store` and
   * `GATEHOUSE_DATABASE_URL` take (`"memory"`, a `postgres://` URL, a SQLite file path relative
   * to the project folder). Default: `GATEHOUSE_DATABASE_URL`, else SQLite in `<cwd>/.gatehouse/`.
   */
  readonly store?: SessionStore | StoreOptions | string;
  readonly tools?: readonly Tool[];
  /**
   * Tools that arrive later (the CLI's MCP servers, starting in the background). A run does its
   * input gates without them; its first model call waits for them, once: after they settled, no
   * run waits again. A name already taken is logged and skipped.
   */
  readonly lateTools?: Promise<readonly Tool[]>;
  /** Called once, when a run's first model call has to wait for tools still starting (to say so). */
  readonly onToolsWait?: () => void;
  /**
   * MCP servers (gatehouse.json's `mcpServers` shape): started on first use, concurrently and in
   * the background (like `lateTools`), their tools added as `mcp__<server>__<tool>`, stopped by
   * `close()`. A server that fails to start, or not within its startup timeout, is a logged
   * diagnostic and is not waited for again; the others still work.
   */
  readonly mcpServers?: McpServersConfig;
  /** What MCP servers started here may see of `env`. Default: provider keys and Gatehouse's secrets removed. */
  readonly envPolicy?: EnvPolicy;
  /** Adds Claude Code's `Agent` tool: sub-agents as child runs. `maxDepth` 1 (default) means no nesting. */
  readonly subagents?: boolean | { readonly maxDepth?: number };
  /**
   * Which optional plugin tools (OpenClaw's `optional: true`) are offered: tool names or globs,
   * plugin ids, or `group:plugins` for all (gatehouse.json `tools.allow` and `tools.alsoAllow`).
   * Default: none.
   */
  readonly optionalTools?: readonly string[];
  readonly approver?: Approver;
  readonly logger?: HostLogger;
  readonly config?: Partial<Omit<RuntimeConfig, "compaction" | "model">> & {
    readonly compaction?: Partial<RuntimeConfig["compaction"]>;
    readonly model?: Partial<RuntimeConfig["model"]>;
    readonly hooks?: TimeoutOverrides;
  };
  /** Where keys and provider settings are read. Default: process.env. */
  readonly env?: NodeJS.ProcessEnv;
  /** The permission rules and mode (docs/permissions.md). Default: `default` mode, no rules. */
  readonly permissions?: PermissionPolicy;
  /**
   * The sandbox's read rules, which an `agent` command hook's reads obey too (docs/security.md#sandbox).
   * Default: the sandbox's defaults (the credential files and Gatehouse's own data unreadable).
   */
  readonly sandboxReads?: SandboxPolicy["filesystem"];
  /**
   * Plugins added after `plugins` and `pluginEntries` when the runtime starts (the assembly's
   * command hooks, loaded only when some are configured).
   */
  readonly latePlugins?: (host: LatePluginHost) => Promise<readonly PluginSpec[]>;
}

/** What the runtime lends plugins added at start: the store (a view: text is stored only through the doors), the session environment, the hook model and MCP calls. */
export interface LatePluginHost {
  readonly store: () => StoreView;
  /** Variables SessionStart hooks set (`CLAUDE_ENV_FILE`), for the session's later Bash calls. */
  readonly onSessionEnv: (sessionId: string, variables: Readonly<Record<string, string>>) => void;
  /** The model `prompt` command hooks ask. */
  readonly evaluatePrompt: ReturnType<typeof hookModelCall>;
  /** The read-only agent `agent` command hooks run (their tools meet `permissions` with no one to ask). */
  readonly evaluateAgent: ReturnType<typeof hookAgentCall>;
  /** Where a hook's own model calls count their usage: the run with this id, while it is under way. */
  readonly runUsage: (runId: string) => UsageSink | undefined;
  /** A connected MCP server's tool, for `mcp_tool` command hooks. */
  readonly callMcpTool: ReturnType<typeof hookMcpCall>;
}

/** A streamed run: iterate its events; `result` settles when the run ends. */
export interface RunStream extends AsyncIterable<RunEvent> {
  readonly result: Promise<RunResult>;
}

export interface Gatehouse {
  run(input: RunInput): Promise<RunResult>;
  stream(input: RunInput): RunStream;
  /** Loads plugins, opens the store and resolves the model; `run` calls it for you. */
  ready(): Promise<void>;
  /**
   * Recovers now what a run's next admission would recover later: for every session whose run lock
   * is held by an owner that is gone (a process that died mid-run; a `serve` instance whose lease
   * expired), takes the lock over and removes its interrupted runs' unchecked output. Returns the
   * sessions it recovered runs in.
   */
  recoverAbandonedRuns(): Promise<string[]>;
  /**
   * Fires `session_end` for a session, in a context of its own (no run is under way): `exit` when
   * the process that ran it ends, `input_exit` when the user leaves chat, `deleted` before
   * `sessions rm` removes it. The session itself is left as it is.
   */
  endSession(sessionId: string, reason: "exit" | "input_exit" | "deleted"): Promise<void>;
  /**
   * How many sessions and runs this Gatehouse keeps state for in memory: sessions until their
   * `session_end` (a reset, a deletion), runs until they end. For leak checks of long-running hosts.
   */
  retained(): { readonly sessions: number; readonly sessionEnv: number; readonly runs: number };
  close(): Promise<void>;
  readonly engine: HookEngine;
  readonly plugins: PluginHost;
  /**
   * The open store (after `ready()`), as a view: sessions, runs and the audit can be read, listed
   * and deleted, but text is stored only through the runtime's doors, where the gates run.
   */
  readonly store: StoreView;
}

/** What a run uses where gatehouse.json (or `options.config`) says nothing; `gatehouse config` shows them. */
export const DEFAULTS: RuntimeConfig = {
  cwd: process.cwd(),
  maxSteps: 25,
  systemPrompt: "You are a helpful assistant.",
  compaction: { contextTokens: 100_000, keepRecent: 6 },
  model: { maxRetries: DEFAULT_MAX_RETRIES },
  approvalTimeoutMs: 60_000,
};

const stderrLogger: HostLogger = {
  debug: () => {},
  info: () => {},
  warn: (m) => process.stderr.write(`gatehouse: ${maskSecrets(m)}\n`),
  error: (m) => process.stderr.write(`gatehouse: ${maskSecrets(m)}\n`),
};

export function createRuntime(options: RuntimeOptions): Gatehouse {
  const logger = options.logger ?? stderrLogger;
  const config: RuntimeConfig = {
    ...DEFAULTS,
    ...options.config,
    compaction: { ...DEFAULTS.compaction, ...options.config?.compaction },
    model: { ...DEFAULTS.model, ...options.config?.model },
  };
  const engine = new HookEngine({ logger, ...(options.config?.hooks ? { timeouts: options.config.hooks } : {}) });
  let store: SessionStore | undefined;
  const plugins = new PluginHost(engine, { cwd: config.cwd, logger, pluginState: () => store?.pluginState });
  const permissions = options.permissions ?? new PermissionPolicy({ mode: "default", rules: [], cwd: config.cwd });
  const sandboxReads =
    options.sandboxReads ??
    sandboxPolicy(DEFAULT_SANDBOX_SETTINGS, [], { projectDir: config.cwd, homeDir: homedir() }).filesystem;
  let deps: RuntimeDeps | undefined;
  let mcp: McpServerPool | undefined;
  let starting: Promise<RuntimeDeps> | undefined;
  const sessionsOpened = new Set<string>();
  const sessionEnv = new Map<string, Readonly<Record<string, string>>>();
  const envPolicy = options.envPolicy ?? DEFAULT_ENV_POLICY;
  // Both: a tool's process reads its parent's real environment (/proc/$PPID/environ), not `env`.
  const secrets = envMasker([process.env, options.env ?? {}], envPolicy);
  const secretsOf = (sessionId: string) => {
    const variables = sessionEnv.get(sessionId);
    return variables === undefined ? secrets : secrets.with(withheldValues([variables], envPolicy));
  };
  const runUsage = new Map<string, UsageSink>();
  // What is kept per session goes with the session: a `serve` that runs for weeks must not grow.
  engine.intercept({
    name: "session-state",
    hooks: ["session_end"],
    done(d) {
      // Interceptors see every dispatch; `hooks` only asks that session_end be emitted.
      const sessionId = d.event.sessionId;
      if (d.hook !== "session_end" || typeof sessionId !== "string") return;
      sessionsOpened.delete(sessionId);
      sessionEnv.delete(sessionId);
    },
  });

  // What plugins added at start (the assembly's command hooks) may use of the runtime.
  let models: ModelResolver | undefined;
  const lateHost: LatePluginHost = {
    store: () => store as SessionStore,
    onSessionEnv: (sessionId, variables) => sessionEnv.set(sessionId, { ...sessionEnv.get(sessionId), ...variables }),
    evaluatePrompt: (request) => hookModelCall(models as ModelResolver)(request),
    evaluateAgent: (request) => hookAgentCall(models as ModelResolver, permissions, config.cwd, sandboxReads)(request),
    runUsage: (runId) => runUsage.get(runId),
    callMcpTool: hookMcpCall(
      () => deps?.tools,
      config.cwd,
      (signal) => deps?.waitForTools?.(signal),
    ),
  };

  const addPlugin = (p: PluginDefinition | PluginSpec) => {
    const spec: PluginSpec = "plugin" in p ? p : { plugin: p };
    return plugins.add(spec.plugin, {
      trusted: spec.trusted ?? true,
      ...(spec.id === undefined ? {} : { id: spec.id }),
      config: spec.config,
      ...(spec.hooks === undefined ? {} : { hooks: spec.hooks }),
    });
  };

  async function start(): Promise<RuntimeDeps> {
    // The store first: OpenClaw plugins load their runtime.state from it during setup.
    const given = options.store;
    const env = options.env ? { env: options.env } : {};
    store =
      typeof given === "object" && "appendMessage" in given
        ? given
        : await openStore({
            // The store's operator notices (never content) go where the runtime's warnings go, unless the caller says.
            warn: (message) => logger.warn(message),
            ...(typeof given === "object"
              ? given
              : resolveStoreOptions({
                  projectDir: config.cwd,
                  ...env,
                  ...(given === undefined ? {} : { database: given }),
                })),
          });
    for (const p of options.plugins ?? []) await addPlugin(p);
    if (options.pluginEntries) await plugins.load(options.pluginEntries, config.cwd);
    for (const p of (await options.latePlugins?.(lateHost)) ?? []) await addPlugin(p);
    models = modelResolver(options.model, config.cwd, options.env);
    await models.resolve();
    engine.intercept(auditInterceptor(store, logger));
    // Only when debug lines are shown: an interceptor costs every dispatch.
    if (logger.debugEnabled) engine.intercept(debugInterceptor(logger));
    const tools = new Map<string, Tool>((options.tools ?? []).map((t) => [t.name, t]));
    const late: Promise<void>[] = [];
    const addLate = (more: readonly Tool[]) => {
      for (const tool of more) {
        if (tools.has(tool.name)) logger.error(`tool "${tool.name}" is already defined; the later one is not added`);
        else tools.set(tool.name, tool);
      }
    };
    if (options.lateTools) late.push(options.lateTools.then(addLate));
    if (options.mcpServers && Object.keys(options.mcpServers).length) {
      // The MCP SDK (and its ajv, zod-to-json-schema, eventsource…) loads only when servers are configured.
      const { startMcpServers } = await import("../tools/mcp.js");
      const pool = startMcpServers(options.mcpServers, {
        cwd: config.cwd,
        logger: mcpLogger(logger),
        envPolicy,
        ...(options.env ? { env: options.env } : {}),
      });
      mcp = pool;
      late.push(pool.settled().then(() => addLate(pool.tools)));
    }
    const optionalAllowed = optionalToolMatcher(options.optionalTools ?? []);
    for (const [name, tool] of plugins.tools) {
      if (tool.optional && !optionalAllowed(name, tool.pluginId))
        logger.info(
          `plugin ${tool.pluginId}: tool "${name}" is optional and not offered; name it in tools.alsoAllow to offer it`,
        );
      else if (tools.has(name))
        logger.error(`plugin ${tool.pluginId}: tool "${name}" is already a built-in or MCP tool; not added`);
      else tools.set(name, pluginTool(tool));
    }
    const { subagents } = options;
    if (subagents) {
      const maxDepth = typeof subagents === "object" ? (subagents.maxDepth ?? 1) : 1;
      tools.set("Agent", createAgentTool(() => deps as RuntimeDeps, maxDepth) as Tool);
    }
    const waitForTools = late.length === 0 ? undefined : toolsWaiter(late, options.onToolsWait, logger);
    return {
      engine,
      store,
      // The store's message writer, sealed for the doors: nothing else in the runtime can store text.
      doors: new Doors(store),
      models,
      tools,
      ...(waitForTools === undefined ? {} : { waitForTools }),
      config,
      approver: options.approver,
      logger,
      commands: new SlashCommands(plugins.commands),
      permissions,
      sessionsOpened,
      sessionEnv,
      secretsOf,
      runUsage,
    };
  }

  async function ready(): Promise<RuntimeDeps> {
    if (deps) return deps;
    starting ??= start();
    deps = await starting;
    return deps;
  }

  function stream(input: RunInput): RunStream {
    const channel = new RunEventChannel();
    const result = ready()
      .then((d) => executeRun(d, input, (e) => channel.push(e)).finally(() => plugins.flushState()))
      .then((r) => {
        channel.push({ type: "run-end", result: r });
        return r;
      })
      .finally(() => channel.close());
    return Object.assign(channel, { result });
  }

  return {
    engine,
    plugins,
    get store(): StoreView {
      if (!store) throw new Error("the store is opened by ready() or the first run");
      return store;
    },
    async ready() {
      await ready();
    },
    async run(input) {
      // A run ends with its plugins' state saved.
      return executeRun(await ready(), input, dropEvents).finally(() => plugins.flushState());
    },
    async recoverAbandonedRuns() {
      return recoverAbandonedRuns(await ready());
    },
    retained: () => ({ sessions: sessionsOpened.size, sessionEnv: sessionEnv.size, runs: runUsage.size }),
    stream,
    async endSession(sessionId, reason) {
      const deps = await ready();
      const session = await deps.store.getSession(sessionId);
      const context: RunContext = {
        sessionId,
        sessionKey: session?.key ?? sessionId,
        runId: "",
        agentId: "main",
        depth: 0,
        trigger: "user",
        channel: "cli",
        traceparent: newTraceparent(),
      };
      await runWithContext(context, () => engine.emit("session_end", { sessionId, reason }));
    },
    async close() {
      await engine.drain();
      await plugins.flushState();
      await mcp?.close();
      await store?.close();
    },
  };
}

/**
 * What a run's first model call awaits: every late tool source settled (a failed one is logged,
 * once). Settled once per instance, so later runs do not wait again; `onWait` hears of the first wait.
 */
function toolsWaiter(
  late: readonly Promise<void>[],
  onWait: (() => void) | undefined,
  logger: HostLogger,
): (signal: AbortSignal) => Promise<void> {
  let ready = false;
  let announced = false;
  const settled = Promise.all(late).then(
    () => {
      ready = true;
    },
    (error: unknown) => {
      ready = true;
      logger.error(`tools that start late: ${error instanceof Error ? error.message : error}`);
    },
  );
  return (signal) => {
    if (ready) return Promise.resolve();
    if (!announced) {
      announced = true;
      onWait?.();
    }
    signal.throwIfAborted();
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
      settled.then(resolve).finally(() => signal.removeEventListener("abort", onAbort));
    });
  };
}

function mcpLogger(logger: HostLogger): McpLogger {
  return { warn: (_fields, message) => logger.warn(message), debug: (_fields, message) => logger.debug(message) };
}

/** OpenClaw's allowlist for optional tools: the tool's name (or a glob), its plugin's id, or `group:plugins`. */
function optionalToolMatcher(entries: readonly string[]): (tool: string, pluginId: string) => boolean {
  const byName = toolNameMatcher(entries);
  const plugins = new Set(entries);
  return (tool, pluginId) => plugins.has("group:plugins") || plugins.has(pluginId) || byName(tool);
}
