/**
 * What the console needs beside the session store, kept with the service's records (same
 * database, `server_*` tables): each run's steps as the engine's interceptors saw them, the runs
 * in progress on every instance, the approval asks waiting for a human, and console logins.
 *
 * Nothing here can hold content: a step is identifiers (run, session, tool call), names (a hook,
 * a plugin, a registered tool, a provider and model), an outcome, a category slug, numbers and
 * times. An approval ask keeps its title (the text a plugin wrote for the human who answers)
 * and what the terminal would show with it (the tool's input, secrets masked, and the rules an
 * "always" adds) only while it waits. A failed run's end keeps its error as the run's result
 * gives it (a kind, a provider, a status and one line Gatehouse wrote, secrets masked).
 */

export const STEP_KINDS = [
  "run-start",
  "model-call",
  "tool-call",
  "hook",
  "approval",
  "retry",
  "compaction",
  "subagent",
  "run-end",
] as const;
export type StepKind = (typeof STEP_KINDS)[number];

export interface StepRow {
  readonly runId: string;
  readonly sessionId: string;
  /** Epoch milliseconds: when the step started. */
  readonly at: number;
  readonly kind: StepKind;
  /** A hook name, a tool name, `provider:model`, a trigger: an identifier, never content. */
  readonly name: string;
  readonly pluginId: string | null;
  readonly outcome: string | null;
  readonly category: string | null;
  readonly durationMs: number | null;
  readonly toolCallId: string | null;
  /** The model step (1, 2, …) the row belongs to, when known. */
  readonly step: number | null;
  /** A failed run's end: its error as JSON (the run result's `error`). */
  readonly detail?: string | null;
}

/** A run in progress on some instance. */
export interface LiveRun {
  readonly runId: string;
  readonly sessionId: string;
  readonly parentRunId: string | null;
  readonly depth: number;
  /** Which instance runs it (host:pid). */
  readonly instance: string;
  readonly startedAt: number;
}

/** A tool call's approval ask, waiting for a human. */
export interface PendingApproval {
  readonly runId: string;
  readonly toolCallId: string;
  readonly sessionId: string;
  readonly toolName: string;
  readonly title: string;
  readonly askedAt: number;
  readonly instance: string;
  /** What the person is shown with the title, as JSON (the console's `ApprovalDetail`). */
  readonly detail?: string | null;
}

/** A console login: the cookie's token is stored only as its sha256. */
export interface ConsoleLogin {
  readonly tokenHash: string;
  readonly principal: string;
  readonly admin: boolean;
  /** The API key it was made with (a revoked key ends it); null for the open loopback's local principal. */
  readonly keyId: string | null;
  readonly csrf: string;
  readonly expiresAt: number;
}

/** One write of the step recorder: rows in order, runs that started, runs that ended. */
export interface StepBatch {
  readonly steps: readonly StepRow[];
  readonly started: readonly LiveRun[];
  readonly ended: readonly string[];
}

export interface ConsoleRecords {
  recordSteps(batch: StepBatch): Promise<void>;
  /** The steps of these runs, in the order they were recorded. */
  stepsOf(runIds: readonly string[]): Promise<StepRow[]>;
  liveRuns(): Promise<LiveRun[]>;
  addPendingApproval(approval: PendingApproval): Promise<void>;
  removePendingApproval(runId: string, toolCallId: string): Promise<void>;
  pendingApprovals(): Promise<PendingApproval[]>;
  createLogin(login: ConsoleLogin): Promise<void>;
  /** An unexpired login. */
  login(tokenHash: string, now: number): Promise<ConsoleLogin | undefined>;
  deleteLogin(tokenHash: string): Promise<void>;
  /** A deleted session's steps go with it. */
  forgetSteps(sessionId: string): Promise<void>;
}

export const CONSOLE_TABLES = (real: string) => `
  CREATE TABLE IF NOT EXISTS server_run_steps (
    run_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    at BIGINT NOT NULL,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    plugin_id TEXT,
    outcome TEXT,
    category TEXT,
    duration_ms ${real},
    tool_call_id TEXT,
    step INTEGER,
    ord BIGINT NOT NULL,
    detail TEXT
  );
  CREATE INDEX IF NOT EXISTS server_run_steps_by_run ON server_run_steps (run_id, ord);
  CREATE INDEX IF NOT EXISTS server_run_steps_by_session ON server_run_steps (session_id);
  CREATE TABLE IF NOT EXISTS server_live_runs (
    run_id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    parent_run_id TEXT,
    depth INTEGER NOT NULL,
    instance TEXT NOT NULL,
    started_at BIGINT NOT NULL
  );
  CREATE TABLE IF NOT EXISTS server_pending_approvals (
    run_id TEXT NOT NULL,
    tool_call_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    tool_name TEXT NOT NULL,
    title TEXT NOT NULL,
    asked_at BIGINT NOT NULL,
    instance TEXT NOT NULL,
    detail TEXT,
    PRIMARY KEY (run_id, tool_call_id)
  );
  CREATE TABLE IF NOT EXISTS server_console_logins (
    token_hash TEXT PRIMARY KEY,
    principal TEXT NOT NULL,
    admin INTEGER NOT NULL,
    key_id TEXT,
    csrf TEXT NOT NULL,
    expires_at BIGINT NOT NULL
  );
`;

