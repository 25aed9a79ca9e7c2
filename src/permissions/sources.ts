import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { SettingsDiagnostic } from "../core/diagnostic.js";
import { jsonErrorText, locateJsonPath, parseJsonText } from "../core/json.js";
import { lazyRequire } from "../core/lazy-require.js";
import { untrustedProjectSettings } from "../core/workspace-trust.js";
import { mergeSandboxSettings, type SandboxSettings } from "../sandbox/settings.js";
import { managedSettingsFiles } from "./managed.js";
import { isPermissionMode, PERMISSION_MODES, type PermissionMode } from "./policy.js";
import {
  PERMISSION_BEHAVIORS,
  type PermissionBehavior,
  type PermissionRule,
  parseRule,
  ruleId,
  skippedAllowRule,
} from "./rules.js";

const jsonc = lazyRequire<typeof import("jsonc-parser")>("jsonc-parser");

/** A problem in a permissions block: the file, where in it, and what was expected. */
export type PermissionDiagnostic = SettingsDiagnostic;

export interface LoadPermissionsOptions {
  readonly projectDir: string;
  readonly homeDir: string;
  /** gatehouse.json's `permissions` block (already checked against its schema) and the file. */
  readonly config?: { readonly file: string; readonly permissions?: unknown };
  /** `--settings FILE|JSON`, as the command hooks read it. */
  readonly cliSettings?: string;
  /** Where a relative `--settings` path is resolved (default: projectDir). */
  readonly cwd?: string;
  /** `--allowedTools` / `--disallowedTools`: session rules. */
  readonly allowedTools?: readonly string[];
  readonly disallowedTools?: readonly string[];
  /** `--permission-mode` (or the library's `permissions.mode`): wins over every `defaultMode`. */
  readonly mode?: string;
  /** The operator allows `bypassPermissions` (`--allow-bypass-permissions`, the library's `allowBypass`). */
  readonly allowBypass?: boolean;
  /** Read the settings files (default true); false: only gatehouse.json's block, the flags and rules in code. */
  readonly files?: boolean;
  /**
   * The managed settings file (default: `GATEHOUSE_MANAGED_SETTINGS`, else Claude Code's managed
   * location; null reads none), as the command hooks read it. Read even when `files` is false.
   */
  readonly managedSettings?: string | null;
  /** The environment `GATEHOUSE_MANAGED_SETTINGS` is read from (default: process.env). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * Project files whose loosening settings wait for workspace trust (docs/trust.md): they are
   * read through `untrustedProjectSettings`, so only what tightens applies. Default: none.
   */
  readonly untrustedFiles?: readonly string[];
  /** Rules given in code (the library). */
  readonly rules?: readonly { readonly behavior: PermissionBehavior; readonly rule: string }[];
}

export interface LoadedPermissions {
  readonly mode: PermissionMode;
  /** What set the mode: a file, `--permission-mode`, or `default`. */
  readonly modeFrom: string;
  readonly rules: PermissionRule[];
  readonly additionalDirectories: string[];
  readonly diagnostics: PermissionDiagnostic[];
  /** The `sandbox` block of the same files, merged (docs/configuration.md#sandbox). */
  readonly sandbox: SandboxSettings;
}

interface Source {
  readonly source: string;
  readonly file: string;
  readonly baseDir: string;
  readonly root: unknown;
  readonly text?: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Reads `permissions` from every settings source Gatehouse reads hooks from — user, project and
 * local `.claude/` settings, gatehouse.json, `--settings`, managed settings — plus the flags. Rules
 * of all sources are merged (a deny anywhere beats an allow anywhere, so a managed deny always
 * wins); `defaultMode` is taken from the highest source that sets it (managed > flag > --settings >
 * gatehouse.json > local > project > user). Managed `allowManagedPermissionRulesOnly` drops every
 * other source's rules (flags and code included). `disableBypassPermissionsMode: "disable"` (any
 * source, managed ones included) refuses bypassPermissions whoever enables it.
 */
