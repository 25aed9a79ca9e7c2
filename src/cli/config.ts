// `gatehouse config`. main.ts loads this module at start-up to register the command, so its own
// imports stay light: the config and the runtime's defaults are imported when the command runs.
import type { Command } from "commander";
import { COLOR_HELP, exitHelp, processIO, projectOptions } from "./common.js";
import { EXIT, type ExitCode } from "./exit.js";
import { shownPath } from "./format.js";
import type { CommandIO, Project, ProjectFlags } from "./project.js";

export interface ConfigFlags extends ProjectFlags {
  readonly json?: boolean;
}

/** What a masked secret reads as: the same whatever its length. */
export const MASK = "****";

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
export function registerConfigCommand(program: Command): void {
  projectOptions(program.command("config"))
    .summary("print the resolved configuration, secrets masked")
    .description(
      `Print the configuration a run would use: model, store, data folder, plugins, command hooks, MCP servers, tools and limits, each with where it came from. ${PRECEDENCE} Secrets are masked: provider keys from the environment, passwords in URLs, MCP servers' env values, HTTP headers, and any value whose key names a key, token, secret or password. ${COLOR_HELP}`,
    )
    .option("--model <spec>", "as gatehouse run --model, to see its effect")
    .option("--json", "print the resolved configuration as one JSON object")
    .addHelpText("after", exitHelp({ failed: null }))
    .action(async (flags: ConfigFlags) => {
      process.exitCode = await configCommand(flags, processIO());
    });
}

/** `gatehouse config`. */
export async function configCommand(flags: ConfigFlags, io: CommandIO): Promise<ExitCode> {
  const [L, output, runtime, credentials] = await Promise.all([
    import("./project.js"),
    import("./output.js"),
    import("../runtime/gatehouse.js"),
    import("../core/env-policy.js"),
  ]);
  return L.runCli(io, async () => {
    const project = await L.loadProject(flags, io);
    const store = L.storeOptionsFor(project.settings, io);
    const resolved = resolvedConfig(project, store, flags, io, runtime.DEFAULTS, credentials.isProviderCredential);
    if (flags.json) {
      await output.writeJson(io.stdout, resolved);
      return EXIT.ok;
    }
    await output.writeOut(io.stdout, render(resolved, output.colorsFor(io.stdout, io.env)));
    return EXIT.ok;
  });
}

type StoreOptions = import("../store/index.js").StoreOptions;
type RuntimeDefaults = typeof import("../runtime/gatehouse.js")["DEFAULTS"];
type Setting<T> = { readonly value: T; readonly from: string };

/** The resolved configuration, every secret masked: what `config --json` prints. */
export function resolvedConfig(
  project: Project,
  store: StoreOptions,
  flags: ProjectFlags,
  io: Pick<CommandIO, "cwd" | "env">,
  defaults: RuntimeDefaults,
  isCredential: (name: string) => boolean,
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
    environment[name] = isCredential(name) ? MASK : maskString(value);
  }
  return {
    configFile: project.file === undefined ? null : path(project.file),
    model:
      settings.model === undefined
        ? null
        : { value: maskString(displayModel(settings.model, path)), from: settings.modelFrom ?? "gatehouse.json" },
    store: {
      kind: store.kind,
      location:
        store.kind === "sqlite" ? path(store.path) : store.kind === "postgres" ? maskString(store.url) : "memory",
      from: settings.databaseFrom ?? "default",
    },
    dataDir: {
      value: path(settings.dataDir),
      from: flags.dataDir !== undefined ? "--data-dir" : env.GATEHOUSE_DATA_DIR ? "GATEHOUSE_DATA_DIR" : "default",
    },
    maxSteps: given(config.maxSteps, defaults.maxSteps),
    systemPrompt: given(config.systemPrompt, defaults.systemPrompt),
    compaction: {
      value: { ...defaults.compaction, ...config.compaction },
      from: config.compaction === undefined ? "default" : "gatehouse.json",
    },
    tools: { allow: config.tools?.allow ?? null, deny: config.tools?.deny ?? [] },
    plugins: masked(
      settings.pluginEntries.map((e) => (e.path === undefined ? e : { ...e, path: path(e.path) })),
    ) as unknown[],
    hooks: masked(config.hooks ?? {}),
    commandHooks: masked(config.commandHooks ?? {}),
    hookTimeouts: config.hookTimeouts ?? {},
    mcpServers: masked(config.mcpServers ?? {}, "mcpServers"),
    environment,
  };
}

