import { dirname, isAbsolute, resolve } from "node:path";
import type { GatehouseOptions } from "../assembly/gatehouse.js";
import { createEnvPolicy, type EnvPolicy } from "../core/env-policy.js";
import { parseModelSpec } from "../models/spec.js";
import type { PluginEntry } from "../plugins/config.js";
import type { GatehouseConfig } from "./schema.js";

export const MODEL_ENV = "GATEHOUSE_MODEL";
export const DATA_DIR_ENV = "GATEHOUSE_DATA_DIR";
export const DATABASE_URL_ENV = "GATEHOUSE_DATABASE_URL";
const DEFAULT_DATA_DIR = ".gatehouse";

type Env = Readonly<Record<string, string | undefined>>;

export interface ResolveSettingsInput {
  readonly config: GatehouseConfig;
  /** The config file (absolute), if one was read: paths in it are relative to its folder. */
  readonly file?: string;
  /** The project directory. */
  readonly cwd: string;
  readonly env: Env;
  /** `--model`. */
  readonly model?: string;
  /** `--data-dir`. */
  readonly dataDir?: string;
  /** `--settings FILE|JSON`: command hooks read after gatehouse.json's (a relative file is found from `cwd`). */
  readonly settings?: string;
}

export interface ResolvedSettings {
  /** The model spec to use, or undefined when nothing sets one. */
  readonly model?: string;
  /** Where the model spec came from (for messages). */
  readonly modelFrom?: "--model" | "gatehouse.json" | typeof MODEL_ENV;
  /** `--data-dir` > `GATEHOUSE_DATA_DIR` > `<cwd>/.gatehouse`, absolute. */
  readonly dataDir: string;
  /**
   * The store: `GATEHOUSE_DATABASE_URL` > gatehouse.json `store`, a SQLite path made absolute;
   * undefined leaves the default to `resolveStoreOptions` (SQLite in `dataDir`).
   */
  readonly database?: string;
  /** Where `database` came from (for messages and `gatehouse config`). */
  readonly databaseFrom?: typeof DATABASE_URL_ENV | "gatehouse.json";
  /** gatehouse.json `subagents`: how deep the Agent tool may nest, when the tools allow it. */
  readonly subagents?: { readonly maxDepth?: number };
  /** gatehouse.json `plugins` with relative file paths made absolute. */
  readonly pluginEntries: PluginEntry[];
  /** `createGatehouse`'s `config`: the project directory, limits, prompt, compaction, hook timeouts. */
  readonly runtime: NonNullable<GatehouseOptions["config"]>;
  /**
   * `createGatehouse`'s `commandHooks`: Claude Code hooks from the settings files (user, project,
   * local), gatehouse.json's `hooks`, `--settings`, and Code Puppy's when `commandHooks.codePuppy` says so.
   */
  readonly commandHooks: NonNullable<GatehouseOptions["commandHooks"]>;
  /**
   * What the Bash tool, command hooks (and their `http` headers) and MCP servers may see of the
   * environment: `environment.deny`, `tools.bash.passEnv`, `commandHooks.passEnv`.
   */
  readonly envPolicy: EnvPolicy;
}

/**
 * Applies the precedence rule, flags > environment > gatehouse.json > defaults: model
 * `--model` > `GATEHOUSE_MODEL` > gatehouse.json; store `GATEHOUSE_DATABASE_URL` > gatehouse.json
 * `store` > SQLite in the data dir; data dir `--data-dir` > `GATEHOUSE_DATA_DIR` > `<cwd>/.gatehouse`.
 * (The environment beats the file so a deployment can override a checked-in gatehouse.json.)
 * Paths written in gatehouse.json (plugin files, a scripted model file, a SQLite store) are
 * relative to its folder; paths from flags and the environment are relative to `cwd`.
 */
