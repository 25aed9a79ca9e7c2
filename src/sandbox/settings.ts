import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { z } from "zod";
import { parseRule } from "../permissions/rules.js";

/**
 * Claude Code's `sandbox` settings block (docs/configuration.md#sandbox), as Gatehouse honours it.
 * Every key is listed: a key Gatehouse does not honour (`credentials`, `ignoreViolations`, …) is
 * a load error rather than a setting that silently does nothing, and so is a managed-only key in
 * a file that is not managed settings.
 */
const paths = z.array(z.string().min(1));

const FilesystemSchema = z.strictObject({
  allowWrite: paths.optional(),
  denyWrite: paths.optional(),
  denyRead: paths.optional(),
  allowRead: paths.optional(),
  /** Managed only: `allowRead` entries of other files are ignored. */
  allowManagedReadPathsOnly: z.boolean().optional(),
});

const NetworkSchema = z.strictObject({
  allowedDomains: paths.optional(),
  deniedDomains: paths.optional(),
  allowUnixSockets: paths.optional(),
  allowAllUnixSockets: z.boolean().optional(),
  allowLocalBinding: z.boolean().optional(),
  /** Managed only: only managed `allowedDomains` (and managed `WebFetch(domain:…)` allow rules) open a host; nothing else is asked. */
  allowManagedDomainsOnly: z.boolean().optional(),
});

export const SandboxBlockSchema = z.strictObject({
  enabled: z.boolean().optional(),
  failIfUnavailable: z.boolean().optional(),
  autoAllowBashIfSandboxed: z.boolean().optional(),
  excludedCommands: z
    .array(
      z
        .string()
        .min(1)
        .refine((entry) => typeof parseRule(`Bash(${entry})`, "allow") !== "string", {
          message: "expected a Bash rule pattern, as inside Bash(…): e.g. docker:*",
        }),
    )
    .optional(),
  allowUnsandboxedCommands: z.boolean().optional(),
  /** Managed only. */
  bwrapPath: z.string().min(1).optional(),
  /** Managed only. */
  socatPath: z.string().min(1).optional(),
  filesystem: FilesystemSchema.optional(),
  network: NetworkSchema.optional(),
});
export type SandboxBlock = z.infer<typeof SandboxBlockSchema>;

const MANAGED_ONLY: readonly (readonly string[])[] = [
  ["bwrapPath"],
  ["socatPath"],
  ["filesystem", "allowManagedReadPathsOnly"],
  ["network", "allowManagedDomainsOnly"],
];

/** A path entry and the settings file it came from (paths are resolved already). */
export interface SandboxEntry {
  readonly value: string;
  readonly source: string;
  readonly file: string;
}

/** The block merged over every settings file: booleans from the highest file that sets them, lists joined. */
export interface SandboxSettings {
  /** Unset when no file says: Gatehouse then enables the sandbox where the platform supports it. */
  readonly enabled?: boolean;
  /** The file that set `enabled`, for `hooks check`. */
  readonly enabledFrom?: string;
  readonly failIfUnavailable: boolean;
  /** Unset when no file says (see `autoAllowsBash`). */
  readonly autoAllowBashIfSandboxed?: boolean;
  readonly excludedCommands: readonly string[];
  readonly allowUnsandboxedCommands: boolean;
  readonly bwrapPath?: string;
  readonly socatPath?: string;
  readonly filesystem: {
    readonly allowWrite: readonly string[];
    readonly denyWrite: readonly string[];
    readonly denyRead: readonly string[];
    readonly allowRead: readonly string[];
  };
  readonly network: {
    readonly allowedDomains: readonly string[];
    readonly deniedDomains: readonly string[];
    readonly allowUnixSockets: readonly string[];
    readonly allowAllUnixSockets: boolean;
    readonly allowLocalBinding: boolean;
    readonly allowManagedDomainsOnly: boolean;
  };
}

export const DEFAULT_SANDBOX_SETTINGS: SandboxSettings = {
  failIfUnavailable: false,
  excludedCommands: [],
  allowUnsandboxedCommands: true,
  filesystem: { allowWrite: [], denyWrite: [], denyRead: [], allowRead: [] },
  network: {
    allowedDomains: [],
    deniedDomains: [],
    allowUnixSockets: [],
    allowAllUnixSockets: false,
    allowLocalBinding: false,
    allowManagedDomainsOnly: false,
  },
};

/**
 * Claude Code's auto-allow default is true, but Claude Code sandboxes only when a file says
 * `enabled: true`. Gatehouse sandboxes by default too; there, Bash keeps asking as it always did
 * unless a file says `autoAllowBashIfSandboxed: true`.
 */
export function autoAllowsBash(settings: SandboxSettings): boolean {
  return settings.autoAllowBashIfSandboxed ?? settings.enabled === true;
}

/** One settings file's root, as the permission loader read it. */
export interface SandboxSource {
  readonly source: string;
  readonly file: string;
  /** `./p` and bare paths: the project for project files, `~/.claude` for user settings (as Claude Code). */
  readonly baseDir: string;
  readonly root: unknown;
}

