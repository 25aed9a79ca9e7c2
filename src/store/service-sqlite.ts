import type Database from "better-sqlite3";
import {
  type ConsoleLogin,
  type LiveRun,
  type OrderedStep,
  type PendingApproval,
  type ServiceTables,
  type SessionOwner,
  SIGNAL_POLL_MS,
  SIGNAL_TTL_MS,
  type StoredApiKey,
} from "./service.js";
import {
  type ApprovalDbRow,
  approvalValues,
  type KeyRow,
  keyValues,
  type LiveDbRow,
  type LoginDbRow,
  liveValues,
  loginValues,
  type OwnerRow,
  ownerValues,
  STEP_COLUMNS,
  type StepDbRow,
  stepValues,
  toApproval,
  toKey,
  toLive,
  toLogin,
  toOwner,
  toStep,
} from "./service-rows.js";

/** The statements of the store's one connection, inside one of its read or write groups. */
export interface SqliteStatements {
  get<R>(text: string, ...params: unknown[]): R | undefined;
  all<R>(text: string, ...params: unknown[]): R[];
  run(text: string, ...params: unknown[]): Database.RunResult;
  /** Text is being deleted: the store purges its old bytes once the group commits. */
  owePurge(): void;
}

export interface SqliteGroups {
  read<T>(fn: (s: SqliteStatements) => T): Promise<T>;
  write<T>(fn: (s: SqliteStatements) => T): Promise<T>;
}

/** The server's tables on the SQLite store's connection: every statement rides its group commit. */
export class SqliteServiceTables implements ServiceTables {
  constructor(private readonly db: SqliteGroups) {}

  createApiKey(k: StoredApiKey) {
    return this.db.write((s) => {
      s.run(
        "INSERT INTO server_api_keys (id, principal, name, hash, created_at, admin) VALUES (?, ?, ?, ?, ?, ?)",
        ...keyValues(k),
      );
    });
  }
  findApiKey(id: string) {
    return this.db.read((s) => {
      const row = s.get<KeyRow>("SELECT * FROM server_api_keys WHERE id = ?", id);
      return row && toKey(row);
    });
  }
  listApiKeys() {
    return this.db.read((s) => s.all<KeyRow>("SELECT * FROM server_api_keys ORDER BY created_at").map(toKey));
  }
  revokeApiKey(id: string, at: string) {
    return this.db.write(
      (s) => s.run("UPDATE server_api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", at, id).changes > 0,
    );
  }
  apiKeyCounts() {
    return this.db.read(
      (s) =>
        s.get<{ all: number; active: number }>(
          'SELECT count(*) AS "all", count(*) FILTER (WHERE revoked_at IS NULL) AS active FROM server_api_keys',
        ) ?? { all: 0, active: 0 },
    );
  }

  ownSession(o: SessionOwner) {
    return this.db.write((s) => {
      s.run(
        "INSERT INTO server_session_owners (session_id, principal, title, created_at) VALUES (?, ?, ?, ?)",
        ...ownerValues(o),
      );
    });
  }
  sessionOwner(sessionId: string) {
    return this.db.read((s) => {
      const row = s.get<OwnerRow>("SELECT * FROM server_session_owners WHERE session_id = ?", sessionId);
      return row && toOwner(row);
    });
  }
  ownedSessions(principal: string, page: { limit: number; offset: number }) {
    return this.db.read((s) =>
      s
        .all<OwnerRow>(
          "SELECT * FROM server_session_owners WHERE principal = ? ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?",
          principal,
          page.limit,
          page.offset,
        )
        .map(toOwner),
    );
  }
  sessionOwners(sessionIds: readonly string[]) {
    return this.db.read((s) => {
      const found = new Map<string, SessionOwner>();
      for (const id of sessionIds) {
        const row = s.get<OwnerRow>("SELECT * FROM server_session_owners WHERE session_id = ?", id);
        if (row) found.set(id, toOwner(row));
      }
      return found;
    });
  }
  forgetSession(sessionId: string) {
    return this.db.write((s) => {
      const owners = s.run("DELETE FROM server_session_owners WHERE session_id = ?", sessionId).changes;
      s.run("DELETE FROM server_run_steps WHERE session_id = ?", sessionId);
      // The owner row may hold a title.
      if (owners > 0) s.owePurge();
    });
  }

