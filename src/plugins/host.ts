import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { isAbsolute, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Jiti } from "jiti";
import { IDENTIFIER_PATTERN, literalPosition } from "../core/identifiers.js";
import type { HookName } from "../hooks/catalog.js";
import type { HookEngine } from "../hooks/engine.js";
import type { Diagnostic, RegisterOptions, RegistrationRequest } from "../hooks/registry.js";
import { sanitizeLogLine } from "../hooks/sanitize.js";
import type { PluginStateTables } from "../store/plugin-state.js";
import { type PluginEntry, type PluginHookOptions, PluginModuleSchema } from "./config.js";
import type { PluginApi, PluginCommand, PluginDefinition, PluginLogger, PluginTool } from "./define.js";
import { reportPluginError } from "./load-errors.js";
import { type AdaptedPlugin, adaptOpenClawPlugin } from "./openclaw/adapter.js";
import {
  folderEntry,
  hasOpenClawMarkers,
  isOpenClawModule,
  loadOpenClawPlugin,
  OPENCLAW_SDK_SPECIFIERS,
  OpenClawConfigError,
  openClawSdkShim,
  resolveOpenClawExport,
} from "./openclaw/index.js";
import { applyPermissions } from "./permissions.js";

const isAdapted = (definition: PluginDefinition): definition is AdaptedPlugin =>
  "persistState" in definition && typeof definition.persistState === "function";

export interface HostLogger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  /**
   * True when `debug` lines are shown: only then does the runtime write its own debug lines (model
   * calls, retries, tool calls, hook decisions), which cost every step to build.
   */
  readonly debugEnabled?: boolean;
}

export interface PluginInfo {
  readonly id: string;
  readonly name?: string;
  readonly version?: string;
  /** `code` for plugins passed in code, else the file or package it was loaded from. */
  readonly source: string;
  readonly trusted: boolean;
  readonly status: "loaded" | "disabled" | "failed";
  /** The plugin API it was written for: Gatehouse's (`setup`) or OpenClaw's (`register`, through the adapter). */
  readonly format?: "gatehouse" | "openclaw";
}

export interface AddOptions {
  /** Bundled plugins and plugins handed over in code are trusted; files named in configuration are not. */
  readonly trusted?: boolean;
  readonly id?: string;
  readonly config?: unknown;
  readonly hooks?: PluginHookOptions;
  readonly source?: string;
}

interface Loaded {
  readonly info: PluginInfo;
  readonly options: AddOptions;
  readonly entry?: PluginEntry;
}

/** A `setup` that never settles would hang start-up: past this it fails like one that threw. */
export const SETUP_TIMEOUT_MS = 10_000;

class SetupTimeout extends Error {
  constructor(ms: number) {
    super(`did not finish within ${ms} ms`);
  }
}