interface StepDbRow {
  run_id: string;
  session_id: string;
  at: number | string;
  kind: StepKind;
  name: string;
  plugin_id: string | null;
  outcome: string | null;
  category: string | null;
  duration_ms: number | null;
  tool_call_id: string | null;
  step: number | null;
  detail?: string | null;
}
interface LiveDbRow {
  run_id: string;
  session_id: string;
  parent_run_id: string | null;
  depth: number;
  instance: string;
  started_at: number | string;
}
interface ApprovalDbRow {
  run_id: string;
  tool_call_id: string;
  session_id: string;
  tool_name: string;
  title: string;
  asked_at: number | string;
  instance: string;
  detail?: string | null;
}
interface LoginDbRow {
  token_hash: string;
  principal: string;
  admin: number;
  key_id: string | null;
  csrf: string;
  expires_at: number | string;
}

// PostgreSQL answers BIGINT as a string.
const toStep = (r: StepDbRow): StepRow => ({
  runId: r.run_id,
  sessionId: r.session_id,
  at: Number(r.at),
  kind: r.kind,
  name: r.name,
  pluginId: r.plugin_id,
  outcome: r.outcome,
  category: r.category,
  durationMs: r.duration_ms === null ? null : Number(r.duration_ms),
  toolCallId: r.tool_call_id,
  step: r.step,
  detail: r.detail ?? null,
});
const toLive = (r: LiveDbRow): LiveRun => ({
  runId: r.run_id,
  sessionId: r.session_id,
  parentRunId: r.parent_run_id,
  depth: Number(r.depth),
  instance: r.instance,
  startedAt: Number(r.started_at),
});
const toApproval = (r: ApprovalDbRow): PendingApproval => ({
  runId: r.run_id,
  toolCallId: r.tool_call_id,
  sessionId: r.session_id,
  toolName: r.tool_name,
  title: r.title,
  askedAt: Number(r.asked_at),
  instance: r.instance,
  detail: r.detail ?? null,
});
const toLogin = (r: LoginDbRow): ConsoleLogin => ({
  tokenHash: r.token_hash,
  principal: r.principal,
  admin: Number(r.admin) === 1,
  keyId: r.key_id,
  csrf: r.csrf,
  expiresAt: Number(r.expires_at),
});
const stepValues = (s: StepRow, ord: number) => [
  s.runId,
  s.sessionId,
  s.at,
  s.kind,
  s.name,
  s.pluginId,
  s.outcome,
  s.category,
  s.durationMs,
  s.toolCallId,
  s.step,
  ord,
  s.detail ?? null,
];
const STEP_COLUMNS =
  "run_id, session_id, at, kind, name, plugin_id, outcome, category, duration_ms, tool_call_id, step, ord, detail";
/** Columns added after the tables were first made: [table, column]. */
const ADDED_COLUMNS = [
  ["server_run_steps", "detail"],
  ["server_pending_approvals", "detail"],
] as const;

/**
 * Rows are ordered by `ord`: the recorder's clock in microseconds plus a counter, so steps of one
 * run recorded by one instance keep their order without a sequence shared between instances.
 */
let lastOrd = 0;
function nextOrd(): number {
  const now = Math.floor((performance.timeOrigin + performance.now()) * 1000);
  lastOrd = Math.max(now, lastOrd + 1);
  return lastOrd;
}

export class MemoryConsoleRecords implements ConsoleRecords {
  private readonly steps: StepRow[] = [];
  private readonly live = new Map<string, LiveRun>();
  private readonly approvals = new Map<string, PendingApproval>();
  private readonly logins = new Map<string, ConsoleLogin>();

