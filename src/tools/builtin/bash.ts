import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { DEFAULT_ENV_POLICY, type Env, type EnvPolicy } from "../../core/env-policy.js";
import { trackGroup } from "../../core/process-groups.js";
import type { BashSandbox } from "../../sandbox/bash.js";
import { type Tool, ToolError } from "../types.js";
import { CappedText } from "./capped-text.js";

export const BASH_DEFAULTS = {
  defaultTimeoutMs: 120_000,
  maxTimeoutMs: 600_000,
  maxOutputChars: 30_000,
  killGraceMs: 1_000,
} as const;

export const BashInputSchema = z.object({
  command: z.string().min(1).describe("The command to execute"),
  timeout: z
    .number()
    .positive()
    .max(BASH_DEFAULTS.maxTimeoutMs)
    .optional()
    .describe(`Optional timeout in milliseconds (max ${BASH_DEFAULTS.maxTimeoutMs})`),
  description: z.string().optional().describe("A short description of what this command does, in 5-10 words"),
  dangerouslyDisableSandbox: z
    .boolean()
    .optional()
    .describe(
      "Run this command outside the sandbox (after the sandbox refused it); it then goes through the permission check",
    ),
});
export type BashInput = z.infer<typeof BashInputSchema>;

/** Claude Code's Bash result (`{stdout, stderr, interrupted}`), plus the exit status. */
export interface BashOutput {
  readonly stdout: string;
  readonly stderr: string;
  /** True when the timeout or the run's abort signal killed the command's process group. */
  readonly interrupted: boolean;
  /** null when the process ended on a signal. */
  readonly exitCode: number | null;
  readonly signal?: NodeJS.Signals;
  /** Set when a non-zero exit code is a normal answer (grep found nothing, diff found differences). */
  readonly returnCodeInterpretation?: string;
}

export interface BashOptions {
  /** Defaults to /bin/bash, or /bin/sh where bash is missing. */
  readonly shell?: string;
  readonly defaultTimeoutMs?: number;
  readonly maxOutputChars?: number;
  /** Time between SIGTERM and SIGKILL to the process group, and after SIGKILL before giving up on its pipes. */
  readonly killGraceMs?: number;
  /** The environment the command's is made from (default: process.env), before the policy removes what it must. */
  readonly env?: Env;
  /** What of `env` the command may see (default: provider keys and Gatehouse's secrets removed). */
  readonly envPolicy?: EnvPolicy;
  /** The OS sandbox commands run in (docs/security.md#sandbox); without it, or when it is not active, they run unsandboxed. */
  readonly sandbox?: BashSandbox;
}

let detectedShell: string | undefined;
function defaultShell(): string {
  detectedShell ??= existsSync("/bin/bash") ? "/bin/bash" : "/bin/sh";
  return detectedShell;
}

export function createBashTool(options: BashOptions = {}): Tool<BashInput, BashOutput> {
  const { defaultTimeoutMs, maxOutputChars, killGraceMs } = { ...BASH_DEFAULTS, ...options };
  const sandbox = options.sandbox?.active ? options.sandbox : undefined;
  return {
    name: "Bash",
    description:
      "Executes a shell command in the project directory and returns its stdout and stderr. Each call starts a " +
      `fresh shell. Timeout: ${defaultTimeoutMs} ms by default (max ${BASH_DEFAULTS.maxTimeoutMs}); on timeout the ` +
      `command and everything it started are killed. Each stream is capped at ${maxOutputChars} characters. ` +
      "A non-zero exit code is reported as an error. " +
      (sandbox
        ? "Commands run in a sandbox: they may write only in the project and $TMPDIR, credential files are " +
          "unreadable, hosts not allowed are refused or asked about, and every process a command started ends " +
          "with the call (background jobs included)."
        : "Background processes that keep the output open hold the call until they exit; redirect their output " +
          "(`cmd > log 2>&1 &`) to leave them running."),
    inputSchema: BashInputSchema,
    parallel: false,
    async execute(input, ctx) {
      const timeoutMs = Math.floor(input.timeout ?? defaultTimeoutMs);
      const shell = options.shell ?? defaultShell();
      const wrapped = sandbox?.runsSandboxed(input)
        ? await sandbox.wrap(input.command, shell, ctx.cwd, {
            signal: ctx.signal,
            ...(ctx.askNetwork ? { ask: ctx.askNetwork } : {}),
            ...(ctx.sandboxRefused ? { refused: ctx.sandboxRefused } : {}),
          })
        : undefined;
      const result = await runShellCommand(input.command, {
        shell,
        ...(wrapped ? { argv: wrapped.argv } : {}),
        cwd: ctx.cwd,
        // A hook's variables meet the same policy: no provider key reaches a command unless passEnv allows it.
        env: (options.envPolicy ?? DEFAULT_ENV_POLICY).environment(
          { ...(options.env ?? process.env), ...ctx.env },
          "bash",
        ),
        signal: ctx.signal,
        timeoutMs,
        maxOutputChars,
        killGraceMs,
      }).finally(() => wrapped?.release());
      if (result.interrupted || result.exitCode === 0) return result;
      const interpretation = interpretExitCode(input.command, result.exitCode);
      if (interpretation !== undefined) return { ...result, returnCodeInterpretation: interpretation };
      // Claude Code reports a failed command as a tool error whose first line is "Exit code N"
      // (PostToolUseFailure's `error`); the structured output rides along as details.
      const status =
        result.exitCode === null ? `Killed by signal ${result.signal ?? "unknown"}` : `Exit code ${result.exitCode}`;
      const text = [result.stdout.trimEnd(), result.stderr.trimEnd()].filter((s) => s !== "").join("\n");
      throw new ToolError(text === "" ? status : `${status}\n${text}`, { details: result });
    },
    toModelOutput(output) {
      const parts = [output.stdout.trimEnd(), output.stderr.trimEnd()].filter((s) => s !== "");
      if (output.returnCodeInterpretation !== undefined) {
        parts.push(`(exit code ${output.exitCode}: ${output.returnCodeInterpretation})`);
      }
      // Claude Code's words for a silent command.
      return parts.length === 0 ? "(Bash completed with no output)" : parts.join("\n");
    },
  };
}

