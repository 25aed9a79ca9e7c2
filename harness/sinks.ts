import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { openStore } from "../src/store/index.js";
import type { SessionStore } from "../src/store/types.js";
import type { StoreKind } from "./scenario.js";

/**
 * Where data ends up, and how to read it back after everything is closed: the SQLite files byte
 * by byte (main, -wal, -journal, -shm), every file under the data folder (transcripts, locks),
 * PostgreSQL through a query over every table of the scenario's schema, the memory store through
 * its own export (it has no files).
 */

/**
 * The tables `gatehouse serve` and the console keep in the store (src/store/service.ts, migrations
 * 7 and 8): each is a sink of its own, and R1 fails a scenario whose sinks miss one.
 */
export const SERVICE_TABLES = [
  "server_api_keys",
  "server_session_owners",
  "server_run_signals",
  "server_run_steps",
  "server_live_runs",
  "server_pending_approvals",
  "server_console_logins",
] as const;

/** Every regular file under `dir`, recursively, as bytes. */
export function filesUnder(dir: string): { path: string; bytes: Buffer }[] {
  const out: { path: string; bytes: Buffer }[] = [];
  const walk = (d: string) => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const name of names) {
      const path = join(d, name);
      const info = statSync(path, { throwIfNoEntry: false });
      if (!info) continue;
      if (info.isDirectory()) walk(path);
      else if (info.isFile()) out.push({ path, bytes: readFileSync(path) });
    }
  };
  walk(dir);
  return out;
}

/** A text body (or bytes) labelled with where it came from. */
export interface Sink {
  readonly name: string;
  readonly bytes: Buffer;
}

export function textSink(name: string, text: string): Sink {
  return { name, bytes: Buffer.from(text, "utf8") };
}

export function sinkHas(sink: Sink, needle: string): boolean {
  return sink.bytes.indexOf(needle, 0, "utf8") >= 0;
}

export interface OpenedStore {
  readonly kind: StoreKind;
  readonly store: SessionStore;
  /** Everything persistent the store left, read after close. */
  persisted(): Promise<Sink[]>;
  /** Call before close: the memory store is read through its API. */
  beforeClose(): Promise<void>;
  /** Removes what the store left behind (the PostgreSQL schema). */
  dispose(): Promise<void>;
}

export interface StoreSetup {
  readonly kind: StoreKind;
  /** The scenario's private folder: the SQLite file and transcripts go under it. */
  readonly dir: string;
  readonly postgresUrl?: string;
  /** A schema of its own (PostgreSQL). */
  readonly schema?: string;
  /** Keep the schema (emptied) for the next scenario instead of dropping it: migrations are slow. */
  readonly reuseSchema?: boolean;
}

export async function openScenarioStore(setup: StoreSetup): Promise<OpenedStore> {
  const transcriptDir = join(setup.dir, "data", "transcripts");
  if (setup.kind === "sqlite") {
    const store = await openStore({ kind: "sqlite", path: join(setup.dir, "data", "gatehouse.db"), transcriptDir });
    return {
      kind: "sqlite",
      store,
      beforeClose: async () => {},
      // Bytes first, then the rows through SQL (which sees a value whatever pages it spans).
      persisted: async () => [
        ...filesUnder(join(setup.dir, "data")).map((f) => ({ name: f.path, bytes: f.bytes })),
        ...sqliteRows(join(setup.dir, "data", "gatehouse.db")),
      ],
      dispose: async () => {},
    };
  }
  if (setup.kind === "memory") {
    const store = await openStore({ kind: "memory", transcriptDir });
    let dump = "";
    let service = "";
    return {
      kind: "memory",
      store,
      beforeClose: async () => {
        dump = await dumpThroughApi(store);
        service = await dumpServiceTables(store);
      },
      persisted: async () => [
        textSink("memory store export", dump),
        textSink(`memory store service tables (${SERVICE_TABLES.join(", ")})`, service),
        ...filesUnder(join(setup.dir, "data")).map((f) => ({ name: f.path, bytes: f.bytes })),
      ],
      dispose: async () => {},
    };
  }
  const url = setup.postgresUrl;
  const schema = setup.schema;
  if (!url || !schema) throw new Error("PostgreSQL needs a URL and a schema");
  const store = await openStore({ kind: "postgres", url, schema, transcriptDir, poolSize: 4 });
  return {
    kind: "postgres",
    store,
    beforeClose: async () => {},
    persisted: async () => [
      ...(await postgresRows(url, schema)),
      ...filesUnder(join(setup.dir, "data")).map((f) => ({ name: f.path, bytes: f.bytes })),
    ],
    dispose: () => (setup.reuseSchema ? emptySchema(url, schema) : dropSchema(url, schema)),
  };
}

/** One sink per table: every row of every table of a closed SQLite file, as JSON. */
export function sqliteRows(path: string): Sink[] {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[];
    return tables.map(({ name }) =>
      textSink(`sqlite rows ${name}`, JSON.stringify(db.prepare(`SELECT * FROM "${name}"`).all())),
    );
  } finally {
    db.close();
  }
}

/** Every session (sub-agent sessions included) as exported, plus every audit record. */
export async function dumpThroughApi(store: SessionStore): Promise<string> {
  const parts: string[] = [];
  for (const session of await store.listSessions({ limit: 10_000 })) {
    for await (const line of store.exportSession(session.id)) parts.push(line);
  }
  parts.push(JSON.stringify(await store.listAudit()));
  return parts.join("");
}

/**
 * The memory store's service tables through their API (it has no files): API keys, every
 * session's owner and title, every run's steps, runs in progress, waiting approval asks. (Signals
 * are delivered, not kept; a login is found by its token's hash only.)
 */
export async function dumpServiceTables(store: SessionStore): Promise<string> {
  const sessions = await store.listSessions({ limit: 10_000 });
  const runIds: string[] = [];
  for (const session of sessions) for (const run of await store.listRuns(session.id)) runIds.push(run.id);
  const { service } = store;
  return JSON.stringify({
    apiKeys: await service.listApiKeys(),
    owners: [...(await service.sessionOwners(sessions.map((s) => s.id))).values()],
    steps: await service.stepsOf(runIds),
    live: await service.liveRuns(),
    pending: await service.pendingApprovals(),
  });
}

export async function withPg<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** One sink per table: every visible row of every table in the schema, as text. */
export function postgresRows(url: string, schema: string): Promise<Sink[]> {
  return withPg(url, async (client) => {
    const tables = await client.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name",
      [schema],
    );
    const sinks: Sink[] = [];
    for (const { table_name } of tables.rows) {
      const rows = await client.query<{ row: string }>(`SELECT t::text AS row FROM ${schema}."${table_name}" t`);
      sinks.push(textSink(`postgres ${schema}.${table_name}`, rows.rows.map((r) => r.row).join("\n")));
    }
    return sinks;
  });
}

/** Every table of the schema emptied, in one statement; the migrations stay applied. */
export function emptySchema(url: string, schema: string): Promise<void> {
  return withPg(url, async (client) => {
    const tables = await client.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_name <> 'schema_migrations'",
      [schema],
    );
    if (tables.rows.length)
      await client.query(`TRUNCATE ${tables.rows.map((t) => `${schema}."${t.table_name}"`).join(", ")} CASCADE`);
  });
}

export function dropSchema(url: string, schema: string): Promise<void> {
  return withPg(url, async (client) => {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  });
}
