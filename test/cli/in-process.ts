// The CLI in the test's own process, through the commands' IO seams (`runCommand(flags, io)`, and
// for the other commands the `CommandHost` their register functions take): the same command line
// (commander, the same definitions main.ts registers), the same environment a spawned CLI gets
// (helpers.ts), stdout and stderr collected, the exit status kept per call. For tests about what a
// command does; what only a process shows (signals, terminals, exit by signal, start-up, a
// sandboxed command, servers) stays spawned, and each command keeps one spawned end-to-end test.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { Command, CommanderError } from "commander";
import type { CommandHost } from "../../src/cli/common.js";
import type { OutStream } from "../../src/cli/output.js";
import { addPermissionOptions } from "../../src/cli/permission-flags.js";
import { type CliIO, runCommand } from "../../src/cli/run.js";
import { defineRunCommand } from "../../src/cli/run-command.js";
import { resetSandbox, sandboxStarted } from "../../src/sandbox/runtime.js";
import { type CliOptions, type CliResult, TRUST_ENV } from "./helpers.js";

type InProcessOptions = Pick<CliOptions, "cwd" | "env" | "input">;

// A spawned CLI's HOME and cwd are its project, and every command reads them from its io. What
// still asks the process (os.homedir() for `~` in a tool's path, a plugin writing a relative path)
// gets an empty folder of this test file's own: never the user's home (whose ~/.claude would leak
// into the tests) nor the repository. Tests that need the process's cwd to be the project spawn.
const scratch = mkdtempSync(join(tmpdir(), "gatehouse-in-process-"));
process.env.HOME = scratch;
process.chdir(scratch);
process.once("exit", () => rmSync(scratch, { recursive: true, force: true }));

/**
 * What this process writes on its own stderr while commands run in it goes to each of them: a
 * spawned CLI's stderr would hold it, so a line written past the command's io (a warning, a leak)
 * is not lost to the test. (stdout carries the test runner's reports: nothing writes there.)
 */
const running = new Set<{ text: string }>();
const writeStderr = process.stderr.write.bind(process.stderr);
process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
  const text = typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
  for (const output of running) output.text += text;
  return writeStderr(chunk, ...rest);
}) as typeof process.stderr.write;

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

/** Registers a command on `program`, as main.ts does, its IO and exit status the test's. */
type Register = (program: Command, host: CommandHost) => Promise<void>;

const COMMANDS: Record<string, Register> = {
  run: async (program, host) => {
    addPermissionOptions(defineRunCommand(program)).action(async (flags) => {
      host.exit(await runCommand(flags, host.io()));
    });
  },
  hooks: async (program, host) => (await import("../../src/cli/hooks.js")).registerHooksCommand(program, host),
  sessions: async (program, host) => (await import("../../src/cli/sessions.js")).registerSessionsCommand(program, host),
  audit: async (program, host) => (await import("../../src/cli/audit.js")).registerAuditCommand(program, host),
  plugins: async (program, host) => (await import("../../src/cli/plugins.js")).registerPluginsCommand(program, host),
  config: async (program, host) => (await import("../../src/cli/config.js")).registerConfigCommand(program, host),
  mcp: async (program, host) => (await import("../../src/cli/mcp.js")).registerMcpCommand(program, host),
  init: async (program, host) => (await import("../../src/cli/init.js")).registerInitCommand(program, host),
  permissions: async (program, host) =>
    (await import("../../src/cli/permissions.js")).registerPermissionsCommand(program, host),
  keys: async (program, host) => (await import("../../src/cli/serve.js")).registerKeysCommand(program, host),
};

/** `gatehouse …` in this process: exit code, stdout and stderr, as `gatehouse()` returns them. */
export async function gatehouseInProcess(args: readonly string[], options: InProcessOptions): Promise<CliResult> {
  const register = COMMANDS[args[0] ?? ""];
  if (!register) throw new Error(`gatehouse ${args[0]} is not run in-process: spawn it (helpers.ts)`);
  const stdout = collector();
  const stderr = collector();
  const io: CliIO = {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? "", HOME: options.cwd, [TRUST_ENV]: "1", ...options.env },
    stdin: Readable.from(options.input === undefined ? [] : [options.input]),
    stdout,
    stderr,
  };
  let code = 0;
  const host: CommandHost = {
    io: () => io,
    exit: (status) => {
      code = status;
    },
    // Nobody presses Ctrl-C here; the signal tests spawn the CLI.
    onInterrupt: () => () => {},
  };
  // As main.ts: settings made before the commands are registered, which inherit them.
  const program = new Command()
    .name("gatehouse")
    .exitOverride()
    .showHelpAfterError("(add --help for usage)")
    .configureOutput({ writeOut: (text) => stdout.write(text), writeErr: (text) => stderr.write(text) });
  await register(program, host);
  running.add(stderr);
  try {
    await program.parseAsync([...args], { from: "user" });
  } catch (error) {
    // As main.ts: commander's refusals of the command line are bad input (exit 2).
    if (!(error instanceof CommanderError)) throw error;
    code = error.exitCode === 0 ? 0 : 2;
  } finally {
    running.delete(stderr);
  }
  // The sandbox is one per process (a proxy, socat bridges, signal handlers): a spawned CLI has
  // its own, tests running at once in this process would share one, and it would outlive the test.
  if (sandboxStarted()) {
    await resetSandbox();
    throw new Error(`gatehouse ${args.join(" ")} ran a sandboxed command: spawn it (helpers.ts)`);
  }
  return { code, stdout: stdout.text, stderr: stderr.text };
}
