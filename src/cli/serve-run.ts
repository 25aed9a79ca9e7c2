// What `gatehouse serve` and `gatehouse console` do when they run (loaded only then: Fastify and
// the runtime come with it).
import type { Gatehouse } from "../runtime/gatehouse.js";
import * as server from "../server/index.js";
import { openStore } from "../store/index.js";
import { EXIT, type ExitCode } from "./exit.js";
import { writeOut } from "./output.js";
import { CliStop, type CommandIO, describe, runCli, storeOptionsFor } from "./project.js";
import { openGatehouse, prepareGatehouse } from "./run.js";
import { CONSOLE_ASSETS_ENV, HOST_ENV, PORT_ENV, type ServeFlags } from "./serve.js";

/** The process signals serve stops on. */
export interface Signals {
  once(signal: "SIGTERM" | "SIGINT", listener: () => void): unknown;
  off(signal: "SIGTERM" | "SIGINT", listener: () => void): unknown;
}

/**
 * Builds the project's Gatehouse exactly as `gatehouse run` does (one assembly: config,
 * plugins, command hooks, tools, MCP, store), with the service's approver, and serves it until
 * SIGTERM or SIGINT; then shuts down gracefully.
 *
 * As `gatehouse console` (`local`): on loopback whatever the configuration says, no model needed,
 * approval asks waiting for the console unless `server.approvals.mode` says otherwise, a free
 * port if the configured one is taken, and the console's address printed on stdout. `serve`
 * prints the console's address on stderr beside the server's, unless the console is turned off.
 */
export async function serve(
  flags: ServeFlags,
  io: CommandIO,
  signals: Signals,
  options: { readonly local?: boolean } = {},
): Promise<ExitCode> {
  return runCli(io, async (log) => {
    // The console only browses what is stored: it opens without a model.
    const prepared = await prepareGatehouse(flags, io, log, { modelOptional: options.local === true });
    const configured = prepared.config.server ?? {};
    const config = options.local
      ? { ...configured, approvals: { ...configured.approvals, mode: configured.approvals?.mode ?? "console" } }
      : configured;
    const host = options.local
      ? server.DEFAULT_HOST
      : (flags.host ?? (io.env[HOST_ENV] || undefined) ?? config.host ?? server.DEFAULT_HOST);
    const portText = flags.port ?? (io.env[PORT_ENV] || undefined);
    const port = portText === undefined ? (config.port ?? server.DEFAULT_PORT) : Number(portText);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new CliStop(EXIT.usage, `--port: expected a port number (0 to 65535), got ${portText}`);
    const storeOptions = storeOptionsFor(prepared.settings, io);
    // One store for the Gatehouse and the service's records: one connection (or pool), one set of
    // migrations, created private. The Gatehouse closes it.
    const store = await openStore({ ...storeOptions, warn: log.warn }).catch((error: unknown) => {
      throw new CliStop(EXIT.failed, `cannot open the store: ${describe(error)}`);
    });
    let opened: Gatehouse | undefined;
    const service = await server.openService({
      store,
      config,
      logger: log,
      console: {
        ...(io.env[CONSOLE_ASSETS_ENV] ? { assetsDir: io.env[CONSOLE_ASSETS_ENV] } : {}),
        configuration: async () => {
          const { describeConfiguration } = await import("./console-config.js");
          return describeConfiguration(prepared, opened as Gatehouse, storeOptions, flags, io);
        },
      },
    });
    const approvalTimeoutMs = config.approvals?.timeoutMs;
    const { gatehouse, close } = await openGatehouse(
      approvalTimeoutMs === undefined
        ? prepared
        : {
            ...prepared,
            settings: { ...prepared.settings, runtime: { ...prepared.settings.runtime, approvalTimeoutMs } },
          },
      io,
      log,
      { approver: service.approver, store },
    ).catch(async (error: unknown) => {
      await store.close().catch(() => undefined);
      throw error;
    });
    opened = gatehouse;
    let running: Awaited<ReturnType<typeof service.listen>>;
    try {
      running = await listen(service, gatehouse, host, port, options.local === true && portText === undefined);
    } catch (error) {
      await close();
      await service.records.close().catch(() => undefined);
      if (error instanceof server.ServeRefused) throw new CliStop(EXIT.usage, error.message);
      throw new CliStop(EXIT.failed, `cannot listen on ${host}:${port}: ${describe(error)}`);
    }
    log.warn(`serving on ${running.url}`);
    if (options.local && prepared.settings.model === undefined)
      log.warn("no model configured: the console shows what is stored; a run started here fails until one is set");
    if (!options.local && config.console !== false) log.warn(`console: ${running.url}/console/`);
    if (options.local) {
      const keys = await service.records.apiKeyCounts();
      if (keys.all > 0)
        log.warn("log in with an API key (an admin key sees every session: gatehouse keys create --admin)");
      await writeOut(io.stdout, `${running.url}/console/\n`);
    }
    await new Promise<void>((resolve) => {
      const stop = () => {
        signals.off("SIGTERM", stop);
        signals.off("SIGINT", stop);
        log.warn("shutting down: no new runs; waiting for running runs to finish");
        resolve();
      };
      signals.once("SIGTERM", stop);
      signals.once("SIGINT", stop);
    });
    await running.close();
    await close();
    log.warn("stopped");
    return EXIT.ok;
  });
}

/** Listens; the console started without a port takes a free one when the configured one is in use. */
async function listen(
  service: server.Service,
  gatehouse: Gatehouse,
  host: string,
  port: number,
  anyPortWillDo: boolean,
): Promise<server.RunningServer> {
  try {
    return await service.listen(gatehouse, { host, port });
  } catch (error) {
    if (!anyPortWillDo || (error as NodeJS.ErrnoException).code !== "EADDRINUSE") throw error;
    return service.listen(gatehouse, { host, port: 0 });
  }
}
