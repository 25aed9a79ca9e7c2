import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { lstatSync, mkdirSync, readFileSync, realpathSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { parseJsonText } from "../core/json.js";
import { type HeldSetting, untrustedGatehouseConfig, untrustedProjectSettings } from "../core/workspace-trust.js";
import { CONFIG_FILE } from "./load.js";

/**
 * Workspace trust (docs/trust.md): whether the settings files a project brings may loosen the
 * policy. Trust is recorded per project, by the SHA-256 of what those files loosen, in the
 * user's `trusted-projects.json` (as Codex records trusted projects in its user config); any
 * change to it, a file or key added or removed included, makes the project untrusted again.
 */

/** Set to 1 (or true, yes) to trust the project for one process, as `gatehouse trust --yes` does for good. */
export const TRUST_ENV = "GATEHOUSE_TRUST_WORKSPACE";

type Env = Readonly<Record<string, string | undefined>>;

export interface TrustInput {
  /** The project directory (where `.claude/` and gatehouse.json are read). */
  readonly projectDir: string;
  readonly homeDir: string;
  /** Read for `GATEHOUSE_TRUST_WORKSPACE` and `XDG_CONFIG_HOME`. */
  readonly env: Env;
  /**
   * The gatehouse.json read, when it was found in the project (`<projectDir>/gatehouse.json`).
   * One named by `--config` or `GATEHOUSE_CONFIG` is the operator's choice and needs no trust.
   */
  readonly projectConfigFile?: string;
}

/** One project file whose loosening settings wait for trust, with what they would loosen. */
export interface GatedFile {
  /** Absolute path. */
  readonly file: string;
  /** Relative to the project, for messages. */
  readonly name: string;
  readonly held: readonly HeldSetting[];
}

export interface WorkspaceTrust {
  /** True when the project's loosening settings apply. */
  readonly trusted: boolean;
  /**
   * Why: `env` (GATEHOUSE_TRUST_WORKSPACE), `recorded` (this content was trusted), `home` (the
   * project is the home directory, whose settings are the user's own), `nothing` (no file
   * loosens anything), `changed` (trusted once, the files changed since), `never`.
   */
  readonly reason: "env" | "recorded" | "home" | "nothing" | "changed" | "never";
  /** The key trust is recorded under: the project directory, symlinks resolved. */
  readonly key: string;
  /** SHA-256 of the trust-gated files as they are now. */
  readonly fingerprint: string;
  /** Every trust-gated path, whether it exists or not (the loaders gate these). */
  readonly paths: readonly string[];
  /** The trust-gated files that exist, each with what it loosens. */
  readonly files: readonly GatedFile[];
  /** The user's file trust is recorded in. */
  readonly store: string;
}

/** `$XDG_CONFIG_HOME/gatehouse/trusted-projects.json`, else `~/.config/gatehouse/trusted-projects.json`. */
export function trustStoreFile(env: Env, homeDir: string): string {
  const base = env.XDG_CONFIG_HOME?.trim() ? (env.XDG_CONFIG_HOME as string) : join(homeDir, ".config");
  return join(base, "gatehouse", "trusted-projects.json");
}

/** Whether the project's loosening settings apply, and what they are. Reads files; never writes. */
export function workspaceTrust(input: TrustInput): WorkspaceTrust {
  const key = realpathOr(input.projectDir);
  const paths = trustGatedPaths(input);
  const files = gatedFiles(paths, input);
  const fingerprint = fingerprintOf(files, key);
  const store = trustStoreFile(input.env, input.homeDir);
  const base = { key, fingerprint, paths, files, store };
  if (/^(1|true|yes)$/i.test(input.env[TRUST_ENV]?.trim() ?? "")) return { ...base, trusted: true, reason: "env" };
  if (key === realpathOr(input.homeDir)) return { ...base, trusted: true, reason: "home" };
  if (files.every((f) => f.held.length === 0)) return { ...base, trusted: true, reason: "nothing" };
  const recorded = readStore(store)[key];
  if (recorded?.sha256 === fingerprint) return { ...base, trusted: true, reason: "recorded" };
  return { ...base, trusted: false, reason: recorded === undefined ? "never" : "changed" };
}

/** Records the project's files as they are now as trusted. Returns the store file. */
export function recordTrust(trust: Pick<WorkspaceTrust, "key" | "fingerprint" | "files" | "store">): string {
  const projects = readStore(trust.store, true);
  projects[trust.key] = {
    sha256: trust.fingerprint,
    files: trust.files.filter((f) => f.held.length > 0).map((f) => f.name),
    trustedAt: new Date().toISOString(),
  };
  mkdirSync(dirname(trust.store), { recursive: true, mode: 0o700 });
  // Written whole and renamed, so a concurrent reader never sees half a file.
  const temp = `${trust.store}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify({ version: 1, projects }, null, 2)}\n`, { mode: 0o600 });
  renameSync(temp, trust.store);
  return trust.store;
}

