import type Database from "better-sqlite3";
import type { SerialQueue } from "./serial.js";
import type { AuditOutcome } from "./types.js";

/**
 * "Never persists" for SQLite, after a change that removed or overwrote content has committed.
 *
 * `secure_delete` zeroes the cells SQLite deletes and the pages it frees, but not every old copy: when a
 * b-tree rebalance rebuilds a page, the cells it moved leave their old bytes in the unused middle of that
 * page, and deleting a row later zeroes only its live cell. So a scrub is followed by a purge: VACUUM
 * rebuilds the file from its live rows, then a TRUNCATE checkpoint copies the new pages into the main file,
 * cuts it to its new size and cuts the WAL to zero bytes. VACUUM costs time in proportion to the file
 * (see src/store/README.md).
 *
 * What is owed lives in the database (`scrub_debt`, written in the scrub's own transaction): a crash
 * between the commit and the purge, or another connection that holds the files (a read snapshot pins the
 * old pages), only postpones it. Retries run in the background; the store's close and the next open try
 * once more, and if the files are still held they say so (`warn`, no content) and leave an audit record.
 */

/** How long a purge waits for other connections' read snapshots right after a scrub and at open. */
const PURGE_WAIT_MS = 200;
/** At close, the last attempt this process makes: a little longer. */
const CLOSE_WAIT_MS = 1_000;
/** Background retries do not wait; they back off from the first delay to the last. */
const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 8_000;

/** The audit records a held purge leaves: hook and plugin, and the category of each outcome. */
export const PURGE_AUDIT = {
  hook: "scrub",
  pluginId: "gatehouse",
  pinned: "files-pinned",
  cleaned: "files-cleaned",
} as const;

interface Debt {
  readonly scrubs: number;
  readonly vacuumed: number;
  readonly pinned_at: string | null;
}

export interface SqlitePurgeOptions {
  /** The database file, named in the notice. */
  readonly path: string;
  /** The connection's usual busy timeout, restored after each checkpoint. */
  readonly busyTimeoutMs: number;
  /** The backend's queue: background retries run between its transactions. */
  readonly queue: SerialQueue;
  /** Writes an audit record (inside the transaction the purge opens). */
  readonly audit: (outcome: AuditOutcome, category: string) => void;
  readonly warn: (message: string) => void;
  readonly now: () => string;
}

export class SqlitePurge {
  /** A purge may be owed (the debt row says for sure); false once one found nothing owed. */
  private owed = false;
  /** A change owing a purge is in the transaction being written now. */
  private fresh = false;
  private retry: NodeJS.Timeout | undefined;
  private retryMs = RETRY_FIRST_MS;
  private warned = false;
  private stopped = false;
  private readonly statements;

  constructor(
    private readonly db: Database.Database,
    private readonly options: SqlitePurgeOptions,
  ) {
    this.statements = {
      debt: db.prepare<[], Debt>("SELECT scrubs, vacuumed, pinned_at FROM scrub_debt WHERE id = 1"),
      vacuumed: db.prepare<[number]>("UPDATE scrub_debt SET vacuumed = ? WHERE id = 1"),
      clear: db.prepare("DELETE FROM scrub_debt WHERE id = 1 AND scrubs = vacuumed"),
      pin: db.prepare<[string]>("UPDATE scrub_debt SET pinned_at = ? WHERE id = 1"),
    };
  }

  /** Called as a change that owes a purge is written (its debt row is in the same transaction). */
  owe(): void {
    this.owed = true;
    this.fresh = true;
  }

  /** After each commit: purge now if that commit scrubbed; retry (without waiting) if an earlier purge is owed. */
  afterCommit(): void {
    if (this.fresh) this.run(PURGE_WAIT_MS);
    else if (this.owed) this.run(0);
    this.fresh = false;
  }

  /** After a change the caller knows removed content: finish any purge still owed. */
  settle(): void {
    if (this.owed) this.run(0);
  }

