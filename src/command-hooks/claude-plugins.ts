import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { parseJsonText } from "../core/json.js";
import { type McpServersConfig, McpServersConfigSchema } from "../tools/mcp-config.js";
import type { Diagnostic } from "./diagnostics.js";

/**
 * Claude Code plugins (plugins-reference.md): `enabledPlugins` in the settings files names
 * plugins as `<plugin>@<marketplace>`; a marketplace is a directory with
 * `.claude-plugin/marketplace.json` (an `extraKnownMarketplaces` entry, or one Claude Code
 * registered in `~/.claude/plugins/known_marketplaces.json`); a plugin brings `hooks/hooks.json`
 * (or `hooks` in its plugin.json) and `.mcp.json` (or `mcpServers` in its plugin.json), with
 * `${CLAUDE_PLUGIN_ROOT}` and `${CLAUDE_PLUGIN_DATA}` in them.
 *
 * Where a plugin is found, in order: Claude Code's own install of it
 * (`~/.claude/plugins/installed_plugins.json`), then its marketplace entry: a relative source is
 * used in place, an `npm` source is installed once into Gatehouse's cache
 * (`$XDG_CACHE_HOME/gatehouse/claude-plugins/<marketplace>/<plugin>/<version>`). Git, URL and
 * archive sources are left to Claude Code (`claude plugin install`): one it has not installed is
 * an error. An enabled plugin that cannot be found or read is an error, never zero hooks.
 */

/** One plugin named in `enabledPlugins`, as found. */
export interface ClaudePlugin {
  /** `<plugin>@<marketplace>`. */
  readonly id: string;
  readonly enabled: boolean;
  /** The settings file whose `enabledPlugins` decided `enabled`. */
  readonly enabledBy: string;
  /** `loaded`; `disabled` (false in enabledPlugins); `untrusted` (only an untrusted project enables it); `failed`. */
  readonly status: "loaded" | "disabled" | "untrusted" | "failed";
  /** Where it came from, for people: `directory <path>`, `npm <package>@<version>`, `claude-code <installPath>`. */
  readonly source: string;
  /** The plugin's directory, when found. */
  readonly root?: string;
  readonly version?: string;
  /** Why it failed. */
  readonly problem?: string;
  /** The hooks block and the file it came from (`hooks/hooks.json` or plugin.json). */
  readonly hooks?: { readonly file: string; readonly block: unknown };
  /** Its MCP servers (placeholders substituted, checked) and the file they came from. */
  readonly mcpServers?: { readonly file: string; readonly servers: McpServersConfig };
  /** `CLAUDE_PLUGIN_ROOT` and `CLAUDE_PLUGIN_DATA` for its hook processes and servers. */
  readonly env?: Readonly<Record<string, string>>;
}

/** A settings file as the loader read it. */
export interface PluginSettingsSource {
  readonly file: string;
  readonly root: unknown;
  /** Its `enabledPlugins` and `extraKnownMarketplaces` wait for workspace trust. */
  readonly untrusted: boolean;
}

export interface ReadClaudePluginsOptions {
  /** In precedence order, lowest first (user, project, local, cli, managed). */
  readonly sources: readonly PluginSettingsSource[];
  readonly homeDir: string;
  readonly projectDir: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Install `npm` sources that are not cached yet (default true; `hooks check` reads only). */
  readonly install?: boolean;
}

type Diag = (d: Diagnostic) => void;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Every plugin `enabledPlugins` names, enabled or not, each with what it brings or why it cannot be read. */
export function readClaudePlugins(opts: ReadClaudePluginsOptions, diag: Diag): ClaudePlugin[] {
  const enabled = new Map<string, { value: boolean; file: string }>();
  const heldBack = new Map<string, string>();
  const marketplaces = new Map<string, { file: string; source: unknown }>();
  for (const src of opts.sources) {
    if (!isObject(src.root)) continue;
    const { enabledPlugins, extraKnownMarketplaces } = src.root;
    if (enabledPlugins !== undefined && !isObject(enabledPlugins)) {
      diag({
        level: "error",
        file: src.file,
        path: "enabledPlugins",
        message: 'expected { "<plugin>@<marketplace>": true }',
      });
      continue;
    }
    for (const [id, value] of Object.entries(enabledPlugins ?? {})) {
      if (typeof value !== "boolean" && !Array.isArray(value)) {
        diag({ level: "error", file: src.file, path: `enabledPlugins.${id}`, message: "expected true or false" });
        continue;
      }
      if (src.untrusted) {
        if (value !== false && !enabled.get(id)?.value) heldBack.set(id, src.file);
        continue;
      }
      // Claude Code's older form lists versions: any list enables.
      enabled.set(id, { value: value !== false, file: src.file });
    }
    if (isObject(extraKnownMarketplaces) && !src.untrusted)
      for (const [name, entry] of Object.entries(extraKnownMarketplaces))
        marketplaces.set(name, { file: src.file, source: isObject(entry) ? entry.source : undefined });
  }
  const out: ClaudePlugin[] = [];
  for (const [id, file] of heldBack)
    if (!enabled.has(id)) {
      diag({
        level: "warning",
        file,
        path: `enabledPlugins.${id}`,
        message:
          "waits for workspace trust (gatehouse trust): the plugin's hooks do not run until the project is trusted",
      });
      out.push({ id, enabled: false, enabledBy: file, status: "untrusted", source: "(not read)" });
    }
  for (const [id, { value, file }] of enabled) {
    if (!value) {
      out.push({ id, enabled: false, enabledBy: file, status: "disabled", source: "(not read)" });
      continue;
    }
    const plugin = findPlugin(id, file, marketplaces, opts);
    if (plugin.status === "failed")
      diag({ level: "error", file, path: `enabledPlugins.${id}`, message: `${plugin.problem}; its hooks never run` });
    out.push(plugin);
  }
  return out;
}

