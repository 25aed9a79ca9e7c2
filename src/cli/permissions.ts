// `gatehouse permissions`: the effective permission rules with their sources, and the mode.
// main.ts loads this module at start-up to register the command: its static imports stay light.
import type { Command } from "commander";
import type { PermissionPolicy } from "../permissions/policy.js";
import { ACCEPT_EDITS_COMMANDS, READ_ONLY_COMMANDS } from "../permissions/read-only.js";
import { ENVIRONMENT_HELP, EXIT, type ExitCode } from "./exit.js";
import type { OutStream } from "./output.js";
import { addPermissionOptions, type PermissionCliFlags } from "./permission-flags.js";

export interface PermissionsFlags extends PermissionCliFlags {
  readonly config?: string;
  readonly settings?: string;
  readonly json?: boolean;
}

/** One rule as the listing (and the console) shows it. */
export type ListedRule = {
  readonly behavior: string;
  readonly rule: string;
  readonly source: string;
  readonly file?: string;
};

export interface PermissionListing {
  readonly mode: string;
  readonly modeFrom: string;
  readonly rules: ListedRule[];
  /** What runs without a rule: the read-only Bash commands, and in acceptEdits its filesystem commands. */
  readonly builtIn: ListedRule[];
  readonly additionalDirectories: string[];
}

export function registerPermissionsCommand(program: Command): void {
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
      process.exitCode = await permissionsCommand(flags, {
        cwd: process.cwd(),
        env: process.env,
        stdout: process.stdout,
        stderr: process.stderr,
      });
    });
}

/** Deny rules first, then ask, then allow: the order they are checked in. */
const ORDER = { deny: 0, ask: 1, allow: 2 } as Record<string, number>;

/** The listing of a policy, paths relative to `cwd` as the other listings show them. */
export function permissionListing(policy: PermissionPolicy, shown: (file: string) => string): PermissionListing {
  const rules = [...policy.rules]
    .sort((a, b) => (ORDER[a.behavior] ?? 3) - (ORDER[b.behavior] ?? 3))
    .map((r) => ({
      behavior: r.behavior,
      rule: r.rule,
      source: r.source,
      ...(r.file === undefined ? {} : { file: r.file.startsWith("--") ? r.file : shown(r.file) }),
    }));
  const from = policy.modeFrom;
  const builtIn: ListedRule[] = [
    {
      behavior: "allow",
      rule: `Bash read-only: ${READ_ONLY_COMMANDS.join(", ")} (git: read-only forms)`,
      source: "built-in",
    },
  ];
  if (policy.mode === "acceptEdits")
    builtIn.push({
      behavior: "allow",
      rule: `Bash in the working directories: ${ACCEPT_EDITS_COMMANDS.join(", ")}`,
      source: "acceptEdits",
    });
  return {
    mode: policy.mode,
    modeFrom: from === "default" || from.startsWith("--") ? from : shown(from),
    rules,
    builtIn,
    additionalDirectories: policy.additionalDirectories.map(shown),
  };
}

export async function permissionsCommand(
  flags: PermissionsFlags,
  io: { cwd: string; env: Readonly<Record<string, string | undefined>>; stdout: OutStream; stderr: OutStream },
): Promise<ExitCode> {
  const [{ runCli, loadProject }, { readSources }, { permissionPolicy }, { shownPath }, output, { terminalLine }] =
    await Promise.all([
      import("./project.js"),
      import("./run.js"),
      import("../assembly/sources.js"),
      import("./format.js"),
      import("./output.js"),
      import("./terminal.js"),
    ]);
  return runCli(io, async (log) => {
    const project = await loadProject(flags, io);
    const loaded = readSources(project, flags, io, log, "fix them first");
    const listing = permissionListing(permissionPolicy(loaded.permissions, io.cwd), (f) => shownPath(io.cwd, f));
    if (flags.json) {
      await output.writeJson(io.stdout, listing);
      return EXIT.ok;
    }
    const lines = [
      `mode: ${listing.mode} (${listing.modeFrom === "default" ? "the default" : `from ${listing.modeFrom}`})`,
    ];
    if (listing.rules.length === 0)
      lines.push(
        "no rules: reads and read-only Bash commands run; other Bash, edits, MCP tools and Agent ask (default mode)",
      );
    const width = Math.max(0, ...listing.rules.map((r) => r.rule.length));
    for (const r of [...listing.rules, ...listing.builtIn])
      lines.push(`${r.behavior.padEnd(5)}  ${r.rule.padEnd(width)}  ${r.source}${r.file ? ` (${r.file})` : ""}`);
    for (const d of listing.additionalDirectories) lines.push(`additional directory: ${d}`);
    await output.writeOut(io.stdout, lines.map((l) => `${terminalLine(l)}\n`).join(""));
    return EXIT.ok;
  });
}
