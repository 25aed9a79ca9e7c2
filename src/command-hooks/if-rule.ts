import { isAbsolute, relative } from "node:path";
import { lazyRequire } from "../core/lazy-require.js";
import { commandPattern, urlInDomain } from "../permissions/rules.js";
import { splitCommands, withoutAssignments } from "../permissions/shell.js";

/** Loaded when a path rule is first matched. */
const picomatch = lazyRequire<typeof import("picomatch")>("picomatch");

/**
 * The `if` field: one permission rule (`Bash(git *)`, `Edit(*.ts)`, `WebFetch(domain:x.org)`)
 * narrowing a tool-event handler to matching calls, so a hook is not spawned for calls it
 * would wave through. It is a cost filter, not a security boundary: whatever cannot be
 * parsed lets the handler run.
 */
export interface IfRule {
  readonly tool: string;
  readonly pattern: string | undefined;
}

const RULE = /^([A-Za-z0-9_\-.]+)(?:\((.*)\))?$/s;

export function parseIfRule(text: string): IfRule | undefined {
  const m = RULE.exec(text.trim());
  if (!m?.[1]) return undefined;
  return { tool: m[1], pattern: m[2] === undefined || m[2] === "*" || m[2] === "" ? undefined : m[2] };
}

const FILE_TOOLS = new Set(["Read", "Write", "Edit", "MultiEdit", "NotebookEdit", "Glob", "Grep"]);

export function ifRuleMatches(rule: IfRule, toolName: string, toolInput: unknown, projectDir: string): boolean {
  if (rule.tool !== toolName) return false;
  if (rule.pattern === undefined) return true;
  const input = (typeof toolInput === "object" && toolInput !== null ? toolInput : {}) as Record<string, unknown>;
  if (toolName === "Bash") return bashMatches(rule.pattern, input.command);
  if (FILE_TOOLS.has(toolName))
    return pathMatches(rule.pattern, input.file_path ?? input.notebook_path ?? input.path, projectDir);
  if (toolName === "WebFetch" && rule.pattern.startsWith("domain:"))
    return urlInDomain(rule.pattern.slice(7), input.url) ?? true;
  return true;
}

function bashMatches(pattern: string, command: unknown): boolean {
  if (typeof command !== "string") return true;
  const subcommands = splitShell(command);
  if (subcommands === undefined) return true;
  const re = commandPattern(pattern);
  return subcommands.some((c) => re.test(c));
}

/**
 * The simple commands of a command line (permissions' shell reading: `;`, `&&`, `||`, `|`,
 * newlines, subshells, `$()`, backticks), each without leading `VAR=value` words. Undefined
 * when quoting is unbalanced.
 */
export function splitShell(command: string): string[] | undefined {
  return splitCommands(command)?.map((c) => withoutAssignments(c.text));
}

function pathMatches(pattern: string, file: unknown, projectDir: string): boolean {
  if (typeof file !== "string") return true;
  const { isMatch } = picomatch();
  if (pattern.startsWith("//")) return isMatch(file, pattern.slice(1), { dot: true });
  if (!pattern.includes("/")) return isMatch(file, pattern, { dot: true, basename: true });
  const rel = isAbsolute(file) ? relative(projectDir, file) : file;
  return isMatch(rel, pattern.replace(/^\.?\//, ""), { dot: true });
}
