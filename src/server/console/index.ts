import type { FastifyInstance, FastifyReply } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import type { RunError } from "../../models/failure.js";
import { HttpError, type ServerContext, sendError, visibleSession } from "../context.js";
import { ErrorSchema, IdParams } from "../schemas.js";
import { SseWriter } from "../sse.js";
import type { ConsoleAsset } from "./assets.js";
import { auditCsv, auditJsonl, filteredAudit, summarize } from "./audit.js";
import { loginRoutes } from "./auth.js";
import { type ConfigurationSource, gatehouseConfiguration } from "./configuration.js";
import { liveSnapshot } from "./live.js";
import {
  AuditExportQuery,
  AuditFilterQuery,
  AuditListSchema,
  AuditSummaryQuery,
  AuditSummarySchema,
  ConfigurationSchema,
  LiveSchema,
  TimelineSchema,
} from "./schemas.js";
import { adminOnly } from "./sessions.js";
import { buildTimeline } from "./timeline.js";

export { defaultAssetsDir, loadConsoleAssets } from "./assets.js";
export type { ConfigurationReport, ConfigurationSource } from "./configuration.js";
export { StepRecorder } from "./steps.js";

/** What the console is served from and shows. */
export interface ConsoleOptions {
  /** The built console's files; undefined when it was not built (its pages then answer 404 saying so). */
  readonly assets: ReadonlyMap<string, ConsoleAsset> | undefined;
  /** The effective configuration, as the CLI's listings print it. */
  readonly configuration?: ConfigurationSource;
}

/**
 * The console's pages: script only from this server, no inline script or style, nothing from
 * another origin, no framing, and (Trusted Types) no way for a string to become markup.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join("; ");
/** Everything else the server answers is data: nothing in it may run or load anything. */
const DATA_CSP = "default-src 'none'; frame-ancestors 'none'";

const security = [{ bearer: [] }];
const errors = { 400: ErrorSchema, 401: ErrorSchema, 403: ErrorSchema, 404: ErrorSchema } as const;
/** How often the live view's stream looks at the records for changes. */
const LIVE_POLL_MS = 400;
/** Live streams one principal may hold open on one instance: each reads the database twice a second. */
export const LIVE_STREAMS_PER_PRINCIPAL = 4;
const KEEPALIVE_MS = 15_000;

/**
 * The API routes the console reads (usable with a key, like any other) and, unless the console
 * is turned off, its pages and login.
 */
export function consoleRoutes(app: FastifyInstance, ctx: ServerContext): void {
  app.addHook("onSend", async (request, reply, payload) => {
    reply.header("x-content-type-options", "nosniff");
    reply.header("referrer-policy", "no-referrer");
    if (!reply.hasHeader("content-security-policy")) reply.header("content-security-policy", DATA_CSP);
    if (request.url.startsWith("/console")) reply.header("cache-control", "no-cache");
    return payload;
  });
  if (ctx.console) {
    pageRoutes(app, ctx.console.assets);
    loginRoutes(app, ctx);
  }
  apiRoutes(app, ctx);
}

function withoutMessage({ message: _message, ...rest }: RunError): Omit<RunError, "message"> {
  return rest;
}

function pageRoutes(app: FastifyInstance, assets: ConsoleOptions["assets"]): void {
  const send = (reply: FastifyReply, name: string, ifNoneMatch: string | undefined) => {
    const asset = assets?.get(name);
    if (!asset) {
      const message = assets ? "No such console file." : "The console is not built (npm run build).";
      return sendError(reply, new HttpError(404, "not_found_error", "not_found", message));
    }
    reply
      .header("content-type", asset.type)
      .header("etag", asset.etag)
      .header("x-frame-options", "DENY")
      .header("cross-origin-opener-policy", "same-origin")
      .header("cross-origin-resource-policy", "same-origin");
    if (asset.type.startsWith("text/html")) reply.header("content-security-policy", CONSOLE_CSP);
    if (ifNoneMatch === asset.etag) return reply.status(304).send();
    return reply.send(asset.body);
  };
  const hide = { schema: { hide: true } };
  app.get("/", hide, (_request, reply) => reply.redirect("/console/"));
  app.get("/console", hide, (_request, reply) => reply.redirect("/console/"));
  app.get("/console/", hide, (request, reply) => send(reply, "index.html", request.headers["if-none-match"]));
  app.get<{ Params: { "*": string } }>("/console/assets/*", hide, (request, reply) =>
    send(reply, `assets/${request.params["*"]}`, request.headers["if-none-match"]),
  );
}

