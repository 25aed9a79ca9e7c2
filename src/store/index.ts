import { join, resolve } from "node:path";
import type { CoreStoreOptions } from "./core.js";
import { openMemoryStore } from "./memory.js";
import { parseStoreSpelling } from "./spelling.js";
import { openSqliteStore, type SqliteStoreOptions } from "./sqlite.js";
import type { SessionStore } from "./types.js";

export type StoreOptions = CoreStoreOptions &
  /** Notices for the operator, never content (see SqliteStoreOptions.warn); default: stderr. */
  Pick<SqliteStoreOptions, "warn"> &
  (
    | { readonly kind: "sqlite"; readonly path: string }
    | { readonly kind: "postgres"; readonly url: string; readonly schema?: string; readonly poolSize?: number }
    | { readonly kind: "memory" }
  );

export const DEFAULT_DATA_DIR = ".gatehouse";
export const DEFAULT_DATABASE_FILE = "gatehouse.db";
export const DATABASE_URL_ENV = "GATEHOUSE_DATABASE_URL";

export interface ResolveStoreInput {
  /** The `database` setting from config: a `postgres://` URL, "memory", or a SQLite file path. */
  readonly database?: string;
  /** The project folder; the default SQLite file lives in `<projectDir>/.gatehouse/`. */
  readonly projectDir?: string;
  /** Overrides `<projectDir>/.gatehouse`. */
  readonly dataDir?: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/**
 * Which store to open: the config's `database` if set, else `GATEHOUSE_DATABASE_URL`, else a SQLite file
 * in the project's data folder. Explicit configuration wins over the environment.
 */
export function resolveStoreOptions(input: ResolveStoreInput = {}): StoreOptions {
  const env = input.env ?? process.env;
  const chosen = input.database ?? env[DATABASE_URL_ENV];
  const projectDir = input.projectDir ?? process.cwd();
  const dataDir = resolve(projectDir, input.dataDir ?? DEFAULT_DATA_DIR);
  if (chosen === undefined || chosen === "") return { kind: "sqlite", path: join(dataDir, DEFAULT_DATABASE_FILE) };
  // Transcripts go in the data folder whatever the store: PostgreSQL's are recovered there like
  // SQLite's, and the memory store's live in a folder of their process (see CoreStoreOptions).
  const transcriptDir = join(dataDir, "transcripts");
  const spelled = parseStoreSpelling(chosen);
  if (spelled.kind === "sqlite") return { kind: "sqlite", path: resolve(projectDir, spelled.path) };
  return { ...spelled, transcriptDir };
}

/** Opens (creating and migrating as needed) the chosen store. `pg` is loaded only for PostgreSQL. */
export async function openStore(options: StoreOptions): Promise<SessionStore> {
  switch (options.kind) {
    case "sqlite":
      return openSqliteStore(options);
    case "memory":
      return openMemoryStore(options);
    case "postgres": {
      const { openPostgresStore } = await import("./postgres.js");
      return openPostgresStore(options);
    }
  }
}

export { StoreError, type StoreErrorCode } from "./errors.js";
export { EXPORT_FORMAT, EXPORT_VERSION } from "./export.js";
export { openMemoryStore } from "./memory.js";
export { assistantTexts, isTextBearingAssistant, rewriteParts } from "./plan.js";
// From the dialect-neutral schema: the public types must not reach better-sqlite3's (a devDependency's) types.
export { SQLITE_SCHEMA_VERSION } from "./schema.js";
export { parseStoreSpelling, type StoreSpelling } from "./spelling.js";
export { openSqliteStore, type SqliteStoreOptions } from "./sqlite.js";
export { transcriptEntry } from "./transcript.js";
export * from "./types.js";
