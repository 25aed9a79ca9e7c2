#!/usr/bin/env node
// Start-up stays light: only commander and the version are loaded here. Each command imports
// what it needs (runtime, store, providers, MCP) when it runs, so `--version` and `--help` are fast.
import { Command, CommanderError } from "commander";
import { VERSION } from "../version.js";
import { ENVIRONMENT_HELP, EXIT, PROGRAM_EXIT_CODES_HELP } from "./exit.js";
import { defineRunCommand } from "./run-command.js";

const program = new Command()
  .name("gatehouse")
  .description("An agent runtime where every hook verdict takes effect")
  .version(VERSION, "-v, --version")
  // Bad flags exit 2 (commander's own default is 1, which here means a failed run).
  .exitOverride()
  .showHelpAfterError("(add --help for usage)")
  .addHelpText("after", `${PROGRAM_EXIT_CODES_HELP}\n${ENVIRONMENT_HELP}`);

const run = defineRunCommand(program).action(async (flags) => {
  const [{ runCommand }, signals] = await Promise.all([import("./run.js"), import("./signals.js")]);
  const controller = new AbortController();
  let received: import("./signals.js").StopSignal | undefined;
  // The first Ctrl-C, SIGTERM or SIGHUP cancels the run cleanly (its processes are stopped and
  // the run is recorded); a second one stops at once, SIGKILLing every process group first.
  const off = signals.onStopSignals((signal) => {
    if (received !== undefined) signals.stopNow(signal);
    received = signal;
    if (signal === "SIGHUP") signals.ignoreClosedTerminal();
    // Aborting first: the run's watcher ends a streamed line, so the notice gets a line of its own.
    controller.abort();
    process.stderr.write(
      signal === "SIGINT"
        ? "gatehouse: cancelling the run (Ctrl-C again to stop at once)\n"
        : `gatehouse: ${signal}: cancelling the run (a second signal stops at once)\n`,
    );
  });
  try {
    const code = await runCommand(flags, {
      cwd: process.cwd(),
      env: process.env,
      stdin: process.stdin,
      stdout: process.stdout,
      stderr: process.stderr,
      signal: controller.signal,
    });
    process.exitCode = code;
  } finally {
    off();
  }
  // Ended by SIGTERM or SIGHUP: the run was cancelled and recorded; the process ends by the signal.
  if (received === "SIGTERM" || received === "SIGHUP") await signals.leaveBy(received);
});

/** The other commands, in `--help` order; each module is loaded only to register its command. */
const COMMANDS: Record<string, () => Promise<void>> = {
  hooks: async () => (await import("./hooks.js")).registerHooksCommand(program),
  hook: async () => (await import("./hook.js")).registerHookCommand(program),
  chat: async () => (await import("./chat.js")).registerChatCommand(program),
  sessions: async () => (await import("./sessions.js")).registerSessionsCommand(program),
  audit: async () => (await import("./audit.js")).registerAuditCommand(program),
  plugins: async () => (await import("./plugins.js")).registerPluginsCommand(program),
  config: async () => (await import("./config.js")).registerConfigCommand(program),
  mcp: async () => (await import("./mcp.js")).registerMcpCommand(program),
  permissions: async () => (await import("./permissions.js")).registerPermissionsCommand(program),
  init: async () => (await import("./init.js")).registerInitCommand(program),
  trust: async () => (await import("./trust.js")).registerTrustCommand(program),
  serve: async () => (await import("./serve.js")).registerServeCommand(program),
  console: async () => (await import("./serve.js")).registerConsoleCommand(program),
  keys: async () => (await import("./serve.js")).registerKeysCommand(program),
};
// The program has no options but --version and --help, so a command is the first argument. When
// it names one, only that command is registered (`run` always is); `--version` as the first
// argument is answered before any command is looked at. Anything else (`--help`, `help`, no
// command, an unknown one for commander to suggest from) registers them all.
const first = process.argv[2];
const wanted =
  first === "run" || first === "-v" || first === "--version"
    ? []
    : first !== undefined && Object.hasOwn(COMMANDS, first)
      ? [first]
      : Object.keys(COMMANDS);
for (const name of wanted) await COMMANDS[name]?.();
// `run`'s permission flags, unless only the version is asked for.
if (first !== "-v" && first !== "--version") (await import("./permission-flags.js")).addPermissionOptions(run);

// A reader that went away (`gatehouse run … | head -1`) is not an error worth a stack trace. A
// terminal that went away (EIO, after SIGHUP) is not either: the cancelled run still winds down.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(process.exitCode ?? EXIT.ok);
  if (error.code === "EIO") return;
  throw error;
});

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) process.exitCode = error.exitCode === 0 ? EXIT.ok : EXIT.usage;
  else {
    const { maskSecrets } = await import("../core/secrets.js");
    const { terminalLine } = await import("./terminal.js");
    process.stderr.write(
      `gatehouse: ${terminalLine(maskSecrets(error instanceof Error ? error.message : String(error)))}\n`,
    );
    process.exitCode = EXIT.failed;
  }
}
// Plugins or MCP servers may leave timers or sockets behind; a one-shot command does not wait
// for them, only for its own output (pipe writes are asynchronous on some platforms).
const flushed = (stream: NodeJS.WriteStream) => new Promise<void>((resolve) => stream.write("", () => resolve()));
await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
process.exit();
