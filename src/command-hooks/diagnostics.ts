import { accessSync, constants, readFileSync, statSync } from "node:fs";
import { delimiter, isAbsolute, resolve } from "node:path";
import type { SettingsDiagnostic } from "../core/diagnostic.js";

/** A problem in a hook settings file (the shape every settings source reports). */
export type Diagnostic = SettingsDiagnostic;

/** Appends a key to a JSON path, quoting keys that are not identifiers. */
export function joinPath(base: string, key: string | number): string {
  if (typeof key === "number") return `${base}[${key}]`;
  if (/^[A-Za-z_$][\w$]*$/.test(key)) return base === "" ? key : `${base}.${key}`;
  return `${base}[${JSON.stringify(key)}]`;
}

/** A path `joinPath` built, back as its keys: `hooks.PreToolUse[0]["my key"]` → hooks, PreToolUse, 0, my key. */
export function pathKeys(path: string): (string | number)[] {
  const keys: (string | number)[] = [];
  for (const m of path.matchAll(/\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]|([^.[\]]+)/g))
    keys.push(m[1] !== undefined ? Number(m[1]) : m[2] !== undefined ? (JSON.parse(m[2]) as string) : (m[3] as string));
  return keys;
}

export function formatDiagnostic(d: Diagnostic): string {
  const where = d.line === undefined ? d.file : `${d.file}:${d.line}:${d.column}`;
  return `${d.level}: ${where}: ${d.path || "(root)"}: ${d.message}`;
}

const SHELL_WORDS = new Set([
  ".",
  ":",
  "[",
  "alias",
  "cd",
  "command",
  "echo",
  "eval",
  "exec",
  "exit",
  "export",
  "false",
  "for",
  "if",
  "printf",
  "read",
  "return",
  "set",
  "source",
  "test",
  "true",
  "case",
  "while",
  "until",
  "!",
  "{",
  "(",
]);

/**
 * Finds why the program a handler starts cannot run, or undefined when it can (or when the
 * command is too dynamic to tell without running it). Only the first word of a shell-form
 * command is checked: a missing script exits 127 and silently disables a guard.
 */
export function programProblem(
  command: string,
  execForm: boolean,
  projectDir: string,
  pathVar: string | undefined,
  runDir: string = projectDir,
): string | undefined {
  const program = execForm ? substituteProjectDir(command, projectDir) : firstWord(command, projectDir);
  if (program === undefined || SHELL_WORDS.has(program)) return undefined;
  if (program.includes("/")) {
    const full = isAbsolute(program) ? program : resolve(runDir, program);
    return executableProblem(full, program);
  }
  for (const dir of (pathVar ?? "").split(delimiter)) {
    if (dir !== "" && executableProblem(resolve(dir, program), program) === undefined) return undefined;
  }
  return `program "${program}" was not found on PATH`;
}

function executableProblem(full: string, shown: string): string | undefined {
  try {
    if (!statSync(full).isFile()) return `program "${shown}" is not a file`;
  } catch {
    return `program "${shown}" was not found`;
  }
  try {
    accessSync(full, constants.X_OK);
    return undefined;
  } catch {
    return `program "${shown}" is not executable`;
  }
}

/** Both placeholder spellings; replaced as plain text, never through a shell. */
export function substituteProjectDir(s: string, projectDir: string): string {
  return s.replace(/\$\{(?:CLAUDE|GATEHOUSE)_PROJECT_DIR\}/g, () => projectDir);
}

/** The first word of a simple shell command, or undefined when it needs a shell to know. */
function firstWord(command: string, projectDir: string): string | undefined {
  const words = command.trim().split(/\s+/);
  let i = 0;
  while (i < words.length && /^[A-Za-z_]\w*=/.test(words[i] ?? "")) i++;
  let word = words[i];
  if (word === undefined || word === "") return undefined;
  // A quoted path is common ("$CLAUDE_PROJECT_DIR"/hooks/x.sh); unquote when it is whole.
  const quoted = /^"([^"]*)"(.*)$/.exec(word) ?? /^'([^']*)'(.*)$/.exec(word);
  if (quoted) word = (quoted[1] ?? "") + (quoted[2] ?? "");
  word = word.replace(/\$\{?(?:CLAUDE|GATEHOUSE)_PROJECT_DIR\}?/g, () => projectDir);
  if (/["'`$\\*?[\]{}()<>|;&~]/.test(word)) return undefined;
  return word;
}

/** A settings file's text; undefined when it does not exist (not an error) or cannot be read (an error). */
export function readSettingsText(file: string, diagnostics: Diagnostic[]): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT")
      diagnostics.push({ level: "error", file, path: "", message: `cannot read: ${(e as Error).message}` });
    return undefined;
  }
}
