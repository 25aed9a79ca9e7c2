import { test } from "node:test";
import pg from "pg";

/** The PostgreSQL server tests run against, or undefined when none is configured. */
export const PG_URL = process.env.GATEHOUSE_TEST_DATABASE_URL || undefined;
export const PG_SKIP = "GATEHOUSE_TEST_DATABASE_URL not set";

/** Registers one skipped test (one printed line) instead of the file's tests when there is no server. */
export function whenPostgres(name: string, define: (url: string) => void): void {
  if (PG_URL) define(PG_URL);
  else test(name, { skip: PG_SKIP }, () => {});
}

/** A schema name of this test file's own, so files can run in parallel against one server. */
export function testSchema(): string {
  return `t_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
}

export async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export function dropSchema(url: string, schema: string): Promise<void> {
  return withClient(url, async (client) => {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  });
}

/** Every visible row of every table in the schema whose text form contains the needle, as "table: row". */
export function rowsContaining(url: string, schema: string, needle: string): Promise<string[]> {
  return withClient(url, async (client) => {
    const tables = await client.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = $1",
      [schema],
    );
    const hits: string[] = [];
    for (const { table_name } of tables.rows) {
      const rows = await client.query<{ row: string }>(`SELECT t::text AS row FROM ${schema}.${table_name} t`);
      for (const { row } of rows.rows) if (row.includes(needle)) hits.push(`${table_name}: ${row.slice(0, 80)}`);
    }
    return hits;
  });
}