type Diag = (path: (string | number)[], message: string) => void;

/**
 * Reads and merges the `sandbox` block of every source, in precedence order (lowest first:
 * user, project, local, --settings, managed). Problems are reported through `diag` with the
 * file and JSON path; a file with a problem contributes nothing.
 */
export function mergeSandboxSettings(
  sources: readonly SandboxSource[],
  diagFor: (src: SandboxSource) => Diag,
  homeDir = homedir(),
): SandboxSettings {
  const parsed: { src: SandboxSource; block: SandboxBlock }[] = [];
  for (const src of sources) {
    if (typeof src.root !== "object" || src.root === null || !("sandbox" in src.root)) continue;
    const raw = (src.root as { sandbox: unknown }).sandbox;
    const diag = diagFor(src);
    const result = SandboxBlockSchema.safeParse(raw);
    if (!result.success) {
      for (const issue of result.error.issues) {
        const path = ["sandbox", ...issue.path.map((p) => (typeof p === "symbol" ? String(p) : p))];
        if (issue.code === "unrecognized_keys")
          for (const key of issue.keys)
            diag([...path, key], "is not a sandbox setting Gatehouse honours (docs/configuration.md#sandbox)");
        else diag(path, issue.message);
      }
      continue;
    }
    if (src.source !== "managed") {
      const misplaced = MANAGED_ONLY.filter((keys) => valueAt(result.data, keys) !== undefined);
      for (const keys of misplaced) diag(["sandbox", ...keys], "may be set in managed settings only");
      if (misplaced.length > 0) continue;
    }
    parsed.push({ src, block: result.data });
  }
  const managedReadOnly = parsed.some((p) => p.block.filesystem?.allowManagedReadPathsOnly === true);
  const managedDomainsOnly = parsed.some((p) => p.block.network?.allowManagedDomainsOnly === true);
  let settings: SandboxSettings = DEFAULT_SANDBOX_SETTINGS;
  const fs = {
    allowWrite: [] as string[],
    denyWrite: [] as string[],
    denyRead: [] as string[],
    allowRead: [] as string[],
  };
  const net = {
    allowedDomains: [] as string[],
    deniedDomains: [] as string[],
    allowUnixSockets: [] as string[],
    allowAllUnixSockets: false,
    allowLocalBinding: false,
  };
  const excluded: string[] = [];
  for (const { src, block } of parsed) {
    const at = (p: string) => sandboxPath(p, src, homeDir);
    const last = <K extends keyof SandboxSettings>(key: K, value: SandboxSettings[K] | undefined) => {
      if (value !== undefined) settings = { ...settings, [key]: value };
    };
    if (block.enabled !== undefined) settings = { ...settings, enabled: block.enabled, enabledFrom: src.file };
    last("failIfUnavailable", block.failIfUnavailable);
    last("autoAllowBashIfSandboxed", block.autoAllowBashIfSandboxed);
    last("allowUnsandboxedCommands", block.allowUnsandboxedCommands);
    last("bwrapPath", block.bwrapPath);
    last("socatPath", block.socatPath);
    excluded.push(...(block.excludedCommands ?? []));
    fs.allowWrite.push(...(block.filesystem?.allowWrite ?? []).map(at));
    fs.denyWrite.push(...(block.filesystem?.denyWrite ?? []).map(at));
    fs.denyRead.push(...(block.filesystem?.denyRead ?? []).map(at));
    if (!managedReadOnly || src.source === "managed") fs.allowRead.push(...(block.filesystem?.allowRead ?? []).map(at));
    if (!managedDomainsOnly || src.source === "managed")
      net.allowedDomains.push(...(block.network?.allowedDomains ?? []));
    net.deniedDomains.push(...(block.network?.deniedDomains ?? []));
    net.allowUnixSockets.push(...(block.network?.allowUnixSockets ?? []).map(at));
    net.allowAllUnixSockets = block.network?.allowAllUnixSockets ?? net.allowAllUnixSockets;
    net.allowLocalBinding = block.network?.allowLocalBinding ?? net.allowLocalBinding;
  }
  return {
    ...settings,
    excludedCommands: excluded,
    filesystem: fs,
    network: { ...net, allowManagedDomainsOnly: managedDomainsOnly },
  };
}

function valueAt(block: SandboxBlock, keys: readonly string[]): unknown {
  let v: unknown = block;
  for (const k of keys) v = typeof v === "object" && v !== null ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}

/**
 * Claude Code's sandbox path prefixes: `/` absolute, `~/` the home folder, `./` or none relative
 * to the project for project settings and to `~/.claude` for user settings. (Unlike `Read(…)`
 * rules, where `//` is absolute.)
 */
export function sandboxPath(entry: string, src: Pick<SandboxSource, "source" | "baseDir">, homeDir: string): string {
  if (entry === "~") return homeDir;
  if (entry.startsWith("~/")) return join(homeDir, entry.slice(2));
  if (isAbsolute(entry)) return entry;
  const base = src.source === "user" ? join(homeDir, ".claude") : src.baseDir;
  return resolve(base, entry);
}
