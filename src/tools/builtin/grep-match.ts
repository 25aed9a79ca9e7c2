import { readFile, stat } from "node:fs/promises";
import { ToolError } from "../types.js";
import { BINARY_SNIFF_BYTES, hasNulByte } from "./fs-util.js";

/** The matching lines of one file (0-based, ascending) and its lines for printing. */
export interface FileMatches {
  readonly file: string;
  readonly lines: readonly string[];
  readonly matchLines: readonly number[];
}

export interface Matcher {
  readonly multiline: boolean;
  readonly regex: RegExp;
}

/**
 * ripgrep's syntax is close to JS's with the `u` flag (\p{..} classes work), but `u` rejects some
 * escapes ripgrep accepts (`\-`, `\/`), so a pattern that only compiles without it still runs.
 */
export function compileMatcher(pattern: string, opts: { ignoreCase: boolean; multiline: boolean }): Matcher {
  // Multiline follows `rg -U --multiline-dotall`: `.` crosses newlines, ^ and $ anchor at lines.
  const flags = `${opts.ignoreCase ? "i" : ""}${opts.multiline ? "gms" : ""}`;
  for (const extra of ["u", ""]) {
    try {
      return { multiline: opts.multiline, regex: new RegExp(pattern, flags + extra) };
    } catch (err) {
      if (extra === "")
        throw new ToolError(`Invalid regular expression ${JSON.stringify(pattern)}: ${(err as Error).message}`);
    }
  }
  throw new Error("unreachable");
}

/** ripgrep's built-in type names mapped to the file globs they stand for (the common subset). */
export const FILE_TYPES: Readonly<Record<string, readonly string[]>> = {
  c: ["*.c", "*.h"],
  cpp: ["*.cpp", "*.cc", "*.cxx", "*.c++", "*.hpp", "*.hh", "*.hxx", "*.h", "*.inl"],
  cs: ["*.cs"],
  css: ["*.css", "*.scss", "*.sass", "*.less"],
  go: ["*.go"],
  html: ["*.html", "*.htm", "*.xhtml"],
  java: ["*.java"],
  js: ["*.js", "*.jsx", "*.mjs", "*.cjs", "*.vue"],
  json: ["*.json", "*.jsonl"],
  kotlin: ["*.kt", "*.kts"],
  lua: ["*.lua"],
  markdown: ["*.md", "*.markdown", "*.mdx"],
  md: ["*.md", "*.markdown", "*.mdx"],
  php: ["*.php"],
  py: ["*.py", "*.pyi"],
  python: ["*.py", "*.pyi"],
  rb: ["*.rb", "*.gemspec", "Gemfile", "Rakefile"],
  ruby: ["*.rb", "*.gemspec", "Gemfile", "Rakefile"],
  rust: ["*.rs"],
  sh: ["*.sh", "*.bash", "*.zsh", ".bashrc", ".zshrc", ".profile"],
  sql: ["*.sql"],
  swift: ["*.swift"],
  toml: ["*.toml"],
  ts: ["*.ts", "*.tsx", "*.mts", "*.cts"],
  typescript: ["*.ts", "*.tsx", "*.mts", "*.cts"],
  txt: ["*.txt"],
  xml: ["*.xml", "*.xsd", "*.xsl"],
  yaml: ["*.yaml", "*.yml"],
};

/**
 * Finds the matching lines of a file, or null when it has none or is skipped like ripgrep skips
 * it (binary: NUL in the first bytes) or is too large to hold in memory.
 */
export async function matchFile(file: string, matcher: Matcher, maxFileBytes: number): Promise<FileMatches | null> {
  let buf: Buffer;
  try {
    const info = await stat(file);
    if (!info.isFile() || info.size > maxFileBytes) return null; // a FIFO would block the read
    buf = await readFile(file);
  } catch {
    return null; // vanished or unreadable since the walk: not worth failing the whole search
  }
  if (hasNulByte(buf.subarray(0, BINARY_SNIFF_BYTES))) return null;
  const text = buf.toString("utf8").replace(/\r\n/g, "\n");
  const lines = text.split("\n");
  if (text.endsWith("\n")) lines.pop();
  const matchLines = matcher.multiline
    ? multilineMatches(text, matcher.regex).filter((i) => i < lines.length) // a match at EOF is on no line
    : lineMatches(lines, matcher.regex);
  return matchLines.length === 0 ? null : { file, lines, matchLines };
}

function lineMatches(lines: readonly string[], regex: RegExp): number[] {
  const found: number[] = [];
  lines.forEach((line, i) => {
    if (regex.test(line)) found.push(i);
  });
  return found;
}

/** Every line a match spans counts as matching, as in `rg -U`. */
function multilineMatches(text: string, regex: RegExp): number[] {
  const lineStarts = [0];
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) lineStarts.push(i + 1);
  const lineOf = (offset: number) => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((lineStarts[mid] ?? 0) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  const found = new Set<number>();
  regex.lastIndex = 0;
  for (const m of text.matchAll(regex)) {
    const start = m.index;
    const end = start + Math.max(m[0].length - 1, 0);
    for (let line = lineOf(start); line <= lineOf(end); line++) found.add(line);
  }
  return [...found].sort((a, b) => a - b);
}
