import { type CommandHookEvent, EVENT_SPECS } from "./events.js";

/**
 * How a source's hooks speak: the exit-code polarity, when stdout JSON is read, the unit of
 * `timeout`, and — for other agent CLIs' hook files — their event names, tool names and
 * payloads. One settings file cannot tell which tool it was written for, so the dialect is
 * configured per source (`commandHooks.dialects`); the Gemini CLI, Codex and Cursor files have
 * their own.
 */
export const DIALECTS = ["claude", "claude-2025", "code-puppy", "gemini", "codex", "cursor"] as const;
export type Dialect = (typeof DIALECTS)[number];

/** One of a foreign tool's events, on the command-hook event it fires with. */
export interface NativeEvent {
  /** The Claude Code event whose runtime point it fires at (several: once for each). */
  readonly events: readonly CommandHookEvent[];
  /** Only for these Gatehouse tools (`mcp__*`: any MCP tool); absent: every tool. */
  readonly tools?: readonly string[];
  /** The foreign tool ignores this event's answer: so does Gatehouse (only errors are logged). */
  readonly observe?: boolean;
}

export interface DialectSpec {
  readonly timeoutUnit: "s" | "ms";
  /** Late-2025 Claude Code read stdout JSON on exit 0 only. */
  readonly jsonOnExitZeroOnly: boolean;
  /** The exit code that blocks (Code Puppy inverted Claude Code's 2). */
  readonly blockingExit: number;
  /** An exit code whose stderr is non-blocking feedback, if the dialect has one. */
  readonly feedbackExit: number | null;
  defaultTimeoutMs(event: CommandHookEvent): number;
  /** A foreign tool's event names; absent: Claude Code's names. */
  readonly events?: Readonly<Record<string, NativeEvent>>;
  /** Its event names Gatehouse does not fire, with why (a warning, like Claude Code's FOREIGN events). */
  readonly notFired?: Readonly<Record<string, string>>;
  /** Gatehouse tool names as this tool names them (both ways); others keep their names. */
  readonly tools?: Readonly<Record<string, string>>;
  /** Gatehouse params as this tool names them (`gatehouse` → `native`), per Gatehouse tool. */
  readonly params?: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** How a matcher reads: Claude Code's rule, or an unanchored regex for every value (Gemini CLI). */
  readonly matcher: "claude" | "regex";
  /** The tool also matches a matcher by its Gatehouse name (Codex's aliases: `Edit` matches apply_patch). */
  readonly aliasMatch?: boolean;
  /** SessionEnd handlers share Claude Code's short budget (sources.ts, `SESSION_END_BUDGET`). */
  readonly sessionEndBudget?: boolean;
}

const seconds = (s: number) => () => s * 1000;

