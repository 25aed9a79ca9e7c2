import { homedir } from "node:os";
import { isAbsolute, relative, resolve } from "node:path";
import { hostInDomain, normalizeHostname } from "../core/hostname.js";
import { lazyRequire } from "../core/lazy-require.js";
import { canonicalMcpName, isMcpName, parseMcpName } from "../tools/mcp-name.js";
import { readCommandLine, type SimpleCommand, splitCommands, withoutAssignments } from "./shell.js";

/** Loaded when a path rule is first matched. */
const picomatch = lazyRequire<typeof import("picomatch")>("picomatch");

export const PERMISSION_BEHAVIORS = ["allow", "ask", "deny"] as const;
export type PermissionBehavior = (typeof PERMISSION_BEHAVIORS)[number];

/**
 * What a rule is read for: a permission rule of one behavior, or a command hook's `if` field.
 * Parsing and matching are the same for all four; only two policies differ. Parameter rules and
 * unanchored tool-name globs are refused in an allow rule (Claude Code's own limits), and a call
 * the rule cannot read (`unreadable`) is no match for a permission rule but runs an `if` hook.
 */
export type RuleUse = PermissionBehavior | "if";

/** What a rule's parentheses hold, read once when the rule is loaded. */
export type RuleSpecifier =
  /** `Bash(npm test:*)`: matched command by command. */
  | { readonly kind: "command"; readonly pattern: string }
  /** `Edit(src/**)`, `Read(~/.ssh/**)`: gitignore-style, relative to the rule's folder. */
  | { readonly kind: "path"; readonly pattern: string }
  /** `WebFetch(domain:example.com)`, `WebFetch(domain:*.example.com)`. */
  | { readonly kind: "domain"; readonly domain: string }
  /** `Agent(Explore)`: the subagent type. */
  | { readonly kind: "agent"; readonly type: string }
  /** `Agent(model:opus)`: one top-level input field equal to a value (`*` any sequence). */
  | { readonly kind: "param"; readonly name: string; readonly value: string };

/**
 * `Tool` or `Tool(specifier)` as Claude Code writes permission rules (docs/permissions.md):
 * `Bash(npm run test:*)`, `Bash(git * main)`, `Read(./secrets/**)`, `Edit(//etc/**)`,
 * `mcp__github`, `mcp__github__create_issue`, `mcp__*`, `Agent(Explore)`, `Agent(model:opus)`,
 * `WebFetch(domain:example.com)`.
 */
export interface ParsedRule {
  /** The tool name or name glob, an MCP name in its registered spelling (`mcp__my_server__x`). */
  readonly tool: string;
  /** As written inside the parentheses; undefined: every use of the tool (`Bash`, `Bash(*)`, `Bash()`). */
  readonly specifier: string | undefined;
  /** The specifier as read; undefined exactly when `specifier` is. */
  readonly spec?: RuleSpecifier;
}

/** Each built-in tool's own specifier, the field it reads it from, and the fields a parameter rule may name. */
interface OwnSyntax {
  readonly kind: Exclude<RuleSpecifier["kind"], "param">;
  /** Fields a parameter rule may not name: the tool's own specifier reads them, a compound value would slip past. */
  readonly primary: readonly string[];
  /** Claude Code's input fields a parameter rule may name; undefined: any field. */
  readonly params?: readonly string[];
}

const PATH_PARAMS = [
  "offset",
  "limit",
  "pages",
  "content",
  "old_string",
  "new_string",
  "replace_all",
  "edits",
  "new_source",
  "cell_id",
  "cell_type",
  "edit_mode",
  "pattern",
  "glob",
  "type",
  "output_mode",
  "multiline",
  "head_limit",
];
const PATH_SYNTAX: OwnSyntax = { kind: "path", primary: ["file_path", "notebook_path", "path"], params: PATH_PARAMS };
const OWN_SYNTAX: Readonly<Record<string, OwnSyntax>> = {
  Bash: {
    kind: "command",
    primary: ["command"],
    params: ["timeout", "description", "run_in_background", "dangerouslyDisableSandbox"],
  },
  Read: PATH_SYNTAX,
  Edit: PATH_SYNTAX,
  Write: PATH_SYNTAX,
  MultiEdit: PATH_SYNTAX,
  NotebookEdit: PATH_SYNTAX,
  NotebookRead: PATH_SYNTAX,
  Glob: PATH_SYNTAX,
  Grep: PATH_SYNTAX,
  WebFetch: { kind: "domain", primary: ["url"], params: ["prompt"] },
  // A subagent type never holds a colon: every `name:value` is a parameter rule.
  Agent: { kind: "agent", primary: [] },
};