export interface RunShellOptions {
  readonly shell: string;
  /** What to spawn instead of `shell -c command` (the sandbox's wrapper around it). */
  readonly argv?: readonly string[];
  readonly cwd: string;
  /** Passed as it is: the caller applies the environment policy. */
  readonly env: NodeJS.ProcessEnv;
  readonly signal: AbortSignal;
  readonly timeoutMs: number;
  readonly maxOutputChars: number;
  readonly killGraceMs: number;
}

/**
 * Runs `shell -c command` in its own process group. The timeout and the abort signal kill the
 * whole group (SIGTERM, then SIGKILL after the grace), so background children die with it.
 * Settles once both pipes close, or at the latest one grace after SIGKILL (a process that left
 * the group may still hold them).
 */
export function runShellCommand(command: string, opts: RunShellOptions): Promise<BashOutput> {
  if (opts.signal.aborted) {
    return Promise.resolve({
      stdout: "",
      stderr: "Command was aborted before it started.",
      interrupted: true,
      exitCode: null,
    });
  }
  return new Promise((resolve, reject) => {
    const stdout = new CappedText(opts.maxOutputChars);
    const stderr = new CappedText(opts.maxOutputChars);
    const [file, ...args] = opts.argv ?? [opts.shell, "-c", command];
    const child = spawn(file as string, args, {
      cwd: opts.cwd,
      env: opts.env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const untrack = child.pid === undefined ? () => {} : trackGroup(child.pid);
    let interruptedBy: "timeout" | "abort" | undefined;
    let exitCode: number | null = null;
    let exitSignal: NodeJS.Signals | null = null;
    let settled = false;
    const timers: NodeJS.Timeout[] = [];

    const killGroup = (sig: NodeJS.Signals) => {
      if (settled || child.pid === undefined) return;
      try {
        process.kill(-child.pid, sig);
      } catch {
        // ESRCH: the group is already gone.
      }
    };
    const interrupt = (why: "timeout" | "abort") => {
      if (interruptedBy !== undefined || settled) return;
      interruptedBy = why;
      killGroup("SIGTERM");
      timers.push(
        setTimeout(() => {
          killGroup("SIGKILL");
          timers.push(setTimeout(() => finish(), opts.killGraceMs));
        }, opts.killGraceMs),
      );
    };
    const onAbort = () => interrupt("abort");
    const cleanup = () => {
      settled = true;
      untrack();
      for (const t of timers) clearTimeout(t);
      opts.signal.removeEventListener("abort", onAbort);
    };
    const finish = () => {
      if (settled) return;
      // A member that ignored SIGTERM but let go of the pipes would otherwise outlive the call.
      if (interruptedBy !== undefined) killGroup("SIGKILL");
      cleanup();
      child.stdout?.destroy();
      child.stderr?.destroy();
      let err = stderr.toString();
      if (interruptedBy === "timeout")
        err += `${err && !err.endsWith("\n") ? "\n" : ""}Command timed out after ${opts.timeoutMs} ms; its process group was killed.`;
      if (interruptedBy === "abort")
        err += `${err && !err.endsWith("\n") ? "\n" : ""}Command was aborted; its process group was killed.`;
      resolve({
        stdout: stdout.toString(),
        stderr: err,
        interrupted: interruptedBy !== undefined,
        exitCode,
        ...(exitSignal !== null ? { signal: exitSignal } : {}),
      });
    };

    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => stdout.push(chunk));
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => stderr.push(chunk));
    child.on("error", (err) => {
      if (settled) return;
      cleanup();
      // spawn reports a missing cwd as the shell being missing; say which it really is.
      const reason = existsSync(opts.cwd) ? err.message : `working directory ${opts.cwd} does not exist`;
      reject(new ToolError(`Could not start ${path.basename(opts.shell)}: ${reason}`, { cause: err }));
    });
    child.on("exit", (code, sig) => {
      exitCode = code;
      exitSignal = sig;
    });
    child.on("close", (code, sig) => {
      exitCode = code;
      exitSignal = sig;
      finish();
    });
    timers.push(setTimeout(() => interrupt("timeout"), opts.timeoutMs));
    opts.signal.addEventListener("abort", onAbort, { once: true });
  });
}

const EXIT_ONE_MEANINGS: Readonly<Record<string, string>> = {
  grep: "No matches found",
  egrep: "No matches found",
  fgrep: "No matches found",
  rg: "No matches found",
  diff: "Files differ",
  cmp: "Files differ",
  test: "Condition is false",
  "[": "Condition is false",
};

/**
 * Like Claude Code, exit code 1 of a few well-known commands is an answer, not a failure. Only the
 * last command of the line decides, since it sets the exit status.
 */
export function interpretExitCode(command: string, exitCode: number | null): string | undefined {
  if (exitCode !== 1) return undefined;
  const segments = command.split(/\|\||&&|[|;&\n]/).map((s) => s.trim());
  const last = segments.filter((s) => s !== "").at(-1);
  if (last === undefined) return undefined;
  const words = last.split(/\s+/).filter((w) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w));
  const name = words[0] === undefined ? undefined : path.basename(words[0]);
  return name === undefined ? undefined : EXIT_ONE_MEANINGS[name];
}
