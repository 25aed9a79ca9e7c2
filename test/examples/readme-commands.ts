// Reads the shell commands out of a README's ```sh blocks, so tests run exactly what the docs say.
import { cp, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, posix } from "node:path";
import { fileURLToPath } from "node:url";
import { type CliResult, gatehouse } from "../cli/helpers.js";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** One command line of a ```sh block. */
export interface ShellCommand {
  /** The line as written. */
  readonly line: string;
  /** `cd DIR && …` or `(cd DIR && …)`: the folder it runs in, relative to where the block starts. */
  readonly dir: string;
  /** The words of the command after any `cd … &&`. */
  readonly argv: readonly string[];
  /** The `# …` comment at the end of the line, if any. */
  readonly comment?: string;
  /** Index of the code block in the file, and the HTML comment right above it, if any. */
  readonly block: number;
  readonly note?: string;
}

/** A fenced code block, with the HTML comment right above it (`<!-- file: policy.ts -->`), if any. */
export interface CodeBlock {
  readonly index: number;
  readonly lang: string;
  readonly content: string;
  readonly note?: string;
}

/** Every fenced code block of a Markdown file, in order. */
export function codeBlocks(markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  let open: { lang: string; lines: string[]; note?: string } | undefined;
  let lastComment: string | undefined;
  for (const raw of markdown.split("\n")) {
    const fence = /^\s*```(\w*)/.exec(raw);
    if (fence && open) {
      blocks.push({
        index: blocks.length,
        lang: open.lang,
        content: `${open.lines.join("\n")}\n`,
        ...(open.note === undefined ? {} : { note: open.note }),
      });
      open = undefined;
      lastComment = undefined;
    } else if (fence) {
      open = { lang: fence[1] ?? "", lines: [], ...(lastComment === undefined ? {} : { note: lastComment }) };
    } else if (open) {
      open.lines.push(raw);
    } else {
      const comment = /^\s*<!--(.*)-->\s*$/.exec(raw);
      if (comment) lastComment = comment[1]?.trim();
      else if (raw.trim() !== "") lastComment = undefined;
    }
  }
  return blocks;
}

/** Every command line of every ```sh (or ```bash, ```shell) block, in order. */
export function shellCommands(markdown: string): ShellCommand[] {
  const commands: ShellCommand[] = [];
  for (const block of codeBlocks(markdown)) {
    if (!["sh", "bash", "shell"].includes(block.lang)) continue;
    for (const raw of block.content.split("\n")) {
      const { code: line, comment } = splitComment(raw.trim());
      if (line === "") continue;
      const inner = /^\((.*)\)$/.exec(line)?.[1] ?? line;
      const cd = /^cd\s+(\S+)\s*&&\s*(.*)$/.exec(inner);
      commands.push({
        line: raw.trim(),
        dir: cd ? (cd[1] ?? ".") : ".",
        argv: shellWords(cd ? (cd[2] ?? "") : inner),
        ...(comment === undefined ? {} : { comment }),
        block: block.index,
        ...(block.note === undefined ? {} : { note: block.note }),
      });
    }
  }
  return commands;
}

/** `cmd "a # b"   # note` → code `cmd "a # b"`, comment `note`: a `#` that starts a word, outside quotes. */
export function splitComment(line: string): { code: string; comment?: string } {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quote) {
      if (ch === "\\" && quote === '"') i++;
      else if (ch === quote) quote = undefined;
    } else if (ch === "'" || ch === '"') quote = ch;
    else if (ch === "\\") i++;
    else if (ch === "#" && (i === 0 || /\s/.test(line[i - 1] as string)))
      return { code: line.slice(0, i).trim(), comment: line.slice(i + 1).trim() };
  }
  return { code: line.trim() };
}

/** Splits a command line as sh would for simple cases: quotes, backslashes, a trailing # comment. */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i] as string;
    if (ch === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new Error(`unterminated ' in: ${line}`);
      word = (word ?? "") + line.slice(i + 1, end);
      i = end;
    } else if (ch === '"') {
      let text = "";
      for (i++; i < line.length && line[i] !== '"'; i++) {
        if (line[i] === "\\" && i + 1 < line.length && '"\\$`'.includes(line[i + 1] as string)) i++;
        text += line[i];
      }
      if (i >= line.length) throw new Error(`unterminated " in: ${line}`);
      word = (word ?? "") + text;
    } else if (ch === "\\" && i + 1 < line.length) {
      word = (word ?? "") + line[++i];
    } else if (/\s/.test(ch)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else {
      word = (word ?? "") + ch;
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}

/** `npx gatehouse …` → the arguments after `gatehouse`; anything else → undefined. */
export function gatehouseArgs(command: ShellCommand): string[] | undefined {
  const [npx, name, ...args] = command.argv;
  return npx === "npx" && name === "gatehouse" ? args : undefined;
}

export interface ExampleRun {
  /** The temporary project root: the example sits at `examples/<name>` inside it, as in the repository. */
  readonly root: string;
  readonly commands: readonly ShellCommand[];
  /** The result of each README command, in order (`cat FILE` is read directly). */
  readonly results: readonly CliResult[];
  remove(): Promise<void>;
}

/**
 * Copies `examples/<name>` into a temporary folder (at the same relative path) and runs the
 * README's commands there, in order, through the real CLI — so what a reader runs is what CI runs.
 */
export async function runExampleReadme(name: string, env: Record<string, string> = {}): Promise<ExampleRun> {
  const root = await mkdtemp(join(tmpdir(), `gatehouse-example-${name}-`));
  const source = join(ROOT, "examples", name);
  await cp(source, join(root, "examples", name), {
    recursive: true,
    filter: (path) => !path.split(/[\\/]/).includes(".gatehouse"),
  });
  const commands = shellCommands(await readFile(join(source, "README.md"), "utf8"));
  const results: CliResult[] = [];
  for (const command of commands) {
    const cwd = join(root, command.dir);
    const args = gatehouseArgs(command);
    if (args) results.push(await gatehouse(args, { cwd, env }));
    else if (command.argv[0] === "cat" && command.argv.length === 2) {
      const file = posix.normalize(command.argv[1] as string);
      results.push({ code: 0, stdout: await readFile(join(cwd, file), "utf8"), stderr: "" });
    } else throw new Error(`examples/${name}/README.md: a command the test cannot run: ${command.line}`);
  }
  return { root, commands, results, remove: () => rm(root, { recursive: true, force: true }) };
}

/** Every file under `dir` (recursively) that contains `text`, as bytes. */
export async function filesContaining(dir: string, text: string): Promise<string[]> {
  const { readdir } = await import("node:fs/promises");
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  const found: string[] = [];
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const file = join(entry.parentPath, entry.name);
    if ((await readFile(file)).includes(text)) found.push(file);
  }
  return found;
}
