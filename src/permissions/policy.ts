import { dirname, isAbsolute, relative, resolve } from "node:path";
import { isMcpName } from "../tools/mcp-name.js";
import { autoAllowed } from "./read-only.js";
import {
  commandsOf,
  EDIT_TOOLS,
  matchesCommand,
  matchRule,
  type PermissionBehavior,
  type PermissionRule,
  parseRule,
  READ_TOOLS,
  ruleCoversTool,
  ruleId,
} from "./rules.js";
import { type SimpleCommand, withoutAssignments } from "./shell.js";

export const PERMISSION_MODES = ["default", "acceptEdits", "plan", "dontAsk", "bypassPermissions"] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];

export function isPermissionMode(value: unknown): value is PermissionMode {
  return typeof value === "string" && (PERMISSION_MODES as readonly string[]).includes(value);
}

/** What a `PreToolUse` / `before_tool_call` hook said about the permission, if anything. */
export type HookPermission = "allow" | "ask" | undefined;

/** The permission check's answer for one call (docs/permissions.md). */
export interface PermissionDecision {
  readonly behavior: PermissionBehavior;
  /** The rule that decided, when one did. */
  readonly rule?: PermissionRule;
  /** What decided: a rule, the mode, a hook's answer, or the tool's default tier. */
  readonly by: "rule" | "mode" | "hook" | "default" | "sandbox";
  /**
   * An allow from a rule an "always" answer added in this session: `PermissionRequest` hooks
   * and approval plugins are still asked, and a deny from them stands.
   */
  readonly remembered?: boolean;
  /** An allow because every command of the Bash line is one of Claude Code's read-only commands. */
  readonly readOnly?: boolean;
}

/** Tools that ask in `default` mode; every other tool (reads, plugin tools) runs. */
const ASKING_TOOLS: ReadonlySet<string> = new Set(["Bash", "Agent", "WebFetch", ...EDIT_TOOLS]);

export function asksByDefault(toolName: string): boolean {
  return ASKING_TOOLS.has(toolName) || isMcpName(toolName);
}

export interface PermissionPolicyOptions {
  readonly mode: PermissionMode;
  /** What set the mode (a file, `--permission-mode`, `default`), for listings. */
  readonly modeFrom?: string;
  readonly rules: readonly PermissionRule[];
  /** The working folder: `acceptEdits` accepts edits inside it (and `additionalDirectories`). */
  readonly cwd: string;
  readonly additionalDirectories?: readonly string[];
  /** Writes a rule an "always, for this project" answer added (to `.claude/settings.local.json`). */
  readonly persist?: (behavior: PermissionBehavior, rule: string) => string;
  /**
   * `sandbox.autoAllowBashIfSandboxed`: whether this Bash input runs in the sandbox, where it
   * then runs without asking (deny rules, content-scoped ask rules and plan mode still apply).
   */
  readonly sandboxedBash?: (input: unknown) => boolean;
}

/**
 * The effective permission rules and mode of one Gatehouse, and the check the tool door asks
 * (docs/lifecycle.md, step 10d): deny rules first, then — after the tool hooks — ask rules,
 * allow rules and the mode. Rules an "always" answer adds join it for the rest of the session.
 */
export class PermissionPolicy {
  readonly #rules: readonly PermissionRule[];
  /** Rules "always" answers added, per session: another session (a `serve` client's) never sees them. */
  readonly #remembered = new Map<string, PermissionRule[]>();
  readonly #workDirs: readonly string[];

  constructor(private readonly options: PermissionPolicyOptions) {
    this.#rules = [...options.rules];
    this.#workDirs = [options.cwd, ...(options.additionalDirectories ?? []).map((d) => resolve(options.cwd, d))];
  }

  get mode(): PermissionMode {
    return this.options.mode;
  }

  get modeFrom(): string {
    return this.options.modeFrom ?? "default";
  }

  get additionalDirectories(): readonly string[] {
    return this.#workDirs.slice(1);
  }

