import { homedir } from "node:os";
import type { Diagnostic } from "../command-hooks/diagnostics.js";
import {
  type ConfiguredHandler,
  type LoadCommandHookSourcesOptions,
  type LoadedCommandHooks,
  loadCommandHookSources,
} from "../command-hooks/sources.js";
import type { EnvPolicy } from "../core/env-policy.js";
import { matches } from "../hooks/matcher.js";
import {
  type LoadedPermissions,
  type LoadPermissionsOptions,
  loadPermissions,
  PermissionPolicy,
  writeLocalRule,
} from "../permissions/index.js";
import { type BashSandbox, createBashSandbox } from "../sandbox/bash.js";
import { type SandboxPolicy, sandboxPolicy } from "../sandbox/policy.js";

/** Where command hooks are read from (gatehouse.json's `commandHooks`, `--settings`…). */
export type CommandHooksLoad = Omit<LoadCommandHookSourcesOptions, "projectDir" | "homeDir"> & {
  readonly homeDir?: string;
};

/** The permission settings given outside the files: flags, or the library's options. */
export type PermissionFlags = Pick<
  LoadPermissionsOptions,
  "mode" | "allowedTools" | "disallowedTools" | "allowBypass" | "rules" | "files" | "untrustedFiles"
>;

export interface SourcesInput {
  readonly projectDir: string;
  /** The command hook sources to read (none without it); their files (and `--settings`) are the permissions' too. */
  readonly commandHooks?: CommandHooksLoad;
  /** gatehouse.json's `permissions` block and the file. */
  readonly config?: { readonly file: string; readonly permissions?: unknown };
  readonly permissions?: PermissionFlags;
  readonly envPolicy?: EnvPolicy;
}

export interface LoadedSources {
  readonly commandHooks: LoadedCommandHooks;
  readonly permissions: LoadedPermissions;
  /** Every problem of both, each naming its file and JSON path. */
  readonly diagnostics: readonly Diagnostic[];
}

/**
 * The settings sources, read once for everything that needs them (docs/permissions.md): the
 * user, project and local `.claude/` settings, gatehouse.json, `--settings` and the flags give
 * the command hooks and the permission rules and mode. `run`, `chat`, `serve`, `hooks`,
 * `permissions`, the console and the library's `createGatehouse` all read them here.
 */
export function loadSources(input: SourcesInput): LoadedSources {
  const load = input.commandHooks ?? {};
  const homeDir = load.homeDir ?? homedir();
  // Without a `load`, the command hooks are given already (handlers in code): no file is read for them.
  const commandHooks: LoadedCommandHooks =
    input.commandHooks === undefined
      ? { handlers: [], diagnostics: [], disabled: false, managedOnly: false, plugins: [] }
      : loadCommandHookSources({
          ...load,
          // A project not trusted enables no plugins, as Claude Code waits for its trust dialog.
          ...(input.permissions?.untrustedFiles ? { untrustedFiles: input.permissions.untrustedFiles } : {}),
          ...(input.envPolicy ? { envPolicy: input.envPolicy } : {}),
          homeDir,
          projectDir: input.projectDir,
        });
  const permissions = loadPermissions({
    projectDir: input.projectDir,
    homeDir,
    ...(input.config ? { config: input.config } : {}),
    ...(load.cliSettings === undefined ? {} : { cliSettings: load.cliSettings }),
    ...(load.cwd === undefined ? {} : { cwd: load.cwd }),
    // The same managed settings as the hooks: their rules apply, and nothing overrides them.
    ...(load.managedSettings === undefined ? {} : { managedSettings: load.managedSettings }),
    ...(load.env === undefined ? {} : { env: load.env }),
    ...input.permissions,
  });
  // A settings file that cannot be parsed is reported once (by the hook loader).
  const reported = new Set(commandHooks.diagnostics.map((d) => `${d.file}\0${d.line ?? ""}`));
  const own = permissions.diagnostics.filter((d) => !(d.line !== undefined && reported.has(`${d.file}\0${d.line}`)));
  const silent = silentPermissionHooks(commandHooks.handlers, permissions);
  return { commandHooks, permissions, diagnostics: [...commandHooks.diagnostics, ...own, ...silent] };
}

