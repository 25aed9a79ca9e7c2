// The CLI in the test's own process, through the commands' IO seams (`runCommand(flags, io)`):
// the same command line (commander, the same definition main.ts registers), the same environment
// a spawned CLI gets (helpers.ts), stdout and stderr collected. For tests about what a command
// does; what only a process shows (signals, terminals, exit by signal, start-up) stays spawned.
import { Readable } from "node:stream";
import { Command, CommanderError } from "commander";
import type { OutStream } from "../../src/cli/output.js";
import { addPermissionOptions } from "../../src/cli/permission-flags.js";
import { runCommand } from "../../src/cli/run.js";
import { defineRunCommand } from "../../src/cli/run-command.js";
import { type CliOptions, type CliResult, TRUST_ENV } from "./helpers.js";

type InProcessOptions = Pick<CliOptions, "cwd" | "env" | "input">;

/** A stream that collects what is written to it (not a terminal). */
function collector(): OutStream & { text: string } {
  return {
    text: "",
    write(chunk: string, callback?: (error?: Error | null) => void) {
      this.text += chunk;
      callback?.();
      return true;
    },
  };
}

/** `gatehouse run …` in this process: exit code, stdout and stderr, as `gatehouse()` returns them. */
export async function runInProcess(args: readonly string[], options: InProcessOptions): Promise<CliResult> {
  if (args[0] !== "run") throw new Error(`runInProcess runs gatehouse run, not ${args[0]}`);
  const stdout = collector();
  const stderr = collector();
  const io = {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? "", HOME: options.cwd, [TRUST_ENV]: "1", ...options.env },
    stdin: Readable.from(options.input === undefined ? [] : [options.input]),
    stdout,
    stderr,
  };
  const program = new Command()
    .exitOverride()
    .configureOutput({ writeOut: (text) => stdout.write(text), writeErr: (text) => stderr.write(text) });
  let code = 0;
  addPermissionOptions(defineRunCommand(program)).action(async (flags) => {
    code = await runCommand(flags, io);
  });
  try {
    await program.parseAsync([...args], { from: "user" });
  } catch (error) {
    // As main.ts: commander's refusals of the command line are bad input (exit 2).
    if (!(error instanceof CommanderError)) throw error;
    code = error.exitCode === 0 ? 0 : 2;
  }
  return { code, stdout: stdout.text, stderr: stderr.text };
}
