// `gatehouse config`. main.ts loads this module at start-up to register the command, so its own
// imports stay light: the config and the runtime's defaults are imported when the command runs.
import type { Command } from "commander";
import { COLOR_HELP, type CommandHost, exitHelp, PROCESS_HOST, projectOptions } from "./common.js";
import { EXIT, type ExitCode } from "./exit.js";
import { shownPath } from "./format.js";
import type { CommandIO, Project, ProjectFlags } from "./project.js";

export interface ConfigFlags extends ProjectFlags {
  readonly json?: boolean;
}

/** The variables Gatehouse reads, with its own first; provider variables as the providers name them. */
const GATEHOUSE_VARIABLES = [
  "GATEHOUSE_MODEL",
  "GATEHOUSE_CONFIG",
  "GATEHOUSE_DATA_DIR",
  "GATEHOUSE_DATABASE_URL",
  "GATEHOUSE_LOG_LEVEL",
] as const;
const PROVIDER_VARIABLES = [
  "OPENAI_API_KEY",
  "OPENAI_BASE_URL",
  "OPENAI_ORG_ID",
  "OPENAI_PROJECT_ID",
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_AUTH_TOKEN",
  "ANTHROPIC_BASE_URL",
  "OPENAI_COMPATIBLE_API_KEY",
] as const;

const PRECEDENCE = "Precedence: flags > environment > gatehouse.json > defaults.";

/** Adds `gatehouse config` to the program. */
export function registerConfigCommand(program: Command, host: CommandHost = PROCESS_HOST): void {
  projectOptions(program.command("config"))
    .summary("print the resolved configuration, secrets masked")
    .description(
      `Print the configuration a run would use: model, store, data folder, plugins, command hooks, MCP servers, tools and limits, each with where it came from. ${PRECEDENCE} Secrets are masked, by key and by shape: provider keys and Gatehouse's secrets from the environment, passwords in URLs, secret query parameters, values after flags like --token or --api-key=, Bearer credentials, MCP servers' env values, HTTP headers, and every value under a key that names a key, token, secret, password (pass, pwd, pw) or credential. ${COLOR_HELP}`,
    )
    .option("--model <spec>", "as gatehouse run --model, to see its effect")
    .option("--json", "print the resolved configuration as one JSON object")
    .addHelpText("after", exitHelp({ failed: null }))
    .action(async (flags: ConfigFlags) => {
      host.exit(await configCommand(flags, host.io()));
    });
}

/** `gatehouse config`. */
export async function configCommand(flags: ConfigFlags, io: CommandIO): Promise<ExitCode> {
  const [L, output] = await Promise.all([import("./project.js"), import("./output.js")]);
  return L.runCli(io, async () => {
    const project = await L.loadProject(flags, io);
    const resolved = await projectConfiguration(project, L.storeOptionsFor(project.settings, io), flags, io);
    if (flags.json) {
      await output.writeJson(io.stdout, resolved);
      return EXIT.ok;
    }
    await output.writeOut(io.stdout, render(resolved, output.colorsFor(io.stdout, io.env), output));
    return EXIT.ok;
  });
}

type StoreOptions = import("../store/index.js").StoreOptions;

/** What `gatehouse config --json` prints for a project (the console's configuration view shows the same). */
export async function projectConfiguration(
  project: Project,
  store: StoreOptions,
  flags: ProjectFlags,
  io: Pick<CommandIO, "cwd" | "env">,
): Promise<ReturnType<typeof resolvedConfig>> {
  const [runtime, secrets, envPolicy] = await Promise.all([
    import("../runtime/gatehouse.js"),
    import("../core/secrets.js"),
    import("../core/env-policy.js"),
  ]);
  const isSecretVariable = (name: string) => envPolicy.isProviderCredential(name) || secrets.isSecretKey(name);
  return resolvedConfig(project, store, flags, io, runtime.DEFAULTS, isSecretVariable, secrets);
}
type Secrets = typeof import("../core/secrets.js");
type RuntimeDefaults = typeof import("../runtime/gatehouse.js")["DEFAULTS"];
type Setting<T> = { readonly value: T; readonly from: string };

