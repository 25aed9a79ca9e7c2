import { isAbsolute, resolve } from "node:path";
import type { HookName } from "../../hooks/catalog.js";
import { HOOKS } from "../../hooks/catalog.js";
import type { Diagnostic, RegisterOptions } from "../../hooks/registry.js";
import { describeError } from "../../hooks/sanitize.js";
import type { HookContext } from "../../hooks/types.js";
import type { PluginStateTables } from "../../store/plugin-state.js";
import { VERSION } from "../../version.js";
import type { PluginApi, PluginDefinition, PluginLogger, PluginTool } from "../define.js";
import { dropTolerated, type HookMapping, hookMapping } from "./hooks.js";
import { resolveInternalEvents } from "./internal-hooks.js";
import type { OpenClawEntry, OpenClawManifest } from "./module.js";
import { adaptTool, ToolAdaptError } from "./plugin-tools.js";
import { PluginState } from "./state.js";
import { gatehouseMatcher, openClawToolName, ToolMatcherError } from "./tools.js";

/**
 * Runs an OpenClaw plugin's `register(api)` against Gatehouse: the OpenClaw api it is given
 * registers on Gatehouse's catalog through the mapping in hooks.ts and tools.ts. What has no
 * meaning here (gateway, cron, channel hooks, most `register*` surfaces) becomes a warning in
 * `gatehouse plugins inspect`, never a refusal to start and never silently dropped.
 */

type Obj = Record<string, unknown>;
type Handler = (event: unknown, ctx: unknown) => unknown;

export interface AdaptOptions {
  readonly entry: OpenClawEntry;
  readonly manifest?: OpenClawManifest;
  /** The entry file (absolute) or `code`. */
  readonly source: string;
  /** The installed package's folder, when the plugin came from one (OpenClaw's rootDir). */
  readonly packageRoot?: string;
  /** The id when neither the module nor its manifest names one. */
  readonly fallbackId: string;
  /** The project folder (OpenClaw's workspace). */
  readonly cwd: string;
}

/** A Gatehouse plugin that runs an OpenClaw plugin, and the warnings its registration produced. */
export interface AdaptedPlugin extends PluginDefinition {
  readonly adapterDiagnostics: Diagnostic[];
  /** The host calls it before setup: `api.runtime.state` is loaded from, and written through to, `tables`. */
  persistState(tables: PluginStateTables, pluginId: string, report: (message: string) => void): Promise<void>;
  /** Resolves once every state change so far has been written (or reported as failed). */
  flushState(): Promise<void>;
}

const isRecord = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const isThenable = (v: unknown): v is PromiseLike<unknown> =>
  v !== null &&
  (typeof v === "object" || typeof v === "function") &&
  typeof (v as { then?: unknown }).then === "function";

/** OpenClaw's options that Gatehouse spells differently or handles in the adapter. */
interface OpenClawOptions {
  priority?: number;
  registrationId?: string;
  timeoutMs?: number;
  matcher?: unknown;
  eligibleTriggers?: unknown;
  eligibleDispatchKinds?: unknown;
  requiresToolAuthority?: unknown;
  [other: string]: unknown;
}

/** Surfaces of OpenClaw's api that are not `register*` but have no meaning here either. */
const OTHER_SURFACES = new Set([
  "onConversationBindingResolved",
  "enqueueNextTurnInjection",
  "emitAgentEvent",
  "setRunContext",
  "getRunContext",
  "clearRunContext",
  "sendSessionAttachment",
  "scheduleSessionTurn",
  "unscheduleSessionTurnsByTag",
]);
const FACADES = new Set(["session", "agent", "runContext", "lifecycle"]);

export function adaptOpenClawPlugin(options: AdaptOptions): AdaptedPlugin {
  const { entry, manifest } = options;
  const def = entry.definition ?? {};
  const text = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined);
  const id = text(def.id) ?? manifest?.id ?? options.fallbackId;
  const name = text(def.name) ?? manifest?.name;
  const version = text(def.version) ?? manifest?.version;
  const diagnostics: Diagnostic[] = [];
  // One state per loaded plugin: its stores outlive each setup (a reload sees what it stored).
  const state = new PluginState();
  const plugin: AdaptedPlugin = {
    id,
    ...(name === undefined ? {} : { name }),
    ...(version === undefined ? {} : { version }),
    adapterDiagnostics: diagnostics,
    persistState: (tables, pluginId, report) => state.persist(tables, pluginId, report),
    flushState: () => state.flush(),
    async setup(api) {
      const session = new AdapterSession(api, options, diagnostics, state);
      const returned = entry.register.call(entry.definition, session.openClawApi());
      // OpenClaw refuses an async register; Gatehouse's setup may be async, so it waits for it.
      if (isThenable(returned)) await returned;
      session.close();
    },
  };
  return plugin;
}

