import path from "node:path";
import { z } from "zod";
import { type Tool, ToolError } from "../types.js";
import { resolvePath } from "./fs-util.js";
import { byMtimeDesc, defaultIgnores, mtimes, statSearchRoot, tinyglobby } from "./search-root.js";

export const GlobInputSchema = z.object({
  pattern: z.string().min(1).describe('The glob pattern to match files against, e.g. "**/*.ts" or "src/**/*.{js,jsx}"'),
  path: z.string().optional().describe("The directory to search in; defaults to the project directory"),
});
export type GlobInput = z.infer<typeof GlobInputSchema>;

/** Claude Code's Glob result; `filenames` are absolute, newest first. */
export interface GlobOutput {
  readonly durationMs: number;
  readonly numFiles: number;
  readonly filenames: readonly string[];
  readonly truncated: boolean;
}

export interface GlobOptions {
  readonly maxResults?: number;
}

export function createGlobTool(options: GlobOptions = {}): Tool<GlobInput, GlobOutput> {
  const maxResults = options.maxResults ?? 100;
  return {
    name: "Glob",
    description:
      'Finds files by glob pattern (e.g. "**/*.js", "src/**/*.ts"). Returns matching file paths sorted by ' +
      `modification time, newest first, at most ${maxResults}. Hidden files are included; .git and node_modules ` +
      "are skipped unless the pattern names them.",
    inputSchema: GlobInputSchema,
    parallel: true,
    normalizeInput: (input, ctx) =>
      input.path === undefined ? input : { ...input, path: resolvePath(input.path, ctx.cwd) },
    async execute(input, ctx) {
      const started = performance.now();
      const root = resolvePath(input.path ?? ".", ctx.cwd);
      if (!(await statSearchRoot(root)).isDirectory) throw new ToolError(`${root} is not a directory`);
      const { base, pattern } = splitPattern(input.pattern, root);
      const found = await tinyglobby().glob(pattern, {
        cwd: base,
        absolute: true,
        dot: true,
        onlyFiles: true,
        expandDirectories: false,
        followSymbolicLinks: false,
        ignore: defaultIgnores([input.pattern]),
        signal: ctx.signal,
      });
      const listed = ctx.readable ? found.filter(ctx.readable) : found;
      const times = await mtimes(listed);
      const sorted = [...listed].sort(byMtimeDesc(times));
      const filenames = sorted.slice(0, maxResults);
      return {
        durationMs: Math.round(performance.now() - started),
        numFiles: filenames.length,
        filenames,
        truncated: sorted.length > maxResults,
      };
    },
    toModelOutput(output) {
      if (output.numFiles === 0) return "No files found";
      const note = output.truncated ? "\n(Results are truncated. Consider using a more specific path or pattern.)" : "";
      return output.filenames.join("\n") + note;
    },
  };
}

/**
 * An absolute pattern is split at its first dynamic segment, so the crawl starts there rather
 * than at the search root (globbing outside `cwd` is slow in tinyglobby and misses files).
 */
export function splitPattern(pattern: string, root: string): { base: string; pattern: string } {
  if (!path.isAbsolute(pattern)) return { base: root, pattern };
  const { escapePath, isDynamicPattern } = tinyglobby();
  const segments = pattern.split("/");
  const firstDynamic = segments.findIndex((s) => isDynamicPattern(s));
  if (firstDynamic === -1) return { base: path.dirname(pattern), pattern: escapePath(path.basename(pattern)) };
  return { base: segments.slice(0, firstDynamic).join("/") || "/", pattern: segments.slice(firstDynamic).join("/") };
}
