import { formatDiagnostic } from "../command-hooks/diagnostics.js";
import type { ConfiguredHandler } from "../command-hooks/sources.js";
import { DEFAULT_ENV_POLICY, type EnvPolicy } from "../core/env-policy.js";
import type { PermissionBehavior, PermissionMode } from "../permissions/index.js";
import { PermissionPolicy } from "../permissions/index.js";
import { createRuntime, type Gatehouse, type PluginSpec, type RuntimeOptions } from "../runtime/gatehouse.js";
import { DATABASE_URL_ENV } from "../store/index.js";
import { builtinTools } from "../tools/builtin/index.js";
import { type CommandHooksLoad, loadSources, permissionPolicy, sandboxReads } from "./sources.js";

export { DEFAULTS, type Gatehouse, type PluginSpec, type RunStream } from "../runtime/gatehouse.js";

/** The library's permission settings (docs/permissions.md). */
export interface PermissionOptions {
  /** Default: `default` (reads run; Bash, edits, MCP tools and Agent ask the approver). */
  readonly mode?: PermissionMode;
  readonly allow?: readonly string[];
  readonly ask?: readonly string[];
  readonly deny?: readonly string[];
  /** `bypassPermissions` is refused unless this says true. */
  readonly allowBypass?: boolean;
  /**
   * Also read `permissions` from the settings files (user, project and local `.claude/`,
   * `commandHooks.load`'s gatehouse.json block and `--settings`). Default: when
   * `commandHooks.load` is given; "always, for this project" answers are then written to
   * `.claude/settings.local.json`.
   */
  readonly fromSettings?: boolean;
  /** gatehouse.json's `permissions` block, with the file its paths are relative to. */
  readonly config?: { readonly file: string; readonly permissions?: unknown };
  /**
   * Settings files whose loosening settings wait for workspace trust (docs/trust.md): only what
   * tightens applies from them. `workspaceTrust(...).paths` of a project not trusted.
   */
  readonly untrustedFiles?: readonly string[];
}

export interface GatehouseOptions extends Omit<RuntimeOptions, "permissions" | "latePlugins"> {
  /**
   * The tools the model may call. Default: the built-in tools (`builtinTools()`: Read, Write,
   * Edit, MultiEdit, NotebookEdit, Bash, Glob, Grep, TodoWrite), under `permissions`. `[]` runs
   * with none.
   */
  readonly tools?: RuntimeOptions["tools"];
  /**
   * Where sessions are kept (see RuntimeOptions). Default: `GATEHOUSE_DATABASE_URL` when set; else
   * SQLite in `<config.cwd>/.gatehouse/` when a project folder is given (`config.cwd`, as the CLI
   * does), and in memory when none is: a library embedded in an application writes no files
   * unless asked to.
   */
  readonly store?: RuntimeOptions["store"];
  /**
   * What command hooks (and their `http` headers) and MCP servers started here may see of `env`.
   * Default: model-provider keys and Gatehouse's secrets removed. (Tools given in `tools` carry
   * their own: `builtinTools({ bash: { envPolicy } })`.)
   */
  readonly envPolicy?: EnvPolicy;
  /**
   * Claude Code command hooks: handlers already loaded, or where to load them from (the
   * settings files, gatehouse.json's `hooks`, `--settings`). Diagnostics go to the logger.
   */
  readonly commandHooks?: {
    readonly handlers?: readonly ConfiguredHandler[];
    readonly load?: CommandHooksLoad;
    /** Variables the environment policy removes that hooks may see anyway (added to `envPolicy`'s list). */
    readonly passEnv?: readonly string[];
  };
  /** Permission rules and mode, or a policy already built (the CLI's). */
  readonly permissions?: PermissionOptions | PermissionPolicy;
}

/**
 * The one assembly (docs/permissions.md): settings sources, plugins, command hooks as a plugin
 * spec, MCP servers and permissions, put together for the runtime. The CLI (`run`, `chat`,
 * `serve`, `hooks`, `permissions`), the console and library users all build a Gatehouse here.
 * A permission problem (a rule that does not parse, `bypassPermissions` not enabled) throws,
 * naming the file and field; hook problems go to the logger.
 */
