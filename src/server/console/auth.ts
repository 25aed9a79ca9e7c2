import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { HttpError, LOCAL_IDENTITY, openLoopback, type ServerContext, sendError } from "../context.js";
import { type Identity, identityOf } from "../keys.js";
import { ErrorSchema } from "../schemas.js";
import { LoginBody, LoginSchema, MeSchema } from "./schemas.js";

/**
 * Console logins: a key (or, on the open loopback, no key) is exchanged once for an httpOnly,
 * SameSite=Strict cookie naming a login kept in the database (so any instance behind a load
 * balancer knows it); the key never reaches the page's script. Every request with the cookie
 * that changes something must carry the login's CSRF token in a header, and an Origin, if
 * sent, that is the server's own. The login lasts while its key is not revoked, at most
 * `LOGIN_TTL_MS`.
 */

export const LOGIN_COOKIE = "gatehouse_console";
export const CSRF_HEADER = "x-gatehouse-csrf";
const LOGIN_TTL_MS = 8 * 60 * 60 * 1000;
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

/** `localhost`, `127.x.y.z` or `[::1]`, with or without a port: a name only this machine answers to. */
export function isLoopbackHost(host: string | undefined): boolean {
  if (host === undefined) return false;
  const name = host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : host.replace(/:\d+$/, "");
  return name === "localhost" || name === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Whether the request may change something (anything but GET, HEAD, OPTIONS). */
export const changesState = (request: Pick<FastifyRequest, "method">): boolean => !SAFE_METHODS.has(request.method);

/** Whether the request's Origin (when the browser sent one) is this server. */
export function sameOrigin(request: FastifyRequest): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  try {
    return new URL(origin).host === request.headers.host;
  } catch {
    return false;
  }
}

/** The login cookie's token, or undefined. */
function loginToken(request: FastifyRequest): string | undefined {
  const token = request.cookies[LOGIN_COOKIE];
  return token && /^[A-Za-z0-9_-]{43}$/.test(token) ? token : undefined;
}

/**
 * Who the login cookie stands for, if it names a live login whose key still works (and, for the
 * local principal, while the loopback is still open). A request that changes something without
 * the login's CSRF token, or from another origin, is refused (403).
 */
export async function consoleIdentity(ctx: ServerContext, request: FastifyRequest): Promise<Identity | undefined> {
  const token = loginToken(request);
  if (token === undefined) return undefined;
  const login = await ctx.records.console.login(sha256(token), Date.now());
  if (!login) return undefined;
  let identity: Identity | undefined;
  if (login.keyId === null) identity = (await openLoopback(ctx, request)) ? LOCAL_IDENTITY : undefined;
  else {
    const key = await ctx.records.findApiKey(login.keyId);
    if (key && key.revokedAt === null) identity = { principal: key.principal, admin: key.admin, keyId: key.id };
  }
  if (identity === undefined) return undefined;
  if (changesState(request)) {
    const csrf = request.headers[CSRF_HEADER];
    if (typeof csrf !== "string" || !sameText(csrf, login.csrf) || !sameOrigin(request))
      throw new HttpError(403, "permission_error", "csrf_failed", "Missing or wrong CSRF token.");
  }
  return identity;
}

function setLoginCookie(request: FastifyRequest, reply: FastifyReply, token: string, maxAgeMs: number): void {
  reply.setCookie(LOGIN_COOKIE, token, {
    httpOnly: true,
    sameSite: "strict",
    path: "/",
    secure: request.protocol === "https",
    maxAge: Math.floor(maxAgeMs / 1000),
  });
}

/** Before the body is read: another site's page may not log in or out (its body is not even looked at). */
async function refuseCrossOrigin(request: FastifyRequest): Promise<void> {
  if (!sameOrigin(request))
    throw new HttpError(403, "permission_error", "cross_origin", "Cross-origin request refused.");
}

/** POST /console/login, GET /console/me, POST /console/logout. */
export function loginRoutes(app: FastifyInstance, ctx: ServerContext): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tags = ["console"];

  r.post(
    "/console/login",
    {
      schema: {
        summary: "Log in to the console with an API key (or, on the open loopback, without one)",
        description:
          "Sets an httpOnly, SameSite=Strict cookie; answers the login's CSRF token, to send as X-Gatehouse-CSRF with every request that changes something.",
        tags,
        body: LoginBody,
        response: { 200: LoginSchema, 401: ErrorSchema, 403: ErrorSchema },
      },
      preValidation: refuseCrossOrigin,
    },
    async (request, reply) => {
      const key = request.body.key?.trim();
      const identity = key
        ? await identityOf(ctx.records, key)
        : (await openLoopback(ctx, request))
          ? LOCAL_IDENTITY
          : undefined;
      if (!identity)
        return sendError(
          reply,
          key
            ? new HttpError(401, "authentication_error", "invalid_api_key", "Invalid API key.")
            : new HttpError(401, "authentication_error", "missing_api_key", "An API key is required."),
        );
      const token = randomBytes(32).toString("base64url");
      const csrf = randomBytes(32).toString("base64url");
      await ctx.records.console.createLogin({
        tokenHash: sha256(token),
        principal: identity.principal,
        admin: identity.admin,
        keyId: identity.keyId,
        csrf,
        expiresAt: Date.now() + LOGIN_TTL_MS,
      });
      setLoginCookie(request, reply, token, LOGIN_TTL_MS);
      return { principal: identity.principal, admin: identity.admin, csrf };
    },
  );

  r.get(
    "/console/me",
    { schema: { summary: "Who the console is logged in as", tags, response: { 200: MeSchema } } },
    async (request) => {
      const token = loginToken(request);
      const login = token === undefined ? undefined : await ctx.records.console.login(sha256(token), Date.now());
      const identity = login ? await consoleIdentity(ctx, request) : undefined;
      if (login && identity)
        return { authenticated: true, principal: identity.principal, admin: identity.admin, csrf: login.csrf };
      return { authenticated: false, keyRequired: !(await openLoopback(ctx, request)) };
    },
  );

  r.post(
    "/console/logout",
    {
      schema: {
        summary: "Log out of the console",
        tags,
        response: { 204: z.null().describe("Logged out."), 403: ErrorSchema },
      },
      preValidation: refuseCrossOrigin,
    },
    async (request, reply) => {
      const token = loginToken(request);
      if (token !== undefined) {
        // Only the page that holds the login's CSRF token may end it.
        if ((await consoleIdentity(ctx, request)) !== undefined) await ctx.records.console.deleteLogin(sha256(token));
      }
      setLoginCookie(request, reply, "", 0);
      return reply.status(204).send(null);
    },
  );
}
