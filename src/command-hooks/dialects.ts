import { type CommandHookEvent, EVENT_SPECS } from "./events.js";

/**
 * How a source's hooks speak: the exit-code polarity, when stdout JSON is read, and the
 * unit of `timeout`. One settings file cannot tell which tool it was written for, so the
 * dialect is configured per source (`commandHooks.dialects`).
 */
export const DIALECTS = ["claude", "claude-2025", "code-puppy"] as const;
export type Dialect = (typeof DIALECTS)[number];

export interface DialectSpec {
  readonly timeoutUnit: "s" | "ms";
  /** Late-2025 Claude Code read stdout JSON on exit 0 only. */
  readonly jsonOnExitZeroOnly: boolean;
  /** The exit code that blocks (Code Puppy inverted Claude Code's 2). */
  readonly blockingExit: number;
  /** An exit code whose stderr is non-blocking feedback, if the dialect has one. */
  readonly feedbackExit: number | null;
  defaultTimeoutMs(event: CommandHookEvent): number;
}

export const DIALECT_SPECS: Readonly<Record<Dialect, DialectSpec>> = {
  claude: {
    timeoutUnit: "s",
    jsonOnExitZeroOnly: false,
    blockingExit: 2,
    feedbackExit: null,
    defaultTimeoutMs: (event) => EVENT_SPECS[event].defaultTimeoutSec * 1000,
  },
  "claude-2025": {
    timeoutUnit: "s",
    jsonOnExitZeroOnly: true,
    blockingExit: 2,
    feedbackExit: null,
    defaultTimeoutMs: () => 60_000,
  },
  "code-puppy": {
    timeoutUnit: "ms",
    jsonOnExitZeroOnly: false,
    blockingExit: 1,
    feedbackExit: 2,
    // Code Puppy's own default; its authors size their hooks for it.
    defaultTimeoutMs: () => 5_000,
  },
};

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
