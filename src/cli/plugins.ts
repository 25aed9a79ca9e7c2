// `gatehouse plugins list | inspect [ID] | clear-state ID`. main.ts loads this module at start-up to register the
// commands, so its own imports stay light: the config, the plugin host and the runtime are
// imported when a command runs.
import type { Command } from "commander";
import type { ClaudePlugin } from "../command-hooks/claude-plugins.js";
import type { HookName } from "../hooks/catalog.js";
import type { RegistrationInfo } from "../hooks/engine.js";
import type { Diagnostic } from "../hooks/registry.js";
import type { PluginEntry } from "../plugins/config.js";
import type { PluginInfo } from "../plugins/host.js";
import type { Gatehouse } from "../runtime/gatehouse.js";
import { COLOR_HELP, type CommandHost, exitHelp, PROCESS_HOST, projectOptions } from "./common.js";
import { EXIT, type ExitCode } from "./exit.js";
import { duration, shownPath, table } from "./format.js";
import type { CommandIO, Project, ProjectFlags } from "./project.js";

export interface PluginsFlags extends ProjectFlags {
  readonly json?: boolean;
}

/** The plugin the runtime adds for Claude Code command hooks (src/command-hooks/plugin.ts). */
const COMMAND_HOOKS = "command-hooks";

const LOADED_HELP =
  "The plugins are loaded from gatehouse.json as gatehouse run loads them (with the command hooks, which run as the plugin command-hooks); no model is called and nothing is written.";

/** Adds `gatehouse plugins` and its subcommands to the program. */
export function registerPluginsCommand(program: Command, host: CommandHost = PROCESS_HOST): void {
  const plugins = program
    .command("plugins")
    .summary("list the configured plugins and inspect their registrations")
    .description(`List the configured plugins and inspect what they registered. ${LOADED_HELP}`);

  projectOptions(plugins.command("list"))
    .summary("each plugin with its status, source and number of hooks")
    .description(
      `Each plugin with its status, source, conversation access and number of hooks. ${LOADED_HELP} ${COLOR_HELP}`,
    )
    .option("--json", "print a JSON array instead of a table")
    .addHelpText("after", exitHelp({ failed: null, usage: "a configured plugin that cannot be loaded (still listed)" }))
    .action(async (flags: PluginsFlags) => {
      host.exit(await pluginsCommand(undefined, { ...flags, detail: false }, host.io()));
    });

  projectOptions(plugins.command("inspect"))
    .summary("registrations by hook with priority, timeout and failure policy; refusals and why")
    .description(
      `Every registration by hook, in the order it runs, with its priority, timeout and failure policy; then each refused registration and every other problem, with why. ${LOADED_HELP} ${COLOR_HELP}`,
    )
    .argument("[id]", "only this plugin")
    .option("--json", "print { plugins, diagnostics } as JSON")
    .addHelpText(
      "after",
      exitHelp({ failed: "no plugin with that id", usage: "a configured plugin that cannot be loaded (still shown)" }),
    )
    .action(async (id: string | undefined, flags: PluginsFlags) => {
      host.exit(await pluginsCommand(id, { ...flags, detail: true }, host.io()));
    });

  projectOptions(plugins.command("clear-state"))
    .summary("delete what an OpenClaw plugin kept in runtime.state, from the project's store")
    .description(
      "Deletes every api.runtime.state entry (keyed values and blobs, every namespace) the OpenClaw plugin ID kept in the project's store. The plugin need not be configured any more; its state is not otherwise removed.",
    )
    .argument("<id>", "the plugin's id, as gatehouse plugins list shows it")
    .action(async (id: string, flags: ProjectFlags) => {
      host.exit(await clearStateCommand(id, flags, host.io()));
    });
}