async function withinTimeout<T>(value: T | Promise<T>, ms: number): Promise<T> {
  if (!(value instanceof Promise)) return value;
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      value,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new SetupTimeout(ms)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Loads plugins onto a hook engine. Each plugin's `setup` registers into a staging list;
 * permissions are applied; then the engine swaps the whole set in at once, so loading and
 * reloading never leave a window with no handlers or with both versions.
 */
export class PluginHost {
  private readonly loaded = new Map<string, Loaded>();
  /** Slash commands by name, with the plugin that added them. */
  readonly commands = new Map<string, PluginCommand & { readonly pluginId: string }>();
  /** Tools plugins added, by name, with the plugin that added them. */
  readonly tools = new Map<string, PluginTool & { readonly pluginId: string }>();
  private readonly problems: Diagnostic[] = [];
  /** Created on the first plugin import: most runs configure no plugins and never load jiti. */
  private jiti: Jiti | undefined;
  private generation = 0;

  constructor(
    private readonly engine: HookEngine,
    private readonly options: {
      readonly cwd: string;
      readonly logger: HostLogger;
      /** How long a plugin's `setup` may take (default SETUP_TIMEOUT_MS). */
      readonly setupTimeoutMs?: number;
      /** Where OpenClaw plugins' `api.runtime.state` is kept: the session store's, once it is open. */
      readonly pluginState?: () => PluginStateTables | undefined;
    },
  ) {}

  private readonly stateFlushers = new Set<() => Promise<void>>();

  /** Waits until every OpenClaw plugin's state changes so far are in the store (failures were logged). */
  async flushState(): Promise<void> {
    await Promise.all([...this.stateFlushers].map((flush) => flush()));
  }

  /** Every refusal and error so far, as `gatehouse plugins inspect` lists them. */
  get diagnostics(): readonly Diagnostic[] {
    return this.problems;
  }

  list(): PluginInfo[] {
    return [...this.loaded.values()].map((l) => l.info);
  }

  /** Registers a plugin given as an object. */
  async add(definition: PluginDefinition, options: AddOptions = {}): Promise<Diagnostic[]> {
    const source = options.source ?? "code";
    // An OpenClaw plugin handed over in code (`{ id, register }` or a register function).
    if (options.source === undefined && isOpenClawModule(definition)) {
      const entry = resolveOpenClawExport(definition);
      if (entry)
        definition = adaptOpenClawPlugin({
          entry,
          source,
          fallbackId: options.id ?? "openclaw-plugin",
          cwd: this.options.cwd,
        });
    }
    const checked = PluginModuleSchema.safeParse(definition);
    if (!checked.success) return this.record([moduleProblem(options.id ?? "?", source, checked.error.issues)]);
    const id = options.id ?? definition.id;
    const previous = this.loaded.get(id);
    if (previous && previous.info.source !== source)
      return this.record([
        {
          level: "error",
          pluginId: id,
          code: "duplicate-id",
          message: `plugin id "${id}" is already loaded from ${previous.info.source}`,
        },
      ]);
    const trusted = options.trusted ?? true;
    const staged: RegistrationRequest[] = [];
    const stagedCommands = new Map<string, PluginCommand>();
    const stagedTools: PluginTool[] = [];
    const api: PluginApi = {
      id,
      config: options.config,
      logger: this.pluginLogger(id),
      on: (hook: HookName, handler: unknown, registerOptions?: RegisterOptions) => {
        staged.push({ hook, handler: handler as RegistrationRequest["handler"], options: registerOptions });
      },
      registerCommand: (name, command) => {
        stagedCommands.set(name, command);
      },
      registerTool: (tool) => {
        stagedTools.push(tool);
      },
    };
    let returned: unknown;
    try {
      const tables = this.options.pluginState?.();
      if (tables && isAdapted(definition)) {
        const log = this.pluginLogger(id);
        await definition.persistState(tables, id, (message) => log.error(message));
        this.stateFlushers.add(definition.flushState);
      }
      returned = await withinTimeout(definition.setup(api), this.options.setupTimeoutMs ?? SETUP_TIMEOUT_MS);
    } catch (error) {
      this.markFailed(id, source);
      return this.record([
        {
          level: "error",
          pluginId: id,
          code: "setup-failed",
          message: `setup ${error instanceof SetupTimeout ? error.message : `threw ${reportPluginError(error, fileOf(source)).text}`}; plugin not (re)loaded`,
        },
      ]);
    }
    // setup returns nothing: a returned value (a teardown function, say) would be silently ignored.
    if (returned !== undefined) {
      this.markFailed(id, source);
      const what = returned === null ? "null" : Array.isArray(returned) ? "an array" : `a ${typeof returned}`;
      return this.record([
        {
          level: "error",
          pluginId: id,
          code: "setup-failed",
          message: `setup returned ${what}; it registers with api.on and returns nothing; plugin not (re)loaded`,
        },
      ]);
    }
    const grants = options.hooks ?? {};
    const { accepted, refused } = applyPermissions(id, trusted, grants, staged);
    const invalid = this.engine.replacePlugin(id, accepted, grants);
    const commandProblems = this.swapCommands(id, stagedCommands);
    const toolProblems = this.swapTools(id, stagedTools);
    const adapted = (definition as { adapterDiagnostics?: Diagnostic[] }).adapterDiagnostics ?? [];
    this.loaded.set(id, {
      info: {
        id,
        ...(definition.name === undefined ? {} : { name: definition.name }),
        ...(definition.version === undefined ? {} : { version: definition.version }),
        source,
        trusted,
        status: "loaded",
        format: "adapterDiagnostics" in definition ? "openclaw" : "gatehouse",
      },
      options,
    });
    return this.record([...adapted, ...refused, ...invalid, ...commandProblems, ...toolProblems]);
  }

  private swapTools(pluginId: string, staged: readonly PluginTool[]): Diagnostic[] {
    const problems: Diagnostic[] = [];
    for (const [name, tool] of this.tools) if (tool.pluginId === pluginId) this.tools.delete(name);
    for (const tool of staged) {
      const owner = this.tools.get(tool.name)?.pluginId;
      if (owner !== undefined || !/^[A-Za-z0-9_-]{1,64}$/.test(tool.name)) {
        const why = owner ? `is already registered by ${owner}` : "must be 1 to 64 letters, digits, _ or -";
        problems.push({ level: "error", pluginId, code: "bad-tool", message: `tool "${tool.name}" ${why}` });
      } else this.tools.set(tool.name, { ...tool, pluginId });
    }
    return problems;
  }

  private swapCommands(pluginId: string, staged: ReadonlyMap<string, PluginCommand>): Diagnostic[] {
    const problems: Diagnostic[] = [];
    for (const [name, command] of this.commands) if (command.pluginId === pluginId) this.commands.delete(name);
    for (const [name, command] of staged) {
      const owner = this.commands.get(name)?.pluginId;
      if (!/^[a-z][a-z0-9_-]*$/.test(name) || RESERVED_COMMANDS.has(name) || owner !== undefined) {
        const why = owner
          ? `is already registered by ${owner}`
          : "must be a lowercase letter then letters, digits, _ or -, and not a built-in";
        problems.push({ level: "error", pluginId, code: "bad-command", message: `slash command "/${name}" ${why}` });
      } else this.commands.set(name, { ...command, pluginId });
    }
    return problems;
  }

  /** Loads gatehouse.json's `plugins` entries, in order. `baseDir` resolves relative paths. */
  async load(entries: readonly PluginEntry[], baseDir: string = this.options.cwd): Promise<Diagnostic[]> {
    const found: Diagnostic[] = [];
    for (const entry of entries) found.push(...(await this.loadEntry(entry, baseDir)));
    return found;
  }

  /** Re-imports a plugin loaded from a file or package and swaps its registrations atomically. */
  async reload(id: string): Promise<Diagnostic[]> {
    const loaded = this.loaded.get(id);
    if (!loaded?.entry)
      return this.record([
        {
          level: "error",
          pluginId: id,
          code: "not-reloadable",
          message: `plugin "${id}" was not loaded from a file or package`,
        },
      ]);
    return this.loadEntry(loaded.entry, this.options.cwd);
  }

  private async loadEntry(entry: PluginEntry, baseDir: string): Promise<Diagnostic[]> {
    const specifier =
      entry.path !== undefined
        ? isAbsolute(entry.path)
          ? entry.path
          : resolve(baseDir, entry.path)
        : (entry.package as string);
    const source = entry.path !== undefined ? specifier : `package:${specifier}`;
    const label = entry.id ?? specifier;
    if (entry.enabled === false) {
      this.loaded.set(label, { info: { id: label, source, trusted: false, status: "disabled" }, options: {}, entry });
      return [];
    }
    let mod: unknown;
    let file: string;
    let root: string | undefined;
    try {
      ({ file, root } = await this.entryFile(specifier, entry.package !== undefined));
      mod = await this.importFresh(file);
    } catch (error) {
      this.markFailed(label, source, entry);
      const report = reportPluginError(error, fileOf(source));
      return this.record([
        {
          level: "error",
          pluginId: label,
          code: "load-failed",
          message: `cannot load ${source}: ${report.text}`,
          ...(report.frame ? { frame: report.frame } : {}),
        },
      ]);
    }
    let definition = pickDefinition(mod);
    let config = entry.config;
    if (
      !PluginModuleSchema.safeParse(definition).success &&
      isOpenClawModule(mod, { bareFunction: hasOpenClawMarkers(file, root) })
    ) {
      try {
        const loaded = loadOpenClawPlugin(mod, {
          file,
          ...(root === undefined ? {} : { root }),
          cwd: this.options.cwd,
          config: entry.config,
        });
        if (loaded) ({ plugin: definition, config } = loaded);
      } catch (error) {
        this.markFailed(label, source, entry);
        const message =
          error instanceof OpenClawConfigError
            ? error.message
            : `cannot read its manifest: ${reportPluginError(error).text}`;
        return this.record([{ level: "error", pluginId: label, code: "bad-config", message }]);
      }
    }
    const checked = PluginModuleSchema.safeParse(definition);
    if (!checked.success) {
      this.markFailed(label, source, entry);
      return this.record([moduleProblem(label, sourceWithIdPosition(source, file, definition), checked.error.issues)]);
    }
    const found = await this.add(definition as PluginDefinition, {
      trusted: false,
      source,
      ...(entry.id === undefined ? {} : { id: entry.id }),
      config,
      ...(entry.hooks === undefined ? {} : { hooks: entry.hooks }),
    });
    const loaded = this.loaded.get(entry.id ?? (definition as PluginDefinition).id);
    if (loaded) this.loaded.set(loaded.info.id, { ...loaded, entry });
    return found;
  }

  /**
   * The module file an entry names: a file as is; a folder or a package by its package.json
   * (OpenClaw's `openclaw.extensions`, then `main`), else by Node's resolution of the package.
   * A package's root is found on the node_modules path, not through `pkg/package.json`, which an
   * `exports` map may hide (and with it the package's OpenClaw manifest).
   */
  private async entryFile(specifier: string, isPackage: boolean): Promise<{ file: string; root?: string }> {
    if (!isPackage) return { file: folderEntry(specifier)?.file ?? specifier };
    const root = packageRoot(specifier, this.options.cwd);
    if (root === undefined) return { file: specifier };
    const pkg = JSON.parse(readFileSync(resolve(root, "package.json"), "utf8")) as { openclaw?: unknown };
    if (pkg.openclaw !== undefined) {
      const found = folderEntry(root);
      if (found && existsSync(found.file)) return { file: found.file, root };
    }
    return { file: fileURLToPath((await this.loader()).esmResolve(specifier)), root };
  }

  /**
   * TypeScript goes through jiti (which re-evaluates on every import). Native ESM modules are
   * cached by URL for the life of the process, so a reload imports them under a new query.
   */
  private async importFresh(specifier: string): Promise<unknown> {
    const file = isAbsolute(specifier) ? specifier : fileURLToPath((await this.loader()).esmResolve(specifier));
    if (/\.[mc]?ts$/.test(file)) return (await this.loader()).import(file);
    const url = pathToFileURL(file).href;
    try {
      return await import(this.generation++ === 0 ? url : `${url}?gatehouse-reload=${this.generation}`);
    } catch (error) {
      // An OpenClaw plugin importing its SDK without the `openclaw` package installed: jiti maps
      // the SDK to Gatehouse's shim (see loader()).
      if (!missingOpenClawSdk(error)) throw error;
      return (await this.loader()).import(file);
    }
  }

  private async loader(): Promise<Jiti> {
    if (!this.jiti) {
      const { createJiti } = await import("jiti");
      const shim = openClawSdkShim();
      this.jiti ??= createJiti(resolve(this.options.cwd, "gatehouse.plugins.js"), {
        moduleCache: false,
        fsCache: false,
        // Line numbers in a TypeScript plugin's stack traces are its own lines, for the errors a
        // plugin author reads (load-errors.ts; describeError's frame for a failing handler).
        transformOptions: { retainLines: true },
        // OpenClaw plugins import their SDK; without the `openclaw` package it is Gatehouse's shim.
        alias: openClawSdkInstalled(this.options.cwd)
          ? {}
          : Object.fromEntries(OPENCLAW_SDK_SPECIFIERS.map((s) => [s, shim])),
      });
    }
    return this.jiti;
  }

  /** A plugin that could not be loaded is listed as failed, unless an earlier version still runs. */
  private markFailed(id: string, source: string, entry?: PluginEntry): void {
    if (this.loaded.get(id)?.info.status === "loaded") return;
    this.loaded.set(id, {
      info: { id, source, trusted: false, status: "failed" },
      options: {},
      ...(entry ? { entry } : {}),
    });
  }

  private record(found: Diagnostic[]): Diagnostic[] {
    for (const d of found) {
      this.problems.push(d);
      this.options.logger.warn(sanitizeLogLine(`plugin ${d.pluginId}${d.hook ? ` (${d.hook})` : ""}: ${d.message}`));
      // Already masked and flattened line by line (load-errors.ts); indentation is the point.
      for (const line of d.frame ?? []) this.options.logger.warn(line);
    }
    return found;
  }

  private pluginLogger(id: string): PluginLogger {
    const { logger } = this.options;
    const line = (m: unknown) => sanitizeLogLine(`[${id}] ${String(m)}`);
    return {
      debug: (m) => logger.debug(line(m)),
      info: (m) => logger.info(line(m)),
      warn: (m) => logger.warn(line(m)),
      error: (m) => logger.error(line(m)),
    };
  }
}

const RESERVED_COMMANDS = new Set(["help", "reset", "compact", "status"]);

/** The plugin's file, for a source that is one (`package:…` and `code` are not). */
function fileOf(source: string): string | undefined {
  return isAbsolute(source) ? source : undefined;
}

function missingOpenClawSdk(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown };
  return e?.code === "ERR_MODULE_NOT_FOUND" && typeof e.message === "string" && e.message.includes("'openclaw");
}

