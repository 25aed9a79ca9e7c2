export type StoreErrorCode = "not_found" | "invalid" | "conflict" | "closed" | "aborted";

export class StoreError extends Error {
  readonly code: StoreErrorCode;
  constructor(code: StoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = code === "aborted" ? "AbortError" : "StoreError";
    this.code = code;
  }
}

export function notFound(what: string, id: string): StoreError {
  return new StoreError("not_found", `${what} ${JSON.stringify(id)} does not exist`);
}

export function sessionExists(id: string): StoreError {
  return new StoreError("conflict", `session ${id} already exists`);
}

export function runExists(id: string): StoreError {
  return new StoreError("conflict", `run ${id} already exists`);
}
