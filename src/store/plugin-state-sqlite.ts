import type { PluginStateKind, PluginStateRow, PluginStateTables } from "./plugin-state.js";
import { COLUMNS, type DbRow, SELECT, toRow, values } from "./plugin-state-rows.js";
import type { SqliteGroups } from "./service-sqlite.js";

/** The SQLite store's plugin_state table (a file of its own: its types name the driver). */
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
