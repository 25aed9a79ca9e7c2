import { type Migration, migrationsFor } from "./schema.js";

/** Applied in order, each recorded in `schema_migrations` of the store's schema. */
export const POSTGRES_MIGRATIONS: readonly Migration[] = migrationsFor("postgres");

export const POSTGRES_SCHEMA_VERSION = (POSTGRES_MIGRATIONS.at(-1) as Migration).version;