/** `<plugin>@<marketplace>` located and read. */
function findPlugin(
  id: string,
  enabledBy: string,
  marketplaces: ReadonlyMap<string, { file: string; source: unknown }>,
  opts: ReadClaudePluginsOptions,
): ClaudePlugin {
  const at = id.lastIndexOf("@");
  const base = { id, enabled: true, enabledBy };
  const failed = (source: string, problem: string): ClaudePlugin => ({ ...base, status: "failed", source, problem });
  if (at <= 0 || at === id.length - 1) return failed("(none)", `"${id}" is not <plugin>@<marketplace>`);
  const name = id.slice(0, at);
  const market = id.slice(at + 1);
  const installed = claudeCodeInstall(id, opts);
  if (installed) return readPlugin(base, `claude-code ${installed}`, installed, opts);
  const location = marketplaceLocation(market, marketplaces, opts);
  if (typeof location !== "string") return failed("(none)", location.problem);
  const manifestFile = join(location, ".claude-plugin", "marketplace.json");
  const manifest = readJson(manifestFile);
  if (!manifest.ok) return failed(`marketplace ${location}`, `marketplace "${market}": ${manifest.problem}`);
  const entries = isObject(manifest.value) && Array.isArray(manifest.value.plugins) ? manifest.value.plugins : [];
  const entry = entries.find((e): e is Record<string, unknown> => isObject(e) && e.name === name);
  if (!entry)
    return failed(`marketplace ${location}`, `marketplace "${market}" (${manifestFile}) lists no plugin "${name}"`);
  const { source } = entry;
  if (typeof source === "string") {
    const pluginRoot =
      isObject(manifest.value) && isObject(manifest.value.metadata) ? manifest.value.metadata.pluginRoot : undefined;
    const rel =
      !source.startsWith("./") && !source.includes("/") && typeof pluginRoot === "string"
        ? join(pluginRoot, source)
        : source;
    const root = resolve(location, rel);
    const outside = relative(location, root);
    if (outside.startsWith("..") || isAbsolute(outside))
      return failed(`directory ${root}`, `marketplace "${market}": source "${source}" is outside the marketplace`);
    return readPlugin(base, `directory ${root}`, root, opts, entry);
  }
  if (isObject(source) && source.source === "npm" && typeof source.package === "string") {
    const version =
      typeof source.version === "string"
        ? source.version
        : typeof entry.version === "string"
          ? entry.version
          : "latest";
    const label = `npm ${source.package}@${version}`;
    const root = npmPlugin(market, name, source.package, version, source.registry, opts);
    if (typeof root !== "string") return failed(label, root.problem);
    return readPlugin(base, label, root, opts, entry);
  }
  const kind = isObject(source) ? String(source.source) : typeof source;
  return failed(
    `${kind} (marketplace ${market})`,
    `its source (${kind}) is fetched by Claude Code only: install it with \`claude plugin install ${id}\``,
  );
}

/** Claude Code's install of the plugin (installed_plugins.json, version 2), when its directory is there. */
function claudeCodeInstall(id: string, opts: ReadClaudePluginsOptions): string | undefined {
  const read = readJson(join(opts.homeDir, ".claude", "plugins", "installed_plugins.json"));
  if (!read.ok || !isObject(read.value) || !isObject(read.value.plugins)) return undefined;
  const records = read.value.plugins[id];
  const list = Array.isArray(records) ? records : [records];
  for (const r of list)
    if (isObject(r) && typeof r.installPath === "string" && existsSync(r.installPath)) {
      // A project- or local-scope install belongs to its project.
      if (typeof r.projectPath === "string" && resolve(r.projectPath) !== resolve(opts.projectDir)) continue;
      return r.installPath;
    }
  return undefined;
}

