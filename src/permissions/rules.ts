import { homedir } from "node:os";
import { isAbsolute, relative, resolve } from "node:path";
import { lazyRequire } from "../core/lazy-require.js";
import { type SimpleCommand, splitCommands, withoutAssignments } from "./shell.js";

/** Loaded when a path rule is first matched. */
const picomatch = lazyRequire<typeof import("picomatch")>("picomatch");

export const PERMISSION_BEHAVIORS = ["allow", "ask", "deny"] as const;
export type PermissionBehavior = (typeof PERMISSION_BEHAVIORS)[number];

/**
 * `Tool` or `Tool(specifier)` as Claude Code writes permission rules (docs/permissions.md):
 * `Bash(npm run test:*)`, `Bash(git * main)`, `Read(./secrets/**)`, `Edit(//etc/**)`,
 * `mcp__github`, `mcp__github__create_issue`, `Agent(Explore)`, `WebFetch(domain:example.com)`.
 */
export interface ParsedRule {
  readonly tool: string;
  /** Undefined: every use of the tool (`Bash`, `Bash(*)` and `Bash()` alike). */
  readonly specifier: string | undefined;
}

const RULE = /^([A-Za-z0-9_\-.*]+)(?:\((.*)\))?$/s;

/** The rule, or a sentence saying what is wrong with it. */
export function parseRule(text: string): ParsedRule | string {
  const m = RULE.exec(text.trim());
  if (!m?.[1]) return `"${text}" is not a permission rule: expected Tool or Tool(specifier), e.g. Bash(npm test:*)`;
  const specifier = m[2]?.trim();
  return {
    tool: m[1],
    specifier: specifier === undefined || specifier === "" || specifier === "*" ? undefined : specifier,
  };
}

/** Where a rule came from, and what its relative paths are relative to. */
export interface RuleOrigin {
  /** `user`, `project`, `local`, `config` (gatehouse.json), `cli` (--settings), `flag`, `session`, `library`. */
  readonly source: string;
  /** The file that holds it, when there is one. */
  readonly file?: string;
  /** `./p` and `p` path rules are relative to this folder. */
  readonly baseDir: string;
}

/** One rule of the effective set. */
export interface PermissionRule extends RuleOrigin {
  readonly behavior: PermissionBehavior;
  /** As written. */
  readonly rule: string;
  readonly parsed: ParsedRule;
}

/** The tools each file rule covers, as in Claude Code: Edit rules cover every tool that edits files. */
export const EDIT_TOOLS: ReadonlySet<string> = new Set(["Edit", "Write", "MultiEdit", "NotebookEdit"]);
export const READ_TOOLS: ReadonlySet<string> = new Set(["Read", "Glob", "Grep", "NotebookRead"]);

type Input = Readonly<Record<string, unknown>>;
const asInput = (v: unknown): Input => (typeof v === "object" && v !== null ? (v as Input) : {});

/** Whether the rule names this tool (not yet its input). */
export function ruleCoversTool(rule: ParsedRule, toolName: string): boolean {
  if (rule.tool === toolName) return true;
  if (rule.tool === "Edit" && EDIT_TOOLS.has(toolName)) return true;
  if (rule.tool === "Read" && READ_TOOLS.has(toolName)) return true;
  if (rule.tool.startsWith("mcp__") && toolName.startsWith("mcp__")) {
    // `mcp__server` and `mcp__server__*` cover every tool of that server.
    const server = rule.tool.endsWith("__*") ? rule.tool.slice(0, -3) : rule.tool;
    return rule.specifier === undefined && toolName.startsWith(`${server}__`) && server.split("__").length === 2;
  }
  return false;
}

/**
 * Whether a rule matches one call. Bash rules are matched per simple command by the caller
 * (`matchesCommand`); for other tools the specifier is read from the input the tool runs with.
 */