export function loadPermissions(opts: LoadPermissionsOptions): LoadedPermissions {
  const diagnostics: PermissionDiagnostic[] = [];
  const managed = managedSettingsFiles(opts.managedSettings, opts.env ?? process.env)
    .map((path): Source => ({ source: "managed", file: path, baseDir: dirname(path), ...readJson(path, diagnostics) }))
    .filter((src) => src.root !== undefined);
  const managedBlock = (key: string): unknown[] =>
    managed.flatMap((m) =>
      isObject(m.root) && isObject(m.root.permissions) && m.root.permissions[key] !== undefined
        ? [m.root.permissions[key]]
        : isObject(m.root) && m.root[key] !== undefined
          ? [m.root[key]]
          : [],
    );
  const managedOnly = managedBlock("allowManagedPermissionRulesOnly").includes(true);
  const sources = [...readSources(opts, diagnostics), ...managed];
  const sandbox = mergeSandboxSettings(
    sources,
    (src) => (path, message) => diagnostics.push(at(src as Source, path, message)),
    opts.homeDir,
  );
  const rules: PermissionRule[] = [];
  /** Each rule's id: the n-th of its source and behavior. */
  const idOf = (source: string, behavior: PermissionBehavior) =>
    ruleId(source, behavior, rules.filter((r) => r.source === source && r.behavior === behavior).length);
  const additionalDirectories: string[] = [];
  let mode: PermissionMode = "default";
  let modeFrom = "default";
  let managedMode: { mode: PermissionMode; file: string } | undefined;
  /** The file whose `disableBypassPermissionsMode: "disable"` refuses bypassPermissions (any source: it only tightens). */
  let bypassDisabledBy: string | undefined;
  for (const src of sources) {
    const diag = (path: (string | number)[], message: string) => diagnostics.push(at(src, path, message));
    if (!isObject(src.root)) continue;
    const block = src.root.permissions;
    if (block === undefined) continue;
    if (!isObject(block)) {
      diag(["permissions"], "must be an object { allow, ask, deny, defaultMode, additionalDirectories }");
      continue;
    }
    for (const behavior of PERMISSION_BEHAVIORS) {
      const list = block[behavior];
      if (list === undefined) continue;
      if (!Array.isArray(list)) {
        diag(["permissions", behavior], 'must be an array of rules such as "Bash(npm test:*)"');
        continue;
      }
      if (managedOnly && src.source !== "managed") {
        diagnostics.push({
          level: "warning",
          file: src.file,
          path: `permissions.${behavior}`,
          message: MANAGED_ONLY,
        });
        continue;
      }
      list.forEach((text, i) => {
        const skipped = behavior === "allow" && typeof text === "string" ? skippedAllowRule(text) : undefined;
        if (skipped) {
          diagnostics.push({ ...at(src, ["permissions", behavior, i], `"${text}": ${skipped}`), level: "warning" });
          return;
        }
        const parsed =
          typeof text === "string" ? parseRule(text, behavior) : 'must be a string such as "Bash(npm test:*)"';
        if (typeof parsed === "string") diag(["permissions", behavior, i], parsed);
        else
          rules.push({
            behavior,
            rule: text as string,
            parsed,
            id: idOf(src.source, behavior),
            source: src.source,
            file: src.file,
            baseDir: src.baseDir,
          });
      });
    }
    if (block.disableBypassPermissionsMode === "disable") bypassDisabledBy ??= src.file;
    if (block.defaultMode !== undefined) {
      if (isPermissionMode(block.defaultMode)) {
        mode = block.defaultMode;
        modeFrom = src.file;
        if (src.source === "managed") managedMode = { mode: block.defaultMode, file: src.file };
      } else diag(["permissions", "defaultMode"], `must be one of ${PERMISSION_MODES.join(", ")}`);
    }
    const dirs = block.additionalDirectories;
    if (Array.isArray(dirs) && dirs.every((d) => typeof d === "string")) {
      for (const d of dirs) additionalDirectories.push(resolve(src.baseDir, d));
    } else if (dirs !== undefined) diag(["permissions", "additionalDirectories"], "must be an array of folder paths");
  }
  const flagRules = (behavior: PermissionBehavior, list: readonly string[] | undefined, flag: string) => {
    if (managedOnly && list?.length) {
      diagnostics.push({ level: "warning", file: flag, path: "", message: MANAGED_ONLY });
      return;
    }
    for (const text of list ?? []) {
      const parsed = parseRule(text, behavior);
      if (typeof parsed === "string") diagnostics.push({ level: "error", file: flag, path: "", message: parsed });
      else {
        const id = idOf("flag", behavior);
        rules.push({
          behavior,
          rule: text,
          parsed,
          id,
          source: "flag",
          file: flag,
          baseDir: opts.cwd ?? opts.projectDir,
        });
      }
    }
  };
  flagRules("allow", opts.allowedTools, "--allowedTools");
  flagRules("deny", opts.disallowedTools, "--disallowedTools");
  if (managedOnly && opts.rules?.length)
    diagnostics.push({ level: "warning", file: "permissions.rules", path: "", message: MANAGED_ONLY });
  for (const r of managedOnly ? [] : (opts.rules ?? [])) {
    const parsed = parseRule(r.rule, r.behavior);
    if (typeof parsed === "string")
      diagnostics.push({ level: "error", file: "permissions.rules", path: "", message: parsed });
    else rules.push({ ...r, parsed, id: idOf("library", r.behavior), source: "library", baseDir: opts.projectDir });
  }
  if (opts.mode !== undefined) {
    if (isPermissionMode(opts.mode)) {
      mode = opts.mode;
      modeFrom = "--permission-mode";
    } else
      diagnostics.push({
        level: "error",
        file: "--permission-mode",
        path: "",
        message: `"${opts.mode}" is not a mode: expected one of ${PERMISSION_MODES.join(", ")}`,
      });
  }
  // Managed settings are the organisation's: their mode wins over the flag too, as in Claude Code.
  if (managedMode !== undefined) {
    mode = managedMode.mode;
    modeFrom = managedMode.file;
  }
  if (mode === "bypassPermissions" && bypassDisabledBy !== undefined) {
    diagnostics.push({
      level: "error",
      file: modeFrom,
      path: modeFrom.startsWith("--") ? "" : "permissions.defaultMode",
      message: `bypassPermissions is disabled by ${bypassDisabledBy} (disableBypassPermissionsMode: "disable")`,
    });
    mode = "default";
  }
  if (mode === "bypassPermissions" && !opts.allowBypass) {
    diagnostics.push({
      level: "error",
      file: modeFrom,
      path: modeFrom.startsWith("--") ? "" : "permissions.defaultMode",
      message:
        "bypassPermissions runs every tool call without asking; the operator must enable it (--allow-bypass-permissions, or allowBypass in createGatehouse's permissions)",
    });
    mode = "default";
  }
  return { mode, modeFrom, rules, additionalDirectories, diagnostics, sandbox };
}

