import type { FastifyReply, FastifyRequest } from "fastify";
import type { HookLogger } from "../hooks/kinds/shared.js";
import type { Gatehouse } from "../runtime/gatehouse.js";
import type { RunResult } from "../runtime/types.js";
import type { Session } from "../store/types.js";
import { changesState, consoleIdentity, isLoopbackHost, sameOrigin } from "./console/auth.js";
import type { ConsoleOptions } from "./console/index.js";
import { type Identity, identityOf } from "./keys.js";
import type { ServiceRecords } from "./records.js";
import { Refusal, type RunManager } from "./runs.js";
import type { ServerMetrics } from "./telemetry.js";

/** An agent profile as served: what a request's `model` names. */
export interface Profile {
  readonly id: string;
  readonly model?: string;
  readonly systemPrompt?: string;
  readonly description?: string;
}

export interface ServerLimits {
  readonly bodyBytes: number;
  readonly promptChars: number;
  readonly runsPerPrincipal: number;
  readonly runsPerInstance: number;
  readonly requestTimeoutMs: number;
}

/** Everything the routes share. */
export interface ServerContext {
  readonly gatehouse: Gatehouse;
  readonly records: ServiceRecords;
  readonly runs: RunManager;
  readonly metrics: ServerMetrics;
  /** In order; the first is the default. */
  readonly profiles: readonly Profile[];
  readonly limits: ServerLimits;
  /** The server's own failures, one sanitized line each. */
  readonly logger: HookLogger;
  /** Listening on loopback only: requests without a key are the "local" principal until a first key is created. */
  readonly loopback: boolean;
  /** The web console: its built files and the configuration it shows; undefined when turned off. */
  readonly console: ConsoleOptions | undefined;
  /** Set once plugins are loaded and the store is open. */
  ready: boolean;
}

/** The principal of a request with no key, on loopback, until a first key is created. */
export const LOCAL_PRINCIPAL = "local";

/** An error answered in OpenAI's shape, with no more detail than `message` says. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    readonly code: string | null,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const notFound = (what: string) => new HttpError(404, "not_found_error", "not_found", `No such ${what}.`);

export function errorBody(error: HttpError) {
  return { error: { message: error.message, type: error.type, code: error.code } };
}

export function sendError(reply: FastifyReply, error: HttpError): FastifyReply {
  return reply.status(error.status).headers(error.headers).send(errorBody(error));
}

/** A refusal by a limit as the HTTP error it is (429 or 503 with retry-after). */
export function refusalError(refusal: Refusal): HttpError {
  return new HttpError(
    refusal.status,
    refusal.status === 429 ? "rate_limit_error" : "server_error",
    refusal.code,
    refusal.message,
    {
      "retry-after": String(refusal.retryAfterSeconds),
    },
  );
}

declare module "fastify" {
  interface FastifyRequest {
    principal: string;
    /** The key's admin flag (the open loopback's local principal is one). */
    admin: boolean;
    /** Authenticated by the console's login cookie (a person at the console), not a bearer key. */
    viaLogin: boolean;
  }
}

/** The open loopback's one principal: the person at this machine, who may see everything on it. */
export const LOCAL_IDENTITY: Identity = { principal: LOCAL_PRINCIPAL, admin: true, keyId: null };

/**
 * Whether a request may act as the local principal without a key: the server listens on
 * loopback, no key was ever created, and the request names a loopback host (a web page whose
 * name was rebound to 127.0.0.1 sends its own name, and is refused).
 */
export async function openLoopback(ctx: ServerContext, request: FastifyRequest): Promise<boolean> {
  return ctx.loopback && isLoopbackHost(request.headers.host) && !(await ctx.records.anyKeyEver());
}

/**
 * Authentication: `Authorization: Bearer <key>` names a principal; so does the console's login
 * cookie (with a CSRF token on every request that changes something). A server on loopback
 * while no key was ever created is open: every request is the "local" principal (OpenAI clients
 * always send some key). Otherwise a missing or wrong key is 401.
 */
export async function authenticate(ctx: ServerContext, request: FastifyRequest): Promise<void> {
  const header = request.headers.authorization;
  const bearer = header?.startsWith("Bearer ") ? header.slice(7).trim() : undefined;
  // A bearer key first; without one, the console's login cookie; failing both, the open loopback.
  let identity = bearer ? await identityOf(ctx.records, bearer) : await consoleIdentity(ctx, request);
  if (identity === undefined && (await openLoopback(ctx, request))) {
    // The open loopback asks for no secret that another site's page would lack: what a browser says
    // of the page's origin is all there is to tell them apart, as for a cookie login.
    if (changesState(request) && !sameOrigin(request))
      throw new HttpError(403, "permission_error", "cross_origin", "Cross-origin request refused.");
    identity = LOCAL_IDENTITY;
  }
  if (identity !== undefined) {
    request.principal = identity.principal;
    request.admin = identity.admin;
    request.viaLogin = !bearer && identity !== LOCAL_IDENTITY;
    return;
  }
  if (bearer) throw new HttpError(401, "authentication_error", "invalid_api_key", "Invalid API key.");
  throw new HttpError(401, "authentication_error", "missing_api_key", "Missing API key (Authorization: Bearer …).");
}

