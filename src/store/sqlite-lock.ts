import { createHash, randomBytes } from "node:crypto";
import { linkSync, mkdirSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { StoreError } from "./errors.js";
import { abortError, delay, type SerialQueue } from "./serial.js";

// The cross-process run lock for SQLite. Holding: an open `BEGIN EXCLUSIVE` on a small per-session lock
// file. That is an fcntl lock, so the kernel drops it when the holder dies, SIGKILL included: a crashed
// holder cannot leave a session locked. Order: each waiting process takes a ticket in the main database
// and only tries the lock when no live process holds an older ticket, so a busy process cannot starve
// another by re-taking the lock the moment it releases it.

const MAX_POLL_MS = 25;

function processStartTime(pid: number): string | undefined | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // A zombie has exited; only its parent has not reaped it yet.
    if (fields[0] === "Z") return null;
    return fields[19];
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") {
      return readableProc() ? null : undefined;
    }
    return undefined;
  }
}

let procAvailable: boolean | undefined;
function readableProc(): boolean {
  if (procAvailable === undefined) {
    try {
      readFileSync("/proc/self/stat");
      procAvailable = true;
    } catch {
      procAvailable = false;
    }
  }
  return procAvailable;
}

/** `pid:starttime:random`; the start time tells a live owner from a later process that reused its pid. */
function ownerToken(): string {
  return `${process.pid}:${processStartTime(process.pid) ?? "?"}:${randomBytes(4).toString("hex")}`;
}

