import type pg from "pg";
import type { PluginStateKind, PluginStateRow, PluginStateTables } from "./plugin-state.js";
import { COLUMNS, type DbRow, SELECT, toRow, values } from "./plugin-state-rows.js";

/** The PostgreSQL store's plugin_state table (a file of its own: its types name the driver). */
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