export function resolveSettings(input: ResolveSettingsInput): ResolvedSettings {
  const { config, cwd, env } = input;
  const base = input.file ? dirname(input.file) : cwd;
  const fromEnv = env[MODEL_ENV]?.trim() || undefined;
  const { spec: configModel, ...modelSettings } =
    typeof config.model === "string" ? { spec: config.model } : (config.model ?? {});
  const model =
    input.model !== undefined
      ? ({ model: input.model, modelFrom: "--model" } as const)
      : fromEnv !== undefined
        ? ({ model: fromEnv, modelFrom: MODEL_ENV } as const)
        : configModel !== undefined
          ? ({ model: relativeScriptedFile(configModel, base), modelFrom: "gatehouse.json" } as const)
          : {};
  const dataDir = resolve(cwd, input.dataDir ?? (env[DATA_DIR_ENV] || DEFAULT_DATA_DIR));
  const databaseEnv = env[DATABASE_URL_ENV]?.trim() || undefined;
  const database =
    databaseEnv !== undefined
      ? ({ database: storePath(databaseEnv, cwd), databaseFrom: DATABASE_URL_ENV } as const)
      : config.store !== undefined
        ? ({ database: storePath(config.store, base), databaseFrom: "gatehouse.json" } as const)
        : {};
  return {
    ...model,
    dataDir,
    ...database,
    ...(config.subagents === undefined ? {} : { subagents: config.subagents }),
    pluginEntries: (config.plugins ?? []).map((e) =>
      e.path !== undefined && !isAbsolute(e.path) ? { ...e, path: resolve(base, e.path) } : e,
    ),
    runtime: {
      cwd,
      ...(config.maxSteps === undefined ? {} : { maxSteps: config.maxSteps }),
      ...(config.systemPrompt === undefined ? {} : { systemPrompt: config.systemPrompt }),
      ...(Object.keys(modelSettings).length === 0 ? {} : { model: modelSettings }),
      ...(config.compaction === undefined ? {} : { compaction: config.compaction }),
      ...(config.hookTimeouts === undefined ? {} : { hooks: config.hookTimeouts }),
    },
    commandHooks: commandHooks(config, input, env),
    envPolicy: envPolicyOf(config),
  };
}

function envPolicyOf(config: GatehouseConfig): EnvPolicy {
  const bash = config.tools?.bash?.passEnv;
  const hooks = config.commandHooks?.passEnv;
  const deny = config.environment?.deny;
  return createEnvPolicy({
    ...(deny === undefined ? {} : { deny }),
    passEnv: { ...(bash === undefined ? {} : { bash }), ...(hooks === undefined ? {} : { commandHooks: hooks }) },
  });
}

function commandHooks(
  config: GatehouseConfig,
  { file, settings, cwd }: ResolveSettingsInput,
  env: Env,
): NonNullable<GatehouseOptions["commandHooks"]> {
  const options = config.commandHooks ?? {};
  return {
    load: {
      ...(file === undefined ? {} : configSource(file, config)),
      ...(settings === undefined ? {} : { cliSettings: settings, cwd }),
      ...(options.codePuppy === undefined ? {} : { codePuppy: options.codePuppy }),
      ...(options.gemini === undefined ? {} : { gemini: options.gemini }),
      ...(options.codex === undefined ? {} : { codex: options.codex }),
      ...(options.cursor === undefined ? {} : { cursor: options.cursor }),
      ...(options.dialects === undefined ? {} : { dialects: options.dialects }),
      ...(options.onFailure === undefined ? {} : { onFailure: options.onFailure }),
      ...(env.HOME ? { homeDir: env.HOME } : {}),
      ...(env.PATH === undefined ? {} : { pathVar: env.PATH }),
    },
  };
}

/** gatehouse.json as the `config` hook source: its `hooks` block and its `disableAllHooks`. */
function configSource(
  file: string,
  config: GatehouseConfig,
): { configHooks?: { file: string; hooks?: unknown; disableAllHooks?: boolean } } {
  const { hooks, disableAllHooks } = config;
  if (hooks === undefined && disableAllHooks === undefined) return {};
  return {
    configHooks: {
      file,
      ...(hooks === undefined ? {} : { hooks }),
      ...(disableAllHooks === undefined ? {} : { disableAllHooks }),
    },
  };
}

/** `scripted:rel/file.json` → `scripted:/abs/rel/file.json`; any other spec as it is. */
function relativeScriptedFile(spec: string, base: string): string {
  const parsed = parseModelSpec(spec);
  if (parsed.provider !== "scripted" || parsed.source !== "file" || isAbsolute(parsed.file)) return spec;
  return `scripted:${resolve(base, parsed.file)}`;
}

function storePath(store: string, base: string): string {
  // A URL, or what starts like a PostgreSQL one (the store refuses it, naming where it came from).
  if (store === "memory" || store === ":memory:" || /^([a-z][a-z0-9+.-]*:\/\/|postgres(ql)?:)/i.test(store))
    return store;
  return resolve(base, store.replace(/^sqlite:/, ""));
}