function ownerIsAlive(owner: string): boolean {
  const [pidText, startTime] = owner.split(":");
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return true;
  const current = processStartTime(pid);
  if (current === null) return false;
  if (current !== undefined && startTime !== "?") return current === startTime;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

export class SqliteRunLocks {
  private readonly owner = ownerToken();
  private readonly tickets: Database.Database;
  private readonly held = new Set<Database.Database>();
  private closed = false;
  private created = 0;
  private readonly statements;

  /**
   * `serial` is the backend's queue for its main connection. The tickets live in the same file, and that
   * connection keeps a write transaction open across awaits: a ticket written in such a gap would wait on
   * the busy timeout for a commit that cannot come while it blocks the thread, then fail SQLITE_BUSY.
   * Ticket statements therefore run in the queue, between the main connection's transactions.
   */
  constructor(
    databasePath: string,
    private readonly lockDir: string,
    private readonly serial: SerialQueue,
  ) {
    mkdirSync(lockDir, { recursive: true, mode: 0o700 });
    this.tickets = new Database(databasePath, { timeout: 10_000 });
    this.tickets.pragma("busy_timeout = 10000");
    this.statements = {
      take: this.tickets.prepare<[string, string], { ticket: number }>(
        "INSERT INTO run_lock_queue (session_id, owner) VALUES (?, ?) RETURNING ticket",
      ),
      waiting: this.tickets.prepare<[string], { one: number }>(
        "SELECT 1 AS one FROM run_lock_queue WHERE session_id = ? LIMIT 1",
      ),
      before: this.tickets.prepare<[string, number], { ticket: number; owner: string }>(
        "SELECT ticket, owner FROM run_lock_queue WHERE session_id = ? AND ticket < ? ORDER BY ticket",
      ),
      drop: this.tickets.prepare<[number]>("DELETE FROM run_lock_queue WHERE ticket = ?"),
      dropMine: this.tickets.prepare<[string]>("DELETE FROM run_lock_queue WHERE owner = ?"),
    };
  }

  async acquire(sessionId: string, signal: AbortSignal | undefined): Promise<() => Promise<void>> {
    let ticket: number | undefined;
    let connection: Database.Database | undefined;
    try {
      for (let attempt = 0; ; attempt++) {
        if (signal?.aborted) throw abortError(signal);
        // One queued step per attempt: take the ticket (first time), look for older ones, try the lock.
        const release = await this.serial.run(async () => {
          if (this.closed) throw new StoreError("closed", "the store was closed while waiting for a run lock");
          if (ticket === undefined) {
            // Nobody queues for this session: try the lock without a ticket, so an uncontended run writes
            // nothing here. Order holds: once a waiter's ticket is in, later arrivals see it and queue.
            if (!this.statements.waiting.get(sessionId)) {
              connection ??= this.openLockFile(sessionId);
              if (tryExclusive(connection)) return this.holding(connection);
            }
            ticket = (this.statements.take.get(sessionId, this.owner) as { ticket: number }).ticket;
          }
          if (this.olderLiveTicket(sessionId, ticket)) return undefined;
          connection ??= this.openLockFile(sessionId);
          if (!tryExclusive(connection)) return undefined;
          this.statements.drop.run(ticket);
          return this.holding(connection);
        });
        if (release) return release;
        await delay(Math.min(2 ** attempt, MAX_POLL_MS), signal);
      }
    } catch (error) {
      connection?.close();
      const taken = ticket;
      // A closed store has dropped all of its tickets (and its connection is gone).
      if (taken !== undefined)
        await this.serial.run(async () => {
          if (!this.closed) this.statements.drop.run(taken);
        });
      throw error;
    }
  }

  /** Removes a deleted session's lock file, unless someone holds or is taking it right now. */
  forget(sessionId: string): void {
    const path = this.lockPath(sessionId);
    let connection: Database.Database | undefined;
    try {
      connection = new Database(path, { timeout: 0, fileMustExist: true });
      if (tryExclusive(connection)) rmSync(path, { force: true });
    } catch {
      // No lock file, or it is in use: nothing to clean up now.
    } finally {
      connection?.close();
    }
  }

  close(): void {
    this.closed = true;
    for (const connection of this.held) connection.close();
    this.held.clear();
    this.statements.dropMine.run(this.owner);
    this.tickets.close();
  }

  private holding(connection: Database.Database): () => Promise<void> {
    this.held.add(connection);
    return async () => {
      if (!this.held.delete(connection)) return;
      // Closing the connection ends the transaction and drops the fcntl lock.
      connection.close();
    };
  }

  private olderLiveTicket(sessionId: string, ticket: number): boolean {
    for (const older of this.statements.before.all(sessionId, ticket)) {
      if (ownerIsAlive(older.owner)) return true;
      this.statements.drop.run(older.ticket);
    }
    return false;
  }

  /**
   * Opens a session's lock file. A missing one is created as an empty one-page database, all at once
   * (written aside, then linked into place, so no process ever sees it half-written): locking a file
   * that is already a database writes nothing, so it needs no journal (see `tryExclusive`). An empty
   * file (made by an earlier version, or lost in a race with `forget`) still works, with the pragma.
   */
  private openLockFile(sessionId: string): Database.Database {
    const path = this.lockPath(sessionId);
    let size = statSync(path, { throwIfNoEntry: false })?.size;
    if (size === undefined) {
      const aside = `${path}.${process.pid}.${++this.created}.tmp`;
      writeFileSync(aside, emptyDatabase(), { mode: 0o600 });
      try {
        linkSync(aside, path);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      } finally {
        unlinkSync(aside);
      }
      size = statSync(path, { throwIfNoEntry: false })?.size;
    }
    const connection = new Database(path, { timeout: 0 });
    if (!size) emptyLockFiles.add(connection);
    return connection;
  }

  private lockPath(sessionId: string): string {
    return join(this.lockDir, `${createHash("sha256").update(sessionId).digest("hex").slice(0, 40)}.lock`);
  }
}

/** Connections on lock files that are still empty (see `openLockFile`). */
const emptyLockFiles = new WeakSet<Database.Database>();

let emptyDatabaseImage: Buffer | undefined;
/** The bytes of an empty SQLite database: one page, header and an empty schema. */
function emptyDatabase(): Buffer {
  if (!emptyDatabaseImage) {
    const db = new Database(":memory:");
    db.pragma("user_version = 1");
    emptyDatabaseImage = db.serialize();
    db.close();
  }
  return emptyDatabaseImage;
}

function tryExclusive(connection: Database.Database): boolean {
  try {
    // Nothing is ever written to a lock file, so it needs no rollback journal. But BEGIN EXCLUSIVE on an
    // empty file initializes page 1 and so creates a -journal file, which the release deletes: two
    // file-system metadata changes per run. On an empty file, switch the journal to memory first (the
    // lock itself is the fcntl lock on the file, the same in every journal mode). That pragma loads the
    // schema, which is busy while another process holds the lock: so it is set here, where busy means
    // "not now". Lock files made by `openLockFile` are databases already and skip it (it cost as much as
    // opening the connection).
    if (emptyLockFiles.has(connection)) connection.pragma("journal_mode = MEMORY");
    connection.exec("BEGIN EXCLUSIVE");
    return true;
  } catch (error) {
    if ((error as { code?: string }).code?.startsWith("SQLITE_BUSY")) return false;
    throw error;
  }
}
