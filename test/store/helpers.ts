import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import Database from "better-sqlite3";
import pg from "pg";
import type { Part } from "../../src/core/message.js";
import type { StoreOptions } from "../../src/store/index.js";

export const text = (t: string): Part => ({ type: "text", text: t });
export const reasoning = (t: string): Part => ({ type: "reasoning", text: t });
export const toolCall = (id: string, input: unknown = {}): Part => ({
  type: "tool_call",
  toolCallId: id,
  toolName: "Bash",
  input,
});
export const toolResult = (id: string, output: unknown): Part => ({
  type: "tool_result",
  toolCallId: id,
  toolName: "Bash",
  output,
});
export const image = (): Part => ({ type: "image", mediaType: "image/png", data: "iVBORw0KGgo=" });

export function tempDir(prefix = "gatehouse-store-"): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export function uniqueId(prefix: string): string {
  return `${prefix}-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
}

/** Every file below `dir` whose bytes contain `needle` (UTF-8), as paths relative to `dir`. */
export function filesContaining(dir: string, needle: string): string[] {
  const bytes = Buffer.from(needle, "utf8");
  const hits: string[] = [];
  const walk = (path: string, relative: string) => {
    for (const name of readdirSync(path)) {
      const full = join(path, name);
      const rel = relative ? `${relative}/${name}` : name;
      if (statSync(full).isDirectory()) walk(full, rel);
      else if (readFileSync(full).includes(bytes)) hits.push(rel);
    }
  };
  walk(dir, "");
  return hits;
}

export interface Child {
  /** Resolves with the first stdout line that starts with `prefix`. */
  line(prefix: string): Promise<string>;
  send(line: string): void;
  kill(signal: NodeJS.Signals): void;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

const WORKER = new URL("./fixtures/store-worker.ts", import.meta.url).pathname;

/** Runs the store worker fixture in a real child process (node + tsx), talking over stdio lines. */
export function spawnWorker(options: StoreOptions, args: Record<string, unknown>): Child {
  const child = spawn(process.execPath, ["--import", "tsx", WORKER, JSON.stringify({ options, ...args })], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const seen: string[] = [];
  const waiting: { prefix: string; resolve: (line: string) => void }[] = [];
  createInterface({ input: child.stdout }).on("line", (line) => {
    const i = waiting.findIndex((w) => line.startsWith(w.prefix));
    if (i >= 0) waiting.splice(i, 1)[0]?.resolve(line);
    else seen.push(line);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal, stderr })),
  );
  return {
    line: (prefix) =>
      new Promise((resolve, reject) => {
        const i = seen.findIndex((l) => l.startsWith(prefix));
        if (i >= 0) return resolve(seen.splice(i, 1)[0] as string);
        waiting.push({ prefix, resolve });
        void exited.then(({ code, signal, stderr }) =>
          reject(new Error(`worker exited (${code ?? signal}) before printing "${prefix}": ${stderr}`)),
        );
      }),
    send: (line) => child.stdin.write(`${line}\n`),
    kill: (signal) => child.kill(signal),
    exited,
  };
}

/** Raw SQL on a store's database (written with `?` placeholders, numbered for PostgreSQL), bypassing the store. */
export interface RawDatabase {
  all<R>(sql: string, ...params: unknown[]): Promise<R[]>;
}

export async function withRawDatabase<T>(options: StoreOptions, fn: (db: RawDatabase) => Promise<T>): Promise<T> {
  if (options.kind === "sqlite") {
    const db = new Database(options.path, { timeout: 10_000 });
    try {
      return await fn({
        all: async <R>(sql: string, ...params: unknown[]) => {
          const statement = db.prepare(sql);
          if (statement.reader) return statement.all(...params) as R[];
          statement.run(...params);
          return [];
        },
      });
    } finally {
      db.close();
    }
  }
  if (options.kind !== "postgres") throw new Error("a raw database needs SQLite or PostgreSQL");
  const client = new pg.Client({
    connectionString: options.url,
    options: `-c search_path=${options.schema ?? "public"}`,
  });
  await client.connect();
  try {
    return await fn({
      all: async <R>(sql: string, ...params: unknown[]) => {
        let n = 0;
        return (
          await client.query(
            sql.replace(/\?/g, () => `$${++n}`),
            params,
          )
        ).rows as R[];
      },
    });
  } finally {
    await client.end();
  }
}

/** Resolves once `check` returns true, trying again after each short pause (for state another process changes). */
export async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
