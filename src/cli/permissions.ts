// `gatehouse permissions`: the effective permission rules with their sources, and the mode.
// main.ts loads this module at start-up to register the command: its static imports stay light.
import type { Command } from "commander";
import { type CommandHost, PROCESS_HOST } from "./common.js";
import { ENVIRONMENT_HELP, EXIT, type ExitCode } from "./exit.js";
import type { OutStream } from "./output.js";
import { addPermissionOptions, type PermissionCliFlags } from "./permission-flags.js";

export interface PermissionsFlags extends PermissionCliFlags {
  readonly config?: string;
  readonly settings?: string;
  readonly json?: boolean;
}

export type { ListedRule, PermissionListing } from "../permissions/listing.js";

export function registerPermissionsCommand(program: Command, host: CommandHost = PROCESS_HOST): void {
  const command = program
    .command("permissions")
    .summary("list the effective permission rules and mode")
    .description(
      "The permission rules `gatehouse run` and `chat` check every tool call against (docs/permissions.md): deny, ask\nand allow rules with the source each comes from, and the permission mode. The same flags change them.",
    )
    .option("--config <file>", "config file (default: ./gatehouse.json, if present)")
    .option("--settings <file|json>", "settings (a file, or inline JSON), read after gatehouse.json's")
    .option("--json", "print the listing as one JSON object");
  addPermissionOptions(command)
    .addHelpText(
      "after",
      `\nExit status:\n    0  listed\n    2  bad input: a rule that does not parse, an unknown mode, bypassPermissions not enabled\n${ENVIRONMENT_HELP}`,
    )
    .action(async (flags: PermissionsFlags) => {
      host.exit(await permissionsCommand(flags, host.io()));
    });
}

export async function permissionsCommand(
  flags: PermissionsFlags,
  io: { cwd: string; env: Readonly<Record<string, string | undefined>>; stdout: OutStream; stderr: OutStream },
): Promise<ExitCode> {
  const [
    { runCli, loadProject },
    { readSources },
    { permissionPolicy },
    { permissionListing, listingLines },
    output,
    { terminalLine },
  ] = await Promise.all([
    import("./project.js"),
    import("./run.js"),
    import("../assembly/sources.js"),
    import("../permissions/listing.js"),
    import("./output.js"),
    import("./terminal.js"),
  ]);
  return runCli(io, async (log) => {
    const project = await loadProject(flags, io);
    const loaded = readSources(project, flags, io, log, "fix them first");
    const listing = permissionListing(permissionPolicy(loaded.permissions, io.cwd), io.cwd);
    if (flags.json) {
      await output.writeJson(io.stdout, listing);
      return EXIT.ok;
    }
    const lines = listingLines(listing);
    await output.writeOut(io.stdout, lines.map((l) => `${terminalLine(l)}\n`).join(""));
    return EXIT.ok;
  });
}
