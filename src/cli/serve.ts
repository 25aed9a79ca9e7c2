// `gatehouse serve` and `gatehouse keys`. main.ts loads this module to register the commands,
// so its imports stay light: Fastify, the runtime and the store load when a command runs.
import type { Command } from "commander";
import { type CommandHost, exitHelp, PROCESS_HOST, projectOptions } from "./common.js";
import { EXIT, type ExitCode } from "./exit.js";
import type { CommandIO } from "./project.js";
import type { GatehouseFlags } from "./run.js";

export interface ServeFlags extends GatehouseFlags {
  readonly host?: string;
  readonly port?: string;
}

export const HOST_ENV = "GATEHOUSE_HOST";
export const PORT_ENV = "GATEHOUSE_PORT";
/** A folder holding a built console to serve instead of the package's own (for working on the console). */
export const CONSOLE_ASSETS_ENV = "GATEHOUSE_CONSOLE_ASSETS";

/** Adds `gatehouse serve`. */
export function registerServeCommand(program: Command): void {
  const serveCommand = projectOptions(program.command("serve"))
    .summary("serve the agent over HTTP (native API and OpenAI-compatible)")
    .description(
      "Serve the project's agent over HTTP: sessions and runs (JSON or Server-Sent Events), OpenAI-compatible /v1/chat/completions, /v1/responses and /v1/models, /healthz, /readyz, /metrics. Every hook applies as in `gatehouse run`. Without an API key it listens on loopback only. SIGTERM or Ctrl-C stops accepting, lets runs finish (server.shutdownGraceMs), then cancels the rest. See docs/server.md.",
    )
    .option("--host <host>", `address to listen on (default: ${HOST_ENV}, gatehouse.json server.host, 127.0.0.1)`);
  serverOptions(serveCommand, "0 picks one")
    .addHelpText(
      "after",
      exitHelp({
        failed: "the server could not start (store, port in use)",
        usage: "no model, a plugin that cannot be loaded, listening beyond loopback without an API key",
      }),
    )
    .action(async (flags: ServeFlags) => {
      const { serve } = await import("./serve-run.js");
      process.exitCode = await serve(flags, PROCESS_HOST.io(), process);
    });
}

/** The options `serve` and `console` share: the port (and what happens when it is taken), the model, the settings. */
function serverOptions(command: Command, whenTaken: string): Command {
  return command
    .option("--port <port>", `port (default: ${PORT_ENV}, gatehouse.json server.port, 8787; ${whenTaken})`)
    .option("--model <spec>", 'model spec (overrides gatehouse.json "model")')
    .option("--settings <file|json>", "command hooks settings, read after gatehouse.json's");
}

/** Adds `gatehouse console`. */
export function registerConsoleCommand(program: Command): void {
  const consoleCommand = projectOptions(program.command("console"))
    .summary("open the web console for this project (serves on loopback, prints the URL)")
    .description(
      `Start the server for the local project on loopback (127.0.0.1) and print the web console's address on stdout: its sessions, each run's timeline, the audit trail, runs in progress with their approval asks (answered in the console: server.approvals.mode defaults to "console" here) and the effective configuration. The port is --port, ${PORT_ENV}, gatehouse.json server.port or 8787 — or a free one if that is taken. While no API key exists, the console opens without one; otherwise log in with a key (an admin key sees every session). See docs/console.md.`,
    );
  serverOptions(consoleCommand, "a free one if taken")
    .addHelpText(
      "after",
      exitHelp({
        failed: "the server could not start (store, port in use)",
        usage: "a plugin that cannot be loaded (no model is needed: the console browses what is stored)",
      }),
    )
    .action(async (flags: ServeFlags) => {
      const { serve } = await import("./serve-run.js");
      process.exitCode = await serve(flags, PROCESS_HOST.io(), process, { local: true });
    });
}

