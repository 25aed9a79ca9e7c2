import type Database from "better-sqlite3";
import { StoreError } from "./errors.js";
import { type Migration, migrationsFor, SQLITE_SCHEMA_VERSION } from "./schema.js";

export type { Migration } from "./schema.js";

/** Applied in order, each in its own transaction; `PRAGMA user_version` records the last one applied. */
export const SQLITE_MIGRATIONS: readonly Migration[] = migrationsFor("sqlite");

export { SQLITE_SCHEMA_VERSION };

/**
 * Brings the file up to `target`. Each step re-reads the version inside its write transaction, so two
 * processes opening a new file at once apply each migration exactly once.
 */
export function migrateSqlite(db: Database.Database, target = SQLITE_SCHEMA_VERSION): void {
  const version = () => db.pragma("user_version", { simple: true }) as number;
  if (version() > SQLITE_SCHEMA_VERSION) {
    throw new StoreError(
      "invalid",
      `the session database has schema version ${version()}, newer than this Gatehouse knows (${SQLITE_SCHEMA_VERSION})`,
    );
  }
  for (const migration of SQLITE_MIGRATIONS) {
    if (migration.version > target) break;
    db.transaction(() => {
      if (version() >= migration.version) return;
      db.exec(migration.sql);
      for (const { table, column, definition } of migration.addMissingColumns ?? []) {
        const columns = db.prepare("SELECT name FROM pragma_table_info(?)").all(table) as { name: string }[];
        if (!columns.some((c) => c.name === column)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${definition}`);
      }
      db.pragma(`user_version = ${migration.version}`);
    }).immediate();
  }
}
