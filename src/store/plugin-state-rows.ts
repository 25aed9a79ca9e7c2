// The plugin_state table's rows as both SQL backends read and write them.
import type { PluginStateKind, PluginStateRow } from "./plugin-state.js";

export interface DbRow {
  kind: PluginStateKind;
  namespace: string;
  key: string;
  value: string;
  bytes: Uint8Array | null;
  created_at: number | string;
  expires_at: number | string | null;
}

export const toRow = (r: DbRow): PluginStateRow => ({
  kind: r.kind,
  namespace: r.namespace,
  key: r.key,
  value: r.value,
  bytes: r.bytes === null ? null : new Uint8Array(r.bytes),
  // PostgreSQL's bigint arrives as a string.
  createdAt: Number(r.created_at),
  expiresAt: r.expires_at === null ? null : Number(r.expires_at),
});

export const values = (pluginId: string, r: PluginStateRow) => [
  pluginId,
  r.kind,
  r.namespace,
  r.key,
  r.value,
  r.bytes === null ? null : Buffer.from(r.bytes),
  r.createdAt,
  r.expiresAt,
];

export const SELECT = "SELECT kind, namespace, key, value, bytes, created_at, expires_at FROM plugin_state";
export const COLUMNS = "(plugin_id, kind, namespace, key, value, bytes, created_at, expires_at)";