  async recordSteps(batch: StepBatch) {
    for (const run of batch.started) this.live.set(run.runId, run);
    this.steps.push(...batch.steps);
    for (const runId of batch.ended) this.live.delete(runId);
  }
  async stepsOf(runIds: readonly string[]) {
    const wanted = new Set(runIds);
    return this.steps.filter((s) => wanted.has(s.runId));
  }
  async liveRuns() {
    return [...this.live.values()];
  }
  async addPendingApproval(a: PendingApproval) {
    this.approvals.set(`${a.runId}\0${a.toolCallId}`, a);
  }
  async removePendingApproval(runId: string, toolCallId: string) {
    this.approvals.delete(`${runId}\0${toolCallId}`);
  }
  async pendingApprovals() {
    return [...this.approvals.values()];
  }
  async createLogin(login: ConsoleLogin) {
    this.logins.set(login.tokenHash, login);
  }
  async login(tokenHash: string, now: number) {
    const found = this.logins.get(tokenHash);
    return found && found.expiresAt > now ? found : undefined;
  }
  async deleteLogin(tokenHash: string) {
    this.logins.delete(tokenHash);
  }
  async forgetSteps(sessionId: string) {
    for (let i = this.steps.length - 1; i >= 0; i--)
      if (this.steps[i]?.sessionId === sessionId) this.steps.splice(i, 1);
  }
}

/** @internal Driver types stay out of the published declarations (stripInternal): @types/better-sqlite3 is a devDependency. */
type SqliteDatabase = import("better-sqlite3").Database;

export class SqliteConsoleRecords implements ConsoleRecords {
  private readonly insertStep;
  private readonly insertLive;
  private readonly deleteLive;

