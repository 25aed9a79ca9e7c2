import { spawn } from "node:child_process";
import type { Readable } from "node:stream";
import type { Env, EnvPolicy } from "../core/env-policy.js";
import { killGroup, trackGroup, waitGroupGone } from "../core/process-groups.js";
import { envMasker, type SecretMasker } from "../core/secret-values.js";
import { mcpToolName } from "../tools/mcp-name.js";
import { substituteProjectDir } from "./diagnostics.js";
import { type Dialect, isForeign } from "./dialects.js";
import { hookEnv } from "./env.js";
import type { CommandHookEvent } from "./events.js";
import { nativePayload } from "./foreign.js";
import { expandHeaders } from "./headers.js";
import { type AgentEvaluator, type PromptEvaluator, runModelHandler, type UsageSink } from "./prompt-handler.js";
import { interpret, NO_OUTCOME, type RawOutcome } from "./protocol.js";
import type { CommandHandlerDef, HandlerDefinition, HttpHandlerDef, McpToolHandlerDef, OnFailure } from "./settings.js";
import type { NormalizedVerdict } from "./verdict.js";

/** The parts of a configured handler the executor needs (tests and `hooks test` build them directly). */
export interface RunnableHandler {
  readonly event: CommandHookEvent;
  /** A foreign dialect's event name (`BeforeTool`); absent or equal to `event` for Claude Code's. */
  readonly nativeEvent?: string;
  /** The foreign tool ignores this event's answer. */
  readonly observe?: boolean;
  readonly dialect: Dialect;
  readonly definition: HandlerDefinition;
  readonly timeoutMs: number;
  readonly onFailure: OnFailure;
  /** The folder the command runs in (default: the project). */
  readonly runDir?: string;
}

export interface ExecutorOptions {
  projectDir: string;
  /** `CLAUDE_CODE_SESSION_ID`; the payload's `session_id`, when it has one, takes precedence. */
  sessionId: string;
  /** Base environment before the policy applies (default: process.env). */
  env?: Env;
  /** Aborting kills the handler's process group; the outcome is `aborted`, never a block. */
  signal?: AbortSignal;
  /**
   * What of `env` a hook process may see, and which variables an `http` hook's headers may name
   * (default: provider keys and Gatehouse's secrets removed; `commandHooks.passEnv` adds back).
   */
  envPolicy?: EnvPolicy;
  /** Per stream; the excess is read and dropped (default 1 MiB). */
  maxOutputBytes?: number;
  /** Between SIGTERM and SIGKILL of a timed-out group (default 1000 ms). */
  killGraceMs?: number;
  /** Variables this event gives its command hooks (SessionStart's `CLAUDE_ENV_FILE`). */
  variables?: Readonly<Record<string, string>>;
  /** The model `prompt` handlers ask; without it they fail (under their onFailure). */
  evaluatePrompt?: PromptEvaluator;
  /** The read-only agent `agent` handlers run; without it they fail (under their onFailure). */
  evaluateAgent?: AgentEvaluator;
  /** Where `prompt` and `agent` handlers' model calls count their tokens: the run the event belongs to. */
  onModelUsage?: UsageSink;
  /** Calls a connected MCP server's tool for `mcp_tool` handlers; without it they fail. */
  callMcpTool?: McpToolCaller;
  /** What a handler's output is masked with (default: built from `env`, Gatehouse's environment and `envPolicy`). */
  secrets?: SecretMasker;
}

/** The text an MCP tool answered, and whether it answered with `isError`. */
export type McpToolCaller = (
  server: string,
  tool: string,
  input: Record<string, unknown>,
  signal: AbortSignal,
) => Promise<{ readonly text: string; readonly isError: boolean }>;

export interface HandlerOutcome extends RawOutcome {
  aborted: boolean;
  /** Some output went over the cap and was dropped. */
  truncated: boolean;
  droppedBytes: number;
  durationMs: number;
  verdict: NormalizedVerdict;
}

export const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;

