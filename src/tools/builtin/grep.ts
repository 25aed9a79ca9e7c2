import path from "node:path";
import { z } from "zod";
import { type Tool, ToolError } from "../types.js";
import { resolvePath } from "./fs-util.js";
import { compileMatcher, FILE_TYPES, type FileMatches, matchFile } from "./grep-match.js";
import { byMtimeDesc, defaultIgnores, mtimes, picomatch, statSearchRoot, tinyglobby } from "./search-root.js";

const count = () => z.number().int().nonnegative().optional();

export const GrepInputSchema = z.object({
  pattern: z.string().min(1).describe("The regular expression to search for in file contents"),
  path: z.string().optional().describe("File or directory to search in; defaults to the project directory"),
  glob: z.string().optional().describe('Glob to filter files, e.g. "*.js" or "*.{ts,tsx}"'),
  type: z.string().optional().describe('File type to search, e.g. "js", "py", "rust"'),
  output_mode: z
    .enum(["content", "files_with_matches", "count"])
    .optional()
    .describe('"content" shows matching lines, "files_with_matches" (default) file paths, "count" match counts'),
  "-B": count().describe('Lines to show before each match ("content" mode)'),
  "-A": count().describe('Lines to show after each match ("content" mode)'),
  "-C": count().describe('Lines to show before and after each match ("content" mode)'),
  "-n": z.boolean().optional().describe('Show line numbers ("content" mode, default true)'),
  "-i": z.boolean().optional().describe("Case insensitive search"),
  head_limit: count().describe("Show only the first N lines or entries (default 250; 0 for no limit)"),
  offset: count().describe("Skip the first N lines or entries before applying head_limit"),
  multiline: z.boolean().optional().describe("Let patterns span lines; `.` matches newlines (default false)"),
});
export type GrepInput = z.infer<typeof GrepInputSchema>;

/** Claude Code's Grep result. `filenames` (absolute) is filled in files_with_matches mode only. */
export interface GrepOutput {
  readonly mode: "content" | "files_with_matches" | "count";
  readonly numFiles: number;
  readonly filenames: readonly string[];
  readonly content?: string;
  readonly numLines?: number;
  readonly numMatches?: number;
  /** Present when head_limit cut the results. */
  readonly appliedLimit?: number;
  readonly appliedOffset?: number;
}

export interface GrepOptions {
  readonly defaultHeadLimit?: number;
  /** Larger files are skipped (JS regexes need the whole text in memory). */
  readonly maxFileBytes?: number;
  /** Longer lines print as a placeholder, like `rg --max-columns 500`. */
  readonly maxColumns?: number;
}

const CONCURRENCY = 16;

export function createGrepTool(options: GrepOptions = {}): Tool<GrepInput, GrepOutput> {
  const defaultHeadLimit = options.defaultHeadLimit ?? 250;
  const maxFileBytes = options.maxFileBytes ?? 10 * 1024 * 1024;
  const maxColumns = options.maxColumns ?? 500;
  return {
    name: "Grep",
    description:
      "Searches file contents with a regular expression (JavaScript syntax, close to ripgrep's). Filter files with " +
      'glob (e.g. "*.ts") or type (e.g. "py"). output_mode: "files_with_matches" (default, newest first), "content" ' +
      '(matching lines, with -n, -A, -B, -C) or "count". Binary files, .git and node_modules are skipped; ' +
      ".gitignore is not read.",
    inputSchema: GrepInputSchema,
    parallel: true,
    normalizeInput: (input, ctx) =>
      input.path === undefined ? input : { ...input, path: resolvePath(input.path, ctx.cwd) },
    async execute(input, ctx) {
      const root = resolvePath(input.path ?? ".", ctx.cwd);
      const mode = input.output_mode ?? "files_with_matches";
      const matcher = compileMatcher(input.pattern, {
        ignoreCase: input["-i"] ?? false,
        multiline: input.multiline ?? false,
      });
      const { isDirectory } = await statSearchRoot(root);
      const found = isDirectory ? await listFiles(root, input, ctx.signal) : [root];
      const files = ctx.readable ? found.filter(ctx.readable) : found;
      const results: FileMatches[] = [];
      for (let i = 0; i < files.length; i += CONCURRENCY) {
        ctx.signal.throwIfAborted();
        const batch = await Promise.all(
          files.slice(i, i + CONCURRENCY).map((f) => matchFile(f, matcher, maxFileBytes)),
        );
        for (const r of batch) if (r !== null) results.push(r);
      }
      const page = pager(input.head_limit ?? defaultHeadLimit, input.offset ?? 0);
      if (mode === "files_with_matches") {
        const matched = results.map((r) => r.file);
        const times = await mtimes(matched);
        const filenames = page.apply(matched.sort(byMtimeDesc(times)));
        return { mode, numFiles: filenames.length, filenames, ...page.report() };
      }
      const display = (file: string) => displayPath(file, ctx.cwd);
      if (mode === "count") {
        const shown = page.apply(results);
        const numMatches = shown.reduce((n, r) => n + r.matchLines.length, 0);
        const content = shown.map((r) => `${display(r.file)}:${r.matchLines.length}`).join("\n");
        return { mode, numFiles: shown.length, filenames: [], content, numMatches, ...page.report() };
      }
      const lines = formatContent(results, {
        before: input["-C"] ?? input["-B"] ?? 0,
        after: input["-C"] ?? input["-A"] ?? 0,
        lineNumbers: input["-n"] ?? true,
        withFilename: isDirectory,
        display,
        maxColumns,
      });
      const shown = page.apply(lines);
      return {
        mode,
        numFiles: results.length,
        filenames: [],
        content: shown.join("\n"),
        numLines: shown.length,
        ...page.report(),
      };
    },
    toModelOutput(output) {
      const more =
        output.appliedLimit === undefined
          ? ""
          : `\n(Results limited to ${output.appliedLimit}; use offset to see more.)`;
      if (output.mode === "files_with_matches") {
        if (output.numFiles === 0) return "No files found";
        return `Found ${output.numFiles} file${output.numFiles === 1 ? "" : "s"}\n${output.filenames.join("\n")}${more}`;
      }
      if (output.content === "") return "No matches found";
      if (output.mode === "count") {
        return `${output.content}\n\nFound ${output.numMatches} matching lines across ${output.numFiles} files${more}`;
      }
      return `${output.content}${more}`;
    },
  };
}