  /** @internal */
  constructor(private readonly db: SqliteDatabase) {
    db.exec(CONSOLE_TABLES("REAL"));
    for (const [table, column] of ADDED_COLUMNS) {
      const columns = db.prepare(`SELECT name FROM pragma_table_info('${table}')`).all() as { name: string }[];
      if (!columns.some((c) => c.name === column)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} TEXT`);
    }
    this.insertStep = db.prepare(
      `INSERT INTO server_run_steps (${STEP_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.insertLive = db.prepare(
      "INSERT OR REPLACE INTO server_live_runs (run_id, session_id, parent_run_id, depth, instance, started_at) VALUES (?, ?, ?, ?, ?, ?)",
    );
    this.deleteLive = db.prepare("DELETE FROM server_live_runs WHERE run_id = ?");
  }

  async recordSteps(batch: StepBatch) {
    this.db.transaction(() => {
      for (const r of batch.started)
        this.insertLive.run(r.runId, r.sessionId, r.parentRunId, r.depth, r.instance, r.startedAt);
      for (const s of batch.steps) this.insertStep.run(...stepValues(s, nextOrd()));
      for (const runId of batch.ended) this.deleteLive.run(runId);
    })();
  }
  async stepsOf(runIds: readonly string[]) {
    if (runIds.length === 0) return [];
    const rows = this.db
      .prepare(`SELECT * FROM server_run_steps WHERE run_id IN (${runIds.map(() => "?").join(", ")}) ORDER BY ord`)
      .all(...runIds) as StepDbRow[];
    return rows.map(toStep);
  }
  async liveRuns() {
    return (this.db.prepare("SELECT * FROM server_live_runs ORDER BY started_at").all() as LiveDbRow[]).map(toLive);
  }
  async addPendingApproval(a: PendingApproval) {
    this.db
      .prepare(
        "INSERT OR REPLACE INTO server_pending_approvals (run_id, tool_call_id, session_id, tool_name, title, asked_at, instance, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      )
      .run(a.runId, a.toolCallId, a.sessionId, a.toolName, a.title, a.askedAt, a.instance, a.detail ?? null);
  }
  async removePendingApproval(runId: string, toolCallId: string) {
    this.db
      .prepare("DELETE FROM server_pending_approvals WHERE run_id = ? AND tool_call_id = ?")
      .run(runId, toolCallId);
  }
  async pendingApprovals() {
    return (this.db.prepare("SELECT * FROM server_pending_approvals ORDER BY asked_at").all() as ApprovalDbRow[]).map(
      toApproval,
    );
  }
  async createLogin(l: ConsoleLogin) {
    this.db.prepare("DELETE FROM server_console_logins WHERE expires_at <= ?").run(Date.now());
    this.db
      .prepare(
        "INSERT INTO server_console_logins (token_hash, principal, admin, key_id, csrf, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
      )
      .run(l.tokenHash, l.principal, l.admin ? 1 : 0, l.keyId, l.csrf, l.expiresAt);
  }
  async login(tokenHash: string, now: number) {
    const row = this.db
      .prepare("SELECT * FROM server_console_logins WHERE token_hash = ? AND expires_at > ?")
      .get(tokenHash, now) as LoginDbRow | undefined;
    return row && toLogin(row);
  }
  async deleteLogin(tokenHash: string) {
    this.db.prepare("DELETE FROM server_console_logins WHERE token_hash = ?").run(tokenHash);
  }
  async forgetSteps(sessionId: string) {
    this.db.prepare("DELETE FROM server_run_steps WHERE session_id = ?").run(sessionId);
  }
}

/** @internal pg ships no types; @types/pg is a devDependency. */
type PgPool = import("pg").Pool;

export class PostgresConsoleRecords implements ConsoleRecords {
  /** @internal */
  constructor(private readonly pool: PgPool) {}

  /** Run once, under the lock the service records take to create their tables. */
  static tables(): string {
    const added = ADDED_COLUMNS.map(
      ([table, column]) => `ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS ${column} TEXT;`,
    );
    return [CONSOLE_TABLES("DOUBLE PRECISION"), ...added].join("\n");
  }

  private async rows<R>(text: string, values: unknown[] = []): Promise<R[]> {
    return (await this.pool.query(text, values)).rows as R[];
  }

  async recordSteps(batch: StepBatch) {
    const client = await this.pool.connect();
    try {
      await client.query("BEGIN");
      for (const r of batch.started)
        await client.query(
          `INSERT INTO server_live_runs (run_id, session_id, parent_run_id, depth, instance, started_at)
           VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (run_id) DO NOTHING`,
          [r.runId, r.sessionId, r.parentRunId, r.depth, r.instance, r.startedAt],
        );
      if (batch.steps.length > 0) {
        const values: unknown[] = [];
        const tuples = batch.steps.map((s) => {
          const row = stepValues(s, nextOrd());
          const at = values.length;
          values.push(...row);
          return `(${row.map((_, i) => `$${at + i + 1}`).join(", ")})`;
        });
        await client.query(`INSERT INTO server_run_steps (${STEP_COLUMNS}) VALUES ${tuples.join(", ")}`, values);
      }
      if (batch.ended.length > 0)
        await client.query("DELETE FROM server_live_runs WHERE run_id = ANY($1)", [batch.ended]);
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }
  async stepsOf(runIds: readonly string[]) {
    if (runIds.length === 0) return [];
    return (
      await this.rows<StepDbRow>("SELECT * FROM server_run_steps WHERE run_id = ANY($1) ORDER BY ord", [[...runIds]])
    ).map(toStep);
  }
  async liveRuns() {
    return (await this.rows<LiveDbRow>("SELECT * FROM server_live_runs ORDER BY started_at")).map(toLive);
  }
  async addPendingApproval(a: PendingApproval) {
    await this.rows(
      `INSERT INTO server_pending_approvals (run_id, tool_call_id, session_id, tool_name, title, asked_at, instance, detail)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (run_id, tool_call_id) DO NOTHING`,
      [a.runId, a.toolCallId, a.sessionId, a.toolName, a.title, a.askedAt, a.instance, a.detail ?? null],
    );
  }
  async removePendingApproval(runId: string, toolCallId: string) {
    await this.rows("DELETE FROM server_pending_approvals WHERE run_id = $1 AND tool_call_id = $2", [
      runId,
      toolCallId,
    ]);
  }
  async pendingApprovals() {
    return (await this.rows<ApprovalDbRow>("SELECT * FROM server_pending_approvals ORDER BY asked_at")).map(toApproval);
  }
  async createLogin(l: ConsoleLogin) {
    await this.rows("DELETE FROM server_console_logins WHERE expires_at <= $1", [Date.now()]);
    await this.rows(
      "INSERT INTO server_console_logins (token_hash, principal, admin, key_id, csrf, expires_at) VALUES ($1, $2, $3, $4, $5, $6)",
      [l.tokenHash, l.principal, l.admin ? 1 : 0, l.keyId, l.csrf, l.expiresAt],
    );
  }
  async login(tokenHash: string, now: number) {
    const [row] = await this.rows<LoginDbRow>(
      "SELECT * FROM server_console_logins WHERE token_hash = $1 AND expires_at > $2",
      [tokenHash, now],
    );
    return row && toLogin(row);
  }
  async deleteLogin(tokenHash: string) {
    await this.rows("DELETE FROM server_console_logins WHERE token_hash = $1", [tokenHash]);
  }
  async forgetSteps(sessionId: string) {
    await this.rows("DELETE FROM server_run_steps WHERE session_id = $1", [sessionId]);
  }
}
