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
