import { homedir } from "node:os";
import { basename, isAbsolute, relative, resolve, sep } from "node:path";
import { type CommandLine, readCommandLine, type ShellCommand } from "./shell.js";

/**
 * Claude Code's built-in read-only Bash commands, which run without asking in every mode, and
 * the filesystem commands `acceptEdits` approves (docs/permissions.md, "Read-only commands";
 * Claude Code's permissions.md and permission-modes.md). Decided from the shell reader's
 * commands: a line qualifies only when every command in it does, and only when it can be read.
 */

/** Commands that only read, as Claude Code lists them; `git` only in the forms of READ_ONLY_GIT. */
export const READ_ONLY_COMMANDS: readonly string[] = [
  "ls",
  "cat",
  "echo",
  "pwd",
  "head",
  "tail",
  "grep",
  "find",
  "wc",
  "which",
  "diff",
  "stat",
  "du",
  "cd",
  "git",
];

/** The filesystem commands `acceptEdits` approves on paths inside the working directories. */
export const ACCEPT_EDITS_COMMANDS: readonly string[] = ["mkdir", "touch", "rm", "rmdir", "mv", "cp", "sed"];

/** Commands with a flag that writes or runs something: an unquoted glob could expand to it (`-delete`). */
const WRITE_CAPABLE_FLAGS = new Set(["find", "git", "sed"]);
/** Whose words are not paths. */
const NO_PATHS = new Set(["echo", "pwd", "which"]);
/** `find` actions that run, delete or write. */
const FIND_ACTIONS = /^-(?:exec|execdir|ok|okdir|delete|fprint|fprint0|fprintf|fls)$/;
/** git subcommands that only read. */
const READ_ONLY_GIT = new Set([
  "status",
  "log",
  "diff",
  "show",
  "rev-parse",
  "ls-files",
  "ls-tree",
  "blame",
  "describe",
  "shortlog",
  "grep",
  "rev-list",
  "merge-base",
  "cat-file",
]);
/** git subcommands that only list when given nothing but these flags. */
const LISTING_GIT: Readonly<Record<string, ReadonlySet<string>>> = {
  branch: new Set(["-a", "-r", "-v", "-vv", "-l", "--list", "--all", "--remotes", "--verbose", "--show-current"]),
  tag: new Set(["-l", "--list"]),
  remote: new Set(["-v", "--verbose"]),
};
/** git flags that write a file or run a program. */
const GIT_WRITING_FLAG = /^--(?:output|ext-diff|exec|upload-pack|receive-pack)(?:=|$)/;
/** Assignments that change nothing a command does beyond its output's look (Claude Code's "safe" variables). */
const SAFE_ASSIGNMENT = /^(?:LANG|LANGUAGE|LC_[A-Z]+|NO_COLOR|FORCE_COLOR|TZ|TERM|COLUMNS|LINES|CLICOLOR)=/;

/** Directories and files whose writes are never approved by a mode (Claude Code's protected paths). */
const PROTECTED_DIRS = [
  ".git",
  ".config/git",
  ".vscode",
  ".idea",
  ".husky",
  ".cargo",
  ".devcontainer",
  ".yarn",
  ".mvn",
];
const PROTECTED_FILES = new Set([
  ".gitconfig",
  ".gitmodules",
  ".bashrc",
  ".bash_profile",
  ".bash_login",
  ".bash_aliases",
  ".bash_logout",
  ".zshrc",
  ".zprofile",
  ".zshenv",
  ".zlogin",
  ".zlogout",
  ".profile",
  ".envrc",
  ".npmrc",
  ".yarnrc",
  ".yarnrc.yml",
  ".pnp.cjs",
  ".pnp.loader.mjs",
  ".pnpmfile.cjs",
  "bunfig.toml",
  ".bunfig.toml",
  ".bazelrc",
  ".bazelversion",
  ".bazeliskrc",
  ".pre-commit-config.yaml",
  "lefthook.yml",
  "lefthook.yaml",
  ".lefthook.yml",
  ".lefthook.yaml",
  "gradle-wrapper.properties",
  "maven-wrapper.properties",
  ".devcontainer.json",
  ".ripgreprc",
  "pyrightconfig.json",
  ".mcp.json",
  ".claude.json",
]);

/** Where a line runs: the working directory first, then the additional ones. */
export interface WorkDirs {
  readonly cwd: string;
  readonly dirs: readonly string[];
}

/** What a line is auto-allowed as, if anything. */
export type AutoAllowed = "read-only" | "accept-edits";

/**
 * Whether a Bash line runs without asking: `read-only` when every command is read-only (in every
 * mode), `accept-edits` when in `acceptEdits` every command is read-only or a filesystem command
 * on paths inside the working directories, none protected.
 */
