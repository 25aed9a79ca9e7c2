// Helpers for P7 (runtime.bench.ts): counting what the store asks SQLite to do, and the raw
// better-sqlite3 floor a turn's rows cost when written without a runtime or a store around them.
import { randomUUID } from "node:crypto";
import Database from "better-sqlite3";
import { migrateSqlite } from "../src/store/sqlite-schema.js";

/** Statements and transactions executed on every better-sqlite3 connection of this process while counting. */
export interface SqlCounts {
  statements: number;
  /** BEGIN, COMMIT, ROLLBACK, SAVEPOINT, RELEASE. */
  control: number;
  /** Transactions that wrote: an explicit COMMIT after a write, or a write statement outside BEGIN. */
  writeTransactions: number;
  /** Explicit transactions that only read. */
  readTransactions: number;
}

const CONTROL = /^\s*(BEGIN|COMMIT|END|ROLLBACK|SAVEPOINT|RELEASE)\b/i;

/**
 * Wraps better-sqlite3's statement methods (and `exec`) to count what runs while `counting` is on.
 * The wrap costs a few nanoseconds a call; the floor runs through it too, so ratios are unaffected.
 */
export function countSql(): { counts: SqlCounts; on(): void; off(): void; reset(): void } {
  const counts: SqlCounts = { statements: 0, control: 0, writeTransactions: 0, readTransactions: 0 };
  const wrote = new WeakMap<Database.Database, boolean>();
  let counting = false;
  const note = (db: Database.Database, source: string, readonly: boolean) => {
    if (!counting) return;
    counts.statements++;
    const control = CONTROL.exec(source)?.[1]?.toUpperCase();
    if (control) {
      counts.control++;
      if (control === "COMMIT" || control === "END") {
        if (wrote.get(db)) counts.writeTransactions++;
        else counts.readTransactions++;
        wrote.set(db, false);
      } else if (control === "BEGIN" || control === "ROLLBACK") wrote.set(db, false);
      return;
    }
    if (readonly) return;
    if (db.inTransaction) wrote.set(db, true);
    else counts.writeTransactions++;
  };
  const probe = new Database(":memory:");
  const statementProto = Object.getPrototypeOf(probe.prepare("SELECT 1")) as Record<string, unknown>;
  probe.close();
  for (const method of ["run", "get", "all", "iterate"]) {
    const original = statementProto[method] as (...args: unknown[]) => unknown;
    statementProto[method] = function (this: Database.Statement, ...args: unknown[]) {
      note(this.database, this.source, this.readonly);
      return original.apply(this, args);
    };
  }
  const dbProto = Database.prototype as unknown as Record<string, unknown>;
  const exec = dbProto.exec as (this: Database.Database, source: string) => Database.Database;
  dbProto.exec = function (this: Database.Database, source: string) {
    // exec runs any SQL; only control statements go through it on the store's hot path.
    note(this, source, !CONTROL.test(source) && /^\s*(SELECT|PRAGMA)/i.test(source));
    return exec.call(this, source);
  };
  return {
    counts,
    on: () => {
      counting = true;
    },
    off: () => {
      counting = false;
    },
    reset: () => {
      counts.statements = 0;
      counts.control = 0;
      counts.writeTransactions = 0;
      counts.readTransactions = 0;
    },
  };
}

/**
 * The same rows a P7 turn reads and writes, with the fewest statements that do it, prepared once and
 * run synchronously, `TURNS_PER_TRANSACTION` turns to a transaction, on a database with the store's
 * own tables, indexes and pragmas: what SQLite itself costs for the work, without a runtime or a store.
 * Per turn: the session (inserted on its first turn, read after), a run inserted and finished, the
 * history and pending injections read, the prompt and the answer appended.
 */
export class SqliteFloor {
  static readonly TURNS_PER_TRANSACTION = 25;
  private readonly db: Database.Database;
  private readonly s;

  constructor(path: string) {
    this.db = new Database(path);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("synchronous = NORMAL");
    this.db.pragma("secure_delete = ON");
    this.db.pragma("foreign_keys = ON");
    migrateSqlite(this.db);
    const db = this.db;
    this.s = {
      begin: db.prepare("BEGIN IMMEDIATE"),
      commit: db.prepare("COMMIT"),
      insertSession: db.prepare(
        "INSERT INTO sessions (id, key, parent_session_id, created_at, updated_at) VALUES (?, NULL, NULL, ?, ?)",
      ),
      getSession: db.prepare("SELECT * FROM sessions WHERE id = ?"),
      insertRun: db.prepare(
        `INSERT INTO runs (id, session_id, seq, status, depth, trigger, started_at)
         SELECT ?, id, next_run_seq, 'running', 0, 'api', ? FROM sessions WHERE id = ?`,
      ),
      summaries: db.prepare("SELECT * FROM compactions WHERE session_id = ?"),
      history: db.prepare("SELECT * FROM messages WHERE session_id = ? ORDER BY seq"),
      injections: db.prepare("SELECT * FROM injections WHERE session_id = ? AND consumed_at IS NULL"),
      insertMessage: db.prepare(
        `INSERT INTO messages (id, session_id, run_id, seq, role, parts, metadata, created_at)
         SELECT ?, id, ?, next_seq, ?, ?, '{}', ? FROM sessions WHERE id = ?`,
      ),
      advance: db.prepare(
        "UPDATE sessions SET next_seq = next_seq + ?, next_run_seq = next_run_seq + ?, updated_at = ? WHERE id = ?",
      ),
      finish: db.prepare("UPDATE runs SET status = 'completed', ended_at = ? WHERE id = ?"),
    };
  }

  /** `sessions` sessions × `turns` turns (turn t of every session before turn t + 1); returns turns per second. */
  round(label: string, sessions: number, turns: number): number {
    const ids = Array.from({ length: sessions }, () => randomUUID());
    const t0 = performance.now();
    let n = 0;
    for (let t = 0; t < turns; t++) {
      for (const [i, sessionId] of ids.entries()) {
        if (n % SqliteFloor.TURNS_PER_TRANSACTION === 0) this.s.begin.run();
        this.turn(sessionId, t === 0, `${label} session ${i} turn ${t}`);
        if (++n % SqliteFloor.TURNS_PER_TRANSACTION === 0) this.s.commit.run();
      }
    }
    if (this.db.inTransaction) this.s.commit.run();
    return (sessions * turns) / ((performance.now() - t0) / 1000);
  }

  close(): void {
    this.db.close();
  }

  private turn(sessionId: string, first: boolean, prompt: string): void {
    const s = this.s;
    const at = new Date().toISOString();
    if (first) s.insertSession.run(sessionId, at, at);
    else s.getSession.get(sessionId);
    const runId = randomUUID();
    s.insertRun.run(runId, at, sessionId);
    s.advance.run(0, 1, at, sessionId);
    s.summaries.all(sessionId);
    s.history.all(sessionId);
    s.injections.all(sessionId);
    for (const [role, text] of [
      ["user", prompt],
      ["assistant", `You said: ${prompt}`],
    ] as const) {
      s.insertMessage.run(randomUUID(), runId, role, JSON.stringify([{ type: "text", text }]), at, sessionId);
      s.advance.run(1, 0, at, sessionId);
    }
    s.finish.run(at, runId);
  }
}