/**
 * ripgrep's --glob rules: a glob without "/" matches a file name at any depth, `!glob` excludes,
 * several globs may be given separated by spaces or commas (commas inside braces stay).
 */
async function listFiles(root: string, input: GrepInput, signal: AbortSignal): Promise<string[]> {
  const include: string[] = [];
  const exclude: string[] = [];
  for (const word of (input.glob ?? "").split(/\s+/).filter(Boolean)) {
    const parts = word.includes("{") && word.includes("}") ? [word] : word.split(",").filter(Boolean);
    for (const part of parts) {
      const negated = part.startsWith("!");
      const g = negated ? part.slice(1) : part;
      const anchored = g.includes("/") ? g.replace(/^\//, "") : `**/${g}`;
      (negated ? exclude : include).push(anchored);
    }
  }
  const found = await tinyglobby().glob(include.length > 0 ? include : ["**/*"], {
    cwd: root,
    absolute: true,
    dot: true,
    onlyFiles: true,
    expandDirectories: false,
    followSymbolicLinks: false,
    ignore: [...defaultIgnores(include), ...exclude],
    signal,
  });
  let files = found.sort();
  if (input.type !== undefined) {
    const globs = FILE_TYPES[input.type];
    if (globs === undefined) {
      throw new ToolError(`Unknown file type "${input.type}". Known types: ${Object.keys(FILE_TYPES).join(", ")}`);
    }
    const isType = picomatch()([...globs], { dot: true });
    files = files.filter((f) => isType(path.basename(f)));
  }
  return files;
}

function displayPath(file: string, cwd: string): string {
  const rel = path.relative(cwd, file);
  return rel === "" || rel.startsWith("..") || path.isAbsolute(rel) ? file : rel;
}

/** offset/head_limit over output lines or entries; 0 means no limit, as in Claude Code. */
function pager(limit: number, offset: number) {
  let cut = false;
  return {
    apply<T>(items: readonly T[]): T[] {
      const rest = items.slice(offset);
      cut = limit > 0 && rest.length > limit;
      return cut ? rest.slice(0, limit) : rest;
    },
    report(): { appliedLimit?: number; appliedOffset?: number } {
      return { ...(cut ? { appliedLimit: limit } : {}), ...(offset > 0 ? { appliedOffset: offset } : {}) };
    },
  };
}

interface ContentFormat {
  readonly before: number;
  readonly after: number;
  readonly lineNumbers: boolean;
  readonly withFilename: boolean;
  readonly display: (file: string) => string;
  readonly maxColumns: number;
}

/** ripgrep's layout: `file:line:text` for matches, `file-line-text` for context, `--` between groups. */
function formatContent(results: readonly FileMatches[], fmt: ContentFormat): string[] {
  const out: string[] = [];
  const withContext = fmt.before > 0 || fmt.after > 0;
  for (const r of results) {
    const matches = new Set(r.matchLines);
    const name = fmt.display(r.file);
    let last = -1;
    for (const m of r.matchLines) {
      const from = Math.max(m - fmt.before, last + 1);
      const to = Math.min(m + fmt.after, r.lines.length - 1);
      if (withContext && out.length > 0 && (last === -1 || from > last + 1)) out.push("--");
      for (let i = from; i <= to; i++) {
        const sep = matches.has(i) ? ":" : "-";
        const text = r.lines[i] ?? "";
        const shown =
          text.length > fmt.maxColumns ? `[Omitted long ${sep === ":" ? "matching" : "context"} line]` : text;
        out.push(`${fmt.withFilename ? name + sep : ""}${fmt.lineNumbers ? `${i + 1}${sep}` : ""}${shown}`);
      }
      last = Math.max(last, to);
    }
  }
  return out;
}