const RULE = /^([A-Za-z0-9_\-.*]+)(?:\((.*)\))?$/s;
const PARAM = /^([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(.*)$/s;
/** A second `name:value` after a comma: Claude Code reads one parameter per rule. */
const SECOND_PARAM = /,\s*[A-Za-z_][A-Za-z0-9_]*\s*:/;

/** The rule, or a sentence saying what is wrong with it (the loaders add file, line and column). */
export function parseRule(text: string, use: RuleUse): ParsedRule | string {
  const m = RULE.exec(text.trim());
  if (!m?.[1]) return `"${text}" is not a permission rule: expected Tool or Tool(specifier), e.g. Bash(npm test:*)`;
  const tool = isMcpName(m[1]) ? canonicalMcpName(m[1]) : m[1];
  const badName = checkToolName(tool, use);
  if (badName) return `"${text}": ${badName}`;
  const raw = m[2]?.trim();
  if (raw === undefined || raw === "" || raw === "*") return { tool, specifier: undefined };
  const spec = readSpecifier(tool, raw, use);
  if (typeof spec === "string") return `"${text}": ${spec}`;
  return spec === undefined ? { tool, specifier: undefined } : { tool, specifier: raw, spec };
}

function checkToolName(tool: string, use: RuleUse): string | undefined {
  if (use !== "allow" || !unanchoredGlob(tool)) return undefined;
  return UNANCHORED_ALLOW;
}

const UNANCHORED_ALLOW =
  "an allow rule may use a tool-name glob only after a literal mcp__<server>__ prefix (mcp__github__get_*)";

/** A tool-name glob not under a named server (`*`, `B*`, `mcp__*`): it could allow every tool. */
function unanchoredGlob(tool: string): boolean {
  if (!tool.includes("*")) return false;
  const mcp = parseMcpName(tool);
  return mcp === undefined || mcp.server.includes("*") || mcp.tool === undefined;
}

/**
 * Why a settings file's allow rule is skipped rather than refused: Claude Code skips an
 * unanchored tool-name glob (`"*"`, `"mcp__*"`) in `allow` with a warning, and settings it
 * accepts must start Gatehouse too. Skipping an allow rule allows nothing; it guards nothing.
 */
export function skippedAllowRule(text: string): string | undefined {
  const tool = RULE.exec(text.trim())?.[1];
  return tool !== undefined && unanchoredGlob(tool)
    ? `skipped, as Claude Code skips it: ${UNANCHORED_ALLOW}`
    : undefined;
}

function readSpecifier(tool: string, raw: string, use: RuleUse): RuleSpecifier | undefined | string {
  const own = OWN_SYNTAX[tool];
  const param = PARAM.exec(raw);
  // An allow rule keeps a command tool's legacy prefix form: `Bash(command:*)` allows the
  // `command` builtin, `Bash(timeout:*)` the `timeout` command.
  const legacyPrefix = use === "allow" && own?.kind === "command" && param?.[2]?.trim() === "*";
  if (param?.[1] !== undefined && !legacyPrefix) {
    const [, name, value = ""] = param;
    if (own?.primary.includes(name))
      return `a parameter rule cannot name ${tool}'s ${name} (a compound value would slip past it); use the tool's own form, e.g. Bash(rm *), Read(./path), WebFetch(domain:host)`;
    const isParam = own === undefined || own.params === undefined || own.params.includes(name);
    // In an allow rule, any other `name:value` on a command tool is the command's own syntax.
    if (isParam && !(use === "allow" && own?.kind === "command")) {
      if (use === "allow")
        return "a parameter rule (Tool(param:value)) is for deny, ask and if rules: one parameter's value does not make a call safe to allow";
      if (SECOND_PARAM.test(value)) return "a rule names one parameter; write one rule per parameter";
      return { kind: "param", name, value: value.trim() };
    }
    if (own?.kind === "domain" && name !== "domain")
      return `WebFetch has no parameter ${name}: expected WebFetch(domain:host) or WebFetch(prompt:…)`;
  }
  if (tool.includes("*")) return "a tool-name glob takes no specifier but a parameter rule (param:value)";
  if (own === undefined)
    return isMcpName(tool)
      ? "an MCP rule takes no specifier but a parameter rule (mcp__server__tool(param:value))"
      : `${tool} has no specifier of its own: write ${tool}, or a deny or ask parameter rule ${tool}(param:value)`;
  switch (own.kind) {
    case "command":
      return { kind: "command", pattern: raw };
    case "path":
      return { kind: "path", pattern: raw };
    case "agent":
      return { kind: "agent", type: raw };
    case "domain":
      return readDomain(raw);
  }
}

/** `domain:host`: `*` (every host), `*.host` (subdomains only) or a host; other wildcards are refused. */
function readDomain(raw: string): RuleSpecifier | undefined | string {
  if (!raw.startsWith("domain:")) return "WebFetch rules are WebFetch(domain:host)";
  const domain = raw.slice("domain:".length).trim();
  if (domain === "*") return undefined;
  const host = domain.startsWith("*.") ? domain.slice(2) : domain;
  if (host.includes("*"))
    return "a WebFetch domain takes a wildcard only as a leading *. or a bare * (Gatehouse does not match a * inside a name)";
  if (normalizeHostname(host) === undefined) return `"${domain}" is not a host name`;
  return { kind: "domain", domain };
}

/** Where a rule came from, and what its relative paths are relative to. */
export interface RuleOrigin {
  /** `user`, `project`, `local`, `config` (gatehouse.json), `cli` (--settings), `managed`, `flag`, `session`, `library`. */
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
  /**
   * The rule's identity in the audit trail, never its text: `<source>.<behavior>.<n>`, the n-th
   * rule of that behavior its source gave (`project.deny.0`, `session.allow.2`).
   */
  readonly id: string;
}

/** A rule's id: the n-th of its source and behavior, in load order. */
export function ruleId(source: string, behavior: PermissionBehavior, n: number): string {
  return `${source}.${behavior}.${n}`;
}

/**
 * Whether the rule's text may be kept next to its id (the audit trail, a denial): only a rule read
 * from a settings file, whose text is on disk anyway. A rule from a flag, from code or from an
 * "always" answer is named by id alone: it may have been built from what the model wrote.
 */
export function ruleTextKept(rule: RuleOrigin): boolean {
  return rule.source !== "session" && rule.file !== undefined && !rule.file.startsWith("--");
}

/** The tools each file rule covers, as in Claude Code: Edit rules cover every tool that edits files. */
export const EDIT_TOOLS: ReadonlySet<string> = new Set(["Edit", "Write", "MultiEdit", "NotebookEdit"]);
export const READ_TOOLS: ReadonlySet<string> = new Set(["Read", "Glob", "Grep", "NotebookRead"]);

type Input = Readonly<Record<string, unknown>>;
const asInput = (v: unknown): Input => (typeof v === "object" && v !== null ? (v as Input) : {});

const globs = new Map<string, RegExp>();
/** `*` as any sequence, everything else literal, the whole string: tool-name globs and parameter values. */
function globPattern(glob: string): RegExp {
  let re = globs.get(glob);
  if (re === undefined) {
    re = new RegExp(`^${glob.split("*").map(escapeRegExp).join(".*")}$`, "s");
    globs.set(glob, re);
  }
  return re;
}
const escapeRegExp = (s: string) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&");

/** Whether the rule names this tool (not yet its input). */
export function ruleCoversTool(rule: ParsedRule, toolName: string): boolean {
  if (rule.tool === toolName) return true;
  if (rule.tool === "Edit" && EDIT_TOOLS.has(toolName)) return true;
  if (rule.tool === "Read" && READ_TOOLS.has(toolName)) return true;
  if (rule.tool.includes("*")) return globPattern(rule.tool).test(toolName);
  // `mcp__server` covers every tool of that server.
  const server = parseMcpName(rule.tool);
  return server !== undefined && server.tool === undefined && parseMcpName(toolName)?.server === server.server;
}

/** A rule against one call: it matches, it does not, or the call does not say (no command, no URL…). */
export type RuleMatch = "match" | "no-match" | "unreadable";

/**
 * The one matcher every rule use calls. Each use keeps its own answer for `unreadable`: a
 * permission rule does not match (so nothing is allowed on it), an `if` rule runs its hook.
 * Bash rules look at every simple command of the line (`matchesCommand`); a deny or `if` rule
 * also at the line as a whole (it may name a pipeline).
 */
export function matchRule(
  rule: ParsedRule,
  use: RuleUse,
  toolName: string,
  input: unknown,
  baseDir: string,
): RuleMatch {
  if (!ruleCoversTool(rule, toolName)) return "no-match";
  const { spec } = rule;
  if (spec === undefined) return "match";
  const fields = asInput(input);
  const verdict = (b: boolean | undefined): RuleMatch => (b === undefined ? "unreadable" : b ? "match" : "no-match");
  switch (spec.kind) {
    case "param":
      return verdict(paramMatches(spec.value, fields[spec.name]));
    case "command":
      return verdict(commandMatches(rule, use, fields.command));
    case "path": {
      const file = fields.file_path ?? fields.notebook_path ?? fields.path;
      return verdict(typeof file === "string" ? pathMatches(spec.pattern, file, baseDir) : undefined);
    }
    case "agent": {
      const type = fields.subagent_type ?? "general-purpose";
      return verdict(typeof type === "string" ? type === spec.type : undefined);
    }
    case "domain":
      return verdict(urlInDomain(spec.domain, fields.url));
  }
}

/** A field the model left out never matches; an object or array is not a scalar the rule could name. */
function paramMatches(value: string, field: unknown): boolean {
  if (typeof field !== "string" && typeof field !== "number" && typeof field !== "boolean") return false;
  return globPattern(value).test(String(field));
}

function commandMatches(rule: ParsedRule, use: RuleUse, command: unknown): boolean | undefined {
  if (typeof command !== "string") return undefined;
  // Deny, ask and `if` rules are guards: each reads the line as a deny rule does.
  const behavior: PermissionBehavior = use === "allow" ? "allow" : "deny";
  const line = readCommandLine(command);
  const readable = line.unreadable === undefined;
  // A guard matches any command it can see, also in a line that as a whole cannot be read; an
  // allow rule sees the commands of a readable line only.
  const seen = readable || behavior === "deny" ? line.commands : [];
  const whole = behavior === "deny" ? [{ text: command.trim().replace(/\s+/g, " "), writes: false }] : [];
  if ([...seen, ...whole].some((c) => matchesCommand({ parsed: rule, behavior }, c))) return true;
  return readable ? false : undefined;
}

/**
 * A Bash rule against one simple command. An allow rule matches the command as written (a
 * `PATH=… npm test` is not `npm test`; a redirection to a file is a write the rule must name);
 * a guard (deny, ask, `if`) also matches it without leading assignments, and whatever it writes.
 * A parameter rule names no command.
 */
export function matchesCommand(
  rule: { readonly parsed: ParsedRule; readonly behavior: PermissionBehavior },
  command: SimpleCommand,
): boolean {
  const { spec } = rule.parsed;
  if (spec === undefined) return true;
  if (spec.kind !== "command") return false;
  const re = commandPattern(spec.pattern);
  if (rule.behavior !== "allow") return re.test(command.text) || re.test(withoutAssignments(command.text));
  if (command.writes && !spec.pattern.includes(">")) return false;
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
 * Whether the URL's host is in `domain` (`hostInDomain`: the one host comparison); undefined
 * when there is no URL to read.
 */
function urlInDomain(domain: string, url: unknown): boolean | undefined {
  if (typeof url !== "string") return undefined;
  try {
    return hostInDomain(new URL(url).hostname, domain);
  } catch {
    return undefined;
  }
}