function apiRoutes(app: FastifyInstance, ctx: ServerContext): void {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get(
    "/v1/sessions/:id/timeline",
    {
      schema: {
        summary: "A session's runs, each with its steps in lifecycle order",
        description:
          "Model calls, tool calls with their verdicts, hook decisions (hook, plugin, outcome, category — never a reason), approvals, retries, compactions and sub-agents, with durations. Runs served by gatehouse serve have their steps as recorded; others are rebuilt from the store (audit records and stored tool calls).",
        tags: ["sessions"],
        security,
        params: IdParams,
        response: { 200: TimelineSchema, ...errors },
      },
    },
    async (request) => {
      const session = await visibleSession(ctx, request, request.params.id);
      const { store } = ctx.gatehouse;
      const runs = await store.listRuns(session.id);
      const [steps, audit, messages] = await Promise.all([
        ctx.records.console.stepsOf(runs.map((run) => run.id)),
        store.listAudit({ sessionId: session.id }),
        store.sessionMessages(session.id, { limit: 10_000 }),
      ]);
      const timeline = buildTimeline(runs, steps, audit, messages);
      // A failure's message is for operators (as a run's result keeps it from clients): admin keys.
      const shown = request.admin
        ? timeline
        : timeline.map((run) => (run.error ? { ...run, error: withoutMessage(run.error) } : run));
      return { sessionId: session.id, runs: shown };
    },
  );

  r.get(
    "/v1/audit",
    {
      schema: {
        summary: "Hook decisions (sanitized), filtered",
        description:
          "One session's records (sessionId), or those of all your sessions; an admin key sees every record. Filters: runId, hook, pluginId, outcome, category, principal (admin), since, until. Oldest first; at most limit, the newest. Without sessionId, the newest 10 000 records are searched.",
        tags: ["audit"],
        security,
        querystring: AuditFilterQuery,
        response: { 200: AuditListSchema, ...errors },
      },
    },
    async (request) => ({ data: await filteredAudit(ctx, request, request.query) }),
  );

  r.get(
    "/v1/audit/summary",
    {
      schema: {
        summary: "Decisions per plugin per hour or day (default: blocks per hour)",
        tags: ["audit"],
        security,
        querystring: AuditSummaryQuery,
        response: { 200: AuditSummarySchema, ...errors },
      },
    },
    async (request) => {
      const { bucket, ...filter } = request.query;
      const records = await filteredAudit(ctx, request, { ...filter, limit: 10_000 });
      return { bucket, outcome: filter.outcome, ...summarize(records, bucket) };
    },
  );

  r.get(
    "/v1/audit/export",
    {
      schema: {
        summary: "The filtered audit records as a file (CSV or JSON Lines)",
        tags: ["audit"],
        security,
        querystring: AuditExportQuery,
        response: {
          200: z.string().describe("CSV (a header line, then one record a line) or JSON Lines."),
          ...errors,
        },
      },
    },
    async (request, reply) => {
      const { format, ...filter } = request.query;
      const records = await filteredAudit(ctx, request, filter);
      const stamp = new Date().toISOString().slice(0, 19).replaceAll(":", "");
      return reply
        .header("content-type", format === "csv" ? "text/csv; charset=utf-8" : "application/x-ndjson; charset=utf-8")
        .header("content-disposition", `attachment; filename="gatehouse-audit-${stamp}.${format}"`)
        .send(format === "csv" ? auditCsv(records) : auditJsonl(records));
    },
  );

  r.get(
    "/v1/live",
    {
      schema: {
        summary: "Runs in progress on every instance, with their latest steps, and approval asks waiting",
        tags: ["runs"],
        security,
        response: { 200: LiveSchema, ...errors },
      },
    },
    async (request) => liveSnapshot(ctx, request),
  );

  const streams = new Set<SseWriter>();
  const perPrincipal = new Map<string, number>();
  app.addHook("preClose", async () => {
    for (const stream of streams) stream.end();
  });
  r.get(
    "/v1/live/events",
    {
      schema: {
        summary: "The same as GET /v1/live, as Server-Sent Events: a live event each time it changes",
        description: `At most ${LIVE_STREAMS_PER_PRINCIPAL} streams at once per principal on one instance (429).`,
        tags: ["runs"],
        security,
        response: { 200: LiveSchema, 429: ErrorSchema, ...errors },
      },
    },
    async (request, reply) => {
      const open = perPrincipal.get(request.principal) ?? 0;
      if (open >= LIVE_STREAMS_PER_PRINCIPAL)
        throw new HttpError(
          429,
          "rate_limit_error",
          "too_many_streams",
          `At most ${LIVE_STREAMS_PER_PRINCIPAL} live streams at once per key.`,
          { "retry-after": "5" },
        );
      perPrincipal.set(request.principal, open + 1);
      reply.hijack();
      const sse = new SseWriter(reply.raw, {});
      streams.add(sse);
      let last = "";
      let quietSince = Date.now();
      const caller = { principal: request.principal, admin: request.admin };
      while (!sse.gone.aborted && !sse.ended) {
        try {
          const body = JSON.stringify(await liveSnapshot(ctx, caller));
          if (body !== last) {
            sse.send(body, "live");
            last = body;
            quietSince = Date.now();
          } else if (Date.now() - quietSince > KEEPALIVE_MS) {
            sse.comment("keepalive");
            quietSince = Date.now();
          }
        } catch (error) {
          ctx.logger.warn(`console: live view failed: ${error instanceof Error ? error.name : "error"}`);
        }
        await new Promise((resolve) => setTimeout(resolve, LIVE_POLL_MS).unref());
      }
      streams.delete(sse);
      const left = (perPrincipal.get(request.principal) ?? 1) - 1;
      if (left > 0) perPrincipal.set(request.principal, left);
      else perPrincipal.delete(request.principal);
      sse.end();
    },
  );

  r.get(
    "/v1/config",
    {
      schema: {
        summary: "The effective plugins, command hooks and permission rules, with their sources (admin keys)",
        description:
          "What gatehouse plugins inspect, hooks list, the permissions listing and gatehouse config --json print, secrets masked as gatehouse config masks them.",
        tags: ["operations"],
        security,
        response: { 200: ConfigurationSchema, ...errors },
      },
    },
    async (request) => {
      if (!request.admin) throw adminOnly();
      const source = ctx.console?.configuration;
      return source ? await source() : gatehouseConfiguration(ctx.gatehouse);
    },
  );
}