/** Tools that can ask in `default` mode, to test a PermissionRequest matcher against. */
const ASKING_EXAMPLES = ["Bash", "Edit", "Write", "Agent", "WebFetch", "mcp__server__tool"];

/**
 * A `PermissionRequest` hook that can never fire under the configured mode and rules (nothing
 * it matches ever asks) is a guard that is silently inert: each is a warning.
 */
export function silentPermissionHooks(
  handlers: readonly ConfiguredHandler[],
  permissions: LoadedPermissions,
): Diagnostic[] {
  const { mode } = permissions;
  const askRuleTools = permissions.rules.filter((r) => r.behavior === "ask").map((r) => r.parsed.tool);
  const why = (h: ConfiguredHandler): string | undefined => {
    if (mode === "bypassPermissions" || mode === "dontAsk")
      return `in ${mode} mode nothing asks for permission (set by ${permissions.modeFrom})`;
    const candidates = mode === "plan" ? ["Agent"] : [...ASKING_EXAMPLES, ...askRuleTools];
    if (candidates.some((tool) => matches(h.compiledMatcher, tool))) return undefined;
    return mode === "plan"
      ? `in plan mode only Agent calls can ask, and the matcher "${h.matcher}" does not match Agent`
      : `the matcher "${h.matcher}" matches no tool that asks in ${mode} mode (reads run without asking; add an ask rule to make them ask)`;
  };
  return handlers.flatMap((h) => {
    if (h.event !== "PermissionRequest") return [];
    const reason = why(h);
    if (reason === undefined) return [];
    return [{ level: "warning", file: h.file, path: h.path, message: `PermissionRequest hook never fires: ${reason}` }];
  });
}

/**
 * The policy the tool door checks, from what `loadSources` read. With `persist`, an "always,
 * for this project" answer writes `projectDir/.claude/settings.local.json`.
 */
export function permissionPolicy(
  loaded: LoadedPermissions,
  projectDir: string,
  persist = true,
  sandbox?: BashSandbox,
): PermissionPolicy {
  return new PermissionPolicy({
    mode: loaded.mode,
    modeFrom: loaded.modeFrom,
    rules: loaded.rules,
    cwd: projectDir,
    additionalDirectories: loaded.additionalDirectories,
    ...(persist ? { persist: (behavior, rule) => writeLocalRule(projectDir, behavior, rule) } : {}),
    ...(sandbox?.autoAllow ? { sandboxedBash: (input: unknown) => sandbox.runsSandboxed(input) } : {}),
  });
}

/**
 * The sandbox's read rules from what `loadSources` read (its `filesystem` block, `Read(…)` deny
 * rules, the credential files), for the reads no sandbox contains: an `agent` command hook's.
 */
export function sandboxReads(loaded: LoadedPermissions, projectDir: string): SandboxPolicy["filesystem"] {
  return sandboxPolicy(loaded.sandbox, loaded.rules, {
    projectDir,
    homeDir: homedir(),
    additionalDirectories: loaded.additionalDirectories,
  }).filesystem;
}

/**
 * The Bash tool's sandbox from what `loadSources` read: the `sandbox` block and the permission
 * rules (Read/Edit paths, WebFetch domains) of the same files (docs/security.md#sandbox).
 */
export function bashSandbox(loaded: LoadedPermissions, projectDir: string, dataDir?: string): BashSandbox {
  return createBashSandbox({
    projectDir,
    settings: loaded.sandbox,
    rules: loaded.rules,
    additionalDirectories: loaded.additionalDirectories,
    ...(dataDir === undefined ? {} : { dataDir }),
  });
}
