// What `gatehouse serve` does when it runs (loaded only then: Fastify and the runtime come with it).
import * as server from "../server/index.js";
import { EXIT, type ExitCode } from "./exit.js";
import { CliStop, type CommandIO, describe, runCli, storeOptionsFor } from "./project.js";
import { openGatehouse, prepareGatehouse } from "./run.js";
import { HOST_ENV, PORT_ENV, type ServeFlags } from "./serve.js";

/** The process signals serve stops on. */
export interface Signals {
  once(signal: "SIGTERM" | "SIGINT", listener: () => void): unknown;
  off(signal: "SIGTERM" | "SIGINT", listener: () => void): unknown;
}

/**
 * Builds the project's Gatehouse exactly as `gatehouse run` does (one assembly: config,
 * plugins, command hooks, tools, MCP, store), with the service's approver, and serves it until
 * SIGTERM or SIGINT; then shuts down gracefully.
 */
export async function serve(flags: ServeFlags, io: CommandIO, signals: Signals): Promise<ExitCode> {
  return runCli(io, async (log) => {
    const prepared = await prepareGatehouse(flags, io, log);
    const config = prepared.config.server ?? {};
    const host = flags.host ?? (io.env[HOST_ENV] || undefined) ?? config.host ?? server.DEFAULT_HOST;
    const portText = flags.port ?? (io.env[PORT_ENV] || undefined);
    const port = portText === undefined ? (config.port ?? server.DEFAULT_PORT) : Number(portText);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new CliStop(EXIT.usage, `--port: expected a port number (0 to 65535), got ${portText}`);
    const storeOptions = storeOptionsFor(prepared.settings, io);
    const service = await server.openService({ store: storeOptions, config, logger: log });
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
      { approver: service.approver },
    );
    let running: Awaited<ReturnType<typeof service.listen>>;
    try {
      running = await service.listen(gatehouse, { host, port });
    } catch (error) {
      await close();
      await service.records.close().catch(() => undefined);
      if (error instanceof server.ServeRefused) throw new CliStop(EXIT.usage, error.message);
      throw new CliStop(EXIT.failed, `cannot listen on ${host}:${port}: ${describe(error)}`);
    }
    log.warn(`serving on ${running.url}`);
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