  postSignal(body: string) {
    const now = Date.now();
    return this.db.write((s) => {
      s.run("INSERT INTO server_run_signals (body, created_at) VALUES (?, ?)", body, now);
      s.run("DELETE FROM server_run_signals WHERE created_at < ?", now - SIGNAL_TTL_MS);
    });
  }
  /** Polls: other processes on the same file post signals too. */
  async watchSignals(onBody: (body: string) => void) {
    let cursor = await this.db.read(
      (s) => (s.get<{ id: number }>("SELECT coalesce(max(id), 0) AS id FROM server_run_signals") as { id: number }).id,
    );
    let polling = false;
    const timer = setInterval(() => {
      if (polling) return;
      polling = true;
      this.db
        .read((s) =>
          s.all<{ id: number; body: string }>(
            "SELECT id, body FROM server_run_signals WHERE id > ? ORDER BY id",
            cursor,
          ),
        )
        .then(
          (rows) => {
            for (const row of rows) {
              cursor = row.id;
              onBody(row.body);
            }
          },
          // A closed or busy store: the next poll tries again (or the watcher is being stopped).
          () => undefined,
        )
        .finally(() => {
          polling = false;
        });
    }, SIGNAL_POLL_MS);
    timer.unref();
    return async () => clearInterval(timer);
  }

  recordSteps(batch: {
    readonly steps: readonly OrderedStep[];
    readonly started: readonly LiveRun[];
    readonly ended: readonly string[];
  }) {
    return this.db.write((s) => {
      for (const r of batch.started)
        s.run(
          "INSERT OR REPLACE INTO server_live_runs (run_id, session_id, parent_run_id, depth, instance, started_at) VALUES (?, ?, ?, ?, ?, ?)",
          ...liveValues(r),
        );
      for (const step of batch.steps)
        s.run(
          `INSERT INTO server_run_steps (${STEP_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          ...stepValues(step),
        );
      for (const runId of batch.ended) s.run("DELETE FROM server_live_runs WHERE run_id = ?", runId);
    });
  }
  stepsOf(runIds: readonly string[]) {
    if (runIds.length === 0) return Promise.resolve([]);
    return this.db.read((s) =>
      s
        .all<StepDbRow>(
          `SELECT * FROM server_run_steps WHERE run_id IN (SELECT value FROM json_each(?)) ORDER BY ord`,
          JSON.stringify(runIds),
        )
        .map(toStep),
    );
  }
  liveRuns() {
    return this.db.read((s) => s.all<LiveDbRow>("SELECT * FROM server_live_runs ORDER BY started_at").map(toLive));
  }
  addPendingApproval(a: PendingApproval) {
    return this.db.write((s) => {
      s.run(
        "INSERT OR REPLACE INTO server_pending_approvals (run_id, tool_call_id, session_id, tool_name, title, asked_at, instance, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        ...approvalValues(a),
      );
    });
  }
  removePendingApproval(runId: string, toolCallId: string) {
    return this.db.write((s) => {
      const removed = s.run(
        "DELETE FROM server_pending_approvals WHERE run_id = ? AND tool_call_id = ?",
        runId,
        toolCallId,
      ).changes;
      // The ask's title is text a plugin wrote.
      if (removed > 0) s.owePurge();
    });
  }
  pendingApprovals() {
    return this.db.read((s) =>
      s.all<ApprovalDbRow>("SELECT * FROM server_pending_approvals ORDER BY asked_at").map(toApproval),
    );
  }
  createLogin(l: ConsoleLogin) {
    const now = Date.now();
    return this.db.write((s) => {
      s.run("DELETE FROM server_console_logins WHERE expires_at <= ?", now);
      s.run(
        "INSERT INTO server_console_logins (token_hash, principal, admin, key_id, csrf, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
        ...loginValues(l),
      );
    });
  }
  login(tokenHash: string, now: number) {
    return this.db.read((s) => {
      const row = s.get<LoginDbRow>(
        "SELECT * FROM server_console_logins WHERE token_hash = ? AND expires_at > ?",
        tokenHash,
        now,
      );
      return row && toLogin(row);
    });
  }
  deleteLogin(tokenHash: string) {
    return this.db.write((s) => {
      s.run("DELETE FROM server_console_logins WHERE token_hash = ?", tokenHash);
    });
  }
  async ping() {
    await this.db.read((s) => s.get("SELECT 1"));
  }
}
