import { readFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import type { EnvPolicy } from "../core/env-policy.js";
import { jsonErrorText, locateJsonPath, parseJsonText } from "../core/json.js";
import { type CompiledMatcher, compileMatcher, matcherSurprise } from "../hooks/matcher.js";
import { managedSettingsFiles } from "../permissions/managed.js";
import { type ClaudePlugin, readClaudePlugins } from "./claude-plugins.js";
import { readCodexToml, tomlPosition } from "./codex-toml.js";
import { type Diagnostic, joinPath, pathKeys, readSettingsText } from "./diagnostics.js";
import { DIALECT_SPECS, type Dialect, isForeign, timeoutMsFor } from "./dialects.js";
import { type CommandHookEvent, EVENT_SPECS, FOREIGN_CLAUDE_EVENTS, isCommandHookEvent } from "./events.js";
import { MODEL_HANDLER_DEFAULT_TIMEOUT_MS } from "./prompt-handler.js";
import type { HandlerDefinition, OnFailure, SourceName } from "./settings.js";
import { type Diag, validateHandler } from "./validate.js";

/** One handler as configured, with everything the dispatcher needs to run it. */
export interface ConfiguredHandler {
  /** Stable id: `<source>:<JSON path>`. */
  readonly id: string;
  readonly source: SourceName;
  readonly file: string;
  /** JSON path of the handler, e.g. `hooks.PreToolUse[0].hooks[1]`. */
  readonly path: string;
  readonly dialect: Dialect;
  /** The runtime point it fires at, as Claude Code's event names it. */
  readonly event: CommandHookEvent;
  /** The event as the file names it (`BeforeTool`, `beforeShellExecution`; = `event` for Claude Code). */
  readonly nativeEvent: string;
  /** Only for these Gatehouse tools (`mcp__*`: any MCP tool): Cursor's shell, MCP and file events. */
  readonly tools?: readonly string[];
  /** The event's answer is ignored, as the tool that defines it ignores it. */
  readonly observe?: boolean;
  readonly matcher: string | undefined;
  readonly compiledMatcher: CompiledMatcher;
  readonly definition: HandlerDefinition;
  /** The configured timeout in the dialect's unit, converted; or the event's default. */
  readonly timeoutMs: number;
  /** The handler's own `onFailure`, else `commandHooks.onFailure`, else `continue`. */
  readonly onFailure: OnFailure;
  /** Handlers with equal keys are one handler: it runs once per event. */
  readonly dedupKey: string;
  /**
   * The folder the command runs in, when it is not the project: Cursor runs its user hooks in
   * ~/.cursor, so their relative paths (`./hooks/x.sh`) mean what they mean there.
   */
  readonly runDir?: string;
  /** The Claude Code plugin (`<plugin>@<marketplace>`) that brought it. */
  readonly plugin?: string;
}

export interface LoadCommandHookSourcesOptions {
  projectDir: string;
  /** Injected so tests (and `--home`) never read the real one. */
  homeDir: string;
  /** gatehouse.json's `hooks` block (operator hook timeouts live in `hookTimeouts`, not here). */
  configHooks?: { file: string; hooks?: unknown; disableAllHooks?: unknown };
  /** `--settings FILE|JSON`: inline JSON when it starts with `{`, else a path. */
  cliSettings?: string;
  /** Where a relative `--settings` path is resolved (default: projectDir). */
  cwd?: string;
  /** Read ~/.code_puppy/hooks.json (`commandHooks.codePuppy`). */
  codePuppy?: boolean;
  /** Read Gemini CLI's, Codex's and Cursor's hook files (`commandHooks.gemini` / `codex` / `cursor`). */
  gemini?: boolean;
  codex?: boolean;
  cursor?: boolean;
  dialects?: Partial<Record<SourceName, Dialect>>;
  /** `commandHooks.onFailure`. */
  onFailure?: OnFailure;
  /** PATH used to check that programs exist (default: process.env.PATH). */
  pathVar?: string;
  /** Check that each command's program exists and is executable (default true). */
  checkPrograms?: boolean;
  /** The environment policy, to warn about `http` headers naming a variable they will never get. */
  envPolicy?: EnvPolicy;
  /** Where `CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS` and `GATEHOUSE_MANAGED_SETTINGS` are read (default: process.env). */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * The managed settings file (default: `GATEHOUSE_MANAGED_SETTINGS`, else Claude Code's location:
   * /etc/claude-code/managed-settings.json on Linux, /Library/Application Support/ClaudeCode/ on
   * macOS, with the `managed-settings.d/*.json` beside it); null reads none.
   */
  managedSettings?: string | null;
  /**
   * Project settings files not trusted (docs/trust.md): their `enabledPlugins` and
   * `extraKnownMarketplaces` wait for trust.
   */
  untrustedFiles?: readonly string[];
  /** Install enabled plugins with an `npm` source that are not cached yet (default true). */
  installPlugins?: boolean;
}

export interface LoadedCommandHooks {
  readonly handlers: ConfiguredHandler[];
  readonly diagnostics: Diagnostic[];
  /** True when the effective `disableAllHooks` turned every handler off. */
  readonly disabled: boolean;
  /** Managed settings' `allowManagedHooksOnly`: only managed handlers were kept. */
  readonly managedOnly: boolean;
  /** Every Claude Code plugin `enabledPlugins` names, enabled or not. */
  readonly plugins: readonly ClaudePlugin[];
}

interface RawSource {
  name: SourceName;
  file: string;
  /** The parsed JSON root, or undefined when the file does not exist. */
  root: unknown;
  /** Where the event map is: `hooks` of the root, or the root itself. */
  hooksAt: "hooks" | "root-or-hooks";
  /** The dialect the file is written in, when the source fixes it (other agent CLIs' files). */
  dialect?: Dialect;
  /** The Claude Code plugin whose hooks these are, and the variables its processes get. */
  plugin?: { readonly id: string; readonly env: Readonly<Record<string, string>> };
}

/**
 * Reads every hook source in the fixed order (user, project, local, config, cli,
 * code-puppy), validates it, and returns the handlers in that order with diagnostics that
 * name the file and JSON path of each problem. Missing files are not an error.
 */
export function loadCommandHookSources(opts: LoadCommandHookSourcesOptions): LoadedCommandHooks {
  const diagnostics: Diagnostic[] = [];
  const managed = readManagedSources(opts, diagnostics);
  const settings = readSources(opts, diagnostics);
  const plugins = pluginsOf(opts, [...settings, ...managed], diagnostics);
  // Plugins' hooks run after the settings files' (user, project, local), before gatehouse.json's.
  const local = settings.findIndex((s) => s.name === "local") + 1;
  const others = [...settings.slice(0, local), ...pluginSources(plugins), ...settings.slice(local)];
  const managedFlag = (key: string) => managed.some((m) => isObject(m.root) && m.root[key] === true);
  for (const src of others)
    if (isObject(src.root) && "allowManagedHooksOnly" in src.root)
      diagnostics.push({
        level: "warning",
        file: src.file,
        path: "allowManagedHooksOnly",
        message: "only managed settings can set allowManagedHooksOnly; ignored here",
      });
  // Only a managed disableAllHooks turns managed hooks off; the others' value (managed first by precedence) turns off theirs.
  const managedDisabled = managedFlag("disableAllHooks");
  const managedOnly = managedFlag("allowManagedHooksOnly");
  const othersDisabled = effectiveDisableAll([...others, ...managed], diagnostics);
  const sources = managedDisabled ? [] : managedOnly || othersDisabled ? managed : [...managed, ...others];
  const handlers: ConfiguredHandler[] = [];
  const seen = new Set<string>();
  for (const src of sources) {
    // A managed file is Claude Code's; a project's configuration cannot change how it is read.
    const dialect =
      src.name === "managed"
        ? "claude"
        : (opts.dialects?.[src.name] ?? src.dialect ?? (src.name === "code-puppy" ? "code-puppy" : "claude"));
    for (const h of loadSource(src, dialect, opts, diagnostics)) {
      const key = `${h.event}\0${h.matcher ?? ""}\0${h.dedupKey}`;
      if (seen.has(key)) continue;
      seen.add(key);
      handlers.push(h);
    }
  }
  const budgeted = withSessionEndBudget(handlers, opts.env ?? process.env, diagnostics);
  const disabled = managedDisabled || (othersDisabled && budgeted.length === 0);
  return { handlers: budgeted, diagnostics: withPositions(diagnostics), disabled, managedOnly, plugins };
}

/** The plugins the Claude Code settings files (not other agents' files) enable. */
function pluginsOf(
  opts: LoadCommandHookSourcesOptions,
  sources: RawSource[],
  diagnostics: Diagnostic[],
): ClaudePlugin[] {
  const untrusted = new Set(opts.untrustedFiles ?? []);
  return readClaudePlugins(
    {
      sources: sources
        .filter((s) => ["user", "project", "local", "cli", "managed"].includes(s.name))
        .map((s) => ({ file: s.file, root: s.root, untrusted: untrusted.has(s.file) })),
      homeDir: opts.homeDir,
      projectDir: opts.projectDir,
      env: opts.env ?? process.env,
      ...(opts.installPlugins === undefined ? {} : { install: opts.installPlugins }),
    },
    (d) => diagnostics.push(d),
  );
}

/** Each loaded plugin's hooks as a source of its own. */
function pluginSources(plugins: readonly ClaudePlugin[]): RawSource[] {
  return plugins.flatMap((p): RawSource[] =>
    p.status === "loaded" && p.hooks
      ? [
          {
            name: "plugin",
            file: p.hooks.file,
            root: { hooks: p.hooks.block },
            hooksAt: "hooks",
            plugin: { id: p.id, env: p.env ?? {} },
          },
        ]
      : [],
  );
}

/**
 * Each diagnostic with the line and column of its JSON path, where its file can be read again:
 * a problem is found after parsing, and only a failing file pays the second read.
 */
function withPositions(diagnostics: Diagnostic[]): Diagnostic[] {
  const texts = new Map<string, string | undefined>();
  const textOf = (file: string) => {
    if (!texts.has(file))
      try {
        texts.set(file, readFileSync(file, "utf8"));
      } catch {
        texts.set(file, undefined);
      }
    return texts.get(file);
  };
  return diagnostics.map((d) => {
    if (d.line !== undefined || d.path === "" || !isAbsolute(d.file)) return d;
    const text = textOf(d.file);
    const position =
      text === undefined
        ? undefined
        : d.file.endsWith(".toml")
          ? tomlPosition(text, d.path)
          : locateJsonPath(text, pathKeys(d.path));
    return position === undefined ? d : { ...d, ...position };
  });
}

/** The managed settings (docs/command-hooks.md): the files permissions read too, in the same order. */
function readManagedSources(opts: LoadCommandHookSourcesOptions, diagnostics: Diagnostic[]): RawSource[] {
  const files = managedSettingsFiles(opts.managedSettings, opts.env ?? process.env);
  return files
    .map((file): RawSource => ({ name: "managed", file, root: readJsonFile(file, diagnostics), hooksAt: "hooks" }))
    .filter((src) => src.root !== undefined);
}

/** Claude Code's SessionEnd budget: 1.5 s, raised to the largest configured timeout up to 60 s. */
export const SESSION_END_BUDGET = { defaultMs: 1500, maxMs: 60_000 } as const;

/**
 * Claude Code gives all SessionEnd hooks one short budget, since the session is going away: 1.5 s,
 * raised to the largest timeout a SessionEnd handler configures (at most 60 s), or exactly
 * `CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS`. Claude Code's dialects share it; the others keep their own.
 */
function withSessionEndBudget(
  handlers: ConfiguredHandler[],
  env: Readonly<Record<string, string | undefined>>,
  diagnostics: Diagnostic[],
): ConfiguredHandler[] {
  const shared = handlers.filter((h) => h.event === "SessionEnd" && DIALECT_SPECS[h.dialect].sessionEndBudget);
  if (shared.length === 0) return handlers;
  let budget: number = SESSION_END_BUDGET.defaultMs;
  for (const h of shared)
    if (h.definition.timeout !== undefined) budget = Math.max(budget, Math.min(h.timeoutMs, SESSION_END_BUDGET.maxMs));
  const raw = env.CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS?.trim();
  if (raw) {
    const ms = Number(raw);
    if (Number.isInteger(ms) && ms > 0) budget = ms;
    else
      diagnostics.push({
        level: "warning",
        file: "(environment)",
        path: "CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS",
        message: `expected a whole number of milliseconds (got "${raw}"); SessionEnd hooks get ${budget} ms`,
      });
  }
  return handlers.map((h) => (shared.includes(h) ? { ...h, timeoutMs: budget } : h));
}

function readSources(opts: LoadCommandHookSourcesOptions, diagnostics: Diagnostic[]): RawSource[] {
  const claude = (name: SourceName, file: string): RawSource => ({
    name,
    file,
    root: readJsonFile(file, diagnostics),
    hooksAt: "hooks",
  });
  const sources = [
    claude("user", join(opts.homeDir, ".claude", "settings.json")),
    claude("project", join(opts.projectDir, ".claude", "settings.json")),
    claude("local", join(opts.projectDir, ".claude", "settings.local.json")),
  ];
  if (opts.configHooks !== undefined) {
    const { file, hooks, disableAllHooks } = opts.configHooks;
    const root: Record<string, unknown> = {};
    if (hooks !== undefined) root.hooks = hooks;
    if (disableAllHooks !== undefined) root.disableAllHooks = disableAllHooks;
    sources.push({ name: "config", file, root, hooksAt: "hooks" });
  }
  if (opts.cliSettings !== undefined) {
    const text = opts.cliSettings.trim();
    if (text.startsWith("{")) {
      sources.push({
        name: "cli",
        file: "--settings",
        root: parseJson(text, "--settings", diagnostics),
        hooksAt: "hooks",
      });
    } else {
      sources.push(claude("cli", resolve(opts.cwd ?? opts.projectDir, text)));
      if (sources.at(-1)?.root === undefined) {
        diagnostics.push({ level: "error", file: text, path: "", message: "--settings file not found" });
      }
    }
  }
  if (opts.codePuppy) {
    const file = join(opts.homeDir, ".code_puppy", "hooks.json");
    sources.push({ name: "code-puppy", file, root: readJsonFile(file, diagnostics), hooksAt: "root-or-hooks" });
  }
  // Codex reads a layer's hooks.json and the [hooks] tables of its config.toml, both.
  const codexToml = (name: SourceName, base: string): RawSource => {
    const file = join(base, ".codex", "config.toml");
    return { name, file, root: readCodexToml(file, diagnostics), hooksAt: "hooks", dialect: "codex" };
  };
  const agent = (name: SourceName, dialect: Dialect, file: string): RawSource => ({
    name,
    file,
    root: readJsonFile(file, diagnostics),
    hooksAt: "hooks",
    dialect,
  });
  for (const [enabled, dialect, dir, file] of [
    [opts.gemini, "gemini", ".gemini", "settings.json"],
    [opts.codex, "codex", ".codex", "hooks.json"],
    [opts.cursor, "cursor", ".cursor", "hooks.json"],
  ] as const) {
    if (!enabled) continue;
    // Run from the home folder, the user's file is the project's: read once, as the project's
    // (Cursor runs a project's hooks from the project, a user's from ~/.cursor).
    const homeIsProject = resolve(opts.homeDir) === resolve(opts.projectDir);
    if (!homeIsProject) sources.push(agent(`${dialect}-user`, dialect, join(opts.homeDir, dir, file)));
    if (dialect === "codex" && !homeIsProject) sources.push(codexToml("codex-user-toml", opts.homeDir));
    sources.push(agent(dialect, dialect, join(opts.projectDir, dir, file)));
    if (dialect === "codex") sources.push(codexToml("codex-toml", opts.projectDir));
  }
  return sources;
}

function readJsonFile(file: string, diagnostics: Diagnostic[]): unknown {
  const text = readSettingsText(file, diagnostics);
  return text === undefined ? undefined : parseJson(text, file, diagnostics);
}

function parseJson(text: string, file: string, diagnostics: Diagnostic[]): unknown {
  const parsed = parseJsonText(text);
  if (parsed.ok) return parsed.value;
  const { line, column } = parsed.error;
  diagnostics.push({ level: "error", file, line, column, path: "", message: jsonErrorText(parsed.error) });
  return undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Scalar precedence as in Claude Code, highest first: cli > config > local > project > user. */
function effectiveDisableAll(sources: RawSource[], diagnostics: Diagnostic[]): boolean {
  let value = false;
  for (const src of sources) {
    if (src.name === "code-puppy" || src.dialect || !isObject(src.root) || !("disableAllHooks" in src.root)) continue;
    const v = src.root.disableAllHooks;
    if (typeof v === "boolean") value = v;
    else {
      diagnostics.push({ level: "error", file: src.file, path: "disableAllHooks", message: "must be true or false" });
    }
  }
  return value;
}

function loadSource(
  src: RawSource,
  dialect: Dialect,
  opts: LoadCommandHookSourcesOptions,
  diagnostics: Diagnostic[],
): ConfiguredHandler[] {
  if (src.root === undefined) return [];
  const diag = (level: Diagnostic["level"], path: string, message: string) =>
    diagnostics.push({ level, file: src.file, path, message });
  if (!isObject(src.root)) {
    diag("error", "", "settings must be a JSON object");
    return [];
  }
  let base = "hooks";
  let block: unknown = src.root.hooks;
  if (src.hooksAt === "root-or-hooks" && !("hooks" in src.root)) {
    base = "";
    block = src.root;
  }
  if (block === undefined) return [];
  if (!isObject(block)) {
    diag("error", base, "must be an object mapping event names to matcher groups");
    return [];
  }
  if (isForeign(dialect)) return loadForeignSource(src, dialect, block, base, opts, diag);
  const out: ConfiguredHandler[] = [];
  for (const [eventName, groups] of Object.entries(block)) {
    const eventPath = joinPath(base, eventName);
    if (dialect === "code-puppy" && eventName.startsWith("_")) continue;
    if (!isCommandHookEvent(eventName)) {
      if (FOREIGN_CLAUDE_EVENTS.includes(eventName)) {
        diag("warning", eventPath, `Claude Code event "${eventName}" is not fired by Gatehouse; its hooks never run`);
      } else {
        diag("error", eventPath, `unknown event "${eventName}"${suggestEvent(eventName)}`);
      }
      continue;
    }
    if (!Array.isArray(groups)) {
      diag("error", eventPath, "must be an array of matcher groups");
      continue;
    }
    groups.forEach((group, gi) => {
      out.push(...loadGroup(src, dialect, eventName, group, joinPath(eventPath, gi), opts, diag));
    });
  }
  return out;
}

/** Keys of Gemini CLI's `hooks` object that configure hooks rather than name an event. */
const GEMINI_SETTINGS_KEYS = new Set(["enabled", "disabled", "notifications"]);

/**
 * Gemini CLI's, Codex's and Cursor's files: their event names mapped onto the events Gatehouse
 * fires (one handler per runtime point), their names with no runtime point reported.
 */
function loadForeignSource(
  src: RawSource,
  dialect: Dialect,
  block: Record<string, unknown>,
  base: string,
  opts: LoadCommandHookSourcesOptions,
  diag: Diag,
): ConfiguredHandler[] {
  const spec = DIALECT_SPECS[dialect];
  const root = src.root as Record<string, unknown>;
  if (dialect === "cursor" && root.version !== 1)
    diag("error", "version", `Cursor's hooks.json must say "version": 1 (got ${JSON.stringify(root.version)})`);
  // Gemini CLI: `hooksConfig` (or, in older versions, `hooks`) turns hooks off or off by name.
  const settings = isObject(root.hooksConfig) ? root.hooksConfig : block;
  if (dialect === "gemini" && settings.enabled === false) return [];
  const disabled = new Set(Array.isArray(settings.disabled) ? settings.disabled : []);
  const out: ConfiguredHandler[] = [];
  for (const [name, groups] of Object.entries(block)) {
    const eventPath = joinPath(base, name);
    if (dialect === "gemini" && GEMINI_SETTINGS_KEYS.has(name)) continue;
    const native = spec.events?.[name];
    if (!native) {
      const why = spec.notFired?.[name];
      if (why) diag("warning", eventPath, `${name} is not fired by Gatehouse (${why}); its hooks never run`);
      // A newer event of that agent is a warning; a handler on it that asks to fail closed is a guard we cannot honour.
      else if (asksToFailClosed(groups))
        diag(
          "error",
          eventPath,
          `unknown ${dialect} event "${name}", with a handler that fails closed: a guard that would never run`,
        );
      else diag("warning", eventPath, `unknown ${dialect} event "${name}"; its hooks never run`);
      continue;
    }
    if (!Array.isArray(groups)) {
      diag("error", eventPath, `must be an array of ${dialect === "cursor" ? "hooks" : "matcher groups"}`);
      continue;
    }
    groups.forEach((group, gi) => {
      const groupPath = joinPath(eventPath, gi);
      // Cursor lists handlers directly, each with its own matcher.
      const asGroup =
        dialect === "cursor" && isObject(group)
          ? { ...(group.matcher === undefined ? {} : { matcher: group.matcher }), hooks: [group] }
          : group;
      for (const [i, event] of native.events.entries()) {
        const handlers = loadGroup(src, dialect, event, asGroup, groupPath, opts, i === 0 ? diag : () => {}, {
          nativeEvent: name,
          ...(native.tools ? { tools: native.tools } : {}),
          ...(native.observe ? { observe: true } : {}),
          ...(dialect === "cursor" ? { flat: true } : {}),
          skip: (raw) => isObject(raw) && typeof raw.name === "string" && disabled.has(raw.name),
        });
        out.push(...handlers.map((h) => (native.events.length > 1 ? { ...h, id: `${h.id}#${event}` } : h)));
      }
    });
  }
  return out;
}

/** Cursor's `failClosed: true` or Gatehouse's `onFailure: "block"` on any handler listed under an event. */
function asksToFailClosed(groups: unknown): boolean {
  const entries = Array.isArray(groups) ? groups : [];
  const handlers = entries.flatMap((g) => (isObject(g) && Array.isArray(g.hooks) ? [g, ...g.hooks] : [g]));
  return handlers.some((h) => isObject(h) && (h.failClosed === true || h.onFailure === "block"));
}

interface NativeOptions {
  readonly nativeEvent: string;
  readonly tools?: readonly string[];
  readonly observe?: boolean;
  /** Cursor: the group is one handler; its fields' paths are the entry's own. */
  readonly flat?: boolean;
  /** A handler turned off by name (Gemini CLI's `disabled` list). */
  readonly skip?: (raw: unknown) => boolean;
}

function loadGroup(
  src: RawSource,
  dialect: Dialect,
  event: CommandHookEvent,
  group: unknown,
  groupPath: string,
  opts: LoadCommandHookSourcesOptions,
  diag: Diag,
  native?: NativeOptions,
): ConfiguredHandler[] {
  if (!isObject(group)) {
    diag("error", groupPath, "a matcher group must be an object { matcher?, hooks: [...] }");
    return [];
  }
  for (const key of Object.keys(group)) {
    if (key === "sequential" && dialect === "gemini")
      diag(
        "warning",
        joinPath(groupPath, key),
        "sequential: hooks run in parallel in Gatehouse; one hook's output is not the next one's input",
      );
    else if (key !== "matcher" && key !== "hooks")
      diag("warning", joinPath(groupPath, key), `unknown field "${key}" in a matcher group is ignored`);
  }
  const matcherPath = joinPath(groupPath, "matcher");
  let matcher: string | undefined;
  if (group.matcher !== undefined && typeof group.matcher !== "string") {
    diag("error", matcherPath, "matcher must be a string");
    return [];
  }
  matcher = group.matcher as string | undefined;
  const spec = EVENT_SPECS[event];
  if (spec.matcherField === null && matcher !== undefined && matcher !== "" && matcher !== "*" && !native) {
    diag(
      "warning",
      matcherPath,
      `${event} has no matcher; "${matcher}" is ignored and the hooks run for every ${event}`,
    );
    matcher = undefined;
  }
  const surprise = isForeign(dialect) ? undefined : matcherSurprise(matcher);
  if (surprise) diag("warning", matcherPath, `${surprise} (Claude Code's matcher rule); use "*" for every ${event}`);
  let compiledMatcher: CompiledMatcher;
  try {
    compiledMatcher = compileMatcher(matcher, DIALECT_SPECS[dialect].matcher);
  } catch (e) {
    diag("error", matcherPath, `invalid regex "${matcher}": ${(e as Error).message}; this group never runs`);
    return [];
  }
  const hooksPath = joinPath(groupPath, "hooks");
  if (!Array.isArray(group.hooks)) {
    diag("error", hooksPath, "hooks must be an array of handlers");
    return [];
  }
  const out: ConfiguredHandler[] = [];
  group.hooks.forEach((raw, hi) => {
    if (native?.skip?.(raw)) return;
    const path = native?.flat ? groupPath : joinPath(hooksPath, hi);
    const runDir = src.name === "cursor-user" ? join(opts.homeDir, ".cursor") : undefined;
    let definition = validateHandler(raw, {
      path,
      dialect,
      event,
      projectDir: opts.projectDir,
      runDir,
      pathVar: opts.pathVar,
      checkPrograms: opts.checkPrograms,
      envPolicy: opts.envPolicy,
      defaultOnFailure: opts.onFailure,
      diag,
    });
    if (definition === undefined) return;
    // A plugin's command hooks get CLAUDE_PLUGIN_ROOT and CLAUDE_PLUGIN_DATA, as in Claude Code.
    if (src.plugin && definition.type === "command")
      definition = { ...definition, env: { ...src.plugin.env, ...definition.env } } as typeof definition;
    out.push({
      id: src.plugin ? `plugin:${src.plugin.id}:${path}` : `${src.name}:${path}`,
      source: src.name,
      file: src.file,
      path,
      dialect,
      event,
      nativeEvent: native?.nativeEvent ?? event,
      ...(native?.tools ? { tools: native.tools } : {}),
      ...(native?.observe ? { observe: true } : {}),
      matcher,
      compiledMatcher,
      definition,
      timeoutMs: handlerTimeoutMs(dialect, event, definition),
      onFailure: definition.onFailure ?? opts.onFailure ?? "continue",
      dedupKey: dedupKey(definition, dialect, native?.nativeEvent),
      ...(runDir === undefined ? {} : { runDir }),
      ...(src.plugin ? { plugin: src.plugin.id } : {}),
    });
  });
  return out;
}

/** `prompt` and `agent` handlers default to Claude Code's 30 s and 60 s; the others' come from the dialect and event. */
function handlerTimeoutMs(dialect: Dialect, event: CommandHookEvent, def: HandlerDefinition): number {
  if ((def.type === "prompt" || def.type === "agent") && def.timeout === undefined)
    return MODEL_HANDLER_DEFAULT_TIMEOUT_MS[def.type];
  return timeoutMsFor(dialect, event, def.timeout);
}

/**
 * Same program, same argv (or URL), same dialect = same handler. Timeout, `if` and
 * onFailure are not part of the key: the first source's copy runs, with its settings.
 */
export function dedupKey(def: HandlerDefinition, dialect: Dialect, nativeEvent?: string): string {
  const what =
    def.type === "command"
      ? JSON.stringify([def.command, def.args ?? null, def.shell ?? "sh"])
      : def.type === "prompt" || def.type === "agent"
        ? JSON.stringify([def.prompt, def.model ?? null])
        : def.type === "mcp_tool"
          ? JSON.stringify([def.server, def.tool, def.input ?? null])
          : def.url;
  // Cursor's beforeShellExecution and preToolUse both fire at PreToolUse: one script on both runs twice there too.
  return `${def.type}\0${dialect}\0${nativeEvent ?? ""}\0${what}`;
}

function suggestEvent(name: string): string {
  const lower = name.toLowerCase();
  const near = Object.keys(EVENT_SPECS).find((e) => e.toLowerCase() === lower);
  return near ? ` (did you mean "${near}"?)` : "";
}

export interface ConfigureHandlerOptions {
  event: CommandHookEvent;
  matcher?: string;
  dialect?: Dialect;
  source?: SourceName;
  file?: string;
  path?: string;
  onFailure?: OnFailure;
}

/**
 * A handler built in code rather than read from a file (`hooks test`, tests, embedders).
 * Throws on an invalid matcher regex instead of reporting a diagnostic.
 */
export function configureHandler(definition: HandlerDefinition, o: ConfigureHandlerOptions): ConfiguredHandler {
  const dialect = o.dialect ?? "claude";
  const source = o.source ?? "config";
  const path = o.path ?? `hooks.${o.event}[0].hooks[0]`;
  return {
    id: `${source}:${path}`,
    source,
    file: o.file ?? "(inline)",
    path,
    dialect,
    event: o.event,
    nativeEvent: o.event,
    matcher: o.matcher,
    compiledMatcher: compileMatcher(o.matcher),
    definition,
    timeoutMs: handlerTimeoutMs(dialect, o.event, definition),
    onFailure: definition.onFailure ?? o.onFailure ?? "continue",
    dedupKey: dedupKey(definition, dialect),
  };
}