/** A scripted file shown relative to the project; any other spec as it is. */
function displayModel(spec: string, path: (file: string) => string): string {
  return spec.startsWith("scripted:") && spec !== "scripted:echo" ? `scripted:${path(spec.slice(9))}` : spec;
}

const SECRET_KEY = /(api[-_]?key|token|secret|passw(or)?d|credential|authorization|^auth$|cookie|private[-_]?key)/i;

/**
 * A copy with secrets replaced by `****`: every value under a key that names a secret, every
 * value of an `env` or `headers` map, and URL passwords and secret query parameters in strings.
 */
export function masked(value: unknown, key = ""): unknown {
  if (typeof value === "string") return SECRET_KEY.test(key) && !isReference(value) ? MASK : maskString(value);
  if (Array.isArray(value)) return value.map((v) => masked(v, key));
  if (value === null || typeof value !== "object") return SECRET_KEY.test(key) && value !== null ? MASK : value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = k === "env" || k === "headers" ? maskAll(v) : masked(v, k);
  }
  return out;
}

function maskAll(value: unknown): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return MASK;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, isReference(v) ? v : MASK]));
}

/** `${NAME}`: a reference to an environment variable, expanded at run time. It names a secret; it is not one. */
function isReference(value: unknown): boolean {
  return typeof value === "string" && /^\$\{[A-Za-z_][A-Za-z0-9_]*\}$/.test(value);
}

/** `postgres://user:****@host/db`, `https://h/x?token=****`. */
export function maskString(text: string): string {
  return text
    .replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^\s/:@]*):[^\s/@]*@/gi, `$1:${MASK}@`)
    .replace(
      /([?&](?:[a-z0-9_-]*(?:token|key|secret|password|signature|sig|auth)[a-z0-9_-]*)=)[^&#\s]*/gi,
      `$1${MASK}`,
    );
}

type Colors = ReturnType<Awaited<typeof import("./output.js")>["colorsFor"]>;

function render(r: ReturnType<typeof resolvedConfig>, c: Colors): string {
  const from = (f: string) => c.dim(`(${f})`);
  const lines: string[] = [];
  const row = (label: string, value: string, source?: string) =>
    lines.push(`${label.padEnd(14)}${value}${source ? `  ${from(source)}` : ""}`);
  row("config file", r.configFile ?? c.dim("none"));
  row("model", r.model ? r.model.value : c.yellow('none (set --model, GATEHOUSE_MODEL or "model")'), r.model?.from);
  row("store", `${r.store.kind} ${r.store.location}`, r.store.from);
  row("data dir", r.dataDir.value, r.dataDir.from);
  row("max steps", String(r.maxSteps.value), r.maxSteps.from);
  row("system prompt", JSON.stringify(r.systemPrompt.value), r.systemPrompt.from);
  row(
    "compaction",
    `contextTokens ${r.compaction.value.contextTokens}, keepRecent ${r.compaction.value.keepRecent}`,
    r.compaction.from,
  );
  row(
    "tools",
    `allow ${r.tools.allow === null ? "all" : r.tools.allow.join(", ") || "none"}; deny ${r.tools.deny.join(", ") || "none"}`,
  );
  const block = (label: string, value: unknown, empty: string) => {
    const isEmpty = Array.isArray(value) ? value.length === 0 : Object.keys(value as object).length === 0;
    if (isEmpty) row(label, c.dim(empty));
    else {
      lines.push(label);
      for (const l of JSON.stringify(value, null, 2).split("\n")) lines.push(`  ${l}`);
    }
  };
  block("plugins", r.plugins, "none");
  block("hooks", r.hooks, "none in gatehouse.json (see gatehouse hooks list)");
  block("commandHooks", r.commandHooks, "defaults");
  block("hookTimeouts", r.hookTimeouts, "catalog defaults");
  block("mcpServers", r.mcpServers, "none");
  block("environment", r.environment, "no Gatehouse or provider variables set");
  lines.push(c.dim(PRECEDENCE));
  return `${lines.map((l) => l.replace(/[^\S\n]+$/, "")).join("\n")}\n`;
}
