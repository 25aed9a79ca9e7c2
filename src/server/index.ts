import { hostname } from "node:os";
import type { FastifyInstance } from "fastify";
import type { ServerConfig } from "../config/server.js";
import type { HookLogger } from "../hooks/kinds/shared.js";
import { describeError, sanitizeLogLine } from "../hooks/sanitize.js";
import type { Gatehouse } from "../runtime/gatehouse.js";
import type { Approver } from "../runtime/types.js";
import type { StoreOptions, StoreView } from "../store/index.js";
import { buildApp } from "./app.js";
import { type ConfigurationSource, defaultAssetsDir, loadConsoleAssets, StepRecorder } from "./console/index.js";
import type { Profile, ServerContext, ServerLimits } from "./context.js";
import { openServiceRecords, type ServiceRecords } from "./records.js";
import { RunManager } from "./runs.js";
import { ServerMetrics, tracingInterceptor } from "./telemetry.js";

export type { ConfigurationReport, ConfigurationSource } from "./console/index.js";
export { createApiKey } from "./keys.js";
export { openServiceRecords, type ServiceRecords } from "./records.js";

export const DEFAULT_HOST = "127.0.0.1";
export const DEFAULT_PORT = 8787;
export const DEFAULT_PROFILE = "gatehouse";

export const DEFAULT_LIMITS: ServerLimits = {
  bodyBytes: 1024 * 1024,
  promptChars: 100_000,
  runsPerPrincipal: 4,
  runsPerInstance: 32,
  requestTimeoutMs: 300_000,
};
export const DEFAULT_SHUTDOWN_GRACE_MS = 30_000;
export const DEFAULT_RECOVER_EVERY_MS = 10_000;

/** Whether an address only this machine can reach. */
export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Refused before listening: beyond loopback without any key. */
export class ServeRefused extends Error {}

export interface Service {
  /** Give it to the Gatehouse the service runs (approval asks go to streaming clients, or are denied). */
  readonly approver: Approver;
  readonly records: ServiceRecords;
  /** Starts serving `gatehouse` (already built with `approver`). */
  listen(gatehouse: Gatehouse, at: { host: string; port: number }): Promise<RunningServer>;
}

export interface RunningServer {
  readonly url: string;
  readonly app: FastifyInstance;
  /**
   * Graceful shutdown: stop accepting, let runs finish until the grace period, cancel the
   * rest cleanly, then close the HTTP server and the records (not the Gatehouse: its owner does).
   */
  close(graceMs?: number): Promise<void>;
}

/**
 * The service around a Gatehouse: opened in two steps because the Gatehouse needs the
 * service's approver when it is built, and the service needs the Gatehouse to serve.
 */
export async function openService(options: {
  /**
   * The store the served Gatehouse uses (its records are tables of it, on its connection), or
   * options to open one of the service's own (closed with the service).
   */
  store: StoreView | StoreOptions;
  config?: ServerConfig;
  /** Where the server reports its own failures (a request that failed inside): one sanitized line each. */
  logger?: HookLogger;
  console?: {
    /** The built console's folder (default: the package's dist/console). */
    readonly assetsDir?: string;
    /** The effective configuration the console shows (the CLI passes its listings'). */
    readonly configuration?: ConfigurationSource;
  };
}): Promise<Service> {
  const config = options.config ?? {};
  const limits: ServerLimits = { ...DEFAULT_LIMITS, ...config.limits };
  const records = await openServiceRecords(options.store);
  const logger = options.logger ?? { warn: () => {}, error: () => {} };
  const runs = new RunManager(
    records,
    limits,
    { mode: config.approvals?.mode ?? "deny" },
    logger,
    `${hostname()}:${process.pid}`,
  );
  const profiles: Profile[] = Object.entries(config.agents ?? {}).map(([id, p]) => ({ id, ...p }));
  if (profiles.length === 0) profiles.push({ id: DEFAULT_PROFILE });

  return {
    approver: runs.approver,
    records,
    async listen(gatehouse, at) {
      const loopback = isLoopback(at.host);
      if (!loopback && (await records.apiKeyCounts()).active === 0)
        throw new ServeRefused(
          `refusing to listen on ${at.host} without an API key: create one with \`gatehouse keys create\` (or listen on 127.0.0.1)`,
        );
      const metrics = new ServerMetrics(() => runs.count);
      const steps = new StepRecorder(records.console, runs.instance, logger);
      const ctx: ServerContext = {
        gatehouse,
        records,
        runs,
        metrics,
        profiles,
        limits,
        loopback,
        logger,
        console:
          config.console === false
            ? undefined
            : {
                assets: loadConsoleAssets(options.console?.assetsDir ?? defaultAssetsDir()),
                ...(options.console?.configuration ? { configuration: options.console.configuration } : {}),
              },
        ready: false,
      };
      const removeInterceptors = [
        gatehouse.engine.intercept(metrics.interceptor()),
        gatehouse.engine.intercept(tracingInterceptor()),
        gatehouse.engine.intercept(steps.interceptor()),
      ];
      await gatehouse.ready();
      ctx.ready = !gatehouse.plugins.diagnostics.some((d) => d.level === "error");
      await runs.watchSignals();
      const sweeper = new AbandonedRunSweeper(gatehouse, logger, config.recoverEveryMs ?? DEFAULT_RECOVER_EVERY_MS);
      await sweeper.start();
      const app = await buildApp(ctx);
      const address = await app.listen({ host: at.host, port: at.port });
      let closing: Promise<void> | undefined;
      return {
        url: address,
        app,
        close(graceMs = config.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS) {
          closing ??= (async () => {
            // Stop accepting first: readiness turns unavailable and new runs are refused with 503.
            const drained = runs.drain(graceMs);
            await drained;
            await app.close();
            await sweeper.stop();
            for (const remove of removeInterceptors) remove();
            await steps.flush();
            await records.close();
          })();
          return closing;
        },
      };
    },
  };
}

/**
 * A dead instance's running runs hold unchecked output until someone recovers them. The session's
 * next run would (on any instance), but a session nobody comes back to would keep it for good: so
 * each instance looks for abandoned run leases at start and every `recoverEveryMs`, one sweep at a
 * time, and recovers them as crash recovery does (docs/lifecycle.md).
 */
class AbandonedRunSweeper {
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;

  constructor(
    private readonly gatehouse: Gatehouse,
    private readonly logger: HookLogger,
    private readonly everyMs: number,
  ) {}

  async start(): Promise<void> {
    await this.sweep();
    this.timer = setInterval(() => void this.sweep(), this.everyMs).unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.sweeping;
  }

  private sweep(): Promise<void> {
    this.sweeping ??= this.gatehouse
      .recoverAbandonedRuns()
      .then(
        () => undefined,
        (error: unknown) =>
          this.logger.warn(sanitizeLogLine(`recovering runs a stopped instance left: ${describeError(error)}`)),
      )
      .finally(() => {
        this.sweeping = undefined;
      });
    return this.sweeping;
  }
}
