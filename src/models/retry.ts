import { APICallError } from "@ai-sdk/provider";
import { retryWithExponentialBackoff } from "@ai-sdk/provider-utils";
import { isRetryableModelError } from "./failure.js";

/** The AI SDK's own defaults: 2 retries, 2 s then 4 s. */
export const DEFAULT_MAX_RETRIES = 2;
const INITIAL_DELAY_MS = 2_000;
/** A `retry-after` longer than this is not waited out (the AI SDK's rule): the backoff applies instead. */
const MAX_RETRY_AFTER_MS = 60_000;

export interface RetryNotice {
  /** The attempt about to start (2 for the first retry). */
  readonly attempt: number;
  readonly delayMs: number;
  readonly error: unknown;
}

export interface ModelRetryOptions {
  readonly maxRetries: number;
  readonly signal?: AbortSignal;
  /** Called before each wait; a retry is reported before it happens. */
  readonly onRetry?: (notice: RetryNotice) => void;
}

/** What `withModelRetries` threw: the last attempt's error, with how many attempts were made. */
export class ModelCallFailure extends Error {
  override readonly name = "ModelCallFailure";
  constructor(
    override readonly cause: unknown,
    readonly attempts: number,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
}

/**
 * Runs one model call with the AI SDK's `retryWithExponentialBackoff`: retryable failures
 * (408/409/429/5xx, connection errors) are tried again after `retry-after-ms` / `retry-after`
 * when the provider sent one, else after an exponential delay with jitter. `attempt(n)` must say,
 * by throwing with `committed` true, that output already reached someone: such a failure is
 * never retried, since the retry would repeat what was streamed.
 */
export async function withModelRetries<T>(attempt: (n: number) => Promise<T>, options: ModelRetryOptions): Promise<T> {
  let attempts = 0;
  let committed = false;
  const retry = retryWithExponentialBackoff({
    maxRetries: options.maxRetries,
    initialDelayInMs: INITIAL_DELAY_MS,
    ...(options.signal ? { abortSignal: options.signal } : {}),
    shouldRetry: (error) => !committed && !options.signal?.aborted && isRetryableModelError(error),
    getDelayInMs: ({ error, exponentialBackoffDelay }) => {
      const delayMs = retryDelay(error, exponentialBackoffDelay);
      options.onRetry?.({ attempt: attempts + 1, delayMs, error });
      return delayMs;
    },
    // The last error as it was, not the SDK's "Failed after N attempts" wrapper: callers classify it.
    createRetryError: ({ errors }) => errors.at(-1),
  });
  try {
    return await retry(async () => {
      attempts += 1;
      try {
        return await attempt(attempts);
      } catch (error) {
        if (error instanceof CommittedOutput) {
          committed = true;
          throw error.cause;
        }
        throw error;
      }
    });
  } catch (error) {
    throw new ModelCallFailure(error, attempts);
  }
}

/** Thrown by an attempt whose output already reached a listener: its cause is the real error. */
export class CommittedOutput extends Error {
  override readonly name = "CommittedOutput";
  constructor(override readonly cause: unknown) {
    super("output already streamed");
  }
}

/**
 * The provider's `retry-after-ms` or `retry-after` (seconds or an HTTP date) when it is sensible,
 * else the exponential delay with "equal jitter" (half fixed, half random), so clients that failed
 * together do not retry together.
 */
export function retryDelay(error: unknown, exponentialMs: number, random: () => number = Math.random): number {
  const headers = APICallError.isInstance(error) ? error.responseHeaders : undefined;
  const hinted = headers ? retryAfterMs(headers) : undefined;
  if (hinted !== undefined && hinted >= 0 && (hinted < MAX_RETRY_AFTER_MS || hinted < exponentialMs)) return hinted;
  return Math.round(exponentialMs / 2 + (random() * exponentialMs) / 2);
}

function retryAfterMs(headers: Record<string, string>): number | undefined {
  const ms = headers["retry-after-ms"];
  if (ms !== undefined) {
    const value = Number.parseFloat(ms);
    if (Number.isFinite(value)) return value;
  }
  const after = headers["retry-after"];
  if (after === undefined) return undefined;
  const seconds = Number.parseFloat(after);
  if (Number.isFinite(seconds)) return seconds * 1000;
  const date = Date.parse(after);
  return Number.isFinite(date) ? date - Date.now() : undefined;
}