  /** The configured rules, in source order. */
  get rules(): readonly PermissionRule[] {
    return this.#rules;
  }

  /** The rules in force in a session: the configured ones, then those its "always" answers added. */
  rulesFor(sessionId: string | undefined): readonly PermissionRule[] {
    const added = sessionId === undefined ? undefined : this.#remembered.get(sessionId);
    return added ? [...this.#rules, ...added] : this.#rules;
  }

  /** The deny rule this call meets, if any: checked before any hook, in every mode. */
  /** Whether any deny rule names `toolName` (a search asks this once rather than checking every file it finds). */
  hasDenyRules(toolName: string, sessionId?: string): boolean {
    return this.rulesFor(sessionId).some((r) => r.behavior === "deny" && ruleCoversTool(r.parsed, toolName));
  }

  denyRule(toolName: string, input: unknown, sessionId?: string): PermissionRule | undefined {
    return this.rulesFor(sessionId).find((r) => r.behavior === "deny" && matches(r, toolName, input));
  }

  /**
   * The decision for a call that passed the deny rules and the tool hooks: `hook` is what a
   * hook said (allow skips the ask, never a deny rule or plan mode; ask forces one).
   */
  decide(toolName: string, input: unknown, hook: HookPermission, sessionId?: string): PermissionDecision {
    const deny = this.denyRule(toolName, input, sessionId);
    if (deny) return { behavior: "deny", rule: deny, by: "rule" };
    const { mode } = this;
    const readOnlyBash = toolName === "Bash" && this.#autoAllowed(input, false) === "read-only";
    if (mode === "plan" && !READ_TOOLS.has(toolName) && toolName !== "Agent" && !readOnlyBash)
      return { behavior: "deny", by: "mode" };
    const unreadable = toolName === "Bash" && commandsOf(input) === undefined;
    const decision = this.#decideBeforeMode(toolName, input, hook, sessionId);
    // A line that cannot be read is never run without a person, whatever the mode or a hook says.
    if (unreadable && decision.behavior === "allow" && decision.by !== "rule")
      return this.#settle({ behavior: "ask", by: "default" }, true);
    return this.#settle(decision, unreadable);
  }

  /**
   * The decision for a call no person can be asked about and no hook sees (a command hook's own
   * agent): allowed only where the check allows it without asking. A deny rule refuses, and so
   * does an ask rule — in every mode, `bypassPermissions` included — and whatever would ask.
   */
  decideUnattended(toolName: string, input: unknown): PermissionDecision {
    const decision = this.decide(toolName, input, undefined);
    if (decision.behavior === "deny") return decision;
    const ask = this.#matching(this.#rules, "ask", toolName, input, "any");
    if (ask) return { behavior: "ask", rule: ask.rule, by: "rule" };
    return decision;
  }

  #decideBeforeMode(toolName: string, input: unknown, hook: HookPermission, sessionId?: string): PermissionDecision {
    if (hook === "ask") return { behavior: "ask", by: "hook" };
    const sandboxed = toolName === "Bash" && this.options.sandboxedBash?.(input) === true;
    // As in Claude Code, a bare `Bash` ask rule is skipped for a sandboxed command; `Bash(git push *)` is not.
    const rules = this.rulesFor(sessionId).filter(
      (r) => !(sandboxed && r.behavior === "ask" && r.parsed.specifier === undefined),
    );
    const ask = this.#matching(rules, "ask", toolName, input, "any");
    if (ask) return { behavior: "ask", rule: ask.rule, by: "rule" };
    if (hook === "allow") return { behavior: "allow", by: "hook" };
    const allow = this.#matching(rules, "allow", toolName, input, "every");
    if (allow)
      return { behavior: "allow", rule: allow.rule, by: "rule", ...(allow.remembered ? { remembered: true } : {}) };
    if (sandboxed) return { behavior: "allow", by: "sandbox" };
    const { mode } = this;
    // Read-only commands run in every mode, and acceptEdits approves filesystem commands in the working directories.
    const auto = toolName === "Bash" ? this.#autoAllowed(input, mode === "acceptEdits") : undefined;
    if (auto === "read-only") return { behavior: "allow", by: "default", readOnly: true };
    if (auto === "accept-edits") return { behavior: "allow", by: "mode" };
    if (mode === "bypassPermissions") return { behavior: "allow", by: "mode" };
    if (mode === "acceptEdits" && EDIT_TOOLS.has(toolName) && this.#inWorkDirs(input))
      return { behavior: "allow", by: "mode" };
    return asksByDefault(toolName) ? { behavior: "ask", by: "default" } : { behavior: "allow", by: "default" };
  }

  /**
   * `dontAsk` denies what would ask; `bypassPermissions` runs it, unless a hook asked for a
   * person or the Bash line cannot be read (its deny rules could not be checked command by command).
   */
  #settle(decision: PermissionDecision, unreadable: boolean): PermissionDecision {
    if (decision.behavior !== "ask") return decision;
    if (this.mode === "dontAsk") return { ...decision, behavior: "deny", by: decision.rule ? "rule" : "mode" };
    if (this.mode === "bypassPermissions" && decision.by !== "hook" && !unreadable)
      return { behavior: "allow", by: "mode" };
    return decision;
  }