/** The resolved configuration, every secret masked: what `config --json` prints. */
export function resolvedConfig(
  project: Project,
  store: StoreOptions,
  flags: ProjectFlags,
  io: Pick<CommandIO, "cwd" | "env">,
  defaults: RuntimeDefaults,
  isSecretVariable: (name: string) => boolean,
  { MASK, maskSecrets, maskValue }: Secrets,
) {
  const { config, settings } = project;
  const env = io.env;
  const path = (file: string) => shownPath(io.cwd, file);
  const given = <T>(value: T | undefined, fallback: T): Setting<T> =>
    value === undefined ? { value: fallback, from: "default" } : { value, from: "gatehouse.json" };
  const environment: Record<string, string> = {};
  for (const name of [...GATEHOUSE_VARIABLES, ...PROVIDER_VARIABLES]) {
    const value = env[name];
    if (value === undefined || value === "") continue;
    environment[name] = isSecretVariable(name) ? MASK : maskSecrets(value);
  }
  return {
    configFile: project.file === undefined ? null : path(project.file),
    model:
      settings.model === undefined
        ? null
        : { value: maskSecrets(displayModel(settings.model, path)), from: settings.modelFrom ?? "gatehouse.json" },
    store: {
      kind: store.kind,
      location:
        store.kind === "sqlite" ? path(store.path) : store.kind === "postgres" ? maskSecrets(store.url) : "memory",
      from: settings.databaseFrom ?? "default",
    },
    dataDir: {
      value: path(settings.dataDir),
      from: flags.dataDir !== undefined ? "--data-dir" : env.GATEHOUSE_DATA_DIR ? "GATEHOUSE_DATA_DIR" : "default",
    },
    modelSettings: {
      value: { ...defaults.model, ...settings.runtime.model },
      from: settings.runtime.model === undefined ? "default" : "gatehouse.json",
    },
    maxSteps: given(config.maxSteps, defaults.maxSteps),
    subagentDepth: given(config.subagents?.maxDepth, 1),
    systemPrompt: given(config.systemPrompt, defaults.systemPrompt),
    compaction: {
      value: { ...defaults.compaction, ...config.compaction },
      from: config.compaction === undefined ? "default" : "gatehouse.json",
    },
    tools: { allow: config.tools?.allow ?? null, deny: config.tools?.deny ?? [] },
    plugins: maskValue(
      settings.pluginEntries.map((e) => (e.path === undefined ? e : { ...e, path: path(e.path) })),
    ) as unknown[],
    hooks: maskValue(config.hooks ?? {}),
    commandHooks: maskValue(config.commandHooks ?? {}),
    environmentPolicy: { deny: config.environment?.deny ?? [], bashPassEnv: config.tools?.bash?.passEnv ?? [] },
    hookTimeouts: config.hookTimeouts ?? {},
    mcpServers: maskValue(config.mcpServers ?? {}),
    environment,
  };
}

/** A scripted file shown relative to the project; any other spec as it is. */
function displayModel(spec: string, path: (file: string) => string): string {
  return spec.startsWith("scripted:") && spec !== "scripted:echo" ? `scripted:${path(spec.slice(9))}` : spec;
}

type Output = typeof import("./output.js");
type Colors = ReturnType<Output["colorsFor"]>;

/** The resolved configuration for a person; every value from a file or the environment through the terminal sanitizer. */
function render(r: ReturnType<typeof resolvedConfig>, c: Colors, { terminalJson, terminalLine }: Output): string {
  const from = (f: string) => c.dim(`(${f})`);
  const lines: string[] = [];
  const row = (label: string, value: string, source?: string) =>
    lines.push(`${label.padEnd(14)}${value}${source ? `  ${from(source)}` : ""}`);
  // Values from files and the environment; the colored placeholders are ours.
  const t = terminalLine;
  const list = (items: readonly string[]) => t(items.join(", ")) || "none";
  row("config file", r.configFile === null ? c.dim("none") : t(r.configFile));
  row("model", r.model ? t(r.model.value) : c.yellow('none (set --model, GATEHOUSE_MODEL or "model")'), r.model?.from);
  const m = r.modelSettings.value;
  const modelSettings = [
    `maxRetries ${m.maxRetries}`,
    ...(m.temperature === undefined ? [] : [`temperature ${m.temperature}`]),
    ...(m.maxOutputTokens === undefined ? [] : [`maxOutputTokens ${m.maxOutputTokens}`]),
    ...(m.reasoningEffort === undefined ? [] : [`reasoningEffort ${m.reasoningEffort}`]),
  ];
  row("model calls", modelSettings.join(", "), r.modelSettings.from);
  row("store", `${r.store.kind} ${t(r.store.location)}`, r.store.from);
  row("data dir", t(r.dataDir.value), r.dataDir.from);
  row("max steps", String(r.maxSteps.value), r.maxSteps.from);
  row("sub-agents", `nest ${r.subagentDepth.value} deep at most`, r.subagentDepth.from);
  row("system prompt", t(terminalJson(r.systemPrompt.value)), r.systemPrompt.from);
  row(
    "compaction",
    `contextTokens ${r.compaction.value.contextTokens}, keepRecent ${r.compaction.value.keepRecent}`,
    r.compaction.from,
  );
  row("tools", `allow ${r.tools.allow === null ? "all" : list(r.tools.allow)}; deny ${list(r.tools.deny)}`);
  const block = (label: string, value: unknown, empty: string) => {
    const isEmpty = Array.isArray(value) ? value.length === 0 : Object.keys(value as object).length === 0;
    if (isEmpty) row(label, c.dim(empty));
    else {
      lines.push(label);
      for (const l of terminalJson(value, 2).split("\n")) lines.push(`  ${l}`);
    }
  };
  block("plugins", r.plugins, "none");
  block("hooks", r.hooks, "none in gatehouse.json (see gatehouse hooks list)");
  block("commandHooks", r.commandHooks, "defaults");
  block("hookTimeouts", r.hookTimeouts, "catalog defaults");
  block("mcpServers", r.mcpServers, "none");
  row(
    "env policy",
    `deny ${list(r.environmentPolicy.deny)} (and provider keys, GATEHOUSE_* secrets); Bash passEnv ${list(r.environmentPolicy.bashPassEnv)}`,
  );
  block("environment", r.environment, "no Gatehouse or provider variables set");
  lines.push(c.dim(PRECEDENCE));
  return `${lines.map((l) => l.replace(/[^\S\n]+$/, "")).join("\n")}\n`;
}
