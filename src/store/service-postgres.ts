import type pg from "pg";
import type {
  ConsoleLogin,
  LiveRun,
  OrderedStep,
  PendingApproval,
  ServiceTables,
  SessionOwner,
  StoredApiKey,
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

/**
 * The server's tables on the PostgreSQL store's pool. Signals go by NOTIFY on a channel of the schema;
 * a watcher holds one of the pool's connections for its LISTEN (given back when it stops).
 */
export class PostgresServiceTables implements ServiceTables {
  private readonly channel: string;

  constructor(
    private readonly pool: pg.Pool,
    schema: string,
  ) {
    this.channel = `gatehouse_runs_${schema}`;
  }

  private async rows<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
    return (await this.pool.query<R>(text, values)).rows;
  }

  async createApiKey(k: StoredApiKey) {
    await this.rows(
      "INSERT INTO server_api_keys (id, principal, name, hash, created_at, admin) VALUES ($1, $2, $3, $4, $5, $6)",
      keyValues(k),
    );
  }
  async findApiKey(id: string) {
    const [row] = await this.rows<KeyRow>("SELECT * FROM server_api_keys WHERE id = $1", [id]);
    return row && toKey(row);
  }
  async listApiKeys() {
    return (await this.rows<KeyRow>("SELECT * FROM server_api_keys ORDER BY created_at")).map(toKey);
  }
  async revokeApiKey(id: string, at: string) {
    const result = await this.pool.query(
      "UPDATE server_api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL",
      [at, id],
    );
    return (result.rowCount ?? 0) > 0;
  }
  async apiKeyCounts() {
    const [row] = await this.rows<{ all: number; active: number }>(
      'SELECT count(*)::int AS "all", (count(*) FILTER (WHERE revoked_at IS NULL))::int AS active FROM server_api_keys',
    );
    return row ?? { all: 0, active: 0 };
  }

  async ownSession(o: SessionOwner) {
    await this.rows(
      "INSERT INTO server_session_owners (session_id, principal, title, created_at) VALUES ($1, $2, $3, $4)",
      ownerValues(o),
    );
  }
  async sessionOwner(sessionId: string) {
    const [row] = await this.rows<OwnerRow>("SELECT * FROM server_session_owners WHERE session_id = $1", [sessionId]);
    return row && toOwner(row);
  }
  async ownedSessions(principal: string, page: { limit: number; offset: number }) {
    return (
      await this.rows<OwnerRow>(
        "SELECT * FROM server_session_owners WHERE principal = $1 ORDER BY created_at DESC, session_id LIMIT $2 OFFSET $3",
        [principal, page.limit, page.offset],
      )
    ).map(toOwner);
  }
  async sessionOwners(sessionIds: readonly string[]) {
    const rows = await this.rows<OwnerRow>("SELECT * FROM server_session_owners WHERE session_id = ANY($1)", [
      [...sessionIds],
    ]);
    return new Map(rows.map((r) => [r.session_id, toOwner(r)]));
  }
  async forgetSession(sessionId: string) {
    await this.rows("DELETE FROM server_session_owners WHERE session_id = $1", [sessionId]);
    await this.rows("DELETE FROM server_run_steps WHERE session_id = $1", [sessionId]);
  }

  /** NOTIFY reaches every instance listening on the schema's channel, at once. */
  async postSignal(body: string) {
    await this.rows("SELECT pg_notify($1, $2)", [this.channel, body]);
  }
  async watchSignals(onBody: (body: string) => void) {
    let stopped = false;
    let client: pg.PoolClient | undefined;
    // If the listening connection drops, it goes back to the pool as broken and another one listens.
    const listen = async (): Promise<void> => {
      const c = await this.pool.connect();
      c.on("notification", (n) => {
        if (n.channel === this.channel && n.payload) onBody(n.payload);
      });
      c.on("error", () => {
        if (client === c) client = undefined;
        c.release(true);
        if (!stopped) setTimeout(() => void listen().catch(() => undefined), 500).unref();
      });
      try {
        await c.query(`LISTEN "${this.channel}"`);
      } catch (error) {
        c.release(true);
        throw error;
      }
      client = c;
    };
    await listen();
    return async () => {
      stopped = true;
      const c = client;
      client = undefined;
      if (c) {
        await c.query(`UNLISTEN "${this.channel}"`).then(
          () => c.release(),
          () => c.release(true),
        );
      }
    };
  }

  async recordSteps(batch: {
    readonly steps: readonly OrderedStep[];
    readonly started: readonly LiveRun[];
    readonly ended: readonly string[];
  }) {
    const client = await this.pool.connect();
    try {
      await client.query("BEGIN");
      for (const r of batch.started)
        await client.query(
          `INSERT INTO server_live_runs (run_id, session_id, parent_run_id, depth, instance, started_at)
           VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (run_id) DO NOTHING`,
          liveValues(r),
        );
      if (batch.steps.length > 0) {
        const values: unknown[] = [];
        const tuples = batch.steps.map((s) => {
          const row = stepValues(s);
          const at = values.length;
          values.push(...row);
          return `(${row.map((_, i) => `$${at + i + 1}`).join(", ")})`;
        });
        await client.query(`INSERT INTO server_run_steps (${STEP_COLUMNS}) VALUES ${tuples.join(", ")}`, values);
      }
      if (batch.ended.length > 0)
        await client.query("DELETE FROM server_live_runs WHERE run_id = ANY($1)", [[...batch.ended]]);
      await client.query("COMMIT");
      client.release();
    } catch (error) {
      const broken = await client.query("ROLLBACK").then(
        () => false,
        () => true,
      );
      client.release(broken);
      throw error;
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
      approvalValues(a),
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
      loginValues(l),
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
  async ping() {
    await this.pool.query("SELECT 1");
  }
}