/** The loosening settings of an untrusted project, one item per key: `.claude/settings.json permissions.allow`. */
export function heldSummary(trust: Pick<WorkspaceTrust, "files">): string[] {
  return trust.files.flatMap((f) => f.held.map((h) => `${f.name} ${h.key}`));
}

/** The one line `run`, `chat` and `serve` print in a project not trusted: what waits, and how to trust it. */
export function untrustedNotice(trust: Pick<WorkspaceTrust, "files" | "reason">): string {
  const why =
    trust.reason === "changed" ? "the project's settings changed since it was trusted" : "this project is not trusted";
  return `${why}: ignoring ${heldSummary(trust).join(", ")}; \`gatehouse trust\` shows and trusts them (or set ${TRUST_ENV}=1)`;
}

/**
 * The project's files whose loosening keys wait for trust: `.claude/settings.json`;
 * `.claude/settings.local.json` when the repository supplies it (tracked by git, or `.claude`
 * is a symlink), as Claude Code decides; gatehouse.json found in the project.
 */
function trustGatedPaths(input: Pick<TrustInput, "projectDir" | "projectConfigFile">): string[] {
  const claude = join(input.projectDir, ".claude");
  const paths = [join(claude, "settings.json")];
  if (localSettingsFromRepository(input.projectDir)) paths.push(join(claude, "settings.local.json"));
  if (input.projectConfigFile !== undefined) paths.push(input.projectConfigFile);
  return paths;
}

function gatedFiles(paths: readonly string[], input: TrustInput): GatedFile[] {
  return paths.flatMap((file): GatedFile[] => {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      return [];
    }
    const parsed = parseJsonText(text);
    // A file that does not parse is reported by its loader; it loosens nothing.
    const root = parsed.ok ? parsed.value : undefined;
    const { held } =
      file === input.projectConfigFile
        ? untrustedGatehouseConfig(typeof root === "object" && root !== null ? root : {})
        : untrustedProjectSettings(root);
    return [{ file, name: nameIn(input.projectDir, file), held }];
  });
}

/** The project's gatehouse.json when `loadConfig` found it there (not named by a flag or the environment). */
export function projectConfigFile(projectDir: string, file: string | undefined, named: boolean): string | undefined {
  return file !== undefined && !named && file === join(projectDir, CONFIG_FILE) ? file : undefined;
}

/**
 * Claude Code holds `.claude/settings.local.json` like project settings when git tracks it or
 * `.claude` is a symlink. git runs with its file-system monitor off: a repository's own config
 * must not get to run a command before it is trusted. Without git, the file is the user's.
 */
function localSettingsFromRepository(projectDir: string): boolean {
  try {
    if (lstatSync(join(projectDir, ".claude")).isSymbolicLink()) return true;
  } catch {
    return false;
  }
  try {
    execFileSync(
      "git",
      ["-c", "core.fsmonitor=false", "ls-files", "--error-unmatch", "--", ".claude/settings.local.json"],
      { cwd: projectDir, stdio: "ignore", timeout: 5000 },
    );
    return true;
  } catch {
    return false;
  }
}

/**
 * Over what each file would loosen (its name in the project, each held key and its whole value):
 * editing a deny rule, a hook or the model does not ask again; any change to what loosens does.
 */
function fingerprintOf(files: readonly GatedFile[], key: string): string {
  const hash = createHash("sha256").update(`gatehouse-trust-v1\0${key}\0`);
  for (const file of files) {
    if (file.held.length === 0) continue;
    hash.update(`${file.name}\0${file.held.length}\0`);
    for (const held of file.held) hash.update(`${held.key}\0${held.json.length}\0${held.json}\0`);
  }
  return hash.digest("hex");
}

interface Recorded {
  readonly sha256: string;
  readonly files: readonly string[];
  readonly trustedAt: string;
}

/**
 * The recorded projects. A missing file trusts nothing; so does one that cannot be read, and
 * before writing (`strict`) that is an error: other projects' trust is not overwritten.
 */
function readStore(store: string, strict = false): Record<string, Recorded> {
  let text: string;
  try {
    text = readFileSync(store, "utf8");
  } catch (error) {
    if (strict && (error as NodeJS.ErrnoException).code !== "ENOENT")
      throw new Error(`${store}: cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
    return {};
  }
  const parsed = parseJsonText(text);
  const projects = parsed.ok && isObject(parsed.value) ? parsed.value.projects : undefined;
  if (isObject(projects)) return { ...(projects as Record<string, Recorded>) };
  if (strict) throw new Error(`${store}: expected a JSON object { "version": 1, "projects": { … } }; fix or remove it`);
  return {};
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function nameIn(projectDir: string, file: string): string {
  return file.startsWith(`${projectDir}/`) ? file.slice(projectDir.length + 1) : file;
}

function realpathOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
