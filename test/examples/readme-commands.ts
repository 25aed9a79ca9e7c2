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
  /** Index of the code block in the file, and the HTML comment right above it, if any. */
  readonly block: number;
  readonly note?: string;
}

/** Every command line of every ```sh (or ```bash, ```shell) block, in order. */
export function shellCommands(markdown: string): ShellCommand[] {
  const commands: ShellCommand[] = [];
  const lines = markdown.split("\n");
  let block = -1;
  let inShell = false;
  let inFence = false;
  let note: string | undefined;
  let lastComment: string | undefined;
  for (const raw of lines) {
    const fence = /^\s*```(\w*)/.exec(raw);
    if (fence) {
      if (inFence) {
        inFence = false;
        inShell = false;
        lastComment = undefined;
      } else {
        inFence = true;
        block++;
        inShell = ["sh", "bash", "shell", "console"].includes(fence[1] ?? "");
        note = lastComment;
      }
      continue;
    }
    if (!inFence) {
      const comment = /^\s*<!--(.*)-->\s*$/.exec(raw);
      if (comment) lastComment = comment[1]?.trim();
      else if (raw.trim() !== "") lastComment = undefined;
      continue;
    }
    if (!inShell) continue;
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const inner = /^\((.*)\)$/.exec(line)?.[1] ?? line;
    const cd = /^cd\s+(\S+)\s*&&\s*(.*)$/.exec(inner);
    commands.push({
      line,
      dir: cd ? (cd[1] ?? ".") : ".",
      argv: shellWords(cd ? (cd[2] ?? "") : inner),
      block,
      ...(note === undefined ? {} : { note }),
    });
  }
  return commands;
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
    } else if (ch === "#" && word === undefined) {
      break;
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