/** Runs one handler with the hook input and interprets what it returned under its dialect. */
export async function runCommandHandler(
  handler: RunnableHandler,
  input: object,
  opts: ExecutorOptions,
): Promise<HandlerOutcome> {
  const started = performance.now();
  const def = handler.definition;
  if (def.type === "prompt" || def.type === "agent") {
    const { raw, verdict } = await runModelHandler(handler.event, def, input, {
      onFailure: handler.onFailure,
      timeoutMs: handler.timeoutMs,
      signal: opts.signal,
      env: opts.env ?? process.env,
      evaluatePrompt: opts.evaluatePrompt,
      evaluateAgent: opts.evaluateAgent,
      onUsage: opts.onModelUsage,
    });
    return { ...raw, durationMs: performance.now() - started, verdict };
  }
  const foreign = isForeign(handler.dialect);
  const sent = foreign
    ? nativePayload(handler.dialect, handler.nativeEvent ?? handler.event, input as Record<string, unknown>)
    : input;
  const payload = `${JSON.stringify(sent)}\n`;
  // The env var must equal the payload's session_id; the payload is what the hook reads first.
  const sid = (input as { session_id?: unknown }).session_id;
  const execOpts = typeof sid === "string" && sid !== "" ? { ...opts, sessionId: sid } : opts;
  // Claude Code's CLAUDE_EFFORT equals the payload's effort.level.
  const effort = (input as { effort?: { level?: unknown } }).effort?.level;
  const effortEnv: Record<string, string> = typeof effort === "string" ? { CLAUDE_EFFORT: effort } : {};
  const collected =
    def.type === "command"
      ? await runProcess(def, payload, handler.timeoutMs, {
          ...execOpts,
          extraEnv: { ...opts.variables, ...effortEnv, ...dialectEnv(handler.dialect, execOpts, def) },
          ...(handler.runDir === undefined ? {} : { runDir: handler.runDir }),
        })
      : def.type === "http"
        ? await runHttp(def, payload, handler.timeoutMs, opts)
        : await runMcpTool(def, input, handler.timeoutMs, opts);
  // A command hook runs unsandboxed and may print a secret it was not given (its parent's
  // /proc/PID/environ, a .env file): masked before anything reads its answer (src/core/secret-values.ts).
  const secrets = opts.secrets ?? envMasker([process.env, opts.env ?? {}], opts.envPolicy);
  const raw =
    secrets.size === 0
      ? collected
      : { ...collected, stdout: secrets.mask(collected.stdout), stderr: secrets.mask(collected.stderr) };
  const verdict = interpret(handler.event, raw, {
    dialect: handler.dialect,
    onFailure: handler.onFailure,
    commandLine: commandLineOf(def),
    ...(foreign
      ? {
          native: {
            event: handler.nativeEvent ?? handler.event,
            ...(handler.observe ? { observe: true } : {}),
            payload: sent as Record<string, unknown>,
          },
        }
      : {}),
  });
  return { ...raw, durationMs: performance.now() - started, verdict };
}

type Collected = Omit<HandlerOutcome, "durationMs" | "verdict">;

/** The handler as one line: the command with its arguments, the URL, or the MCP tool. */
export function commandLineOf(def: CommandHandlerDef | HttpHandlerDef | McpToolHandlerDef): string {
  if (def.type === "http") return def.url;
  if (def.type === "mcp_tool") return mcpToolName(def.server, def.tool);
  return def.args === undefined ? def.command : [def.command, ...def.args].join(" ");
}

class Capped {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  dropped = 0;
  constructor(private readonly cap: number) {}
  push(chunk: Buffer): void {
    const room = this.cap - this.size;
    if (room <= 0) {
      this.dropped += chunk.length;
      return;
    }
    const kept = chunk.length <= room ? chunk : chunk.subarray(0, room);
    this.chunks.push(kept);
    this.size += kept.length;
    this.dropped += chunk.length - kept.length;
  }
  text(): string {
    return Buffer.concat(this.chunks).toString("utf8");
  }
}

/** The variables the dialect's own tool gives its hooks (Gemini CLI's, Cursor's), and a handler's own `env`. */
function dialectEnv(dialect: Dialect, opts: ExecutorOptions, def: CommandHandlerDef): Record<string, string> {
  const own: Record<string, string> =
    dialect === "gemini"
      ? { GEMINI_PROJECT_DIR: opts.projectDir, GEMINI_CWD: opts.projectDir, GEMINI_SESSION_ID: opts.sessionId }
      : dialect === "cursor"
        ? { CURSOR_PROJECT_DIR: opts.projectDir, CURSOR_VERSION: "gatehouse" }
        : {};
  return { ...own, ...def.env };
}

