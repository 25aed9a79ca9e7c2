import { fileURLToPath } from "node:url";
import { type CliOptions, type CliResult, runCli } from "./helpers.js";

const TTY = fileURLToPath(new URL("fixtures/tty.mjs", import.meta.url));

/** ESC [: every color (and most other terminal escape sequences) starts with it. */
export const ESC = `${String.fromCharCode(27)}[`;

/** The text without color codes. */
export function uncolored(text: string): string {
  return text.replace(new RegExp(`${String.fromCharCode(27)}\\[\\d+(;\\d+)*m`, "g"), "");
}

/** Runs `gatehouse …` with stdout and stderr claiming to be a terminal. */
export function gatehouseOnTty(args: readonly string[], options: CliOptions): Promise<CliResult> {
  return runCli([TTY], args, options);
}

/** The single JSON value a `--json` command printed on one line. */
export function parseJson(result: CliResult): unknown {
  const lines = result.stdout.split("\n").filter(Boolean);
  if (lines.length !== 1) throw new Error(`one JSON line expected, got: ${result.stdout}\n${result.stderr}`);
  return JSON.parse(lines[0] ?? "");
}