export function ruleMatchesCall(rule: PermissionRule, toolName: string, input: unknown): boolean {
  const { parsed } = rule;
  if (!ruleCoversTool(parsed, toolName)) return false;
  if (parsed.specifier === undefined) return true;
  const fields = asInput(input);
  if (EDIT_TOOLS.has(toolName) || READ_TOOLS.has(toolName)) {
    const file = fields.file_path ?? fields.notebook_path ?? fields.path;
    return typeof file === "string" && pathMatches(parsed.specifier, file, rule.baseDir);
  }
  if (toolName === "Agent") return parsed.specifier === (fields.subagent_type ?? "general-purpose");
  if (toolName === "WebFetch" && parsed.specifier.startsWith("domain:"))
    return urlInDomain(parsed.specifier.slice(7), fields.url) === true;
  // A specifier Gatehouse cannot read for this tool matches nothing.
  return false;
}

/**
 * A Bash rule against one simple command. An allow or ask rule matches the command as written
 * (a `PATH=… npm test` is not `npm test`; a redirection to a file is a write the rule must name);
 * a deny rule also matches it without leading assignments.
 */
export function matchesCommand(rule: PermissionRule, command: SimpleCommand): boolean {
  const { specifier } = rule.parsed;
  if (specifier === undefined) return true;
  const re = commandPattern(specifier);
  if (rule.behavior === "deny") return re.test(command.text) || re.test(withoutAssignments(command.text));
  if (command.writes && !specifier.includes(">")) return false;
  return re.test(command.text);
}

/** The simple commands of a Bash call, or undefined when its command cannot be read. */
export function commandsOf(input: unknown): SimpleCommand[] | undefined {
  const command = asInput(input).command;
  return typeof command === "string" ? splitCommands(command) : undefined;
}

const patterns = new Map<string, RegExp>();

/**
 * `npm run test:*` (the legacy prefix form) matches `npm run test` and `npm run test <args>`,
 * never `npm run testx`; `*` elsewhere matches any sequence, spaces included (`git * main`); a
 * single trailing ` *` also matches the bare prefix (`ls *` matches `ls`). Whitespace is collapsed.
 */
export function commandPattern(specifier: string): RegExp {
  let re = patterns.get(specifier);
  if (re) return re;
  let p = specifier.trim().replace(/\s+/g, " ");
  let tail = "";
  if (p.endsWith(":*")) {
    p = p.slice(0, -2).trimEnd();
    tail = "(?: .*)?";
  } else if (p.endsWith(" *")) {
    p = p.slice(0, -2);
    tail = "(?: .*)?";
  }
  const body = p
    .split("*")
    .map((s) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  re = new RegExp(`^${body}${tail}$`, "s");
  patterns.set(specifier, re);
  return re;
}

/**
 * gitignore-style paths: `//abs/p` is absolute, `~/p` is in the home folder, `/p`, `./p` and
 * `p/q` are relative to the rule's folder (its settings file's project), and a pattern without
 * a slash (`*.env`, `.env`) matches a file of that name at any depth under that folder.
 */
export function pathMatches(pattern: string, file: string, baseDir: string): boolean {
  const { isMatch } = picomatch();
  const absolute = resolve(baseDir, file);
  const options = { dot: true };
  if (pattern.startsWith("//"))
    return isMatch(absolute, pattern.slice(1), options) || isMatch(absolute, `${pattern.slice(1)}/**`, options);
  if (pattern.startsWith("~/")) {
    const rel = relative(homedir(), absolute);
    return (
      isInside(rel) && (isMatch(rel, pattern.slice(2), options) || isMatch(rel, `${pattern.slice(2)}/**`, options))
    );
  }
  const rel = relative(baseDir, absolute);
  if (!isInside(rel)) return false;
  const p = pattern.replace(/^\.?\//, "");
  if (!p.includes("/")) return isMatch(rel, `**/${p}`, options) || isMatch(rel, `**/${p}/**`, options);
  return isMatch(rel, p, options) || isMatch(rel, `${p}/**`, options);
}

const isInside = (rel: string) => rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);

/**
 * Whether the URL's host is `domain` or one of its subdomains (`domain:…` rules); undefined when
 * there is no URL to read. A permission rule then does not match; an `if` rule runs its hook.
 */
export function urlInDomain(domain: string, url: unknown): boolean | undefined {
  if (typeof url !== "string") return undefined;
  try {
    const host = new URL(url).hostname;
    return host === domain || host.endsWith(`.${domain}`);
  } catch {
    return undefined;
  }
}
