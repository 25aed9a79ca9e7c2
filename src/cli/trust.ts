// `gatehouse trust`: what the project's own settings would loosen, and recording that the user
// trusts them (docs/trust.md). `chat` asks the same question once on a terminal.
import { createInterface } from "node:readline/promises";
import type { Command } from "commander";
import { ConfigError, loadConfig } from "../config/index.js";
import { recordTrust, TRUST_ENV, type WorkspaceTrust } from "../config/trust.js";
import { exitHelp, PROCESS_HOST } from "./common.js";
import { EXIT, type ExitCode } from "./exit.js";
import { type CliLogger, writeOut } from "./output.js";
import { CliStop, type CommandIO, type ProjectFlags, projectTrust, runCli } from "./project.js";
import { terminalLine } from "./terminal.js";

interface TrustFlags extends Pick<ProjectFlags, "config"> {
  readonly yes?: boolean;
}

type TrustIO = Omit<CommandIO, "stdout"> & {
  readonly stdin: NodeJS.ReadableStream & { readonly isTTY?: boolean };
  readonly stdout: NodeJS.WritableStream & { readonly isTTY?: boolean };
};

export function registerTrustCommand(program: Command): void {
  program
    .command("trust")
    .description(
      "Show what this project's own settings would loosen (allow rules, a permissive mode, sandbox exceptions,\npassEnv, MCP servers, plugins) and trust them: recorded by content, so a change asks again.",
    )
    .option("--yes", "record the trust without asking (CI, scripts)")
    .option("--config <file>", "gatehouse.json to use (a named file needs no trust)")
    .addHelpText(
      "after",
      `${exitHelp({ failed: "you answered no, or the trust could not be recorded", usage: "nobody to ask (no terminal) without --yes" })}\nFor one process without recording anything: ${TRUST_ENV}=1. Until trusted, run, chat and serve\napply only what tightens (deny and ask rules, managed settings).`,
    )
    .action(async (flags: TrustFlags) => {
      process.exitCode = await trustCommand(flags, {
        ...PROCESS_HOST.io(),
        stdout: process.stdout,
        stdin: process.stdin,
      });
    });
}

export async function trustCommand(flags: TrustFlags, io: TrustIO): Promise<ExitCode> {
  return runCli(io, async () => {
    const trust = await recordedTrust(flags, io);
    await writeOut(io.stdout, describeTrust(trust));
    if (trust.trusted) return EXIT.ok;
    if (!flags.yes) {
      if (io.stdin.isTTY !== true)
        throw new CliStop(
          EXIT.usage,
          "not recorded: nobody to ask here; `gatehouse trust --yes` records without asking",
        );
      if (!(await askYes(io.stdin, io.stdout, "Trust this project's settings? [y/N] "))) {
        await writeOut(io.stdout, "not trusted; nothing recorded\n");
        return EXIT.failed;
      }
    }
    const store = record(trust);
    await writeOut(io.stdout, `${terminalLine(`trusted: recorded in ${store}`)}\n`);
    return EXIT.ok;
  });
}

/**
 * `chat` on a terminal: in a project whose settings would loosen something and that is not
 * trusted, shows what and asks once; a yes is recorded. Without a terminal nothing is asked (the
 * chat then goes on applying only what tightens, and says so).
 */
export async function confirmTrustOnTerminal(
  flags: Pick<ProjectFlags, "config">,
  io: Pick<CommandIO, "cwd" | "env"> & {
    readonly stdin: NodeJS.ReadableStream & { readonly isTTY?: boolean };
    readonly stdout: NodeJS.WritableStream & { readonly isTTY?: boolean };
  },
  log: Pick<CliLogger, "warn">,
): Promise<void> {
  if (io.stdin.isTTY !== true || io.stdout.isTTY !== true) return;
  let trust: WorkspaceTrust;
  try {
    trust = await recordedTrust(flags, io);
  } catch {
    return; // A bad gatehouse.json is reported by the chat's own loading, with its exit status.
  }
  if (trust.trusted) return;
  await writeOut(io.stdout, describeTrust(trust));
  if (await askYes(io.stdin, io.stdout, "Trust this project's settings? [y/N] ")) {
    try {
      log.warn(`trusted: recorded in ${record(trust)}`);
    } catch (error) {
      log.warn(String(error instanceof Error ? error.message : error));
    }
  }
}

/** The trust as recorded (the environment variable does not count here: this is about recording it). */
async function recordedTrust(flags: Pick<ProjectFlags, "config">, io: Pick<CommandIO, "cwd" | "env">) {
  let file: string | undefined;
  try {
    ({ file } = await loadConfig({
      cwd: io.cwd,
      ...(flags.config === undefined ? {} : { file: flags.config }),
      env: io.env,
    }));
  } catch (error) {
    if (error instanceof ConfigError) throw new CliStop(EXIT.usage, error.message);
    throw error;
  }
  const { [TRUST_ENV]: _, ...env } = io.env;
  return projectTrust(flags, { cwd: io.cwd, env }, file);
}

function record(trust: WorkspaceTrust): string {
  try {
    return recordTrust(trust);
  } catch (error) {
    throw new CliStop(EXIT.failed, `trust not recorded: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** What `gatehouse trust` shows: the project, its state, and per file what would apply once trusted. */
export function describeTrust(trust: WorkspaceTrust): string {
  const state =
    trust.reason === "home"
      ? "trusted: the project is your home directory, whose settings are your own"
      : trust.reason === "recorded"
        ? "trusted (recorded)"
        : trust.reason === "changed"
          ? "not trusted: its settings changed since it was trusted"
          : trust.files.every((f) => f.held.length === 0)
            ? "nothing to trust: the project's settings loosen nothing"
            : "not trusted";
  const lines = [`project: ${trust.key}`, state];
  const loosening = trust.files.filter((f) => f.held.length > 0);
  if (loosening.length > 0 && trust.reason !== "home") {
    lines.push("once trusted, these settings apply (until then only what tightens does):");
    for (const f of loosening) {
      lines.push(`  ${f.name}`);
      for (const h of f.held) lines.push(`    ${h.key}: ${h.value}`);
    }
  }
  return lines.map((l) => `${terminalLine(l)}\n`).join("");
}

export async function askYes(
  input: NodeJS.ReadableStream,
  output: NodeJS.WritableStream,
  question: string,
): Promise<boolean> {
  const rl = createInterface({ input, output, terminal: true });
  try {
    const answer = await rl.question(question);
    return /^\s*y(es)?\s*$/i.test(answer);
  } catch {
    return false;
  } finally {
    rl.close();
  }
}