/** The session if this principal owns it; someone else's is as absent as one that does not exist. */
export async function ownedSession(ctx: ServerContext, principal: string, sessionId: string): Promise<Session> {
  const owner = await ctx.records.sessionOwner(sessionId);
  if (owner?.principal !== principal) throw notFound("session");
  const session = await ctx.gatehouse.store.getSession(sessionId);
  if (!session) throw notFound("session");
  return session;
}

/** The session if the request may read it: its owner's, or any session for an admin. */
export async function visibleSession(
  ctx: ServerContext,
  request: Pick<FastifyRequest, "principal" | "admin">,
  sessionId: string,
): Promise<Session> {
  if (!request.admin) return ownedSession(ctx, request.principal, sessionId);
  const session = await ctx.gatehouse.store.getSession(sessionId);
  if (!session) throw notFound("session");
  return session;
}

/** A new session owned by the principal. */
export async function newSession(
  ctx: ServerContext,
  principal: string,
  input: { key?: string; title?: string } = {},
): Promise<Session> {
  // The title is the session's own (the store's, which `gatehouse sessions rename` edits too);
  // the owner record's title column only serves sessions created before titles moved there.
  const session = await ctx.gatehouse.store.createSession({
    key: input.key ?? null,
    // A title is one line: the API's may hold any whitespace.
    title: input.title?.replace(/\s+/g, " ").trim() || null,
  });
  await ctx.records.ownSession({ sessionId: session.id, principal, title: null, createdAt: session.createdAt });
  return session;
}

export function profileFor(ctx: ServerContext, model: string | undefined): Profile {
  if (model === undefined) return ctx.profiles[0] as Profile;
  const profile = ctx.profiles.find((p) => p.id === model);
  if (!profile)
    throw new HttpError(404, "invalid_request_error", "model_not_found", `The model '${model}' does not exist.`);
  return profile;
}

export function checkPrompt(ctx: ServerContext, prompt: string): void {
  if (prompt.length > ctx.limits.promptChars) {
    ctx.metrics.refused.inc({ reason: "prompt_too_long" });
    throw new HttpError(
      400,
      "invalid_request_error",
      "prompt_too_long",
      `The prompt is longer than ${ctx.limits.promptChars} characters.`,
    );
  }
}

/**
 * A run's end as HTTP: a failure or a missed deadline is an error without detail; anything else
 * is an answer. A failed model call says which side failed, as a gateway does (the provider's own
 * message stays in the log): 429 when the provider rate-limits, so clients back off, 502 when it
 * failed or refused. Anything else is Gatehouse's own 500.
 */
export function runError(result: RunResult, timedOut: boolean): HttpError | undefined {
  if (result.outcome === "failed") return failedRunError(result);
  if (result.outcome === "cancelled" && timedOut)
    return new HttpError(
      504,
      "timeout_error",
      "deadline_exceeded",
      "The run did not finish before the request deadline.",
    );
  return undefined;
}

function failedRunError(result: RunResult): HttpError {
  const run = `(run ${result.runId})`;
  switch (result.error?.kind) {
    case "rate_limit":
      return new HttpError(
        429,
        "rate_limit_error",
        "provider_rate_limited",
        `The model provider is rate limiting requests ${run}.`,
      );
    case "server":
    case "connection":
    case "invalid_response":
      return new HttpError(502, "server_error", "provider_unavailable", `The model provider did not answer ${run}.`);
    case "missing_key":
    case "auth":
    case "not_found":
    case "bad_request":
      return new HttpError(502, "server_error", "provider_refused", `The model provider refused the request ${run}.`);
    default:
      return new HttpError(500, "server_error", "run_failed", `The run failed ${run}.`);
  }
}

/** Runs `fn` (which starts a run); a refusal by a limit becomes its HTTP error and is counted. */
export function admitted<T>(ctx: ServerContext, fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    if (error instanceof Refusal) {
      ctx.metrics.refused.inc({ reason: error.code });
      throw refusalError(error);
    }
    throw error;
  }
}

/** Traceparent of the request (or its server span): the run continues that trace. */
export function requestTraceparent(request: FastifyRequest): string | undefined {
  return (request as FastifyRequest & { traceparent?: string }).traceparent;
}
