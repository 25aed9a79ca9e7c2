import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { CONFIG_ENV, ConfigError, loadConfig, type ResolvedSettings, resolveSettings } from "../config/index.js";
import type { GatehouseConfig } from "../config/schema.js";
import { projectConfigFile, type WorkspaceTrust, workspaceTrust } from "../config/trust.js";
import { untrustedGatehouseConfig } from "../core/workspace-trust.js";
import { ModelSpecError } from "../models/errors.js";
import type { HostLogger } from "../plugins/host.js";
import type { Gatehouse } from "../runtime/gatehouse.js";
import { openMemoryStore, openStore, resolveStoreOptions, StoreError, type StoreOptions } from "../store/index.js";
import type { SessionStore } from "../store/types.js";
import { EXIT, type ExitCode } from "./exit.js";
import { type CliLogger, createCliLogger, type OutStream } from "./output.js";

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The project a command works on: gatehouse.json (or `--config`), the data folder and the
 * store, resolved exactly as `gatehouse run` resolves them.
 */

/** A problem to report on stderr with an exit status, raised anywhere before a command's work is done. */
export class CliStop extends Error {
  constructor(
    readonly code: ExitCode,
    message: string,
  ) {
    super(message);
  }
}

/** The flags every project command takes. */
export interface ProjectFlags {
  readonly config?: string;
  readonly dataDir?: string;
  readonly model?: string;
  /** `--settings FILE|JSON`: a settings source read after gatehouse.json (hooks and permissions). */
  readonly settings?: string;
}

/** The process around a command, injectable for tests. */
export interface CommandIO {
  readonly cwd: string;
  readonly env: Env;
  readonly stdout: OutStream;
  readonly stderr: OutStream;
}

export interface Project {
  /** gatehouse.json as it applies: without its loosening keys while the project is not trusted. */
  readonly config: GatehouseConfig;
  /** The config file read (absolute), if any. */
  readonly file?: string;
  readonly settings: ResolvedSettings;
  /** Whether the project's own settings may loosen the policy (docs/trust.md). */
  readonly trust: WorkspaceTrust;
}

/** Runs a command body: a `CliStop` becomes its message on stderr and its exit status. */
export async function runCli(io: CommandIO, body: (log: CliLogger) => Promise<ExitCode>): Promise<ExitCode> {
  const log = createCliLogger(io.stderr, io.env);
  try {
    return await body(log);
  } catch (error) {
    if (!(error instanceof CliStop)) throw error;
    for (const line of error.message.split("\n")) log.error(line);
    return error.code;
  }
}

/** The project's trust as a command sees it: its gatehouse.json is trust-gated unless a flag or the environment named it. */
export function projectTrust(
  flags: Pick<ProjectFlags, "config">,
  io: Pick<CommandIO, "cwd" | "env">,
  file: string | undefined,
): WorkspaceTrust {
  const named = flags.config !== undefined || Boolean(io.env[CONFIG_ENV]);
  const configFile = projectConfigFile(io.cwd, file, named);
  return workspaceTrust({
    projectDir: io.cwd,
    homeDir: io.env.HOME || homedir(),
    env: io.env,
    ...(configFile === undefined ? {} : { projectConfigFile: configFile }),
  });
}

/**
 * gatehouse.json (or `--config`, or `GATEHOUSE_CONFIG`) read, validated and resolved; a bad one
 * is exit 2. In a project not trusted, gatehouse.json's loosening keys are left out here.
 */
export async function loadProject(flags: ProjectFlags, io: Pick<CommandIO, "cwd" | "env">): Promise<Project> {
  try {
    const loaded = await loadConfig({
      cwd: io.cwd,
      ...(flags.config === undefined ? {} : { file: flags.config }),
      env: io.env,
    });
    const { file } = loaded;
    const trust = projectTrust(flags, io, file);
    const config = trust.trusted ? loaded.config : untrustedGatehouseConfig(loaded.config).settings;
    const settings = resolveSettings({
      config,
      ...(file === undefined ? {} : { file }),
      cwd: io.cwd,
      env: io.env,
      ...(flags.model === undefined ? {} : { model: flags.model }),
      ...(flags.dataDir === undefined ? {} : { dataDir: flags.dataDir }),
      ...(flags.settings === undefined ? {} : { settings: flags.settings }),
    });
    return { config, ...(file === undefined ? {} : { file }), settings, trust };
  } catch (error) {
    if (error instanceof ConfigError) throw new CliStop(EXIT.usage, error.message);
    throw error;
  }
}