export function createGatehouse(options: GatehouseOptions): Gatehouse {
  const { commandHooks, permissions, ...runtime } = options;
  const cwd = options.config?.cwd ?? process.cwd();
  const passEnv = commandHooks?.passEnv;
  const envPolicy = (options.envPolicy ?? DEFAULT_ENV_POLICY).extend(
    passEnv === undefined ? {} : { passEnv: { commandHooks: passEnv } },
  );
  const given = permissions instanceof PermissionPolicy ? undefined : permissions;
  // Settings files are read when asked to, or when the command hooks are loaded from them.
  const files = given?.fromSettings ?? commandHooks?.load !== undefined;
  const loaded = loadSources({
    projectDir: cwd,
    ...(commandHooks?.load ? { commandHooks: commandHooks.load } : {}),
    ...(given?.config ? { config: given.config } : {}),
    permissions: {
      files,
      ...(given?.mode === undefined ? {} : { mode: given.mode }),
      ...(given?.allowBypass === undefined ? {} : { allowBypass: given.allowBypass }),
      ...(given?.untrustedFiles === undefined ? {} : { untrustedFiles: given.untrustedFiles }),
      rules: codeRules(given),
    },
    envPolicy,
  });
  // Hook problems are logged and the other hooks still run, as they always were for the library;
  // a permission problem throws: a rule that does not parse must not leave a call unguarded.
  const log = options.logger;
  const permissionErrors = loaded.permissions.diagnostics.filter((d) => d.level === "error");
  for (const d of loaded.diagnostics)
    if (!permissionErrors.includes(d)) (d.level === "error" ? log?.error : log?.warn)?.(formatDiagnostic(d));
  if (permissionErrors.length > 0)
    throw new Error(`Gatehouse permissions: ${permissionErrors.map(formatDiagnostic).join("; ")}`);
  const policy =
    permissions instanceof PermissionPolicy ? permissions : permissionPolicy(loaded.permissions, cwd, files);
  const handlers = [...(commandHooks?.handlers ?? []), ...(commandHooks?.load ? loaded.commandHooks.handlers : [])];
  const env = options.env ?? process.env;
  return createRuntime({
    ...runtime,
    tools: options.tools ?? builtinTools({ bash: { env, envPolicy } }),
    // Without a project folder the memory store keeps its transcripts in the system temp folder.
    store:
      options.store ?? (options.config?.cwd === undefined && !env[DATABASE_URL_ENV] ? { kind: "memory" } : undefined),
    permissions: policy,
    sandboxReads: options.sandboxReads ?? sandboxReads(loaded.permissions, cwd),
    envPolicy,
    latePlugins: async (host) => {
      if (handlers.length === 0) return [];
      // The dispatcher, executor and protocol schemas load only when some command hook is configured.
      const { createCommandHooksPlugin } = await import("../command-hooks/plugin.js");
      const plugin = createCommandHooksPlugin({
        handlers,
        store: host.store,
        projectDir: cwd,
        ...(options.env ? { env: options.env } : {}),
        envPolicy,
        permissionMode: policy.mode,
        ...effortLevel(options.model, options.config?.model?.reasoningEffort),
        onSessionEnv: host.onSessionEnv,
        evaluatePrompt: host.evaluatePrompt,
        evaluateAgent: host.evaluateAgent,
        runUsage: host.runUsage,
        callMcpTool: host.callMcpTool,
      });
      return [{ plugin, trusted: true } satisfies PluginSpec];
    },
  });
}

/**
 * The effort level the model runs at, as hooks read it (Claude Code's `effort.level`): the
 * configured one as the provider gets it (Anthropic has no `minimal`: it gets `low`), else the
 * provider's own default where it has an effort setting (Anthropic's is `high`).
 */
function effortLevel(model: GatehouseOptions["model"], configured: string | undefined): { effort?: string } {
  const provider = typeof model === "string" ? model.split(":")[0] : model.provider.split(".")[0];
  if (configured !== undefined)
    return { effort: provider === "anthropic" && configured === "minimal" ? "low" : configured };
  return provider === "anthropic" ? { effort: "high" } : {};
}

function codeRules(given: PermissionOptions | undefined): { behavior: PermissionBehavior; rule: string }[] {
  if (!given) return [];
  return (["allow", "ask", "deny"] as const).flatMap((behavior) =>
    (given[behavior] ?? []).map((rule) => ({ behavior, rule })),
  );
}