class AdapterSession {
  private open = true;
  private readonly warned = new Set<string>();
  private readonly tolerated = new Set<string>();

  constructor(
    private readonly api: PluginApi,
    private readonly options: AdaptOptions,
    private readonly diagnostics: Diagnostic[],
    private readonly state: PluginState,
  ) {}

  close(): void {
    this.open = false;
  }

  /** A warning in `plugins inspect` while registering; a log line afterwards. */
  private warn(code: string, message: string, hook?: string): void {
    const key = `${code}\0${hook ?? ""}\0${message}`;
    if (this.warned.has(key)) return;
    this.warned.add(key);
    if (this.open)
      this.diagnostics.push({ level: "warning", pluginId: this.api.id, ...(hook ? { hook } : {}), code, message });
    else this.api.logger.warn(`${hook ? `${hook}: ` : ""}${message}`);
  }

  private error(code: string, message: string, hook?: string): void {
    this.diagnostics.push({ level: "error", pluginId: this.api.id, ...(hook ? { hook } : {}), code, message });
  }

  openClawApi(): unknown {
    const { api, options } = this;
    const pluginConfig = isRecord(api.config) ? api.config : undefined;
    const rootDir = options.packageRoot ?? (options.source === "code" ? options.cwd : resolve(options.source, ".."));
    const known: Obj = {
      id: api.id,
      name: options.entry.definition?.name ?? options.manifest?.name ?? api.id,
      version: options.entry.definition?.version ?? options.manifest?.version,
      description: options.entry.definition?.description ?? options.manifest?.description,
      source: options.source,
      // The entry that runs: Gatehouse selects no separate runtime artifact, so it is the source.
      runtimeSource: options.source,
      rootDir,
      registrationMode: "full",
      // OpenClaw's whole config as far as this plugin goes: plugins read their own entry from it.
      config: {
        plugins: { entries: { [api.id]: { enabled: true, ...(pluginConfig ? { config: pluginConfig } : {}) } } },
      },
      pluginConfig,
      logger: openClawLogger(api.logger),
      runtime: this.runtime(rootDir),
      resolvePath: (input: string) =>
        input.startsWith("~/")
          ? resolve(process.env.HOME ?? options.cwd, input.slice(2))
          : isAbsolute(input)
            ? input
            : resolve(rootDir, input),
      on: (hook: unknown, handler: unknown, opts?: unknown) => this.on(hook, handler, opts),
      registerTool: (tool: unknown, opts?: unknown) => this.registerTool(tool, opts),
      registerCommand: (command: unknown) => this.registerCommand(command),
      registerHook: (events: unknown, handler: unknown) => this.registerHook(events, handler),
    };
    const surface = (name: string) => () => {
      this.warn("no-meaning", `api.${name} has no meaning in Gatehouse; ignored`);
      return undefined;
    };
    // `api.session.controls.registerControlUiDescriptor(...)`: any depth of a facade is a no-op
    // surface, warned about when called.
    const facade = (name: string): unknown =>
      new Proxy(() => undefined, {
        get: (_t, prop) => (typeof prop === "string" && prop !== "then" ? facade(`${name}.${prop}`) : undefined),
        apply: () => surface(name)(),
      });
    return new Proxy(known, {
      get: (target, prop) => {
        if (typeof prop !== "string") return undefined;
        if (Object.hasOwn(target, prop)) return target[prop];
        if (prop.startsWith("register") || OTHER_SURFACES.has(prop)) return surface(prop);
        if (FACADES.has(prop)) return facade(prop);
        return undefined;
      },
    });
  }

  /** The parts of OpenClaw's `api.runtime` that mean something here. */
  private runtime(rootDir: string): Obj {
    const { api, state } = this;
    const config = () => ({ plugins: { entries: { [api.id]: { enabled: true, config: api.config } } } });
    return {
      version: `gatehouse ${VERSION}`,
      logging: { shouldLogVerbose: () => false, getChildLogger: () => openClawLogger(api.logger) },
      state: {
        resolveStateDir: () => resolve(this.options.cwd, ".gatehouse", "plugins", api.id),
        openKeyedStore: (o: unknown) => state.openKeyedStore(o),
        openSyncKeyedStore: (o: unknown) => state.openSyncKeyedStore(o),
        openBlobStore: (o: unknown) => state.openBlobStore(o),
      },
      // OpenClaw's config as far as this plugin goes; writing it back has no meaning here.
      config: {
        current: config,
        loadConfig: config,
        mutateConfigFile: () => this.refuseConfigWrite("mutateConfigFile"),
        replaceConfigFile: () => this.refuseConfigWrite("replaceConfigFile"),
      },
      paths: { rootDir },
    };
  }