/** Which store the project uses; a bad `GATEHOUSE_DATABASE_URL` is exit 2. */
export function storeOptionsFor(settings: ResolvedSettings, io: Pick<CommandIO, "cwd" | "env">): StoreOptions {
  try {
    return resolveStoreOptions({
      ...(settings.database === undefined ? {} : { database: settings.database }),
      projectDir: io.cwd,
      dataDir: settings.dataDir,
      env: io.env,
    });
  } catch (error) {
    // gatehouse.json's `store` was checked with the config: only the environment gets here.
    if (error instanceof StoreError) throw new CliStop(EXIT.usage, `GATEHOUSE_DATABASE_URL: ${error.message}`);
    throw error;
  }
}

/**
 * Opens the project's store for reading or deleting. A SQLite file that does not exist yet is
 * not created: the project simply has no sessions, and looking must leave no trace.
 */
export async function openProjectStore(options: StoreOptions): Promise<SessionStore> {
  if (options.kind === "sqlite" && !existsSync(options.path)) return openMemoryStore();
  try {
    return await openStore(options);
  } catch (error) {
    throw new CliStop(EXIT.failed, `cannot open the store: ${describe(error)}`);
  }
}

/** Plugin problems that mean a configured plugin is not running at all. */
export const PLUGIN_NOT_LOADED: ReadonlySet<string> = new Set([
  "load-failed",
  "bad-module",
  "setup-failed",
  "duplicate-id",
]);

/**
 * The project's Gatehouse with its plugins and command hooks loaded, for commands that need
 * the hooks but no model: the model is a placeholder that is never called, and no tools or
 * MCP servers are started.
 */
export async function startHooks(
  project: Project,
  io: Pick<CommandIO, "cwd" | "env">,
  store: SessionStore,
  logger: HostLogger,
): Promise<Gatehouse> {
  // The runtime is loaded only by the commands that need hooks.
  const { createGatehouse } = await import("../assembly/gatehouse.js");
  const gatehouse = createGatehouse({
    model: "scripted:echo",
    pluginEntries: project.settings.pluginEntries,
    store,
    tools: [],
    commandHooks: project.settings.commandHooks,
    logger,
    config: project.settings.runtime,
    env: io.env as NodeJS.ProcessEnv,
  });
  try {
    await gatehouse.ready();
  } catch (error) {
    await gatehouse.close().catch(() => undefined);
    const code = error instanceof ModelSpecError ? EXIT.usage : EXIT.failed;
    throw new CliStop(code, `cannot load the plugins: ${describe(error)}`);
  }
  return gatehouse;
}

/** Store ids are 1 to 200 characters; others are refused as bad input. */
export function checkId(what: string, value: string | undefined): void {
  if (value === undefined) return;
  if (value === "" || value.length > 200 || /\p{Cc}/u.test(value))
    throw new CliStop(EXIT.usage, `${what}: expected 1 to 200 characters without control characters`);
}

export function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Opens the project's store for `body` and closes it afterwards; the store's notices go to stderr. */
export async function withProjectStore<T>(
  project: Project,
  io: Pick<CommandIO, "cwd" | "env" | "stderr">,
  body: (store: SessionStore) => Promise<T>,
): Promise<T> {
  const { warn } = createCliLogger(io.stderr, io.env);
  const store = await openProjectStore({ ...storeOptionsFor(project.settings, io), warn });
  try {
    return await body(store);
  } finally {
    await store.close().catch(() => undefined);
  }
}
