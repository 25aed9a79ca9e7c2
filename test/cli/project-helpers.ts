import { fileURLToPath } from "node:url";
import { type CliOptions, type CliResult, runCli } from "./helpers.js";

const TTY = fileURLToPath(new URL("fixtures/tty.mjs", import.meta.url));
const TERMINAL = fileURLToPath(new URL("fixtures/terminal.mjs", import.meta.url));

/** ESC [: every color (and most other terminal escape sequences) starts with it. */
export const ESC = `${String.fromCharCode(27)}[`;

/** A color code (an SGR sequence), as opposed to the cursor movements of line editing. */
const SGR = `${String.fromCharCode(27)}\\[\\d+(;\\d+)*m`;

/** The text without color codes. */
export function uncolored(text: string): string {
  return text.replace(new RegExp(SGR, "g"), "");
}

/** Runs `gatehouse …` with stdout and stderr claiming to be a terminal. */
export function gatehouseOnTty(args: readonly string[], options: CliOptions): Promise<CliResult> {
  return runCli([TTY], args, options);
}

/** Runs `gatehouse …` with stdin too claiming to be a terminal: keys are typed into it (`\r` ends a line, `\x03` is Ctrl-C). */
export function gatehouseOnTerminal(args: readonly string[], options: CliOptions): Promise<CliResult> {
  return runCli([TERMINAL], args, options);
}

/** What a terminal shows of `text`: each line from its last `\r` + erase-line on (a redrawn status line leaves only its last state). */
export function onScreen(text: string): string {
  return text
    .split("\n")
    .map((line) => line.slice(line.lastIndexOf("\r\x1b[2K") < 0 ? 0 : line.lastIndexOf("\r\x1b[2K") + 5))
    .join("\n");
}

/** Whether the text holds a color code. */
export function hasColor(text: string): boolean {
  return new RegExp(SGR).test(text);
}

/** The single JSON value a `--json` command printed on one line. */
export function parseJson(result: CliResult): unknown {
  const lines = result.stdout.split("\n").filter(Boolean);
  if (lines.length !== 1) throw new Error(`one JSON line expected, got: ${result.stdout}\n${result.stderr}`);
  return JSON.parse(lines[0] ?? "");
}