  private refuseConfigWrite(name: string): Promise<never> {
    return Promise.reject(
      new Error(`api.runtime.config.${name}: Gatehouse's configuration is gatehouse.json, which plugins do not write`),
    );
  }

  /**
   * OpenClaw's internal hooks: the events with a Gatehouse moment run there (observe-only, as in
   * OpenClaw: what the handler returns is ignored, what it throws is logged); the others are
   * warnings naming the event.
   */
  private registerHook(events: unknown, handler: unknown): void {
    if (typeof handler !== "function") {
      this.error("bad-handler", `the api.registerHook handler for ${JSON.stringify(events)} is not a function`);
      return;
    }
    const { mapped, notRun } = resolveInternalEvents(events);
    for (const [name, why] of notRun)
      this.warn("no-meaning", `internal hook "${name}" never runs in Gatehouse (${why})`, name);
    const log = this.api.logger;
    for (const [name, mapping] of mapped) {
      for (const target of mapping.targets) {
        const run = async (event: Obj, ctx: HookContext): Promise<undefined> => {
          const internal = {
            type: mapping.type,
            action: mapping.action,
            sessionKey: ctx.sessionKey,
            timestamp: new Date(),
            context: { ...event, workspaceDir: this.options.cwd },
            messages: [] as string[],
          };
          try {
            await (handler as Handler)(internal, undefined);
          } catch (error) {
            log.warn(`${name}: internal hook failed (${describeError(error)}); ignored, as OpenClaw ignores it`);
          }
          return undefined;
        };
        this.api.on(target, run as never, {});
      }
    }
  }

  private on(hook: unknown, handler: unknown, rawOptions: unknown): void {
    const name = String(hook);
    const mapping = hookMapping(name);
    if (!mapping) {
      // Not a hook OpenClaw has either: most likely a typo, and a guard that never runs.
      this.error("unknown-hook", `unknown hook "${name}" (neither OpenClaw nor Gatehouse has it)`, name);
      return;
    }
    if (mapping.targets.length === 0) {
      this.warn(
        "no-meaning",
        `OpenClaw hook "${name}" has no meaning in Gatehouse (${mapping.note}); never runs`,
        name,
      );
      return;
    }
    if (typeof handler !== "function") {
      this.error("bad-handler", `the handler for "${name}" is not a function`, name);
      return;
    }
    const options = this.options_(mapping, rawOptions);
    if (options === undefined) return;
    for (const target of mapping.targets) {
      const id = options.gatehouse.id;
      const registered: RegisterOptions =
        id !== undefined && mapping.targets.length > 1
          ? { ...options.gatehouse, id: `${id}#${target}` }
          : options.gatehouse;
      // The catalog types handlers per hook; this one is checked by the engine at dispatch instead.
      this.api.on(target, this.wrap(mapping, target, handler as Handler, options.triggers) as never, registered);
    }
  }

  /** OpenClaw's registration options as Gatehouse's, or undefined when they cannot be. */
  private options_(
    mapping: HookMapping,
    raw: unknown,
  ): { gatehouse: RegisterOptions; triggers?: readonly string[] } | undefined {
    if (raw === undefined) return { gatehouse: {} };
    const hook = mapping.openclaw;
    if (!isRecord(raw)) {
      this.error("bad-option", "the options must be an object", hook);
      return undefined;
    }
    const {
      registrationId,
      matcher,
      eligibleTriggers,
      eligibleDispatchKinds: _kinds,
      requiresToolAuthority: _authority,
      ...rest
    } = raw as OpenClawOptions;
    const gatehouse: Obj = { ...rest };
    if (registrationId !== undefined) gatehouse.id = registrationId;
    if (matcher !== undefined) {
      if (!mapping.targets.every((t) => "matcher" in HOOKS[t])) {
        this.warn("matcher-ignored", `"${hook}" ignores a tool matcher (as in OpenClaw)`, hook);
      } else {
        try {
          gatehouse.matcher = gatehouseMatcher(matcher);
        } catch (error) {
          if (!(error instanceof ToolMatcherError)) throw error;
          this.error("bad-matcher", error.message, hook);
          return undefined;
        }
      }
    }
    // OpenClaw drops a malformed trigger list (the hook then runs for every trigger).
    const triggers =
      Array.isArray(eligibleTriggers) &&
      eligibleTriggers.length > 0 &&
      eligibleTriggers.every((t) => typeof t === "string")
        ? (eligibleTriggers as string[])
        : undefined;
    return { gatehouse: gatehouse as RegisterOptions, ...(triggers ? { triggers } : {}) };
  }

