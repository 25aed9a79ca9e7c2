/**
 * What a plugin that failed to load or set up says, for its author: the error's own message
 * (secrets masked; it is the author's text, not a hook verdict, so there is no internal reason to
 * withhold) and where — file:line:column, and a code frame for a syntax error. Errors a handler
 * throws while a run is going are another matter: they can carry what the handler saw, and stay
 * reduced to their class and location (hooks/sanitize.ts).
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { maskSecrets } from "../core/secrets.js";

export interface PluginErrorReport {
  /** `SyntaxError: Unexpected token at /p/syntax.ts:4:14`, `Error: config value 'team' is required at /p/t.ts:6:22`. */
  readonly text: string;
  /** The source lines around a syntax error, the offending column marked. */
  readonly frame?: readonly string[];
}

const MAX_MESSAGE = 300;
// biome-ignore lint/suspicious/noControlCharactersInRegex: flattening control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g;
/** jiti's parse failure: `ParseError: Unexpected token \n /p/syntax.ts:4:14`. */
const JITI_PARSE = /^\s*(?:ParseError|SyntaxError):\s*([\s\S]*?)\s*\n\s*(\S+?):(\d+):(\d+)\s*$/;
/** Node's, for a native module: the stack opens with `file:///p/x.mjs:4`, the line, then a caret. */
const NODE_SYNTAX = /^((?:file:\/\/)?\/[^\n]+?):(\d+)\n[^\n]*\n(\s*)\^/;
const FRAME = /\(?((?:file|node):[^\s()]+|\/[^\s()]+):(\d+):(\d+)\)?$/;

const oneLine = (text: string) => {
  const flat = maskSecrets(text.replace(CONTROL, " ").replace(/ {2,}/g, " ").trim());
  return flat.length > MAX_MESSAGE ? `${flat.slice(0, MAX_MESSAGE - 1)}…` : flat;
};
const pathOf = (location: string) => (location.startsWith("file://") ? fileURLToPath(location) : location);

/** The report for an error thrown while importing a plugin module or running its `setup`. */
export function reportPluginError(error: unknown, pluginFile?: string): PluginErrorReport {
  if (!(error instanceof Error)) {
    const what = typeof error === "string" ? `: ${oneLine(error)}` : ` (${error === null ? "null" : typeof error})`;
    return { text: `a non-Error value was thrown${what}` };
  }
  const parse = JITI_PARSE.exec(error.message);
  if (parse) {
    const [, message = "", file = "", line = "0", column = "0"] = parse;
    return syntaxReport(message, pathOf(file), Number(line), Number(column));
  }
  const native = error.name === "SyntaxError" ? NODE_SYNTAX.exec(error.stack ?? "") : null;
  if (native) {
    const [, file = "", line = "0", indent = ""] = native;
    return syntaxReport(error.message, pathOf(file), Number(line), indent.length + 1);
  }
  const name = /^[A-Z][A-Za-z0-9]{0,60}$/.test(error.name) ? error.name : "Error";
  const frames = (error.stack ?? "")
    .split("\n")
    .filter((l) => /^\s+at /.test(l))
    .map((l) => FRAME.exec(l))
    .filter((m): m is RegExpExecArray => m !== null);
  const own = frames.find((m) => pluginFile !== undefined && pathOf(m[1] ?? "") === pluginFile) ?? frames[0];
  const where = own ? ` at ${pathOf(own[1] ?? "")}:${own[2]}:${own[3]}` : "";
  const message = oneLine(error.message);
  return { text: `${name}${message ? `: ${message}` : ""}${where}` };
}

function syntaxReport(message: string, file: string, line: number, column: number): PluginErrorReport {
  const text = `SyntaxError: ${oneLine(message)} at ${file}:${line}:${column}`;
  let source: string[];
  try {
    source = readFileSync(file, "utf8").split(/\r?\n/);
  } catch {
    return { text };
  }
  const first = Math.max(1, line - 2);
  const last = Math.min(source.length, line + 2);
  const width = String(last).length;
  const frame: string[] = [];
  for (let n = first; n <= last; n++) {
    const code = maskSecrets((source[n - 1] ?? "").replace(CONTROL, " ").replace(/\s+$/, "")).slice(0, 200);
    frame.push(`${n === line ? ">" : " "} ${String(n).padStart(width)} | ${code}`);
    if (n === line) frame.push(`  ${" ".repeat(width)} | ${" ".repeat(Math.max(0, column - 1))}^`);
  }
  return { text, frame };
}