/** The marketplace's directory: a `directory` (or `file`) source of extraKnownMarketplaces, else Claude Code's registered copy. */
function marketplaceLocation(
  market: string,
  declared: ReadonlyMap<string, { file: string; source: unknown }>,
  opts: ReadClaudePluginsOptions,
): string | { problem: string } {
  const extra = declared.get(market);
  if (extra && isObject(extra.source)) {
    const { source: kind, path } = extra.source;
    if ((kind === "directory" || kind === "file") && typeof path === "string") {
      const abs = resolve(opts.projectDir, path);
      // A `file` source names the marketplace.json itself.
      return kind === "file" ? resolve(abs, "..", "..") : abs;
    }
  }
  const known = readJson(join(opts.homeDir, ".claude", "plugins", "known_marketplaces.json"));
  const entry = known.ok && isObject(known.value) ? known.value[market] : undefined;
  if (isObject(entry) && typeof entry.installLocation === "string") return entry.installLocation;
  if (extra)
    return {
      problem: `marketplace "${market}" (${extra.file}) is not a directory source and Claude Code has not fetched it: run \`claude plugin marketplace add\`, or declare it as { "source": "directory", "path": … }`,
    };
  return {
    problem: `marketplace "${market}" is unknown: declare it in extraKnownMarketplaces or add it with Claude Code`,
  };
}

/** Gatehouse's cache of npm-sourced plugins. */
export function claudePluginCache(homeDir: string, env: Readonly<Record<string, string | undefined>>): string {
  const base = env.XDG_CACHE_HOME?.trim() ? (env.XDG_CACHE_HOME as string) : join(homeDir, ".cache");
  return join(base, "gatehouse", "claude-plugins");
}

/**
 * An npm-sourced plugin's directory, installed once (as Claude Code does at session start when an
 * enabled plugin is not cached): `npm install` into a staging folder renamed into place, install
 * scripts off.
 */
function npmPlugin(
  market: string,
  name: string,
  pkg: string,
  version: string,
  registry: unknown,
  opts: ReadClaudePluginsOptions,
): string | { problem: string } {
  const home = join(claudePluginCache(opts.homeDir, opts.env), safe(market), safe(name), safe(version));
  const root = join(home, "node_modules", ...pkg.split("/"));
  if (existsSync(root)) return root;
  if (opts.install === false)
    return { problem: `npm package ${pkg}@${version} is not installed yet (a run installs it)` };
  mkdirSync(join(home, ".."), { recursive: true });
  const staging = mkdtempSync(join(home, "..", ".staging-"));
  try {
    const env = Object.fromEntries(Object.entries(opts.env).filter(([k]) => !/^npm_/i.test(k)));
    execFileSync(
      "npm",
      npmInstallArgs(staging, `${pkg}@${version}`, typeof registry === "string" ? registry : undefined),
      { env, stdio: ["ignore", "ignore", "pipe"], timeout: 300_000 },
    );
    try {
      renameSync(staging, home);
    } catch (error) {
      if (!existsSync(root)) throw error;
    }
  } catch (error) {
    // npm's last line only points at its log; the reason is the last line before it.
    const lines = (error as { stderr?: Buffer }).stderr?.toString().trim().split("\n") ?? [];
    const stderr = lines.filter((l) => !/complete log of this run/i.test(l)).at(-1);
    return { problem: `npm could not install ${pkg}@${version}${stderr ? `: ${stderr}` : ""}` };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return existsSync(root) ? root : { problem: `npm installed ${pkg}@${version} but ${root} is missing` };
}

/** `npm install` of one package into `prefix`, install scripts off, quiet (the tests' package cache uses it too). */
export function npmInstallArgs(prefix: string, spec: string, registry?: string): string[] {
  return [
    "install",
    "--prefix",
    prefix,
    "--ignore-scripts",
    "--no-audit",
    "--no-fund",
    "--no-save",
    "--loglevel=error",
    ...(registry === undefined ? [] : ["--registry", registry]),
    spec,
  ];
}

const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]/g, "-");

/**
 * The plugin's hooks and MCP servers: plugin.json's `hooks` / `mcpServers` (inline, or a path),
 * else `hooks/hooks.json` and `.mcp.json`; a marketplace entry's own fields count when the entry
 * is not strict (`strict: false`) or plugin.json gives none.
 */