const MANAGED_ONLY = "ignored: managed settings set allowManagedPermissionRulesOnly";

function readSources(opts: LoadPermissionsOptions, diagnostics: PermissionDiagnostic[]): Source[] {
  const untrusted = new Set(opts.untrustedFiles ?? []);
  const file = (source: string, path: string, baseDir: string): Source => {
    const read = readJson(path, diagnostics);
    // Positions are looked up in the text, which still holds the keys dropped here: they stay right.
    if (untrusted.has(path))
      return { source, file: path, baseDir, ...read, root: untrustedProjectSettings(read.root).settings };
    return { source, file: path, baseDir, ...read };
  };
  const sources =
    opts.files === false
      ? []
      : [
          file("user", join(opts.homeDir, ".claude", "settings.json"), opts.homeDir),
          file("project", join(opts.projectDir, ".claude", "settings.json"), opts.projectDir),
          file("local", join(opts.projectDir, ".claude", "settings.local.json"), opts.projectDir),
        ];
  if (opts.config)
    sources.push({
      source: "config",
      file: opts.config.file,
      baseDir: dirname(opts.config.file),
      root: opts.config.permissions === undefined ? {} : { permissions: opts.config.permissions },
    });
  if (opts.cliSettings !== undefined && opts.files !== false) {
    const text = opts.cliSettings.trim();
    const cwd = opts.cwd ?? opts.projectDir;
    if (text.startsWith("{")) {
      const parsed = parseJsonText(text);
      sources.push({
        source: "cli",
        file: "--settings",
        baseDir: cwd,
        root: parsed.ok ? parsed.value : undefined,
        text,
      });
    } else sources.push(file("cli", resolve(cwd, text), cwd));
  }
  return sources;
}

/** A missing file is no source; one that cannot be read or parsed is reported (by the hook loader too). */
function readJson(file: string, diagnostics: PermissionDiagnostic[]): { root: unknown; text?: string } {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return { root: undefined };
  }
  const parsed = parseJsonText(text);
  if (parsed.ok) return { root: parsed.value, text };
  const { line, column } = parsed.error;
  diagnostics.push({ level: "error", file, line, column, path: "", message: jsonErrorText(parsed.error) });
  return { root: undefined };
}

function at(src: Source, path: (string | number)[], message: string): PermissionDiagnostic {
  const position = src.text === undefined ? undefined : locateJsonPath(src.text, path);
  const text = path.reduce<string>((p, k) => (typeof k === "number" ? `${p}[${k}]` : p ? `${p}.${k}` : k), "");
  return { level: "error", file: src.file, ...(position ?? {}), path: text, message };
}

/**
 * Adds a rule to `permissions.<behavior>` of `.claude/settings.local.json` (created if needed),
 * keeping the rest of the file as written. Returns the file.
 */
export function writeLocalRule(projectDir: string, behavior: PermissionBehavior, rule: string): string {
  const file = join(projectDir, ".claude", "settings.local.json");
  let text = "{}\n";
  try {
    text = readFileSync(file, "utf8");
  } catch {
    mkdirSync(dirname(file), { recursive: true });
  }
  const parsed = parseJsonText(text);
  const root = parsed.ok && isObject(parsed.value) ? parsed.value : undefined;
  if (root === undefined) throw new Error(`${file} is not a JSON object; the rule was not saved`);
  const existing = isObject(root.permissions) ? root.permissions[behavior] : undefined;
  const list = Array.isArray(existing) ? existing : [];
  if (list.includes(rule)) return file;
  const { modify, applyEdits } = jsonc();
  const edits = modify(text, ["permissions", behavior], [...list, rule], {
    formattingOptions: { insertSpaces: true, tabSize: 2, eol: "\n" },
  });
  writeFileSync(file, applyEdits(text, edits));
  return file;
}