  /**
   * The first rule of `behavior` matching the call. A Bash call with several commands: `any`
   * (an ask rule) matches when one command matches; `every` (allow) only when each command is
   * matched by some allow rule — `Bash(npm test:*)` never allows `npm test && rm -rf x`.
   */
  #matching(
    all: readonly PermissionRule[],
    behavior: PermissionBehavior,
    toolName: string,
    input: unknown,
    quantifier: "any" | "every",
  ): { rule: PermissionRule; remembered: boolean } | undefined {
    const rules = all.filter((r) => r.behavior === behavior && ruleCoversTool(r.parsed, toolName));
    const remembered = (r: PermissionRule) => r.source === "session";
    if (toolName !== "Bash" || quantifier === "any") {
      const rule = rules.find((r) => matches(r, toolName, input));
      return rule && { rule, remembered: remembered(rule) };
    }
    const whole = rules.find((r) => r.parsed.specifier === undefined);
    if (whole) return { rule: whole, remembered: remembered(whole) };
    const commands = commandsOf(input);
    if (commands === undefined || commands.length === 0) return undefined;
    const used = commands.map((c) => rules.find((r) => matchesCommand(r, c)));
    const found = used.filter((r): r is PermissionRule => r !== undefined);
    if (found.length < commands.length) return undefined;
    return { rule: found[0] as PermissionRule, remembered: found.some(remembered) };
  }

  #autoAllowed(input: unknown, acceptEdits: boolean) {
    const command = (input as { command?: unknown } | undefined)?.command;
    if (typeof command !== "string") return undefined;
    return autoAllowed(command, { cwd: this.options.cwd, dirs: this.#workDirs }, acceptEdits);
  }

  #inWorkDirs(input: unknown): boolean {
    const fields = (typeof input === "object" && input !== null ? input : {}) as Record<string, unknown>;
    const file = fields.file_path ?? fields.notebook_path;
    if (typeof file !== "string") return false;
    const absolute = resolve(this.options.cwd, file);
    return this.#workDirs.some((dir) => {
      const rel = relative(dir, absolute);
      return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
    });
  }

  /**
   * The narrowest sensible rules that would allow this call, shown before the user answers
   * "always": `Bash(npm test:*)` for `npm test -- -t x`, one per command of a compound line not
   * already allowed, `Edit(./src/**)` for a file in src, `mcp__server__tool`, `Agent(type)`.
   */
  suggestRules(toolName: string, input: unknown, sessionId?: string): string[] {
    if (toolName === "Bash") {
      const commands = commandsOf(input);
      if (commands === undefined || commands.length === 0) return [];
      const allowRules = this.rulesFor(sessionId).filter(
        (r) => r.behavior === "allow" && ruleCoversTool(r.parsed, "Bash"),
      );
      const wanted = commands
        .filter((c) => !allowRules.some((r) => matchesCommand(r, c)))
        .flatMap((c) => commandRule(c) ?? []);
      return [...new Set(wanted)];
    }
    const fields = (typeof input === "object" && input !== null ? input : {}) as Record<string, unknown>;
    const file = fields.file_path ?? fields.notebook_path ?? fields.path;
    if ((EDIT_TOOLS.has(toolName) || READ_TOOLS.has(toolName)) && typeof file === "string") {
      const kind = EDIT_TOOLS.has(toolName) ? "Edit" : "Read";
      const absolute = resolve(this.options.cwd, file);
      const dir = toolName === "Glob" || toolName === "Grep" ? absolute : dirname(absolute);
      const rel = relative(this.options.cwd, dir);
      if (rel === "") return [`${kind}(./${relative(this.options.cwd, absolute)})`];
      return [rel.startsWith("..") || isAbsolute(rel) ? `${kind}(/${dir}/**)` : `${kind}(./${rel}/**)`];
    }
    if (toolName === "Agent") return [`Agent(${String(fields.subagent_type ?? "general-purpose")})`];
    return [toolName];
  }

  /**
   * Adds rules an "always" answer chose, for the rest of the session; with `local` (and
   * `persist`), also to `.claude/settings.local.json`, where later sessions read them (the file
   * written is returned).
   */
  remember(
    sessionId: string,
    behavior: PermissionBehavior,
    rules: readonly string[],
    where: "session" | "local",
  ): string | undefined {
    let file: string | undefined;
    const added = this.#remembered.get(sessionId) ?? [];
    this.#remembered.set(sessionId, added);
    for (const text of rules) {
      const parsed = parseRule(text, behavior);
      if (typeof parsed === "string") continue;
      if (where === "local" && this.options.persist) file = this.options.persist(behavior, text);
      const rule: PermissionRule = {
        behavior,
        rule: text,
        parsed,
        id: ruleId("session", behavior, added.filter((r) => r.behavior === behavior).length),
        source: "session",
        baseDir: this.options.cwd,
        ...(file === undefined ? {} : { file }),
      };
      added.push(rule);
    }
    return file;
  }
}

