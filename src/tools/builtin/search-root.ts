import { stat } from "node:fs/promises";
import { lazyRequire } from "../../core/lazy-require.js";
import { ToolError } from "../types.js";

/** The file-search libraries, loaded when Glob or Grep first runs: most runs never search. */
export const tinyglobby = lazyRequire<typeof import("tinyglobby")>("tinyglobby");
export const picomatch = lazyRequire<typeof import("picomatch")>("picomatch");

/** Directories no search wants to descend into unless asked to by name. */
export const DEFAULT_IGNORED_DIRS = [".git", ".svn", ".hg", ".bzr", "node_modules"] as const;

/** Ignore globs for the default directories that `patterns` do not name explicitly. */
export function defaultIgnores(patterns: readonly string[]): string[] {
  const named = new Set(patterns.flatMap((p) => p.split("/")));
  return DEFAULT_IGNORED_DIRS.filter((dir) => !named.has(dir)).map((dir) => `**/${dir}/**`);
}

/** Stats a search root, turning a missing path into the error the model should read. */
export async function statSearchRoot(root: string): Promise<{ isDirectory: boolean }> {
  try {
    const s = await stat(root);
    return { isDirectory: s.isDirectory() };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") throw new ToolError(`Path does not exist: ${root}`);
    throw new ToolError(`${root}: ${(err as Error).message}`, { cause: err });
  }
}

/** Modification times for sorting newest first; a file that vanished sorts last. */
export async function mtimes(files: readonly string[]): Promise<Map<string, number>> {
  const entries = await Promise.all(
    files.map(
      async (f) =>
        [
          f,
          await stat(f).then(
            (s) => s.mtimeMs,
            () => 0,
          ),
        ] as const,
    ),
  );
  return new Map(entries);
}

export function byMtimeDesc(times: Map<string, number>): (a: string, b: string) => number {
  return (a, b) => (times.get(b) ?? 0) - (times.get(a) ?? 0) || (a < b ? -1 : a > b ? 1 : 0);
}