  /** Opening the store finishes what a crash or another connection left owed (and cuts stray WAL frames). */
  atOpen(): void {
    this.run(PURGE_WAIT_MS, "open");
  }

  /** The last attempt of this process; no retries after it. */
  atClose(): void {
    this.stopped = true;
    clearTimeout(this.retry);
    this.run(CLOSE_WAIT_MS, "close");
  }

  private run(waitMs: number, final?: "open" | "close"): void {
    const debt = this.statements.debt.get();
    if (!debt) {
      this.owed = false;
      // Nothing owed; still leave the WAL empty if nobody is reading (frames a crashed writer left, say).
      if (final) this.checkpoint(final === "open" ? waitMs : 0);
      return;
    }
    this.owed = true;
    if (debt.scrubs > debt.vacuumed) {
      if (!this.vacuum()) {
        this.postpone(debt, final);
        return;
      }
      this.statements.vacuumed.run(debt.scrubs);
    }
    if (!this.checkpoint(waitMs)) {
      this.postpone(debt, final);
      return;
    }
    // The files hold no old byte now. A scrub another process committed meanwhile keeps the row (its own
    // purge, or ours at the next commit, takes care of it).
    const cleared = this.db
      .transaction(() => {
        if (this.statements.clear.run().changes === 0) return false;
        if (debt.pinned_at !== null) this.options.audit("pass", PURGE_AUDIT.cleaned);
        return true;
      })
      .immediate();
    // What that transaction wrote holds no content; cut it too when nobody is reading.
    this.checkpoint(0);
    this.owed = !cleared;
    this.retryMs = RETRY_FIRST_MS;
  }

  /** Another connection holds the files: retry later; at open and close, also say so and audit it (once). */
  private postpone(debt: Debt, final: "open" | "close" | undefined): void {
    if (final) {
      if (debt.pinned_at === null) {
        try {
          this.db
            .transaction(() => {
              this.statements.pin.run(this.options.now());
              this.options.audit("error", PURGE_AUDIT.pinned);
            })
            .immediate();
        } catch (error) {
          // A writer holds the database longer than the busy timeout: the notice still goes out.
          if (!isBusy(error)) throw error;
        }
      }
      if (!this.warned) {
        this.warned = true;
        this.options.warn(
          `another connection is holding ${this.options.path} (a read transaction left open, e.g. in a sqlite3 shell): text Gatehouse removed from the store stays in its files until that connection lets go, and is removed when Gatehouse next opens the store`,
        );
      }
    }
    if (final !== "close") this.scheduleRetry();
  }

  private scheduleRetry(): void {
    if (this.retry || this.stopped) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.options.queue
        .run(async () => {
          if (this.owed && !this.stopped) this.run(0);
        })
        // A failure here resurfaces at the next write or at close, which retry the same purge.
        .catch(() => this.scheduleRetry());
    }, this.retryMs);
    this.retry.unref();
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
  }

  private vacuum(): boolean {
    try {
      this.db.exec("VACUUM");
      return true;
    } catch (error) {
      if (isBusy(error)) return false;
      throw error;
    }
  }

  /**
   * TRUNCATE must wait for other connections' read snapshots to end; it waits at most `waitMs` (blocking
   * the event loop, as every call on this connection does). True when the WAL was cut to zero bytes.
   */
  private checkpoint(waitMs: number): boolean {
    this.db.pragma(`busy_timeout = ${waitMs}`);
    try {
      const [result] = this.db.pragma("wal_checkpoint(TRUNCATE)") as { busy: number }[];
      return (result?.busy ?? 0) === 0;
    } finally {
      this.db.pragma(`busy_timeout = ${this.options.busyTimeoutMs}`);
    }
  }
}

function isBusy(error: unknown): boolean {
  return (error as { code?: string }).code?.startsWith("SQLITE_BUSY") ?? false;
}
