// `gatehouse audit`. main.ts loads this module at start-up to register the command, so its own
// imports stay light: the config and the store are imported when the command runs.
import type { Command } from "commander";
import type { AuditRecord } from "../store/types.js";
import { COLOR_HELP, type CommandHost, exitHelp, PROCESS_HOST, projectOptions } from "./common.js";
import { EXIT, type ExitCode } from "./exit.js";
import { parseSince, shortTime, table } from "./format.js";
import type { CommandIO, ProjectFlags } from "./project.js";

export interface AuditFlags extends ProjectFlags {
  readonly session?: string;
  readonly since?: string;
  readonly limit?: string;
  readonly json?: boolean;
}

const DEFAULT_LIMIT = 100;

/** Adds `gatehouse audit` to the program. */
export function registerAuditCommand(program: Command, host: CommandHost = PROCESS_HOST): void {
  projectOptions(program.command("audit"))
    .summary("hook decisions: time, hook, plugin, outcome, category")
    .description(
      `Hook decisions recorded by runs, oldest first: time, hook, plugin, outcome and category, with the session and run. Records never hold a hook's reason or any content. ${COLOR_HELP}`,
    )
    .option("--session <id>", "only this session's records")
    .option(
      "--since <when>",
      "only records from then on: an ISO date or time, or a duration back from now (30m, 1h, 7d)",
    )
    .option("--limit <n>", `the most recent n records (default ${DEFAULT_LIMIT})`)
    .option("--json", "print a JSON array instead of a table")
    .addHelpText(
      "after",
      exitHelp({ usage: "GATEHOUSE_DATABASE_URL, a --since that is neither a date nor a duration" }),
    )
    .action(async (flags: AuditFlags) => {
      host.exit(await audit(flags, host.io()));
    });
}

/** A record as `audit --json` shows it: identifiers, an enum, a slug and a time — never a reason. */
function shown(r: AuditRecord) {
  return {
    at: r.at,
    hook: r.hook,
    pluginId: r.pluginId,
    outcome: r.outcome,
    category: r.category,
    sessionId: r.sessionId,
    runId: r.runId,
  };
}

/** `gatehouse audit [--session ID] [--since …]`. */
export async function audit(flags: AuditFlags, io: CommandIO, now: () => Date = () => new Date()): Promise<ExitCode> {
  const [L, output] = await Promise.all([import("./project.js"), import("./output.js")]);
  return L.runCli(io, async () => {
    const since = flags.since === undefined ? undefined : parseSince(flags.since, now());
    if (flags.since !== undefined && since === undefined)
      throw new L.CliStop(
        EXIT.usage,
        "--since: expected an ISO date or time (2026-01-31, 2026-01-31T12:00:00Z) or a duration like 30m, 1h, 7d",
      );
    const limit = flags.limit === undefined ? DEFAULT_LIMIT : Number(flags.limit);
    if (!Number.isInteger(limit) || limit < 1)
      throw new L.CliStop(EXIT.usage, "--limit: expected a whole number from 1");
    const project = await L.loadProject(flags, io);
    const records = await L.withProjectStore(project, io, async (store) => {
      const filter = flags.session === undefined ? {} : { sessionId: flags.session };
      // The store filters by session; a time filter is applied here, before the limit.
      if (since === undefined) return store.listAudit({ ...filter, limit });
      const from = since.getTime();
      return (await store.listAudit(filter)).filter((r) => Date.parse(r.at) >= from).slice(-limit);
    });
    if (flags.json) {
      await output.writeJson(io.stdout, records.map(shown));
      return EXIT.ok;
    }
    if (records.length === 0) {
      await output.writeOut(io.stdout, "no audit records\n");
      return EXIT.ok;
    }
    const c = output.colorsFor(io.stdout, io.env);
    const paint = (cell: string, row: number, column: number) => {
      if (row === 0) return c.bold(cell);
      if (column === 0 || column >= 5) return c.dim(cell);
      if (column !== 3) return cell;
      const outcome = cell.trim();
      if (["block", "deny", "error", "timeout", "invalid", "cancel"].includes(outcome)) return c.red(cell);
      if (["modify", "revise", "claim"].includes(outcome)) return c.yellow(cell);
      return c.green(cell);
    };
    const rows = records.map((r) => [
      shortTime(r.at),
      output.terminalLine(r.hook),
      output.terminalLine(r.pluginId),
      r.outcome,
      r.category === null ? "-" : output.terminalLine(r.category),
      r.sessionId === null ? "-" : output.terminalLine(r.sessionId),
      r.runId === null ? "-" : output.terminalLine(r.runId),
    ]);
    await output.writeOut(
      io.stdout,
      table([["TIME", "HOOK", "PLUGIN", "OUTCOME", "CATEGORY", "SESSION", "RUN"], ...rows], paint),
    );
    return EXIT.ok;
  });
}