/** Adds `gatehouse keys create|list|revoke`. */
export function registerKeysCommand(program: Command, host: CommandHost = PROCESS_HOST): void {
  const keys = program
    .command("keys")
    .summary("API keys for gatehouse serve: create, list, revoke")
    .description(
      "Bearer API keys for `gatehouse serve`, each bound to a principal whose sessions only it can see. Only a hash of each key is stored, in the project's store; a key is printed once, when created.",
    );
  projectOptions(keys.command("create"))
    .description("Create a key for a principal and print it (once) on stdout")
    .requiredOption("--principal <name>", "who the key acts for (sessions belong to principals)")
    .option("--name <label>", "a label to tell keys apart")
    .option("--admin", "an admin key: sees every principal's sessions and answers any run's approval asks")
    .option("--json", "print the key and its record as JSON")
    .addHelpText("after", exitHelp())
    .action(async (flags) => {
      host.exit(await keysCommand("create", flags, host.io()));
    });
  projectOptions(keys.command("list"))
    .description("List keys (never the keys themselves): id, principal, name, admin, created, revoked")
    .option("--json", "print JSON")
    .addHelpText("after", exitHelp())
    .action(async (flags) => {
      host.exit(await keysCommand("list", flags, host.io()));
    });
  projectOptions(keys.command("revoke"))
    .description("Revoke a key by id: requests with it are refused from then on")
    .argument("<id>", "the key's id (from keys list)")
    .addHelpText("after", exitHelp({ failed: "no such key (or already revoked), or the store failed" }))
    .action(async (id: string, flags) => {
      host.exit(await keysCommand("revoke", { ...flags, id }, host.io()));
    });
}

interface KeysFlags {
  readonly config?: string;
  readonly dataDir?: string;
  readonly principal?: string;
  readonly name?: string;
  readonly admin?: boolean;
  readonly json?: boolean;
  readonly id?: string;
}

async function keysCommand(what: "create" | "list" | "revoke", flags: KeysFlags, io: CommandIO): Promise<ExitCode> {
  const [{ loadProject, runCli, storeOptionsFor, CliStop, checkId }, { writeOut }, server] = await Promise.all([
    import("./project.js"),
    import("./output.js"),
    import("../server/index.js"),
  ]);
  return runCli(io, async () => {
    const project = await loadProject(flags, io);
    const store = storeOptionsFor(project.settings, io);
    if (store.kind === "memory")
      throw new CliStop(EXIT.usage, "keys: the memory store keeps nothing; configure a store");
    const records = await server.openServiceRecords(store);
    try {
      if (what === "create") {
        checkId("--principal", flags.principal);
        const created = await server.createApiKey(records, flags.principal as string, flags.name ?? null, {
          admin: flags.admin === true,
        });
        await writeOut(io.stdout, flags.json ? `${JSON.stringify(created)}\n` : `${created.key}\n`);
        return EXIT.ok;
      }
      if (what === "list") {
        const keys = await records.listApiKeys();
        if (flags.json) await writeOut(io.stdout, `${JSON.stringify(keys)}\n`);
        else if (keys.length === 0)
          await writeOut(io.stdout, "no API keys (create one with: gatehouse keys create --principal NAME)\n");
        else {
          const { table } = await import("./format.js");
          const rows = keys.map((k) => [
            k.id,
            k.principal,
            k.name ?? "-",
            k.admin ? "admin" : "-",
            k.createdAt,
            k.revokedAt ? `revoked ${k.revokedAt}` : "active",
          ]);
          await writeOut(io.stdout, table([["ID", "PRINCIPAL", "NAME", "ROLE", "CREATED", "STATUS"], ...rows]));
        }
        return EXIT.ok;
      }
      const revoked = await records.revokeApiKey(flags.id as string, new Date().toISOString());
      if (!revoked) throw new CliStop(EXIT.failed, `keys revoke: no active key ${flags.id}`);
      return EXIT.ok;
    } finally {
      await records.close();
    }
  });
}