function runProcess(
  def: CommandHandlerDef,
  payload: string,
  timeoutMs: number,
  opts: ExecutorOptions & { readonly extraEnv?: Readonly<Record<string, string>>; readonly runDir?: string },
) {
  const cap = opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const out = new Capped(cap);
  const err = new Capped(cap);
  const finish = (r: Partial<Collected>): Collected => ({
    exitCode: null,
    signal: null,
    timedOut: false,
    aborted: false,
    ...r,
    stdout: out.text(),
    stderr: err.text(),
    truncated: out.dropped + err.dropped > 0,
    droppedBytes: out.dropped + err.dropped,
  });
  if (opts.signal?.aborted) return Promise.resolve(finish({ aborted: true }));

  const [file, args] =
    def.args === undefined
      ? [def.shell === "bash" ? "bash" : "/bin/sh", ["-c", def.command]]
      : [
          substituteProjectDir(def.command, opts.projectDir),
          def.args.map((a) => substituteProjectDir(a, opts.projectDir)),
        ];

  return new Promise<Collected>((resolvePromise) => {
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(file, args, {
        cwd: opts.runDir ?? opts.projectDir,
        env: { ...hookEnv(opts), ...opts.extraEnv },
        stdio: ["pipe", "pipe", "pipe"],
        // Its own process group, so a timeout can kill everything it started.
        detached: true,
      });
    } catch (e) {
      resolvePromise(finish({ spawnError: (e as Error).message }));
      return;
    }
    const untrack = child.pid === undefined ? () => {} : trackGroup(child.pid);
    const state: Partial<Collected> = {};
    let done = false;
    let terminating = false;
    let closed = false;
    const settle = () => {
      if (done) return;
      done = true;
      untrack();
      clearTimeout(timer);
      opts.signal?.removeEventListener("abort", onAbort);
      resolvePromise(finish(state));
    };
    const terminate = async (why: "timeout" | "abort") => {
      if (terminating || done || child.pid === undefined) return;
      terminating = true;
      if (why === "timeout") state.timedOut = true;
      else state.aborted = true;
      const pgid = child.pid;
      killGroup(pgid, "SIGTERM");
      if (!(await waitGroupGone(pgid, opts.killGraceMs ?? 1000))) {
        killGroup(pgid, "SIGKILL");
        await waitGroupGone(pgid, 2000);
      }
      // A process that left the group (setsid) may still hold our pipes; stop waiting for it.
      if (!closed) {
        (child.stdout as Readable).destroy();
        (child.stderr as Readable).destroy();
      }
      settle();
    };
    const onAbort = () => void terminate("abort");
    const timer = setTimeout(() => void terminate("timeout"), timeoutMs);
    opts.signal?.addEventListener("abort", onAbort, { once: true });

    child.on("error", (e) => {
      state.spawnError = e.message;
      if (child.pid === undefined) settle();
    });
    child.on("exit", (code, signal) => {
      state.exitCode = code;
      state.signal = signal;
    });
    child.on("close", (code, signal) => {
      closed = true;
      state.exitCode ??= code;
      state.signal ??= signal;
      if (!terminating) settle();
    });
    (child.stdout as Readable).on("data", (c: Buffer) => out.push(c));
    (child.stderr as Readable).on("data", (c: Buffer) => err.push(c));
    // A hook may exit without reading its input: the write then fails with EPIPE, which is fine.
    child.stdin?.on("error", () => {});
    child.stdin?.end(payload);
  });
}

async function runHttp(def: HttpHandlerDef, payload: string, timeoutMs: number, opts: ExecutorOptions) {
  const cap = opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const body = new Capped(cap);
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout;
  const result = (r: Partial<Collected>): Collected => ({
    exitCode: null,
    signal: null,
    stderr: "",
    timedOut: false,
    aborted: false,
    ...r,
    stdout: body.text(),
    truncated: body.dropped > 0,
    droppedBytes: body.dropped,
  });
  if (opts.signal?.aborted) return result({ aborted: true });
  try {
    const res = await fetch(def.url, {
      method: "POST",
      headers: { "content-type": "application/json", ...expandHeaders(def, opts.env ?? process.env, opts.envPolicy) },
      body: payload,
      signal,
    });
    if (res.body) {
      for await (const chunk of res.body) body.push(Buffer.from(chunk));
    }
    const ok = res.status >= 200 && res.status <= 299;
    return result({ exitCode: ok ? 0 : null, httpStatus: res.status });
  } catch (e) {
    if (opts.signal?.aborted) return result({ aborted: true });
    if (timeout.aborted) return result({ timedOut: true });
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    return result({ spawnError: cause?.code ?? cause?.message ?? (e as Error).message });
  }
}

/**
 * An `mcp_tool` handler: the tool's text is its stdout; an `isError` answer is a non-zero exit
 * with the text as stderr. The call goes straight to the server: no tool hook sees it.
 */
async function runMcpTool(
  def: McpToolHandlerDef,
  hookInput: object,
  timeoutMs: number,
  opts: ExecutorOptions,
): Promise<Collected> {
  const base: Collected = { ...NO_OUTCOME };
  if (opts.signal?.aborted) return { ...base, aborted: true };
  if (!opts.callMcpTool) return { ...base, spawnError: `MCP server "${def.server}" is not connected` };
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout;
  try {
    const input = interpolate(def.input ?? {}, hookInput) as Record<string, unknown>;
    const r = await opts.callMcpTool(def.server, def.tool, input, signal);
    return r.isError ? { ...base, exitCode: 1, stderr: r.text } : { ...base, exitCode: 0, stdout: r.text };
  } catch (e) {
    if (opts.signal?.aborted) return { ...base, aborted: true };
    if (timeout.aborted) return { ...base, timedOut: true };
    return { ...base, spawnError: (e as Error).message };
  }
}

/** `${a.b}` in the string values of `value`, replaced by that path of the hook input ("" when absent). */
export function interpolate(value: unknown, hookInput: object): unknown {
  if (typeof value === "string")
    return value.replace(/\$\{([A-Za-z0-9_.]+)\}/g, (_m, path: string) => {
      const found = path
        .split(".")
        .reduce<unknown>((at, key) => (at as Record<string, unknown> | undefined)?.[key], hookInput);
      return found === undefined || found === null ? "" : typeof found === "string" ? found : JSON.stringify(found);
    });
  if (Array.isArray(value)) return value.map((v) => interpolate(v, hookInput));
  if (typeof value === "object" && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, hookInput)]));
  return value;
}
