// `gatehouse mcp list`: the configured MCP servers started as `gatehouse run` starts them, each
// with its status, tools and errors. main.ts loads this module at start-up to register the
// command, so its own imports stay light; the config and the MCP SDK load when it runs.
import type { Command } from "commander";
import type { McpServerState } from "../tools/mcp.js";
import { COLOR_HELP, type CommandHost, PROCESS_HOST, projectOptions } from "./common.js";
import { EXIT, type ExitCode } from "./exit.js";
import { table } from "./format.js";
import type { CommandIO, ProjectFlags } from "./project.js";

export interface McpListFlags extends ProjectFlags {
  readonly json?: boolean;
}

/** Adds `gatehouse mcp` and its subcommands to the program. */
export function registerMcpCommand(program: Command, host: CommandHost = PROCESS_HOST): void {
  const mcp = program
    .command("mcp")
    .summary("list the configured MCP servers with their status and tools")
    .description("The MCP servers of gatehouse.json (`mcpServers`).");

  projectOptions(mcp.command("list"))
    .summary("each server: status, transport, tools, errors")
    .description(
      `Starts every configured server as gatehouse run does (concurrently, each within its startupTimeoutMs), then lists each with its status (connected or failed), transport, startup time, the tools the model would see (before tools.allow / tools.deny) and its errors. The servers are stopped again; no model is called and nothing is written. ${COLOR_HELP}`,
    )
    .option("--json", "print a JSON array instead of a table")
    .addHelpText(
      "after",
      `
Exit status:
  0  every server connected (or none is configured)
  1  a server failed to start, or did not within its startup timeout
  2  bad input or configuration: a bad flag, gatehouse.json
`,
    )
    .action(async (flags: McpListFlags) => {
      host.exit(await mcpList(flags, host.io()));
    });
}

/** `gatehouse mcp list`. */
export async function mcpList(flags: McpListFlags, io: CommandIO): Promise<ExitCode> {
  const [project, output, run] = await Promise.all([import("./project.js"), import("./output.js"), import("./run.js")]);
  return project.runCli(io, async (log) => {
    const { config, settings } = await project.loadProject(flags, io);
    const servers = config.mcpServers ?? {};
    if (Object.keys(servers).length === 0) {
      if (flags.json) await output.writeJson(io.stdout, []);
      else await output.writeOut(io.stdout, "no MCP servers configured\n");
      return EXIT.ok;
    }
    const { startMcpServers } = await import("../tools/mcp.js");
    const pool = startMcpServers(servers, {
      cwd: io.cwd,
      env: io.env,
      envPolicy: settings.envPolicy,
      // Failures are listed below, not logged as they happen.
      logger: { warn: () => {}, debug: log.mcp.debug },
      ...run.mcpStartupTimeout(io.env, log),
    });
    let states: McpServerState[];
    try {
      await pool.settled();
      states = pool.servers();
    } finally {
      await pool.close();
    }
    if (flags.json) await output.writeJson(io.stdout, states);
    else await output.writeOut(io.stdout, render(states, output.colorsFor(io.stdout, io.env), output.terminalLine));
    return states.some((s) => s.status === "failed") ? EXIT.failed : EXIT.ok;
  });
}

type Colors = ReturnType<typeof import("picocolors").createColors>;

function render(states: readonly McpServerState[], c: Colors, line: (text: string) => string): string {
  const rows = states.map((s) => [
    line(s.name),
    s.status,
    s.transport,
    s.startupMs === undefined ? "-" : `${s.startupMs}ms`,
    s.tools.length === 0 ? "-" : s.tools.join(", "),
  ]);
  const shown = table([["SERVER", "STATUS", "TRANSPORT", "STARTUP", "TOOLS"], ...rows], (cell, row, column) =>
    row === 0 ? c.bold(cell) : column === 1 ? (cell.trim() === "connected" ? c.green(cell) : c.red(cell)) : cell,
  );
  const errors = states.flatMap((s) => s.errors.map((e) => `${line(s.name)}: ${line(e)}\n`));
  return errors.length === 0 ? shown : `${shown}\n${c.bold("Errors")}\n${errors.join("")}`;
}
