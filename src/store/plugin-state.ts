import type pg from "pg";
import type { SqliteGroups } from "./service-sqlite.js";

/**
 * OpenClaw plugins' `api.runtime.state` rows (src/plugins/openclaw/state.ts keeps the working copy):
 * one row per plugin, kind, namespace and key. `value` is JSON (a keyed value, or a blob's metadata);
 * `bytes` a blob's bytes. Bounds (maxEntries, TTLs, byte limits) are the plugin side's: the store
 * keeps what it is told, in the order it is told.
 */
export type PluginStateKind = "keyed" | "blob";

export interface PluginStateRow {
  readonly kind: PluginStateKind;
  readonly namespace: string;
  readonly key: string;
  readonly value: string;
  readonly bytes: Uint8Array | null;
  /** Epoch milliseconds. */
  readonly createdAt: number;
  readonly expiresAt: number | null;
}

export interface PluginStateTables {
  /** Every row of one plugin. */
  load(pluginId: string): Promise<PluginStateRow[]>;
  /** Inserts or replaces the row with the same kind, namespace and key. */
  put(pluginId: string, row: PluginStateRow): Promise<void>;
  delete(pluginId: string, kind: PluginStateKind, namespace: string, key: string): Promise<void>;
  /** A namespace's rows, or (without `scope`) all of the plugin's; how many were removed. */
  clear(pluginId: string, scope?: { readonly kind: PluginStateKind; readonly namespace: string }): Promise<number>;
}

interface DbRow {
  kind: PluginStateKind;
  namespace: string;
  key: string;
  value: string;
  bytes: Uint8Array | null;
  created_at: number | string;
  expires_at: number | string | null;
}

const toRow = (r: DbRow): PluginStateRow => ({
  kind: r.kind,
  namespace: r.namespace,
  key: r.key,
  value: r.value,
  bytes: r.bytes === null ? null : new Uint8Array(r.bytes),
  // PostgreSQL's bigint arrives as a string.
  createdAt: Number(r.created_at),
  expiresAt: r.expires_at === null ? null : Number(r.expires_at),
});

const values = (pluginId: string, r: PluginStateRow) => [
  pluginId,
  r.kind,
  r.namespace,
  r.key,
  r.value,
  r.bytes === null ? null : Buffer.from(r.bytes),
  r.createdAt,
  r.expiresAt,
];

const SELECT = "SELECT kind, namespace, key, value, bytes, created_at, expires_at FROM plugin_state";
const COLUMNS = "(plugin_id, kind, namespace, key, value, bytes, created_at, expires_at)";

export class SqlitePluginState implements PluginStateTables {
  constructor(private readonly db: SqliteGroups) {}

  load(pluginId: string) {
    return this.db.read((s) => s.all<DbRow>(`${SELECT} WHERE plugin_id = ? ORDER BY created_at`, pluginId).map(toRow));
  }
  async put(pluginId: string, row: PluginStateRow) {
    await this.db.write((s) =>
      s.run(`INSERT OR REPLACE INTO plugin_state ${COLUMNS} VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, ...values(pluginId, row)),
    );
  }
  async delete(pluginId: string, kind: PluginStateKind, namespace: string, key: string) {
    await this.db.write((s) =>
      s.run(
        "DELETE FROM plugin_state WHERE plugin_id = ? AND kind = ? AND namespace = ? AND key = ?",
        pluginId,
        kind,
        namespace,
        key,
      ),
    );
  }
  clear(pluginId: string, scope?: { kind: PluginStateKind; namespace: string }) {
    return this.db.write(
      (s) =>
        (scope
          ? s.run(
              "DELETE FROM plugin_state WHERE plugin_id = ? AND kind = ? AND namespace = ?",
              pluginId,
              scope.kind,
              scope.namespace,
            )
          : s.run("DELETE FROM plugin_state WHERE plugin_id = ?", pluginId)
        ).changes,
    );
  }
}

export class PostgresPluginState implements PluginStateTables {
  constructor(private readonly pool: pg.Pool) {}

  async load(pluginId: string) {
    const { rows } = await this.pool.query<DbRow>(`${SELECT} WHERE plugin_id = $1 ORDER BY created_at`, [pluginId]);
    return rows.map(toRow);
  }
  async put(pluginId: string, row: PluginStateRow) {
    await this.pool.query(
      `INSERT INTO plugin_state ${COLUMNS} VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (plugin_id, kind, namespace, key) DO UPDATE SET value = EXCLUDED.value, bytes = EXCLUDED.bytes,
         created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at`,
      values(pluginId, row),
    );
  }
  async delete(pluginId: string, kind: PluginStateKind, namespace: string, key: string) {
    await this.pool.query(
      "DELETE FROM plugin_state WHERE plugin_id = $1 AND kind = $2 AND namespace = $3 AND key = $4",
      [pluginId, kind, namespace, key],
    );
  }
  async clear(pluginId: string, scope?: { kind: PluginStateKind; namespace: string }) {
    const result = scope
      ? await this.pool.query("DELETE FROM plugin_state WHERE plugin_id = $1 AND kind = $2 AND namespace = $3", [
          pluginId,
          scope.kind,
          scope.namespace,
        ])
      : await this.pool.query("DELETE FROM plugin_state WHERE plugin_id = $1", [pluginId]);
    return result.rowCount ?? 0;
  }
}

/** The memory store's: lives as long as the store. */
export class MemoryPluginState implements PluginStateTables {
  private readonly rows = new Map<string, Map<string, PluginStateRow>>();

  private of(pluginId: string): Map<string, PluginStateRow> {
    const rows = this.rows.get(pluginId) ?? new Map<string, PluginStateRow>();
    this.rows.set(pluginId, rows);
    return rows;
  }
  async load(pluginId: string) {
    return [...this.of(pluginId).values()].sort((a, b) => a.createdAt - b.createdAt);
  }
  async put(pluginId: string, row: PluginStateRow) {
    const rows = this.of(pluginId);
    const id = JSON.stringify([row.kind, row.namespace, row.key]);
    rows.delete(id);
    rows.set(id, { ...row, bytes: row.bytes && new Uint8Array(row.bytes) });
  }
  async delete(pluginId: string, kind: PluginStateKind, namespace: string, key: string) {
    this.of(pluginId).delete(JSON.stringify([kind, namespace, key]));
  }
  async clear(pluginId: string, scope?: { kind: PluginStateKind; namespace: string }) {
    const rows = this.of(pluginId);
    let removed = 0;
    for (const [id, row] of rows)
      if (!scope || (row.kind === scope.kind && row.namespace === scope.namespace)) {
        rows.delete(id);
        removed++;
      }
    return removed;
  }
}