/** `gatehouse plugins clear-state ID`. */
export async function clearStateCommand(id: string, flags: ProjectFlags, io: CommandIO): Promise<ExitCode> {
  const [L, output] = await Promise.all([import("./project.js"), import("./output.js")]);
  return L.runCli(io, async () => {
    const project = await L.loadProject(flags, io);
    const removed = await L.withProjectStore(project, io, (store) => store.pluginState.clear(id));
    io.stdout.write(
      `removed ${removed} runtime.state ${removed === 1 ? "entry" : "entries"} of plugin ${output.terminalLine(id)}\n`,
    );
    return EXIT.ok;
  });
}

export interface PluginReport {
  readonly id: string;
  readonly name?: string;
  readonly version?: string;
  readonly source: string;
  readonly status: PluginInfo["status"];
  readonly trusted: boolean;
  /** May it register ★ hooks (it is trusted, or gatehouse.json grants allowConversationAccess)? */
  readonly conversationAccess: boolean;
  readonly registrations: readonly Omit<RegistrationInfo, "pluginId">[];
  /** Registrations refused by permissions, with why. */
  readonly refused: readonly { readonly hook: string; readonly message: string }[];
  /** Every other problem: load failures, invalid registrations, bad commands. */
  readonly diagnostics: readonly Omit<Diagnostic, "pluginId">[];
}

export interface Report {
  readonly plugins: readonly PluginReport[];
  /** Problems not tied to one plugin (command hook settings, warnings while loading). */
  readonly diagnostics: readonly string[];
}

/** `gatehouse plugins list` (detail false) and `gatehouse plugins inspect [ID]` (detail true). */
export async function pluginsCommand(
  id: string | undefined,
  flags: PluginsFlags & { readonly detail: boolean },
  io: CommandIO,
): Promise<ExitCode> {
  const [L, output, catalog, store] = await Promise.all([
    import("./project.js"),
    import("./output.js"),
    import("../hooks/catalog.js"),
    import("../store/index.js"),
  ]);
  return L.runCli(io, async () => {
    const project = await L.loadProject(flags, io);
    // Everything the host and the command hooks log while loading is kept for the report instead.
    const logged: string[] = [];
    const keep = (message: string) => logged.push(message);
    const quiet = { debug: () => {}, info: () => {}, warn: keep, error: keep };
    const gatehouse = await L.startHooks(project, io, await store.openMemoryStore(), quiet);
    let report: Report;
    try {
      report = buildReport(project.settings.pluginEntries, gatehouse, logged, catalog.HOOK_NAMES, (f) =>
        shownPath(io.cwd, f),
      );
    } finally {
      await gatehouse.close();
    }
    let plugins = report.plugins;
    if (id !== undefined) {
      plugins = plugins.filter((p) => p.id === id);
      if (plugins.length === 0) {
        const known = report.plugins.map((p) => p.id).join(", ") || "none";
        throw new L.CliStop(
          EXIT.failed,
          `no plugin "${output.terminalLine(id)}" (configured: ${output.terminalLine(known)})`,
        );
      }
    }
    const shown: Report = { plugins, diagnostics: id === undefined ? report.diagnostics : [] };
    const c = output.colorsFor(io.stdout, io.env);
    // `list` shows the Claude Code plugins enabledPlugins names too (their hooks run as command hooks).
    const claude = flags.detail ? [] : await claudePlugins(project, io, (f) => shownPath(io.cwd, f));
    if (flags.json) {
      const value = flags.detail
        ? shown
        : [
            ...plugins.map(({ registrations, refused, diagnostics, ...p }) => ({
              ...p,
              hooks: registrations.length,
              refused: refused.length,
              problems: diagnostics.length,
            })),
            ...claude,
          ];
      await output.writeJson(io.stdout, value);
    } else if (plugins.length === 0 && claude.length === 0) {
      await output.writeOut(io.stdout, "no plugins configured\n");
    } else {
      const own =
        plugins.length === 0
          ? ""
          : flags.detail
            ? renderInspect(shown, c, output.terminalLine)
            : renderList(plugins, c);
      const theirs =
        claude.length === 0
          ? ""
          : `${own ? "\n" : ""}${c.bold("Claude Code plugins (enabledPlugins)")}\n${renderClaude(claude, c, output.terminalLine)}`;
      await output.writeOut(io.stdout, own + theirs);
    }
    const failed = plugins.some((p) => p.status === "failed") || claude.some((p) => p.status === "failed");
    return failed ? EXIT.usage : EXIT.ok;
  });
}

