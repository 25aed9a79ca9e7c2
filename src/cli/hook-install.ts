import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { createTwoFilesPatch } from "diff";
import { effectLines } from "../host-hooks/effects.js";
import type { Agent } from "../host-hooks/hosts.js";
import { CONFIG_FILE, ConfigShapeError, withHookEntries } from "../host-hooks/install.js";
import { EXIT, type ExitCode } from "./exit.js";
import { writeOut } from "./output.js";
import { CliStop, type CommandIO, runCli } from "./project.js";
import { askYes } from "./trust.js";

const AGENT_NAMES: Readonly<Record<Agent, string>> = {
  claude: "Claude Code",
  codex: "Codex",
  gemini: "Gemini CLI",
  cursor: "Cursor",
};

export interface InstallIO extends CommandIO {
  readonly stdin: NodeJS.ReadableStream & { readonly isTTY?: boolean };
  readonly stdout: CommandIO["stdout"] & NodeJS.WritableStream;
}

/**
 * `gatehouse hook install <agent>`: the diff of the agent's config file first, then what takes
 * effect there and what cannot, then the write (with --yes, or a yes on a terminal). Without a
 * terminal and without --yes nothing is written and the exit status is 2.
 */
export async function installCommand(
  agent: Agent,
  flags: { readonly yes?: boolean; readonly command?: string },
  io: InstallIO,
): Promise<ExitCode> {
  return runCli(io, async () => {
    const relative = CONFIG_FILE[agent];
    const file = join(io.cwd, relative);
    const command = flags.command ?? `gatehouse hook ${agent}`;
    let existing: string | undefined;
    try {
      existing = readFileSync(file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT")
        throw new CliStop(EXIT.usage, `${relative}: ${String(error)}`);
    }
    let next: string;
    try {
      next = withHookEntries(agent, existing, command, relative);
    } catch (error) {
      if (error instanceof ConfigShapeError) throw new CliStop(EXIT.usage, `${error.message}; nothing written`);
      throw error;
    }
    await writeOut(io.stdout, effectsText(agent));
    if (next === existing) {
      await writeOut(io.stdout, `${relative} already runs \`${command}\`; nothing to change\n`);
      return EXIT.ok;
    }
    await writeOut(
      io.stdout,
      createTwoFilesPatch(`a/${relative}`, `b/${relative}`, existing ?? "", next, "", "", { context: 3 }),
    );
    if (!flags.yes) {
      if (io.stdin.isTTY !== true)
        throw new CliStop(
          EXIT.usage,
          "not written: nobody to ask here; `gatehouse hook install --yes` writes without asking",
        );
      if (!(await askYes(io.stdin, io.stdout, `Write ${relative}? [y/N] `))) {
        await writeOut(io.stdout, "not written\n");
        return EXIT.failed;
      }
    }
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, next);
    await writeOut(
      io.stdout,
      `wrote ${relative}\n${agent === "claude" || agent === "gemini" ? "If this project's settings were trusted, `gatehouse trust` records the new file.\n" : ""}`,
    );
    return EXIT.ok;
  });
}

/** What takes effect on the agent and what does not, before the diff. */
function effectsText(agent: Agent): string {
  const lines = effectLines(agent);
  const list = (takes: string[]) =>
    lines
      .filter((l) => takes.includes(l.takes))
      .map((l) => `  - ${l.takes === "partly" ? "(partly) " : ""}${l.line}\n`)
      .join("");
  return `On ${AGENT_NAMES[agent]}, these Gatehouse verdicts take effect:\n${list(["yes", "partly"])}These cannot take effect there:\n${list(["no"])}\n`;
}
