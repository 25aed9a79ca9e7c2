import { homedir } from "node:os";
import { isAbsolute, posix, relative, resolve } from "node:path";
import { lazyRequire } from "../core/lazy-require.js";
import { readCommandLine } from "../permissions/shell.js";
import type { SandboxPolicy } from "./policy.js";

/**
 * What a sandbox refusal is recorded as (docs/security.md#sandbox): its kind only. The path or
 * host it was about is what the command wrote or reached for, so it is never kept.
 */
export type SandboxRefusalKind = "network" | "filesystem";

const picomatch = lazyRequire<typeof import("picomatch")>("picomatch");

/** What the sandbox lets every command write besides the policy's folders and its temp folder. */
const ALWAYS_WRITABLE = ["/dev", "/proc"];

/** Whether `path` is `root` or under it. */
function isAtOrUnder(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/** Whether `path` is one of `entries` or under one (an entry may be a glob: `**\/.env`). */
function listed(path: string, entries: readonly string[]): boolean {
  return entries.some((entry) => namedAncestor(path, entry) !== undefined);
}

/**
 * A write the runtime's violation monitor saw (`deny <syscall> <path>`), judged by this command's
 * own policy: the monitor's lists are fixed when the runtime starts, so it reports writes this
 * command was allowed to make too. A write is refused outside every writable folder, or inside a
 * `denyWrite` one.
 */
export function writeRefused(policy: SandboxPolicy, violationLine: string, tmpDir: string): boolean {
  const match = /^deny (?!network)\S+ (\/.*)$/.exec(violationLine);
  if (!match) return false;
  const path = posix.normalize(match[1] as string);
  const fs = policy.filesystem;
  if (listed(path, fs.denyWrite)) return true;
  return !listed(path, [...fs.allowWrite, tmpDir, ...ALWAYS_WRITABLE]);
}

/**
 * Whether a command line names a file the sandbox makes unreadable: a word of one of its commands
 * that, as a path from `cwd`, is at or under a read-denied entry (and not re-opened by
 * `allowRead`). The runtime cannot observe a refused read on Linux (the file is a bind of an
 * unreadable stand-in), so the line is read instead; a read it cannot see in the words (a program
 * opening the file itself, `< file`) is still refused, just not recorded.
 */
export function readsDenied(command: string, cwd: string, policy: SandboxPolicy): boolean {
  const fs = policy.filesystem;
  if (fs.denyRead.length === 0) return false;
  const words = readCommandLine(command).commands.flatMap((c) => c.argv.slice(1));
  return words.some((word) => {
    if (word === "" || word.startsWith("-")) return false;
    const path = word === "~" || word.startsWith("~/") ? `${homedir()}${word.slice(1)}` : resolve(cwd, word);
    return readDenied(path, fs);
  });
}

/**
 * Whether the sandbox makes an absolute path unreadable: at or under a `denyRead` entry (the
 * credential files and `Read(…)` deny rules among them) and not re-opened by `allowRead`. As in
 * Claude Code (sandboxing.md) and its runtime, the more specific entry wins: an `allowRead` inside
 * a denied folder (or naming the denied file) re-opens it, a wider one does not (`allowRead: ["."]`
 * leaves `.env` and `.gatehouse/` shut). The one answer for every read the sandbox's rules govern:
 * a sandboxed command's words, an agent hook's reads.
 */
export function readDenied(path: string, fs: SandboxPolicy["filesystem"]): boolean {
  const reopened = (denied: string) =>
    fs.allowRead.some((entry) => {
      const allowed = namedAncestor(path, entry);
      return allowed !== undefined && isAtOrUnder(allowed, denied);
    });
  return fs.denyRead.some((entry) => {
    const denied = namedAncestor(path, entry);
    return denied !== undefined && !reopened(denied);
  });
}

/** The file or folder an entry names that `path` is or is under (a glob: the first ancestor it matches). */
function namedAncestor(path: string, entry: string): string | undefined {
  if (!/[*?[\]{}]/.test(entry)) return isAtOrUnder(path, entry) ? entry : undefined;
  const parts = path.split("/");
  for (let n = 2; n <= parts.length; n++) {
    const ancestor = parts.slice(0, n).join("/");
    if (picomatch().isMatch(ancestor, entry, { dot: true })) return ancestor;
  }
  return undefined;
}