export const DIALECT_SPECS: Readonly<Record<Dialect, DialectSpec>> = {
  claude: {
    timeoutUnit: "s",
    jsonOnExitZeroOnly: false,
    blockingExit: 2,
    feedbackExit: null,
    // SessionEnd: Claude Code's 1.5 s budget, which a configured timeout raises (sources.ts).
    defaultTimeoutMs: (event) => (event === "SessionEnd" ? 1500 : EVENT_SPECS[event].defaultTimeoutSec * 1000),
    matcher: "claude",
    sessionEndBudget: true,
  },
  "claude-2025": {
    timeoutUnit: "s",
    jsonOnExitZeroOnly: true,
    blockingExit: 2,
    feedbackExit: null,
    defaultTimeoutMs: () => 60_000,
    matcher: "claude",
  },
  "code-puppy": {
    timeoutUnit: "ms",
    jsonOnExitZeroOnly: false,
    blockingExit: 1,
    feedbackExit: 2,
    // Code Puppy's own default; its authors size their hooks for it.
    defaultTimeoutMs: () => 5_000,
    matcher: "claude",
  },
  gemini: {
    timeoutUnit: "ms",
    jsonOnExitZeroOnly: false,
    blockingExit: 2,
    feedbackExit: null,
    defaultTimeoutMs: () => 60_000,
    matcher: "regex",
    events: {
      SessionStart: { events: ["SessionStart"] },
      SessionEnd: { events: ["SessionEnd"] },
      BeforeAgent: { events: ["UserPromptSubmit"] },
      AfterAgent: { events: ["Stop"] },
      BeforeTool: { events: ["PreToolUse"] },
      AfterTool: { events: ["PostToolUse", "PostToolUseFailure"] },
      PreCompress: { events: ["PreCompact"], observe: true },
      Notification: { events: ["Notification"], observe: true },
    },
    notFired: {
      BeforeModel: "Gatehouse has no hook before each model request; use BeforeAgent, or a plugin on before_agent_run",
      AfterModel: "Gatehouse has no hook on each streamed chunk; use AfterAgent, or a plugin on before_response_emit",
      BeforeToolSelection: "use a plugin on before_prompt_build (toolsAllow) to narrow the tools",
    },
    tools: {
      Bash: "run_shell_command",
      Read: "read_file",
      Write: "write_file",
      Edit: "replace",
      Glob: "glob",
      Grep: "grep_search",
    },
    params: {
      Glob: { path: "dir_path" },
      Grep: { path: "dir_path", glob: "include" },
      Edit: { replace_all: "allow_multiple" },
    },
  },
  codex: {
    timeoutUnit: "s",
    jsonOnExitZeroOnly: true,
    blockingExit: 2,
    feedbackExit: null,
    defaultTimeoutMs: seconds(600),
    matcher: "claude",
    aliasMatch: true,
    events: {
      SessionStart: { events: ["SessionStart"] },
      UserPromptSubmit: { events: ["UserPromptSubmit"] },
      PreToolUse: { events: ["PreToolUse"] },
      PermissionRequest: { events: ["PermissionRequest"] },
      PostToolUse: { events: ["PostToolUse"] },
      PreCompact: { events: ["PreCompact"] },
      PostCompact: { events: ["PostCompact"] },
      SubagentStart: { events: ["SubagentStart"] },
      SubagentStop: { events: ["SubagentStop"] },
      Stop: { events: ["Stop"] },
      // Codex ignores what a SessionEnd hook answers: the session is over.
      SessionEnd: { events: ["SessionEnd"], observe: true },
    },
    notFired: {
      StopFailure: "Gatehouse reports a failed model call in the run result, not to hooks",
      Interrupt: "a cancelled run ends without a hook",
    },
    tools: { Write: "apply_patch", Edit: "apply_patch" },
  },
  cursor: {
    timeoutUnit: "s",
    jsonOnExitZeroOnly: true,
    blockingExit: 2,
    feedbackExit: null,
    defaultTimeoutMs: seconds(60),
    matcher: "claude",
    events: {
      sessionStart: { events: ["SessionStart"] },
      sessionEnd: { events: ["SessionEnd"], observe: true },
      beforeSubmitPrompt: { events: ["UserPromptSubmit"] },
      preToolUse: { events: ["PreToolUse"] },
      postToolUse: { events: ["PostToolUse"] },
      postToolUseFailure: { events: ["PostToolUseFailure"] },
      beforeShellExecution: { events: ["PreToolUse"], tools: ["Bash"] },
      afterShellExecution: { events: ["PostToolUse"], tools: ["Bash"], observe: true },
      beforeMCPExecution: { events: ["PreToolUse"], tools: ["mcp__*"] },
      afterMCPExecution: { events: ["PostToolUse"], tools: ["mcp__*"], observe: true },
      beforeReadFile: { events: ["PreToolUse"], tools: ["Read"] },
      afterFileEdit: { events: ["PostToolUse"], tools: ["Write", "Edit", "MultiEdit", "NotebookEdit"], observe: true },
      stop: { events: ["Stop"] },
      subagentStart: { events: ["SubagentStart"] },
      subagentStop: { events: ["SubagentStop"] },
      preCompact: { events: ["PreCompact"], observe: true },
      afterAgentResponse: { events: ["Stop"], observe: true },
    },
    notFired: {
      afterAgentThought: "Gatehouse gives hooks no reasoning text",
      beforeTabFileRead: "Gatehouse has no Tab completions",
      afterTabFileEdit: "Gatehouse has no Tab completions",
    },
    tools: { Bash: "Shell", Agent: "Task" },
  },
};

/** A foreign dialect (its own event names and payloads), as opposed to Claude Code's and Code Puppy's. */
export function isForeign(dialect: Dialect): boolean {
  return DIALECT_SPECS[dialect].events !== undefined;
}

/** A Gatehouse tool name as the dialect names it. */
export function nativeToolName(dialect: Dialect, tool: string): string {
  return DIALECT_SPECS[dialect].tools?.[tool] ?? tool;
}

/** A tool name as the dialect wrote it (in a matcher or an answer), as Gatehouse names it. */
export function gatehouseToolName(dialect: Dialect, tool: string): string {
  const names = DIALECT_SPECS[dialect].tools ?? {};
  return Object.keys(names).find((k) => names[k] === tool) ?? tool;
}

/** Gatehouse params in the dialect's shape (`to: "native"`) or back (`to: "gatehouse"`). */
export function translateParams(dialect: Dialect, tool: string, params: unknown, to: "native" | "gatehouse"): unknown {
  const renames = DIALECT_SPECS[dialect].params?.[tool];
  if (!renames || typeof params !== "object" || params === null || Array.isArray(params)) return params;
  const pairs = Object.entries(renames);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(params)) {
    const pair = pairs.find((p) => p[to === "native" ? 0 : 1] === key);
    out[pair ? pair[to === "native" ? 1 : 0] : key] = value;
  }
  return out;
}

export function isDialect(name: string): name is Dialect {
  return (DIALECTS as readonly string[]).includes(name);
}

/** A configured `timeout` converted to milliseconds, or the dialect's default for the event. */
export function timeoutMsFor(dialect: Dialect, event: CommandHookEvent, timeout: number | undefined): number {
  const d = DIALECT_SPECS[dialect];
  if (timeout === undefined) return d.defaultTimeoutMs(event);
  return d.timeoutUnit === "s" ? timeout * 1000 : timeout;
}

/** A timeout that is probably in the other unit (the most common copy-paste mistake across tools). */
export function suspiciousTimeout(dialect: Dialect, timeout: number): string | undefined {
  if (DIALECT_SPECS[dialect].timeoutUnit === "s") {
    if (timeout >= 1000) {
      return `timeout ${timeout} is in seconds in the "${dialect}" dialect (${formatDuration(timeout * 1000)}); it looks like milliseconds`;
    }
  } else if (timeout < 100) {
    return `timeout ${timeout} is in milliseconds in the "${dialect}" dialect; it looks like seconds`;
  }
  return undefined;
}

function formatDuration(ms: number): string {
  const h = ms / 3_600_000;
  return h >= 1 ? `${Math.round(h * 10) / 10} h` : `${Math.round(ms / 60_000)} min`;
}