/** A permission rule matches only what it can read: a call it cannot read is never allowed or denied by it. */
function matches(rule: PermissionRule, toolName: string, input: unknown): boolean {
  return matchRule(rule.parsed, rule.behavior, toolName, input, rule.baseDir) === "match";
}

/** Commands whose second word picks what they do: `npm test`, `git push`, `docker run`. */
const SUBCOMMAND_TOOLS = new Set([
  "npm",
  "pnpm",
  "yarn",
  "bun",
  "deno",
  "git",
  "cargo",
  "go",
  "docker",
  "kubectl",
  "gh",
  "make",
  "pip",
  "uv",
  "poetry",
  "dotnet",
  "mvn",
  "gradle",
]);

/**
 * The prefix rule for one command: `Bash(echo:*)`, `Bash(npm test:*)`. Never the command itself:
 * a suggestion is shown on screen, sent to hooks and kept as an "always" rule, and the words after
 * the prefix (an assignment's value, a redirection's target, an argument) may be secrets. A prefix
 * rule does not cover leading assignments or a write, so such a command is asked again.
 */
function commandRule(command: SimpleCommand): string | undefined {
  const words = withoutAssignments(command.text).split(" ");
  const [first, second] = words;
  // A line of assignments only (`TOKEN=x`) has no command to name.
  if (first === undefined || first === "" || /^[A-Za-z_]\w*=/.test(first)) return undefined;
  const prefix =
    first !== undefined && SUBCOMMAND_TOOLS.has(first) && second !== undefined && /^[A-Za-z][\w:.-]*$/.test(second)
      ? `${first} ${second}`
      : first;
  return `Bash(${prefix}:*)`;
}
