import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import type { RunEvent, RunResult } from "../runtime/types.js";
import type { Message, Run, Session } from "../store/types.js";
import { SessionListQuery, SessionListWithFigures } from "./console/schemas.js";
import { consoleTitles, listSessions } from "./console/sessions.js";
import {
  admitted,
  checkPrompt,
  HttpError,
  newSession,
  notFound,
  ownedSession,
  profileFor,
  requestTraceparent,
  runError,
  type ServerContext,
  sendError,
  visibleSession,
} from "./context.js";
import type { SessionOwner } from "./records.js";
import {
  ApprovalBody,
  ApprovalParams,
  ApprovalResultSchema,
  CancelResultSchema,
  CreateSessionBody,
  ErrorSchema,
  IdParams,
  RunBody,
  RunEventSchema,
  RunIdParams,
  RunResultSchema,
  RunSchema,
  SessionDetailSchema,
  SessionSchema,
} from "./schemas.js";
import { SseWriter } from "./sse.js";

const errors = { 400: ErrorSchema, 401: ErrorSchema, 404: ErrorSchema } as const;
const security = [{ bearer: [] }];

const sessionJson = (s: Session, owner: Pick<SessionOwner, "title"> | undefined) => ({
  id: s.id,
  key: s.key,
  title: s.title ?? owner?.title ?? null,
  createdAt: s.createdAt,
  updatedAt: s.updatedAt,
});

const runJson = (r: Run) => ({
  id: r.id,
  sessionId: r.sessionId,
  seq: r.seq,
  status: r.status,
  depth: r.depth,
  startedAt: r.startedAt,
  endedAt: r.endedAt,
  ...(r.model === undefined ? {} : { model: r.model }),
  ...(r.usage === undefined ? {} : { usage: r.usage }),
  ...(r.detail === undefined ? {} : { detail: r.detail }),
  ...(r.errorKind === undefined ? {} : { errorKind: r.errorKind }),
});

/** A block notice's attribution, as the store keeps it beside the notice (never a reason). */
function noticeOf(m: Message) {
  const { blockedBy, hook, category } = m.metadata as Record<string, unknown>;
  if (typeof blockedBy !== "string" || typeof hook !== "string") return {};
  return { notice: { blockedBy, hook, ...(typeof category === "string" ? { category } : {}) } };
}

const messageJson = (m: Message) => ({
  id: m.id,
  runId: m.runId,
  seq: m.seq,
  role: m.role,
  parts: m.parts as unknown as { type: string }[],
  createdAt: m.createdAt,
  ...noticeOf(m),
});

/** What a client may see of a run's result: no internal error text (a failure says only that it failed). */
export function publicResult(r: RunResult) {
  const { error: _error, children, ...rest } = r;
  return { ...rest, ...(children === undefined ? {} : { children: [...children] }) };
}

/**
 * The run if its session belongs to the principal — or, for an admin key (an operator at the
 * console), any run: an admin may read it, cancel it and answer its approval asks.
 */
async function visibleRun(ctx: ServerContext, request: FastifyRequest, runId: string): Promise<Run> {
  const run = await ctx.gatehouse.store.getRun(runId);
  if (!run) throw notFound("run");
  await visibleSession(ctx, request, run.sessionId).catch(() => {
    throw notFound("run");
  });
  return run;
}

export function wantsStream(request: FastifyRequest, stream: boolean | null | undefined): boolean {
  return stream === true || (stream !== false && (request.headers.accept ?? "").includes("text/event-stream"));
}