  private wrap(mapping: HookMapping, target: HookName, handler: Handler, triggers?: readonly string[]) {
    const log = this.api.logger;
    const report = (dropped: readonly string[]) => {
      for (const key of dropped) {
        if (this.tolerated.has(`${target}\0${key}`)) continue;
        this.tolerated.add(`${target}\0${key}`);
        log.warn(`${target}: result key "${key}" is OpenClaw's and has no use in Gatehouse; ignored (reported once)`);
      }
    };
    const adaptResult = (value: unknown, event: Obj): unknown => {
      if (!isRecord(value)) return value;
      const { result, dropped } = dropTolerated(mapping, value);
      if (dropped.length) report(dropped);
      return mapping.result ? mapping.result(result, target, event) : result;
    };
    const openClawCtx = (ctx: HookContext, event: Obj): Obj => {
      const out: Obj = { ...ctx, workspaceDir: this.options.cwd, channelId: ctx.channel };
      if (typeof event.toolName === "string") {
        out.toolName = openClawToolName(event.toolName);
        out.toolCallId = event.toolCallId;
      }
      // ctx.signal is created on first use; OpenClaw calls it abortSignal.
      Object.defineProperty(out, "signal", { get: () => ctx.signal, enumerable: false });
      Object.defineProperty(out, "abortSignal", { get: () => ctx.signal, enumerable: false });
      return out;
    };
    return (event: Obj, ctx: HookContext): unknown => {
      if (triggers && !triggers.includes(ctx.trigger)) return undefined;
      const ocEvent = mapping.event ? mapping.event(event, target, ctx) : event;
      const ocCtx = openClawCtx(ctx, event);
      if (mapping.void) {
        // OpenClaw does not wait for these, and nothing they return or throw changes the run.
        const failed = (error: unknown) =>
          log.warn(`${target}: handler failed (${describeError(error)}); ignored, as OpenClaw ignores it`);
        try {
          const value = handler(ocEvent, ocCtx);
          if (isThenable(value)) value.then(undefined, failed);
        } catch (error) {
          failed(error);
        }
        return undefined;
      }
      const value = handler(ocEvent, ocCtx);
      return isThenable(value) ? Promise.resolve(value).then((v) => adaptResult(v, event)) : adaptResult(value, event);
    };
  }

  private registerTool(tool: unknown, rawOptions: unknown): void {
    let tools: PluginTool[];
    try {
      tools = adaptTool(tool, rawOptions, { cwd: this.options.cwd, pluginId: this.api.id, config: this.api.config });
    } catch (error) {
      if (!(error instanceof ToolAdaptError)) throw error;
      this.error("bad-tool", error.message);
      return;
    }
    for (const t of tools) this.api.registerTool(t);
  }

  private registerCommand(command: unknown): void {
    if (!isRecord(command) || typeof command.name !== "string" || typeof command.handler !== "function") {
      this.error("bad-command", "api.registerCommand expects { name, description, handler }");
      return;
    }
    const handler = command.handler as (ctx: Obj) => unknown;
    const name = command.name;
    const log = this.api.logger;
    this.api.registerCommand(name, {
      description: typeof command.description === "string" ? command.description : "",
      run: async (args, ctx) => {
        const result = await handler({
          args,
          commandBody: args === "" ? `/${name}` : `/${name} ${args}`,
          sessionId: ctx.sessionId,
          runId: ctx.runId,
          channel: "gatehouse",
          isAuthorizedSender: true,
        });
        if (isRecord(result) && result.continueAgent === true)
          log.warn(`/${name}: continueAgent has no meaning in Gatehouse (a slash command answers the turn)`);
        return isRecord(result) && typeof result.text === "string" ? result.text : undefined;
      },
    });
  }
}

function openClawLogger(logger: PluginLogger): Obj {
  const line = (m: unknown) => (typeof m === "string" ? m : describeLogValue(m));
  return {
    debug: (m: unknown) => logger.debug(line(m)),
    info: (m: unknown) => logger.info(line(m)),
    warn: (m: unknown) => logger.warn(line(m)),
    error: (m: unknown) => logger.error(line(m)),
  };
}

function describeLogValue(m: unknown): string {
  if (m instanceof Error) return describeError(m);
  try {
    return JSON.stringify(m) ?? String(m);
  } catch {
    return String(m);
  }
}
