// How a store is written as one string — gatehouse.json's `store`, GATEHOUSE_DATABASE_URL,
// `createGatehouse({ store })` — read the same way everywhere. No imports but the error type:
// the config schema validates with it at start-up.
import { StoreError } from "./errors.js";

/** What a store string names. */
export type StoreSpelling =
  | { readonly kind: "postgres"; readonly url: string }
  | { readonly kind: "memory" }
  | { readonly kind: "sqlite"; readonly path: string };

const POSTGRES_HINT = "expected a PostgreSQL URL such as postgres://user@host:5432/database";

/**
 * `postgres://…` or `postgresql://…` (a URL that parses), `memory` (or `:memory:`), or a SQLite file
 * path (`sqlite:` prefix optional). Anything that starts like a PostgreSQL URL but is not one (one
 * slash, a typo in the host part) is an error, never a SQLite file of that name; so is another
 * URL scheme. The message never repeats the value: it may hold a password.
 */
export function parseStoreSpelling(value: string): StoreSpelling {
  if (value === "memory" || value === ":memory:") return { kind: "memory" };
  if (/^postgres(ql)?:/i.test(value)) {
    if (!/^postgres(ql)?:\/\//i.test(value) || !URL.canParse(value)) throw new StoreError("invalid", POSTGRES_HINT);
    return { kind: "postgres", url: value };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value))
    throw new StoreError("invalid", 'expected a postgres:// URL, "memory" or a SQLite file path');
  return { kind: "sqlite", path: value.replace(/^sqlite:/, "") };
}

/** The message `parseStoreSpelling` throws for `value`, or undefined when it is a valid spelling. */
export function storeSpellingProblem(value: string): string | undefined {
  try {
    parseStoreSpelling(value);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}