/** The native API: sessions, runs (JSON or SSE of the run's events), cancel, approvals, audit. */
export function nativeRoutes(app: FastifyInstance, ctx: ServerContext): void {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.post(
    "/v1/sessions",
    {
      schema: {
        summary: "Create a session",
        tags: ["sessions"],
        security,
        body: CreateSessionBody,
        response: { 201: SessionSchema, ...errors },
      },
    },
    async (request, reply) => {
      const body = request.body ?? {};
      const session = await newSession(ctx, request.principal, body);
      return reply.status(201).send(sessionJson(session, undefined));
    },
  );

  r.get(
    "/v1/sessions",
    {
      schema: {
        summary: "List sessions with their figures, latest activity first",
        description:
          "Your sessions — or, with scope=all and an admin key, every top-level session (those gatehouse run made included) — with principal, last activity, runs, blocks and size. q searches the title, id and key; principal and blocked filter. Search and filters cover the newest 500 sessions.",
        tags: ["sessions"],
        security,
        querystring: SessionListQuery,
        response: { 200: SessionListWithFigures, ...errors, 403: ErrorSchema },
      },
    },
    async (request) => listSessions(ctx, request, request.query),
  );

  r.get(
    "/v1/sessions/:id",
    {
      schema: {
        summary: "A session with its runs and messages",
        tags: ["sessions"],
        security,
        params: IdParams,
        response: { 200: SessionDetailSchema, ...errors },
      },
    },
    async (request) => {
      const session = await visibleSession(ctx, request, request.params.id);
      const owner = await ctx.records.sessionOwner(session.id);
      const { store } = ctx.gatehouse;
      const [runs, messages] = await Promise.all([
        store.listRuns(session.id),
        store.sessionMessages(session.id, { limit: 10_000 }),
      ]);
      const titles = await consoleTitles(store, [{ session, owner }]);
      return {
        ...sessionJson(session, owner),
        title: titles.get(session.id) ?? null,
        principal: owner?.principal ?? null,
        runs: runs.map(runJson),
        messages: messages.map(messageJson),
      };
    },
  );

  r.delete(
    "/v1/sessions/:id",
    {
      schema: {
        summary: "Delete a session (its sub-agent sessions, runs and messages; audit records stay)",
        tags: ["sessions"],
        security,
        params: IdParams,
        response: { 204: z.null().describe("Deleted."), ...errors },
      },
    },
    async (request, reply) => {
      const session = await ownedSession(ctx, request.principal, request.params.id);
      // As `gatehouse sessions rm`: hooks see the session end before it goes (and the runtime lets go of it).
      await ctx.gatehouse.endSession(session.id, "deleted");
      await ctx.gatehouse.store.deleteSession(session.id);
      await ctx.records.forgetSession(session.id);
      return reply.status(204).send(null);
    },
  );

  r.post(
    "/v1/sessions/:id/runs",
    {
      schema: {
        summary: "Run one turn in the session",
        description:
          "Answers with the run's result, or — with stream: true or Accept: text/event-stream — with Server-Sent Events of the run's events (RunEvent), the same as gatehouse.stream() yields, with the same holdback while output gates have handlers. The last event is run-end with the result.",
        tags: ["runs"],
        security,
        params: IdParams,
        body: RunBody,
        response: {
          200: RunResultSchema.or(RunEventSchema),
          429: ErrorSchema,
          503: ErrorSchema,
          504: ErrorSchema,
          500: ErrorSchema,
          ...errors,
        },
      },
    },
    async (request, reply) => {
      const { prompt, model } = request.body;
      checkPrompt(ctx, prompt);
      const profile = profileFor(ctx, model);
      const session = await ownedSession(ctx, request.principal, request.params.id);
      const input = {
        prompt,
        sessionId: session.id,
        channel: "http" as const,
        ...(profile.model === undefined ? {} : { model: profile.model }),
        ...(profile.systemPrompt === undefined ? {} : { systemPrompt: profile.systemPrompt }),
        ...(requestTraceparent(request) === undefined ? {} : { traceparent: requestTraceparent(request) as string }),
      };
      if (!wantsStream(request, request.body.stream)) {
        const gone = clientGone(reply);
        const started = admitted(ctx, () =>
          ctx.runs.start(ctx.gatehouse, request.principal, input, { streaming: false, signal: gone }),
        );
        const result = await started.result;
        const failed = runError(result, started.timedOut());
        if (failed) return sendError(reply, failed);
        return publicResult(result);
      }
      return streamRun(ctx, request, reply, input);
    },
  );

  r.get(
    "/v1/runs/:runId",
    {
      schema: {
        summary: "A run's status",
        tags: ["runs"],
        security,
        params: RunIdParams,
        response: { 200: RunSchema, ...errors },
      },
    },
    async (request) => runJson(await visibleRun(ctx, request, request.params.runId)),
  );

  r.post(
    "/v1/runs/:runId/cancel",
    {
      schema: {
        summary: "Cancel a running run (on whichever instance runs it)",
        tags: ["runs"],
        security,
        params: RunIdParams,
        response: { 202: CancelResultSchema, 409: ErrorSchema, ...errors },
      },
    },
    async (request, reply) => {
      const run = await visibleRun(ctx, request, request.params.runId);
      if (run.status !== "running")
        return sendError(
          reply,
          new HttpError(409, "invalid_request_error", "run_not_running", "The run is not running."),
        );
      await ctx.runs.cancel(run.id);
      return reply.status(202).send({ runId: run.id, status: "cancelling" as const });
    },
  );

  r.post(
    "/v1/runs/:runId/approvals/:toolCallId",
    {
      schema: {
        summary: "Answer a tool call's approval request (approvals.mode client)",
        tags: ["runs"],
        security,
        params: ApprovalParams,
        body: ApprovalBody,
        response: { 202: ApprovalResultSchema, 409: ErrorSchema, ...errors },
      },
    },
    async (request, reply) => {
      const run = await visibleRun(ctx, request, request.params.runId);
      if (run.status !== "running")
        return sendError(
          reply,
          new HttpError(409, "invalid_request_error", "run_not_running", "The run is not running."),
        );
      await ctx.runs.answer(
        run.id,
        request.params.toolCallId,
        request.body.decision,
        request.viaLogin ? "console" : "client",
      );
      return reply
        .status(202)
        .send({ runId: run.id, toolCallId: request.params.toolCallId, decision: request.body.decision });
    },
  );
}

