import pc from "picocolors";
import { lazyRequire } from "../core/lazy-require.js";
import { maskSecrets } from "../core/secrets.js";
import type { HostLogger } from "../plugins/host.js";
import { terminalJson, terminalLine } from "./terminal.js";

export { terminalJson, terminalLine, terminalText } from "./terminal.js";

type Env = Readonly<Record<string, string | undefined>>;

/** Where the CLI writes; a `tty` stream may get colors. */
export interface OutStream {
  write(text: string, callback?: (error?: Error | null) => void): boolean;
  readonly isTTY?: boolean;
}

/** Colors only on a terminal, and never when NO_COLOR is set to anything non-empty. */
export function colorsFor(stream: OutStream, env: Env): ReturnType<typeof pc.createColors> {
  return pc.createColors(stream.isTTY === true && !env.NO_COLOR);
}

const LEVELS = ["debug", "info", "warn", "error"] as const;
type Level = (typeof LEVELS)[number];

export interface CliLogger extends HostLogger {
  /** The same lines, in the shape the MCP client logs with. */
  readonly mcp: {
    warn(obj: Record<string, unknown>, msg: string): void;
    debug(obj: Record<string, unknown>, msg: string): void;
  };
}

/**
 * Diagnostics for stderr: one line a call, `gatehouse: ` first. Credentials are masked (URL
 * passwords, `--token` values, …, whoever wrote the message: us, a provider, a driver, an MCP
 * server) and the line is sanitized for the terminal (escape sequences and controls shown as
 * placeholders, newlines flattened), so nothing a message carries can forge a second line or
 * repaint the screen. `GATEHOUSE_LOG_LEVEL` (debug, info, warn, error; default warn) sets how
 * much is shown.
 */
export function createCliLogger(stream: OutStream, env: Env, options: { readonly verbose?: boolean } = {}): CliLogger {
  const wanted = LEVELS.indexOf((env.GATEHOUSE_LOG_LEVEL ?? "").toLowerCase() as Level);
  // --verbose: debug lines, except an MCP server's own stderr (its text, not our metadata).
  const threshold = options.verbose ? 0 : wanted < 0 ? LEVELS.indexOf("warn") : wanted;
  const serverDebug = wanted === 0;
  const c = colorsFor(stream, env);
  const paint: Record<Level, (s: string) => string> = { debug: c.dim, info: c.dim, warn: c.yellow, error: c.red };
  const write = (level: Level, message: string) =>
    stream.write(`${paint[level]("gatehouse:")} ${terminalLine(maskSecrets(message))}\n`);
  const json = env.GATEHOUSE_LOG_FORMAT?.toLowerCase() === "json";
  // pino (~70 ms to load) only when debug lines or JSON lines are asked for: the default stays light.
  const emit = json || threshold === 0 ? pinoLines(stream, LEVELS[threshold] as Level, json, write) : undefined;
  const line = (level: Level) => (message: string) => {
    if (LEVELS.indexOf(level) < threshold) return;
    if (emit) emit(level, message);
    else write(level, message);
  };
  const logger = { debug: line("debug"), info: line("info"), warn: line("warn"), error: line("error") };
  return {
    ...logger,
    debugEnabled: threshold === 0,
    mcp: { warn: (_obj, msg) => logger.warn(msg), debug: (_obj, msg) => serverDebug && logger.debug(msg) },
  };
}

const loadPino = lazyRequire<typeof import("pino")>("pino");

/**
 * Log lines through pino: with `GATEHOUSE_LOG_FORMAT=json`, pino's own JSON lines (time, level,
 * msg; secrets masked); otherwise pino decides and the line is printed as every other `gatehouse:` line.
 */
function pinoLines(
  stream: OutStream,
  level: Level,
  json: boolean,
  write: (level: Level, message: string) => void,
): (level: Level, message: string) => void {
  const { pino, stdTimeFunctions } = loadPino();
  const destination = json
    ? { write: (text: string) => stream.write(maskSecrets(text)) }
    : {
        write: (text: string) => {
          const entry = JSON.parse(text) as { level: Level; msg: string };
          write(entry.level, entry.msg);
        },
      };
  const logger = pino(
    {
      level,
      base: null,
      timestamp: json ? stdTimeFunctions.isoTime : false,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
  return (lvl, message) => logger[lvl](json ? terminalLine(message) : message);
}

/** `--json` output: one JSON line, escaped for a terminal (`terminalJson`). */
export function writeJson(stream: OutStream, value: unknown): Promise<void> {
  return writeOut(stream, `${terminalJson(value)}\n`);
}

/** Resolves once `text` has been handed to the stream (so `process.exit` loses nothing). */
export function writeOut(stream: OutStream, text: string): Promise<void> {
  return new Promise((resolve) => {
    stream.write(text, () => resolve());
  });
}
