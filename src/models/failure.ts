import { APICallError, JSONParseError, LoadAPIKeyError, TypeValidationError } from "@ai-sdk/provider";
import { sanitizeLogLine } from "../hooks/sanitize.js";

/**
 * Why a run failed, as data (the run result, `--json`, `agent_end`). `provider` is the model's
 * provider when a model call failed, `gatehouse` otherwise.
 */
export type RunErrorKind =
  /** No API key in the environment for the provider. */
  | "missing_key"
  /** 401/403: the provider refused the key. */
  | "auth"
  /** 404: usually the model name. */
  | "not_found"
  /** 429, after the retries. */
  | "rate_limit"
  /** 5xx (and 408/409), after the retries. */
  | "server"
  /** Any other 4xx: the provider refused the request. */
  | "bad_request"
  /** The connection failed or was reset. */
  | "connection"
  /** The provider answered something that is not its protocol (malformed SSE or JSON). */
  | "invalid_response"
  /** A failure inside Gatehouse, a tool or a hook rather than the model call. */
  | "internal";

export interface RunError {
  readonly kind: RunErrorKind;
  readonly provider: string;
  /** The model id, for a model call's failure. */
  readonly model?: string;
  /** The HTTP status the provider answered, when it answered one. */
  readonly status?: number;
  /** Whether trying again later may succeed (the retries, if any, are already spent). */
  readonly retryable: boolean;
  /** Model calls made for the failed step, retries included (absent: one). */
  readonly attempts?: number;
  /** One line, secrets masked, no raw wire fragments. */
  readonly message: string;
}

const NETWORK_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "EPIPE",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EAI_AGAIN",
  "UND_ERR_SOCKET",
]);

/** Whether an error is worth another model call: retryable statuses (408/409/429/5xx) and connection errors. */
export function isRetryableModelError(error: unknown): boolean {
  if (APICallError.isInstance(error)) return error.isRetryable;
  return isConnectionError(error);
}

function isConnectionError(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && NETWORK_CODES.has(code)) return true;
    // undici: a body cut off mid-read ("terminated"), a failed connect ("fetch failed").
    if (e instanceof TypeError && /^(terminated|fetch failed)$/i.test(e.message)) return true;
    if (APICallError.isInstance(e) && e.statusCode === undefined && /cannot connect/i.test(e.message)) return true;
  }
  return false;
}

/** A model call's failure as data: kind, status, a clean message. */
export function modelRunError(
  error: unknown,
  where: { readonly provider: string; readonly model?: string; readonly attempts?: number },
): RunError {
  const base = {
    provider: where.provider,
    ...(where.model === undefined ? {} : { model: where.model }),
    ...(where.attempts === undefined || where.attempts <= 1 ? {} : { attempts: where.attempts }),
  };
  if (LoadAPIKeyError.isInstance(error))
    return { ...base, kind: "missing_key", retryable: false, message: clean(error.message) };
  // A 2xx whose body could not be read: the connection broke or the body was not the protocol.
  const answered = APICallError.isInstance(error) && error.statusCode !== undefined && error.statusCode >= 300;
  if (answered) {
    const status = error.statusCode as number;
    return { ...base, kind: statusKind(status), status, retryable: error.isRetryable, message: clean(error.message) };
  }
  if (isConnectionError(error))
    return {
      ...base,
      kind: "connection",
      retryable: true,
      message: `connection to ${where.provider} failed or was reset`,
    };
  if (isUnreadable(error))
    // Never the fragment itself: it is the provider's raw bytes (and may carry anything).
    return {
      ...base,
      kind: "invalid_response",
      retryable: false,
      message: `${where.provider} sent a response that is not valid for its protocol`,
    };
  return { ...base, kind: "internal", retryable: false, message: describeFailure(error) };
}

/** A failure outside a model call (a tool, a hook, the store). */
export function internalRunError(error: unknown): RunError {
  return { kind: "internal", provider: "gatehouse", retryable: false, message: describeFailure(error) };
}

function statusKind(status: number): RunErrorKind {
  if (status === 401 || status === 403) return "auth";
  if (status === 404) return "not_found";
  if (status === 429) return "rate_limit";
  if (status >= 500 || status === 408 || status === 409) return "server";
  return "bad_request";
}

function isUnreadable(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (JSONParseError.isInstance(e) || TypeValidationError.isInstance(e)) return true;
  }
  return false;
}

function clean(message: string): string {
  return sanitizeLogLine(message);
}

function describeFailure(error: unknown): string {
  return clean(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
}
