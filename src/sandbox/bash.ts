import { homedir } from "node:os";
import { commandsOf, matchesCommand, type PermissionRule, parseRule } from "../permissions/rules.js";
import { type SandboxPolicy, type SandboxPolicyOptions, sandboxPolicy } from "./policy.js";
import { readsDenied, type SandboxRefusalKind } from "./refusals.js";
import { type NetworkAsk, sandboxAvailability, type WrappedCommand, wrapInSandbox } from "./runtime.js";
import { autoAllowsBash, DEFAULT_SANDBOX_SETTINGS, type SandboxSettings } from "./settings.js";

/** What the Bash tool needs of the sandbox for one call. */
export interface BashCallSandbox {
  readonly signal?: AbortSignal;
  /** The permission flow for a host no list names (absent: such a host is refused). */
  readonly ask?: NetworkAsk;
  /** A refusal, for the audit trail (kind only: no path, no host); each kind at most once per call. */
  readonly refused?: (kind: SandboxRefusalKind) => void;
}

/**
 * The sandbox of one Gatehouse's Bash tool: whether it is on, and the policy each command runs
 * under (docs/security.md#sandbox).
 */
export interface BashSandbox {
  /** True when commands run sandboxed (enabled, and the platform can). */
  readonly active: boolean;
  /** For `hooks check`: on or off and who said so, or unavailable and why. */
  readonly status: string;
  /** Set when the sandbox should run but cannot: the one line printed at start. */
  readonly unavailable?: string;
  /** `failIfUnavailable`: Gatehouse must not start. */
  readonly mustNotStart: boolean;
  readonly settings: SandboxSettings;
  readonly policy: SandboxPolicy;
  /** Whether this Bash input runs sandboxed (not excluded, no honoured `dangerouslyDisableSandbox`). */
  runsSandboxed(input: unknown): boolean;
  /** Auto-allow applies: the permission check lets a sandboxed call run without asking. */
  readonly autoAllow: boolean;
  wrap(command: string, shell: string, cwd: string, call: BashCallSandbox): Promise<WrappedCommand>;
}

export interface BashSandboxOptions extends Partial<SandboxPolicyOptions> {
  readonly projectDir: string;
  readonly settings?: SandboxSettings;
  readonly rules?: readonly PermissionRule[];
}

export function createBashSandbox(options: BashSandboxOptions): BashSandbox {
  const settings = options.settings ?? DEFAULT_SANDBOX_SETTINGS;
  const homeDir = options.homeDir ?? homedir();
  const policy = sandboxPolicy(settings, options.rules ?? [], { ...options, homeDir });
  const paths = {
    ...(settings.bwrapPath ? { bwrapPath: settings.bwrapPath } : {}),
    ...(settings.socatPath ? { socatPath: settings.socatPath } : {}),
  };
  const wanted = settings.enabled !== false;
  const availability = wanted ? sandboxAvailability(paths) : undefined;
  const active = availability?.available === true;
  const from = settings.enabledFrom ? ` (sandbox.enabled in ${settings.enabledFrom})` : " (the default)";
  const unavailable =
    availability?.available === false
      ? `sandbox unavailable: ${availability.reason}; Bash commands run unsandboxed`
      : undefined;
  const status = !wanted
    ? `off${from}`
    : active
      ? `on${from}`
      : `unavailable: ${availability?.available === false ? availability.reason : ""}`;
  const excluded = settings.excludedCommands.map((entry, n) => excludedRule(entry, n));
  const isExcluded = (input: unknown) => {
    if (excluded.length === 0) return false;
    const commands = commandsOf(input);
    // A line the shell reader cannot split is matched as a whole, as a rule would be.
    // Every command of the line must be excluded: `docker ps; cat ~/.ssh/id_rsa` stays sandboxed.
    return commands === undefined ? false : commands.every((c) => excluded.some((rule) => matchesCommand(rule, c)));
  };
  const runsSandboxed = (input: unknown) => {
    if (!active) return false;
    const disable = (input as { dangerouslyDisableSandbox?: unknown } | null)?.dangerouslyDisableSandbox === true;
    if (disable && settings.allowUnsandboxedCommands) return false;
    return !isExcluded(input);
  };
  return {
    active,
    status,
    ...(unavailable ? { unavailable } : {}),
    mustNotStart: unavailable !== undefined && settings.failIfUnavailable,
    settings,
    policy,
    runsSandboxed,
    autoAllow: active && autoAllowsBash(settings),
    async wrap(command, shell, cwd, call) {
      const refused = call.refused && oncePerKind(call.refused);
      const wrapped = await wrapInSandbox(command, {
        shell,
        cwd,
        policy,
        ...paths,
        ...(call.signal ? { signal: call.signal } : {}),
        ...(call.ask ? { ask: call.ask } : {}),
        ...(refused ? { refused } : {}),
      });
      if (!refused || !readsDenied(command, cwd, policy)) return wrapped;
      return {
        argv: wrapped.argv,
        release() {
          wrapped.release();
          refused("filesystem");
        },
      };
    },
  };
}

/** `report`, called at most once for each kind. */
function oncePerKind(report: (kind: SandboxRefusalKind) => void): (kind: SandboxRefusalKind) => void {
  const seen = new Set<SandboxRefusalKind>();
  return (kind) => {
    if (seen.has(kind)) return;
    seen.add(kind);
    report(kind);
  };
}

/** An `excludedCommands` entry is the content of a `Bash(…)` rule. */
function excludedRule(entry: string, n: number): PermissionRule {
  const parsed = parseRule(`Bash(${entry})`, "allow");
  // The settings schema refuses an entry that is not a Bash pattern; one that got here anyway
  // must not become a rule that excludes every command from the sandbox.
  if (typeof parsed === "string") throw new Error(`sandbox.excludedCommands: ${parsed}`);
  return {
    behavior: "allow",
    rule: entry,
    parsed,
    id: `sandbox.excluded.${n}`,
    source: "sandbox",
    baseDir: "/",
  };
}