/** Aborts when the client closes the connection before the answer was sent. */
export function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.on("close", () => {
    if (!reply.raw.writableFinished) controller.abort(new Error("client gone"));
  });
  return controller.signal;
}

/** SSE of the run's events, as gatehouse.stream() yields them; run-end carries the public result. */
async function streamRun(
  ctx: ServerContext,
  request: FastifyRequest & { principal: string },
  reply: FastifyReply,
  input: Parameters<ServerContext["runs"]["start"]>[2],
): Promise<FastifyReply> {
  const pending: RunEvent[] = [];
  let sse: SseWriter | undefined;
  const gone = new AbortController();
  const started = admitted(ctx, () =>
    ctx.runs.start(ctx.gatehouse, request.principal, input, {
      streaming: true,
      signal: gone.signal,
      onEvent: (event) => {
        if (sse) sse.send(eventJson(event), event.type);
        else pending.push(event);
      },
    }),
  );
  reply.hijack();
  sse = new SseWriter(reply.raw, { "x-gatehouse-session": input.sessionId ?? "" });
  sse.gone.addEventListener("abort", () => gone.abort(new Error("client gone")), { once: true });
  for (const event of pending.splice(0)) sse.send(eventJson(event), event.type);
  try {
    const result = await started.result;
    const failed = runError(result, started.timedOut());
    if (failed) sse.send({ error: { message: failed.message, type: failed.type, code: failed.code } }, "error");
  } catch {
    sse.send({ error: { message: "The run failed.", type: "server_error", code: "run_failed" } }, "error");
  }
  sse.end();
  return reply;
}

/** A run event as sent: run-end without internal error text. */
function eventJson(event: RunEvent): unknown {
  return event.type === "run-end" ? { type: "run-end", result: publicResult(event.result) } : event;
}