/** One Claude Code plugin as `plugins list` shows it. */
export interface ClaudePluginRow {
  readonly id: string;
  readonly kind: "claude-code";
  readonly status: ClaudePlugin["status"];
  readonly enabled: boolean;
  readonly source: string;
  readonly version?: string;
  /** Its handlers, as loaded. */
  readonly hooks: number;
  readonly mcpServers: number;
  readonly problem?: string;
}

/** The Claude Code plugins the settings files name, read as a run reads them (trust included). */
async function claudePlugins(
  project: Project,
  io: CommandIO,
  path: (file: string) => string,
): Promise<ClaudePluginRow[]> {
  const { loadSources } = await import("../assembly/sources.js");
  const { load = {} } = project.settings.commandHooks;
  const loaded = loadSources({
    projectDir: io.cwd,
    commandHooks: load,
    permissions: project.trust.trusted ? {} : { untrustedFiles: project.trust.paths },
  });
  return loaded.commandHooks.plugins.map((p) => ({
    id: p.id,
    kind: "claude-code",
    status: p.status,
    enabled: p.enabled,
    source: p.source.replace(/^(\S+ )(\/.*)$/, (_, kind: string, file: string) => kind + path(file)),
    ...(p.version === undefined ? {} : { version: p.version }),
    hooks: loaded.commandHooks.handlers.filter((h) => h.plugin === p.id).length,
    mcpServers: Object.keys(p.mcpServers?.servers ?? {}).length,
    ...(p.problem === undefined ? {} : { problem: p.problem }),
  }));
}

function renderClaude(rows: readonly ClaudePluginRow[], c: Colors, terminalLine: (s: string) => string): string {
  const cells = rows.map((p) => [
    terminalLine(p.id),
    p.status,
    String(p.hooks),
    String(p.mcpServers),
    terminalLine(p.problem ?? p.source),
  ]);
  return table([["ID", "STATUS", "HOOKS", "MCP", "SOURCE"], ...cells], (cell, row, column) => {
    if (row === 0) return c.bold(cell);
    const p = rows[row - 1];
    if (column === 1)
      return p?.status === "failed" ? c.red(cell) : p?.status === "loaded" ? c.green(cell) : c.dim(cell);
    if (column === 4) return p?.problem ? c.red(cell) : c.dim(cell);
    return cell;
  });
}

type Colors = ReturnType<Awaited<typeof import("./output.js")>["colorsFor"]>;

/** Each plugin as `plugins inspect --json` lists it (the console's configuration view shows the same). */
export function buildReport(
  entries: readonly PluginEntry[],
  gatehouse: Gatehouse,
  logged: readonly string[],
  hookOrder: readonly HookName[],
  path: (file: string) => string,
): Report {
  const registrations = gatehouse.engine.registrations();
  const rank = (hook: HookName) => hookOrder.indexOf(hook);
  const diagnostics = gatehouse.plugins.diagnostics;
  const infos = gatehouse.plugins.list();
  const entryFor = (p: { id: string; source: string }) =>
    entries.find((e) => e.id === p.id || e.path === p.source || (e.package && `package:${e.package}` === p.source));
  const report = (info: PluginInfo): PluginReport => {
    const grants = entryFor(info)?.hooks ?? {};
    return {
      // A file plugin that never loaded is known by its path: shown as its source is.
      id: info.status === "failed" ? path(info.id) : info.id,
      ...(info.name === undefined ? {} : { name: info.name }),
      ...(info.version === undefined ? {} : { version: info.version }),
      source:
        info.id === COMMAND_HOOKS && info.source === "code"
          ? "command hooks (.claude/settings*.json, gatehouse.json hooks)"
          : path(info.source),
      status: info.status,
      trusted: info.trusted,
      conversationAccess: info.trusted
        ? grants.allowConversationAccess !== false
        : grants.allowConversationAccess === true,
      registrations: registrations
        .filter((r) => r.pluginId === info.id)
        .map(({ pluginId: _, ...r }, i) => ({ r, i }))
        // Catalog order; within a hook, the order the engine runs them in (already sorted).
        .sort((a, b) => rank(a.r.hook) - rank(b.r.hook) || a.i - b.i)
        .map(({ r }) => r),
      refused: diagnostics
        .filter((d) => d.pluginId === info.id && d.code === "refused")
        .map((d) => ({ hook: d.hook ?? "?", message: d.message })),
      diagnostics: diagnostics
        .filter((d) => d.pluginId === info.id && d.code !== "refused")
        .map(({ pluginId: _, ...d }) => d),
    };
  };
  const plugins = infos.map(report);
  // The host logs each diagnostic too; only what no diagnostic says is kept as a general problem.
  const echoed = new Set(diagnostics.map((d) => `plugin ${d.pluginId}${d.hook ? ` (${d.hook})` : ""}: ${d.message}`));
  return { plugins, diagnostics: logged.filter((line) => !echoed.has(line)) };
}

