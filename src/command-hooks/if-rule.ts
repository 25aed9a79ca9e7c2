import { isAbsolute, relative } from "node:path";
import { lazyRequire } from "../core/lazy-require.js";

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
    return domainMatches(rule.pattern.slice(7), input.url);
  return true;
}

function bashMatches(pattern: string, command: unknown): boolean {
  if (typeof command !== "string") return true;
  const subcommands = splitShell(command);
  if (subcommands === undefined) return true;
  const re = globToRegex(pattern);
  return subcommands.some((c) => re.test(c));
}

/** `git *` matches `git` and `git push`, not `gitk`; the legacy `git:*` is the same prefix rule. */
function globToRegex(pattern: string): RegExp {
  let p = pattern.trim();
  let tail = "";
  if (p.endsWith(":*")) {
    p = p.slice(0, -2);
    tail = "(?:\\s.*)?";
  } else if (p.endsWith(" *")) {
    p = p.slice(0, -2);
    tail = "(?:\\s.*)?";
  }
  const body = p
    .split("*")
    .map((s) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  return new RegExp(`^${body}${tail}$`, "s");
}

/**
 * Splits a command line into simple commands (on `;`, `&`, `|`, newlines and inside `$()` and
 * backticks), each with leading `VAR=value` words removed. Undefined when quoting is unbalanced.
 */
export function splitShell(command: string): string[] | undefined {
  const out: string[] = [];
  const stack: string[] = [];
  let current = "";
  let quote: "'" | '"' | null = null;
  const flush = () => {
    const c = current.trim().replace(/^(?:[A-Za-z_]\w*=(?:'[^']*'|"[^"]*"|\S*)\s+)+/, "");
    if (c !== "") out.push(c);
    current = "";
  };
  for (let i = 0; i < command.length; i++) {
    const ch = command[i] as string;
    if (quote === "'") {
      if (ch === "'") quote = null;
      current += ch;
      continue;
    }
    if (ch === "\\") {
      current += ch + (command[i + 1] ?? "");
      i++;
      continue;
    }
    if (quote === '"' && ch === '"') {
      quote = null;
      current += ch;
      continue;
    }
    if (ch === "$" && command[i + 1] === "(") {
      stack.push(current);
      current = "";
      i++;
      continue;
    }
    if (ch === "`") {
      if (stack.at(-1) === "`") {
        stack.pop();
        flush();
        current = stack.pop() ?? "";
      } else {
        stack.push(current, "`");
        current = "";
      }
      continue;
    }
    if (ch === ")" && stack.length > 0 && stack.at(-1) !== "`") {
      flush();
      current = stack.pop() ?? "";
      continue;
    }
    if (quote === null && ch === '"') {
      quote = '"';
      current += ch;
      continue;
    }
    if (quote === null && ch === "'") {
      quote = "'";
      current += ch;
      continue;
    }
    if (quote === null && (ch === ";" || ch === "&" || ch === "|" || ch === "\n")) {
      flush();
      continue;
    }
    current += ch;
  }
  if (quote !== null || stack.length > 0) return undefined;
  flush();
  return out;
}

function pathMatches(pattern: string, file: unknown, projectDir: string): boolean {
  if (typeof file !== "string") return true;
  const { isMatch } = picomatch();
  if (pattern.startsWith("//")) return isMatch(file, pattern.slice(1), { dot: true });
  if (!pattern.includes("/")) return isMatch(file, pattern, { dot: true, basename: true });
  const rel = isAbsolute(file) ? relative(projectDir, file) : file;
  return isMatch(rel, pattern.replace(/^\.?\//, ""), { dot: true });
}

function domainMatches(domain: string, url: unknown): boolean {
  if (typeof url !== "string") return true;
  try {
    const host = new URL(url).hostname;
    return host === domain || host.endsWith(`.${domain}`);
  } catch {
    return true;
  }
}
