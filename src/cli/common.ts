// What the project commands (sessions, audit, plugins, config, init) share at registration time.
// main.ts loads their modules at start-up, so this file stays light: commander's types and the
// exit codes only. Everything that touches config, the store or the runtime is imported when a
// command runs.
import type { Command } from "commander";
import type { CliIO } from "./run.js";

/** `--config` and `--data-dir`, as `gatehouse run` takes them. */
export function projectOptions(command: Command): Command {
  return command
    .option("--config <file>", "config file (default: ./gatehouse.json, if present)")
    .option("--data-dir <dir>", "data folder for the default SQLite store (default: ./.gatehouse)");
}

/**
 * Where a command runs: its IO and where its exit status goes. `gatehouse` gives the process
 * (PROCESS_HOST); tests give their own, to run a command in their process (test/cli/in-process.ts).
 */
export interface CommandHost {
  /** The process around the command: cwd, env, stdin, stdout, stderr. */
  io(): CliIO;
  /** The command's exit status. */
  exit(code: number): void;
  /** Calls `listener` on Ctrl-C until the returned function is called. */
  onInterrupt(listener: () => void): () => void;
}

export const PROCESS_HOST: CommandHost = {
  io: () => ({
    cwd: process.cwd(),
    env: process.env,
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
  }),
  exit: (code) => {
    process.exitCode = code;
  },
  onInterrupt: (listener) => {
    process.on("SIGINT", listener);
    return () => process.off("SIGINT", listener);
  },
};

/**
 * Exit statuses of the commands that read or change the project (not `run`): `failed` says
 * what exit 1 means (null: never), `usage` adds to what exit 2 means.
 */
export function exitHelp(extra: { failed?: string | null; usage?: string } = {}): string {
  const failed = extra.failed === undefined ? STORE_FAILED : extra.failed;
  return `
Exit status:
  0  done${failed === null ? "" : `\n  1  ${failed}`}
  2  bad input or configuration: a bad flag or argument, gatehouse.json${extra.usage ? `,\n     ${extra.usage}` : ""}
`;
}

export const STORE_FAILED = "the store could not be opened or read";

export const COLOR_HELP = "Colors only on a terminal, and never when NO_COLOR is set.";
