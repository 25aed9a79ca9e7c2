// Every request the console makes: same origin, the login cookie (httpOnly: this script never
// sees it), the login's CSRF token on every request that changes something.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | null,
    message: string,
  ) {
    super(message);
  }
}

const CSRF_HEADER = "x-gatehouse-csrf";
let csrf = "";
let onSignedOut: () => void = () => {};

export function setCsrf(token: string): void {
  csrf = token;
}

/** Called when a request answers 401: the login ended (expired, key revoked). */
export function whenSignedOut(callback: () => void): void {
  onSignedOut = callback;
}

export async function api<T>(path: string, options: { method?: string; body?: unknown } = {}): Promise<T> {
  const method = options.method ?? "GET";
  const headers: Record<string, string> = { accept: "application/json" };
  if (options.body !== undefined) headers["content-type"] = "application/json";
  if (method !== "GET") headers[CSRF_HEADER] = csrf;
  const res = await fetch(path, {
    method,
    headers,
    credentials: "same-origin",
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
  if (res.status === 204) return undefined as T;
  const body = (await res.json().catch(() => undefined)) as
    | { error?: { message?: string; code?: string | null } }
    | undefined;
  if (!res.ok) {
    if (res.status === 401 && !path.startsWith("/console/")) onSignedOut();
    throw new ApiError(res.status, body?.error?.code ?? null, body?.error?.message ?? `HTTP ${res.status}`);
  }
  return body as T;
}

/** A query string from the set values only. */
export function query(params: Record<string, string | number | boolean | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== "") q.set(k, String(v));
  const text = q.toString();
  return text ? `?${text}` : "";
}
