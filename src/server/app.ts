import cookie from "@fastify/cookie";
import swagger from "@fastify/swagger";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import Fastify, { type FastifyError, type FastifyInstance, type FastifyRequest } from "fastify";
import {
  hasZodFastifySchemaValidationErrors,
  jsonSchemaTransform,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from "fastify-type-provider-zod";
import { describeError, sanitizeLogLine } from "../hooks/sanitize.js";
import { VERSION } from "../version.js";
import { consoleRoutes } from "./console/index.js";
import { authenticate, errorBody, HttpError, type ServerContext, sendError } from "./context.js";
import { nativeRoutes } from "./native.js";
import { openaiRoutes } from "./openai.js";
import { HealthSchema, ReadySchema } from "./schemas.js";
import { contextFromTraceparent, traceparentOf, tracer } from "./telemetry.js";

/** The OpenAPI document's fixed parts; the paths come from the routes' zod schemas. */
const OPENAPI = {
  openapi: "3.1.0",
  info: {
    title: "Gatehouse",
    version: VERSION,
    description:
      "The policy-enforced agent as a service: a native sessions/runs API with Server-Sent Events, and OpenAI-compatible Chat Completions, Responses and Models. Every hook applies exactly as in `gatehouse run`. See docs/server.md.",
  },
  components: { securitySchemes: { bearer: { type: "http" as const, scheme: "bearer" } } },
  tags: [
    { name: "sessions", description: "Conversations, owned by the principal of the key that created them." },
    { name: "runs", description: "One turn each; streamed or not; cancel and approvals." },
    { name: "audit", description: "Sanitized hook decisions: filtered, summarized, exported." },
    { name: "openai", description: "OpenAI-compatible endpoints." },
    { name: "operations", description: "Health, readiness, metrics, configuration, this document." },
    { name: "console", description: "The web console's login (an httpOnly cookie and a CSRF token)." },
  ],
};

/**
 * The Fastify application: schemas from zod (validation, serialization, OpenAPI), errors in
 * OpenAI's shape that never carry more than their message, bearer authentication on /v1, a
 * server span per request continuing the client's `traceparent`.
 */
export async function buildApp(ctx: ServerContext): Promise<FastifyInstance> {
  const app = Fastify({ logger: false, bodyLimit: ctx.limits.bodyBytes, return503OnClosing: true });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  await app.register(swagger, { openapi: OPENAPI, transform: jsonSchemaTransform });
  await app.register(cookie);

  app.decorateRequest("principal", "");
  app.decorateRequest("admin", false);
  app.decorateRequest("viaLogin", false);
  app.addHook("onRequest", async (request, reply) => {
    const incoming = request.headers.traceparent;
    const span = tracer().startSpan(
      `${request.method} ${request.routeOptions.url ?? "unknown"}`,
      { kind: SpanKind.SERVER, attributes: { "http.request.method": request.method } },
      contextFromTraceparent(typeof incoming === "string" ? incoming : undefined),
    );
    const traceparent = traceparentOf(span) ?? (typeof incoming === "string" ? incoming : undefined);
    (request as FastifyRequest & { traceparent?: string }).traceparent = traceparent;
    reply.raw.once("close", () => {
      const status = reply.raw.statusCode;
      span.setAttribute("http.response.status_code", status);
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
      ctx.metrics.requests.inc({ route: request.routeOptions.url ?? "unknown", status: String(status) });
    });
    if (request.url.startsWith("/v1/")) await authenticate(ctx, request);
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof HttpError) return sendError(reply, error);
    if (hasZodFastifySchemaValidationErrors(error))
      return sendError(reply, new HttpError(400, "invalid_request_error", "invalid_request", error.message));
    if (error.code === "FST_ERR_CTP_BODY_TOO_LARGE") {
      ctx.metrics.refused.inc({ reason: "body_too_large" });
      return sendError(
        reply,
        new HttpError(
          413,
          "invalid_request_error",
          "body_too_large",
          `The body is larger than ${ctx.limits.bodyBytes} bytes.`,
        ),
      );
    }
    if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500)
      return sendError(
        reply,
        new HttpError(error.statusCode, "invalid_request_error", error.code ?? null, error.message),
      );
    // Anything else is ours: the client learns nothing of it; the operator gets one sanitized line.
    ctx.logger.error(
      sanitizeLogLine(`${request.method} ${request.routeOptions.url ?? request.url} failed: ${describeError(error)}`),
    );
    return sendError(reply, new HttpError(500, "server_error", "internal_error", "Internal error."));
  });
  app.setNotFoundHandler((_request, reply) =>
    reply.status(404).send(errorBody(new HttpError(404, "not_found_error", "not_found", "No such route."))),
  );

  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    "/healthz",
    { schema: { summary: "Liveness: the process answers", tags: ["operations"], response: { 200: HealthSchema } } },
    async () => ({ status: "ok" as const }),
  );
  r.get(
    "/readyz",
    {
      schema: {
        summary: "Readiness: store reachable, plugins loaded, not draining",
        tags: ["operations"],
        response: { 200: ReadySchema, 503: ReadySchema },
      },
    },
    async (_request, reply) => {
      const store = await ctx.records
        .ping()
        .then(() => ctx.gatehouse.store.getSession("readyz-probe"))
        .then(
          () => true,
          () => false,
        );
      const checks = { store, plugins: ctx.ready, draining: ctx.runs.isDraining };
      const ready = store && ctx.ready && !checks.draining;
      return reply.status(ready ? 200 : 503).send({ status: ready ? "ready" : "unavailable", checks });
    },
  );
  app.get(
    "/metrics",
    { schema: { summary: "Prometheus metrics (text exposition format)", tags: ["operations"] } },
    async (_request, reply) =>
      reply.header("content-type", ctx.metrics.registry.contentType).send(await ctx.metrics.registry.metrics()),
  );
  app.get("/openapi.json", { schema: { summary: "This API's OpenAPI document", tags: ["operations"] } }, async () =>
    app.swagger(),
  );

  nativeRoutes(app, ctx);
  openaiRoutes(app, ctx);
  consoleRoutes(app, ctx);
  return app;
}