export function autoAllowed(command: string, where: WorkDirs, acceptEdits: boolean): AutoAllowed | undefined {
  const line = readCommandLine(command);
  if (line.unreadable !== undefined || line.commands.length === 0) return undefined;
  let edits = false;
  for (const c of line.commands) {
    if (readOnly(c, where) && c.writeTargets.length === 0) continue;
    if (!acceptEdits || !editAllowed(c, where)) return undefined;
    edits = true;
  }
  // `cd` into another folder next to `git` (its hooks may run) or next to a write (its paths are
  // checked against the working directory, not the folder it runs in) asks.
  if (movesAway(line, where) && (edits || line.commands.some((c) => c.argv[0] === "git"))) return undefined;
  return edits ? "accept-edits" : "read-only";
}

function movesAway(line: CommandLine, where: WorkDirs): boolean {
  return line.commands.some((c) => c.argv[0] === "cd" && resolve(where.cwd, c.argv[1] ?? "~") !== where.cwd);
}

function readOnly(c: ShellCommand, where: WorkDirs): boolean {
  const [name, ...args] = c.argv;
  if (name === undefined || !c.literal || !c.assignments.every((a) => SAFE_ASSIGNMENT.test(a))) return false;
  if (!READ_ONLY_COMMANDS.includes(name)) return false;
  if (c.glob && WRITE_CAPABLE_FLAGS.has(name)) return false;
  if (name === "find" && args.some((a) => FIND_ACTIONS.test(a))) return false;
  if (name === "git") return readOnlyGit(args);
  if (name === "cd") return args.length === 1 && inside(args[0] as string, where, true);
  if (NO_PATHS.has(name)) return true;
  return pathArguments(name, args).every((p) => inside(p, where, true));
}

function readOnlyGit(args: readonly string[]): boolean {
  let i = 0;
  while (args[i] === "--no-pager") i++;
  const sub = args[i];
  const rest = args.slice(i + 1);
  if (sub === undefined) return false;
  if (rest.some((a) => GIT_WRITING_FLAG.test(a))) return false;
  if (READ_ONLY_GIT.has(sub)) return true;
  const listing = LISTING_GIT[sub];
  return listing !== undefined && rest.every((a) => listing.has(a));
}

/** The words of a command that name files: every word not a flag (grep's first is its pattern). */
function pathArguments(name: string, args: readonly string[]): string[] {
  const words = args.filter((a) => !a.startsWith("-") || a === "-");
  const patternGiven = args.some((a) => /^-(?:[a-zA-Z]*[ef]|-regexp|-file)/.test(a));
  return name === "grep" && !patternGiven ? words.slice(1) : words;
}

function editAllowed(c: ShellCommand, where: WorkDirs): boolean {
  const [name, ...args] = c.argv;
  if (name === undefined || !c.literal || c.glob || !c.assignments.every((a) => SAFE_ASSIGNMENT.test(a))) return false;
  if (!(readOnly(c, where) || ACCEPT_EDITS_COMMANDS.includes(name))) return false;
  if (name === "sed" && !simpleSed(args)) return false;
  const paths = readOnly(c, where) ? [] : name === "sed" ? sedFiles(args) : pathArguments(name, args);
  return [...paths, ...c.writeTargets].every((p) => inside(p, where, false) && !isProtected(p, where));
}

/** `sed [-i] [-n] [-E] 's/a/b/g' files…`: only substitutions, which neither run (`e`) nor write (`w`) anything. */
function simpleSed(args: readonly string[]): boolean {
  const script = args.filter((a) => !a.startsWith("-"))[0];
  const flags = args.filter((a) => a.startsWith("-"));
  if (!flags.every((f) => /^-(?:[inErs]+|i\.?\w*|-in-place|-regexp-extended|-quiet|-silent)$/.test(f))) return false;
  return script !== undefined && /^s(.)(?:(?!\1)[^\\]|\\.)*\1(?:(?!\1)[^\\]|\\.)*\1[gpiI0-9]*$/s.test(script);
}

function sedFiles(args: readonly string[]): string[] {
  return args.filter((a) => !a.startsWith("-")).slice(1);
}

/**
 * Inside a working directory (`reading`: the directory itself counts). A `~` path is the home
 * folder's, so inside only when the home folder is.
 */
function inside(path: string, where: WorkDirs, reading: boolean): boolean {
  const absolute = path === "~" || path.startsWith("~/") ? `${homedir()}${path.slice(1)}` : resolve(where.cwd, path);
  return where.dirs.some((dir) => {
    const rel = relative(dir, absolute);
    if (rel === "") return reading;
    return !rel.startsWith("..") && !isAbsolute(rel);
  });
}

function isProtected(path: string, where: WorkDirs): boolean {
  const absolute = resolve(where.cwd, path);
  if (PROTECTED_FILES.has(basename(absolute))) return true;
  return where.dirs.some((dir) => {
    const rel = relative(dir, absolute).split(sep).join("/");
    if (rel.startsWith("..")) return false;
    if (rel === ".claude" || (rel.startsWith(".claude/") && !rel.startsWith(".claude/worktrees/"))) return true;
    return PROTECTED_DIRS.some((p) => rel === p || rel.startsWith(`${p}/`) || rel.includes(`/${p}/`));
  });
}
