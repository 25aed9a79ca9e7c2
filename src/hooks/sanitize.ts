/**
 * Log lines about hook failures. A handler's error message can carry anything it had in
 * hand (event content, a block reason, a secret), so it is never logged: only the error's
 * class name and where it was thrown, which point a plugin author at the line without
 * repeating what the plugin saw.
 */
import { maskSecrets } from "../core/secrets.js";

const MAX_LINE = 500;
// biome-ignore lint/suspicious/noControlCharactersInRegex: removing control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g;

/** One log line: control characters flattened, credentials masked (`maskSecrets`), at most 500 characters. */
export function sanitizeLogLine(line: string): string {
  const clean = maskSecrets(line.replace(CONTROL, " ").replace(/ {2,}/g, " ").trim());
  return clean.length > MAX_LINE ? `${clean.slice(0, MAX_LINE - 1)}…` : clean;
}

// `name` is writable data like `message`: only a value shaped like an error class name is
// logged, so `error.name = "sk_live_…"` (or any identifier-looking secret) is not.
const ERROR_CLASS_NAME = /^(?:Error|[A-Z][A-Za-z0-9]{0,60}(?:Error|Exception))$/;

/** `TypeError at file:///…/plugin.ts:12:9` — the class and the first stack frame, nothing of the message. */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return `non-Error value (${error === null ? "null" : typeof error})`;
  const name = ERROR_CLASS_NAME.test(error.name) ? error.name : "Error";
  const frame = error.stack
    ?.split("\n")
    .find((l) => /^\s+at /.test(l))
    ?.match(/\(?((?:file|node):[^\s()]+|\/[^\s()]+):(\d+):(\d+)\)?$/);
  return frame ? `${name} at ${frame[1]}:${frame[2]}:${frame[3]}` : name;
}