function renderList(plugins: readonly PluginReport[], c: Colors): string {
  const rows = plugins.map((p) => [
    p.id,
    p.status,
    String(p.registrations.length),
    String(p.refused.length),
    p.conversationAccess ? "granted" : "no",
    p.source,
  ]);
  return table([["ID", "STATUS", "HOOKS", "REFUSED", "CONVERSATION", "SOURCE"], ...rows], (cell, row, column) => {
    if (row === 0) return c.bold(cell);
    const p = plugins[row - 1];
    if (column === 1)
      return p?.status === "failed" ? c.red(cell) : p?.status === "disabled" ? c.dim(cell) : c.green(cell);
    if (column === 3 && (p?.refused.length ?? 0) > 0) return c.yellow(cell);
    if (column === 5) return c.dim(cell);
    return cell;
  });
}

function renderInspect(report: Report, c: Colors, terminalLine: (s: string) => string): string {
  const out: string[] = [];
  for (const p of report.plugins) {
    const status =
      p.status === "failed" ? c.red(p.status) : p.status === "disabled" ? c.dim(p.status) : c.green(p.status);
    const about = [p.name, p.version].filter(Boolean).join(" ");
    out.push(`${c.bold(terminalLine(p.id))}${about ? ` (${terminalLine(about)})` : ""}  ${status}\n`);
    out.push(`  source        ${terminalLine(p.source)}\n`);
    out.push(
      `  conversation  ${p.conversationAccess ? "granted" : "not granted"}${p.trusted ? " (trusted: given in code)" : ""}\n`,
    );
    if (p.registrations.length === 0) out.push(`  ${c.dim("no registrations")}\n`);
    else {
      const rows = p.registrations.map((r) => [
        `  ${r.hook}`,
        `priority ${r.priority}`,
        `timeout ${duration(r.timeoutMs)}`,
        `fails ${r.failure}`,
        [r.matcher ? "matcher" : "", r.id === undefined ? "" : `id ${terminalLine(r.id)}`].filter(Boolean).join(", "),
      ]);
      out.push(table(rows, (cell, _row, column) => (column === 3 && cell.includes("closed") ? c.yellow(cell) : cell)));
    }
    for (const r of p.refused)
      out.push(`  ${c.yellow("refused")} ${terminalLine(r.hook)}: ${terminalLine(r.message)}\n`);
    for (const d of p.diagnostics) {
      const level = d.level === "error" ? c.red("error") : c.yellow("warning");
      out.push(
        `  ${level} ${d.hook ? `${terminalLine(d.hook)}: ` : ""}${terminalLine(d.message)} ${c.dim(`(${d.code})`)}\n`,
      );
    }
    out.push("\n");
  }
  if (report.diagnostics.length > 0) {
    out.push(`${c.bold("Other problems")}\n`);
    for (const line of report.diagnostics) out.push(`  ${terminalLine(line)}\n`);
  }
  return out.join("").replace(/\n\n$/, "\n");
}