function openClawSdkInstalled(cwd: string): boolean {
  try {
    createRequire(resolve(cwd, "gatehouse.plugins.js")).resolve("openclaw/package.json");
    return true;
  } catch {
    return false;
  }
}

/** The folder of an installed package: `<dir>/<name>` on Node's node_modules path from the project. */
function packageRoot(name: string, cwd: string): string | undefined {
  const paths = createRequire(resolve(cwd, "gatehouse.plugins.js")).resolve.paths(name) ?? [];
  for (const dir of paths) {
    const root = join(dir, name);
    if (existsSync(join(root, "package.json"))) return root;
  }
  return undefined;
}

function pickDefinition(mod: unknown): unknown {
  if (mod && typeof mod === "object" && "default" in mod && (mod as { default: unknown }).default) {
    return (mod as { default: unknown }).default;
  }
  return mod;
}

/**
 * The module file with the line and column of its `id`, when the id is a string written as a literal
 * there: a bad id is then a load error that says where to fix it.
 */
function sourceWithIdPosition(source: string, file: string, definition: unknown): string {
  const id = (definition as { id?: unknown } | undefined)?.id;
  if (typeof id !== "string" || IDENTIFIER_PATTERN.test(id)) return source;
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return source;
  }
  const at = literalPosition(text, id);
  return at ? `${file}:${at.line}:${at.column}` : source;
}

function moduleProblem(
  id: string,
  source: string,
  issues: readonly { path: readonly PropertyKey[]; message: string }[],
): Diagnostic {
  const what = issues.map((i) => `${i.path.map(String).join(".") || "(module)"}: ${i.message}`).join("; ");
  return {
    level: "error",
    pluginId: id,
    code: "bad-module",
    message: `${source} does not export a plugin ({ id, setup }, or OpenClaw's { id, register }): ${what}`,
  };
}