function readPlugin(
  base: { id: string; enabled: boolean; enabledBy: string },
  source: string,
  root: string,
  opts: ReadClaudePluginsOptions,
  entry?: Record<string, unknown>,
): ClaudePlugin {
  if (!existsSync(root)) return { ...base, status: "failed", source, problem: `its directory ${root} does not exist` };
  const manifestFile = join(root, ".claude-plugin", "plugin.json");
  const manifest = existsSync(manifestFile) ? readJson(manifestFile) : { ok: true as const, value: {} };
  if (!manifest.ok) return { ...base, status: "failed", source, root, problem: `${manifestFile}: ${manifest.problem}` };
  const m = isObject(manifest.value) ? manifest.value : {};
  const data = join(opts.homeDir, ".claude", "plugins", "data", base.id.replace(/[^A-Za-z0-9_-]/g, "-"));
  const env = { CLAUDE_PLUGIN_ROOT: root, CLAUDE_PLUGIN_DATA: data };
  const component = (key: "hooks" | "mcpServers", defaultFile: string) => {
    const given = m[key] ?? entry?.[key];
    const file =
      typeof given === "string" ? resolve(root, given) : given === undefined ? join(root, defaultFile) : manifestFile;
    if (given !== undefined && typeof given !== "string") return { file, value: given };
    if (!existsSync(file)) return given === undefined ? undefined : { file, problem: "does not exist" };
    const read = readJson(file);
    return read.ok ? { file, value: read.value } : { file, problem: read.problem };
  };
  const hooks = component("hooks", join("hooks", "hooks.json"));
  const mcp = component("mcpServers", ".mcp.json");
  for (const c of [hooks, mcp])
    if (c && "problem" in c) return { ...base, status: "failed", source, root, problem: `${c.file}: ${c.problem}` };
  const substituted = (value: unknown) => substitute(value, { ...env, CLAUDE_PROJECT_DIR: opts.projectDir });
  const hooksValue = hooks && "value" in hooks ? substituted(hooks.value) : undefined;
  const mcpValue = mcp && "value" in mcp ? substituted(mcp.value) : undefined;
  // hooks.json wraps its events in `hooks`; plugin.json's inline `hooks` is the events map itself.
  const block = isObject(hooksValue) && isObject(hooksValue.hooks) ? hooksValue.hooks : hooksValue;
  const servers = isObject(mcpValue) && isObject(mcpValue.mcpServers) ? mcpValue.mcpServers : mcpValue;
  const checked = servers === undefined ? undefined : McpServersConfigSchema.safeParse(servers);
  if (checked && !checked.success) {
    const issue = checked.error.issues[0];
    const where = issue?.path.map(String).join(".") ?? "";
    return { ...base, status: "failed", source, root, problem: `${mcp?.file}: mcpServers.${where}: ${issue?.message}` };
  }
  if (JSON.stringify([block, servers]).includes(data)) mkdirSync(data, { recursive: true });
  return {
    ...base,
    status: "loaded",
    source,
    root,
    ...(typeof m.version === "string" ? { version: m.version } : {}),
    ...(hooks && block !== undefined ? { hooks: { file: hooks.file, block } } : {}),
    ...(mcp && checked?.success ? { mcpServers: { file: mcp.file, servers: checked.data } } : {}),
    env,
  };
}

/** `${CLAUDE_PLUGIN_ROOT}`, `${CLAUDE_PLUGIN_DATA}` and `${CLAUDE_PROJECT_DIR}` replaced in every string. */
function substitute(value: unknown, vars: Readonly<Record<string, string>>): unknown {
  if (typeof value === "string")
    return value.replace(
      /\$\{(CLAUDE_PLUGIN_ROOT|CLAUDE_PLUGIN_DATA|CLAUDE_PROJECT_DIR)\}/g,
      (_, k: string) => vars[k] ?? "",
    );
  if (Array.isArray(value)) return value.map((v) => substitute(v, vars));
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, vars)]));
  return value;
}

function readJson(file: string): { ok: true; value: unknown } | { ok: false; problem: string } {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return { ok: false, problem: code === "ENOENT" ? `${file} does not exist` : `cannot read ${file}` };
  }
  const parsed = parseJsonText(text);
  if (parsed.ok) return { ok: true, value: parsed.value };
  return { ok: false, problem: `${file}:${parsed.error.line}:${parsed.error.column}: not valid JSON` };
}

/**
 * The loaded plugins' MCP servers under Claude Code's names: `plugin_<plugin>_<server>`, so their
 * tools are `mcp__plugin_<plugin>_<server>__<tool>`; each stdio server gets the plugin's variables.
 */
export function pluginMcpServers(plugins: readonly ClaudePlugin[]): McpServersConfig {
  const out: McpServersConfig = {};
  for (const p of plugins) {
    if (p.status !== "loaded" || !p.mcpServers) continue;
    const name = p.id.slice(0, p.id.lastIndexOf("@"));
    for (const [server, config] of Object.entries(p.mcpServers.servers))
      out[`plugin_${name}_${server}`] =
        config.command === undefined ? config : { ...config, env: { ...p.env, ...config.env } };
  }
  return out;
}
