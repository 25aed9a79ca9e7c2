/**
 * OpenClaw's `api.runtime.state` stores: keyed (async), sync keyed (deprecated in OpenClaw, still
 * used by its bundled extensions) and blob stores, one set per plugin and namespace. Values are
 * the plugin's own state (ids, cursors, cached lookups), JSON-cloned on the way in and out so a
 * plugin never shares a live object with the store, with OpenClaw's bounds: `maxEntries` with an
 * overflow policy, per-entry TTLs, and a blob store's byte limits.
 *
 * The working copy is here, in memory, so the sync store stays synchronous and every bound is
 * applied in one place. Once `persist` attached the session store (the host does, before the
 * plugin's setup), the plugin's rows are loaded from it and every change is written through, in
 * order, on one queue; `flush` waits for the queue, and a write that fails is reported to the
 * plugin's log as an error (the working copy keeps the change).
 */

import type { PluginStateKind, PluginStateRow, PluginStateTables } from "../../store/plugin-state.js";

type Obj = Record<string, unknown>;
const isRecord = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

export class PluginStateError extends Error {
  constructor(
    message: string,
    readonly code: "PLUGIN_STATE_INVALID_INPUT" | "PLUGIN_STATE_LIMIT_EXCEEDED",
  ) {
    super(message);
  }
}

interface Row<T> {
  value: T;
  createdAt: number;
  expiresAt?: number;
}

interface Bounds {
  readonly maxEntries: number;
  readonly overflowPolicy: "evict-oldest" | "reject-new";
  readonly defaultTtlMs?: number;
}

const NAMESPACE = /^[a-z0-9][a-z0-9._:-]{0,127}$/i;
const MAX_KEY = 512;

function namespaceOf(options: unknown): string {
  const ns = isRecord(options) ? options.namespace : undefined;
  if (typeof ns !== "string" || !NAMESPACE.test(ns))
    throw new PluginStateError(
      `state namespace must be 1 to 128 letters, digits, ".", "_", ":" or "-" (got ${JSON.stringify(ns)})`,
      "PLUGIN_STATE_INVALID_INPUT",
    );
  return ns;
}

function boundsOf(options: unknown, retainedAllowed: boolean): Bounds {
  const o = isRecord(options) ? options : {};
  if (o.retention === "retained") {
    if (!retainedAllowed)
      throw new PluginStateError("retained stores open through openKeyedStore only", "PLUGIN_STATE_INVALID_INPUT");
    return { maxEntries: Number.POSITIVE_INFINITY, overflowPolicy: "reject-new" };
  }
  if (typeof o.maxEntries !== "number" || !Number.isInteger(o.maxEntries) || o.maxEntries < 1)
    throw new PluginStateError("maxEntries must be a positive integer", "PLUGIN_STATE_INVALID_INPUT");
  const policy = o.overflowPolicy ?? "evict-oldest";
  if (policy !== "evict-oldest" && policy !== "reject-new")
    throw new PluginStateError('overflowPolicy must be "evict-oldest" or "reject-new"', "PLUGIN_STATE_INVALID_INPUT");
  return {
    maxEntries: o.maxEntries,
    overflowPolicy: policy,
    ...(typeof o.defaultTtlMs === "number" && o.defaultTtlMs > 0 ? { defaultTtlMs: o.defaultTtlMs } : {}),
  };
}

function checkKey(key: unknown): string {
  if (typeof key !== "string" || key === "" || key.length > MAX_KEY)
    throw new PluginStateError(
      `a state key must be a string of 1 to ${MAX_KEY} characters`,
      "PLUGIN_STATE_INVALID_INPUT",
    );
  return key;
}

/** A JSON copy: what a SQLite-backed OpenClaw store would give back, never the caller's object. */
function cloneJson<T>(value: T): T {
  const text = JSON.stringify(value);
  if (text === undefined) throw new PluginStateError("a state value must be JSON", "PLUGIN_STATE_INVALID_INPUT");
  return JSON.parse(text) as T;
}

/** What a namespace tells the store about each change of its rows. */
interface Journal<T> {
  put(key: string, row: Row<T>): void;
  delete(key: string): void;
  clear(): void;
}

/** One namespace's rows, with OpenClaw's bounds; everything synchronous (the async store awaits nothing). */
class Namespace<T> {
  readonly rows = new Map<string, Row<T>>();

  constructor(
    private bounds: Bounds,
    private readonly now: () => number,
    private readonly journal: Journal<T> | undefined,
    loaded: readonly [string, Row<T>][] = [],
  ) {
    for (const [key, row] of loaded) this.rows.set(key, row);
  }

  private remove(key: string): void {
    if (this.rows.delete(key)) this.journal?.delete(key);
  }

  clear(): void {
    this.rows.clear();
    this.journal?.clear();
  }

  /** Expired rows, removed. */
  takeExpired(): [string, Row<T>][] {
    const now = this.now();
    const gone = [...this.rows.entries()].filter(([, r]) => r.expiresAt !== undefined && r.expiresAt <= now);
    for (const [key] of gone) this.remove(key);
    return gone;
  }

  reopen(bounds: Bounds): void {
    this.bounds = bounds;
  }

  private live(key: string): Row<T> | undefined {
    const row = this.rows.get(key);
    if (row?.expiresAt !== undefined && row.expiresAt <= this.now()) {
      this.remove(key);
      return undefined;
    }
    return row;
  }

  sweep(): void {
    for (const key of [...this.rows.keys()]) this.live(key);
  }

  register(key: string, value: T, ttlMs?: number): void {
    checkKey(key);
    const stored = cloneJson(value);
    this.sweep();
    if (!this.rows.has(key) && this.rows.size >= this.bounds.maxEntries) {
      if (this.bounds.overflowPolicy === "reject-new")
        throw new PluginStateError(
          `the namespace holds its maxEntries (${this.bounds.maxEntries})`,
          "PLUGIN_STATE_LIMIT_EXCEEDED",
        );
      const oldest = [...this.rows.entries()].sort((a, b) => a[1].createdAt - b[1].createdAt)[0];
      if (oldest) this.remove(oldest[0]);
    }
    const ttl = ttlMs ?? this.bounds.defaultTtlMs;
    const createdAt = this.now();
    const row: Row<T> = { value: stored, createdAt, ...(ttl ? { expiresAt: createdAt + ttl } : {}) };
    // Re-inserted, so the map's order stays the order of writes.
    this.rows.delete(key);
    this.rows.set(key, row);
    this.journal?.put(key, row);
  }

  registerIfAbsent(key: string, value: T, ttlMs?: number): boolean {
    if (this.live(checkKey(key))) return false;
    this.register(key, value, ttlMs);
    return true;
  }

  lookup(key: string): T | undefined {
    const row = this.live(checkKey(key));
    return row ? cloneJson(row.value) : undefined;
  }

  consume(key: string): T | undefined {
    const value = this.lookup(key);
    this.remove(key);
    return value;
  }

  delete(key: string): boolean {
    const had = this.live(checkKey(key)) !== undefined;
    this.remove(key);
    return had;
  }

  update(key: string, fn: (current: T | undefined) => T | undefined, ttlMs?: number): boolean {
    const next = fn(this.lookup(key));
    if (next === undefined) return false;
    this.register(key, next, ttlMs);
    return true;
  }

  deleteIf(key: string, predicate: (current: T) => boolean): boolean {
    const current = this.lookup(key);
    if (current === undefined || !predicate(current)) return false;
    return this.delete(key);
  }

  entries(): { key: string; value: T; createdAt: number; expiresAt?: number }[] {
    this.sweep();
    return [...this.rows.entries()].map(([key, row]) => ({
      key,
      value: cloneJson(row.value),
      createdAt: row.createdAt,
      ...(row.expiresAt === undefined ? {} : { expiresAt: row.expiresAt }),
    }));
  }
}

const ttlOf = (opts: unknown) => (isRecord(opts) && typeof opts.ttlMs === "number" ? opts.ttlMs : undefined);

interface BlobValue {
  readonly bytes: string;
  readonly metadata: unknown;
  readonly sizeBytes: number;
}

/** A row as the store keeps it, and back: keyed values as JSON, blobs as bytes with their metadata as JSON. */
const CODEC = {
  keyed: {
    encode: (row: Row<unknown>) => ({ value: JSON.stringify(row.value), bytes: null }),
    decode: (r: PluginStateRow): unknown => JSON.parse(r.value),
  },
  blob: {
    encode: (row: Row<BlobValue>) => ({
      value: JSON.stringify(row.value.metadata),
      bytes: new Uint8Array(Buffer.from(row.value.bytes, "base64")),
    }),
    decode: (r: PluginStateRow): BlobValue => {
      const bytes = Buffer.from(r.bytes ?? new Uint8Array());
      return { bytes: bytes.toString("base64"), metadata: JSON.parse(r.value), sizeBytes: bytes.byteLength };
    },
  },
} as const;

interface Persisted {
  readonly tables: PluginStateTables;
  readonly pluginId: string;
  readonly report: (message: string) => void;
  /** Rows loaded and not yet claimed by an opened namespace, by kind and namespace. */
  readonly loaded: Map<string, PluginStateRow[]>;
}

/** Every namespace one plugin opened, by kind; the stores it is handed read and write these. */
export class PluginState {
  private readonly keyed = new Map<string, Namespace<unknown>>();
  private readonly blobs = new Map<string, Namespace<BlobValue>>();
  private persisted: Persisted | undefined;
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * Keeps the state in `tables` from now on: loads the plugin's rows (namespaces are filled when the
   * plugin opens them) and writes every change through. Once per plugin: a reload keeps the working copy.
   */
  async persist(tables: PluginStateTables, pluginId: string, report: (message: string) => void): Promise<void> {
    if (this.persisted?.tables === tables && this.persisted.pluginId === pluginId) return;
    const loaded = new Map<string, PluginStateRow[]>();
    for (const row of await tables.load(pluginId)) {
      const id = `${row.kind}\0${row.namespace}`;
      loaded.set(id, [...(loaded.get(id) ?? []), row]);
    }
    this.persisted = { tables, pluginId, report, loaded };
  }

  /** Resolves when every change so far has reached the store (or failed, and was reported). */
  flush(): Promise<void> {
    return this.queue;
  }

  private write(what: string, op: (p: Persisted) => Promise<unknown>): void {
    const p = this.persisted;
    if (!p) return;
    this.queue = this.queue
      .then(() => op(p).then(() => undefined))
      .catch((error: unknown) => {
        p.report(`runtime.state: ${what} was not saved: ${error instanceof Error ? error.message : String(error)}`);
      });
  }

  private journal<T>(kind: PluginStateKind, namespace: string): Journal<T> {
    const encode = CODEC[kind].encode as (row: Row<T>) => { value: string; bytes: Uint8Array | null };
    const where = `${kind} namespace "${namespace}"`;
    return {
      put: (key, row) => {
        const stored = {
          kind,
          namespace,
          key,
          ...encode(row),
          createdAt: row.createdAt,
          expiresAt: row.expiresAt ?? null,
        };
        this.write(`a write to ${where}`, (p) => p.tables.put(p.pluginId, stored));
      },
      delete: (key) => this.write(`a delete in ${where}`, (p) => p.tables.delete(p.pluginId, kind, namespace, key)),
      clear: () => this.write(`clearing ${where}`, (p) => p.tables.clear(p.pluginId, { kind, namespace })),
    };
  }

  private namespace<T>(
    map: Map<string, Namespace<T>>,
    kind: PluginStateKind,
    ns: string,
    bounds: Bounds,
  ): Namespace<T> {
    const found = map.get(ns);
    if (found) {
      found.reopen(bounds);
      return found;
    }
    const id = `${kind}\0${ns}`;
    const decode = CODEC[kind].decode as (r: PluginStateRow) => T;
    const rows = this.persisted?.loaded.get(id) ?? [];
    this.persisted?.loaded.delete(id);
    const made = new Namespace<T>(
      bounds,
      this.now,
      this.journal<T>(kind, ns),
      rows.map((r) => [
        r.key,
        { value: decode(r), createdAt: r.createdAt, ...(r.expiresAt === null ? {} : { expiresAt: r.expiresAt }) },
      ]),
    );
    map.set(ns, made);
    return made;
  }

  /** `api.runtime.state.openKeyedStore`: OpenClaw's PluginStateKeyedStore, every operation a promise. */
  openKeyedStore(options: unknown): Obj {
    const ns = this.namespace(this.keyed, "keyed", namespaceOf(options), boundsOf(options, true));
    const run =
      <A extends unknown[], R>(fn: (...args: A) => R) =>
      async (...args: A): Promise<R> =>
        fn(...args);
    return {
      register: run((key: string, value: unknown, opts?: unknown) => ns.register(key, value, ttlOf(opts))),
      registerIfAbsent: run((key: string, value: unknown, opts?: unknown) =>
        ns.registerIfAbsent(key, value, ttlOf(opts)),
      ),
      update: run((key: string, fn: (c: unknown) => unknown, opts?: unknown) => ns.update(key, fn, ttlOf(opts))),
      deleteIf: run((key: string, predicate: (c: unknown) => boolean) => ns.deleteIf(key, predicate)),
      deleteIfEqual: run((key: string, expected: unknown) => ns.deleteIf(key, (c) => c === expected)),
      lookup: run((key: string) => ns.lookup(key)),
      lookupMany: run((keys: readonly string[]) => keys.map((k) => ({ ok: true, value: ns.lookup(k) }))),
      consume: run((key: string) => ns.consume(key)),
      delete: run((key: string) => ns.delete(key)),
      entries: run(() => ns.entries()),
      count: run(() => ns.entries().length),
      clear: run(() => ns.clear()),
    };
  }

  /** `api.runtime.state.openSyncKeyedStore`: the same namespace, synchronously. */
  openSyncKeyedStore(options: unknown): Obj {
    const ns = this.namespace(this.keyed, "keyed", namespaceOf(options), boundsOf(options, false));
    return {
      register: (key: string, value: unknown, opts?: unknown) => ns.register(key, value, ttlOf(opts)),
      registerIfAbsent: (key: string, value: unknown, opts?: unknown) => ns.registerIfAbsent(key, value, ttlOf(opts)),
      update: (key: string, fn: (c: unknown) => unknown, opts?: unknown) => ns.update(key, fn, ttlOf(opts)),
      deleteIf: (key: string, predicate: (c: unknown) => boolean) => ns.deleteIf(key, predicate),
      lookup: (key: string) => ns.lookup(key),
      lookupMany: (keys: readonly string[]) => keys.map((k) => ({ ok: true, value: ns.lookup(k) })),
      consume: (key: string) => ns.consume(key),
      delete: (key: string) => ns.delete(key),
      entries: () => ns.entries(),
      count: () => ns.entries().length,
      clear: () => ns.clear(),
    };
  }

  /** `api.runtime.state.openBlobStore`: bytes with metadata, under per-entry and per-namespace byte limits. */
  openBlobStore(options: unknown): Obj {
    const o = isRecord(options) ? options : {};
    const limit = (name: string) => {
      const v = o[name];
      if (typeof v !== "number" || !Number.isInteger(v) || v < 1)
        throw new PluginStateError(`${name} must be a positive integer`, "PLUGIN_STATE_INVALID_INPUT");
      return v;
    };
    const perEntry = limit("maxBytesPerEntry");
    const perNamespace = limit("maxBytesPerNamespace");
    const ns = this.namespace(this.blobs, "blob", namespaceOf(options), boundsOf(options, false));
    const info = (e: { key: string; value: BlobValue; createdAt: number; expiresAt?: number }) => ({
      key: e.key,
      metadata: e.value.metadata,
      sizeBytes: e.value.sizeBytes,
      createdAt: e.createdAt,
      ...(e.expiresAt === undefined ? {} : { expiresAt: e.expiresAt }),
    });
    const put = (key: string, bytes: unknown, metadata: unknown, opts: unknown, ifAbsent: boolean): boolean => {
      if (!(bytes instanceof Uint8Array))
        throw new PluginStateError("blob bytes must be a Uint8Array", "PLUGIN_STATE_INVALID_INPUT");
      if (bytes.byteLength > perEntry)
        throw new PluginStateError(
          `a blob is larger than maxBytesPerEntry (${perEntry})`,
          "PLUGIN_STATE_LIMIT_EXCEEDED",
        );
      const used = ns.entries().reduce((sum, e) => sum + (e.key === key ? 0 : e.value.sizeBytes), 0);
      if (used + bytes.byteLength > perNamespace)
        throw new PluginStateError(
          `the namespace would exceed maxBytesPerNamespace (${perNamespace})`,
          "PLUGIN_STATE_LIMIT_EXCEEDED",
        );
      const value: BlobValue = {
        bytes: Buffer.from(bytes).toString("base64"),
        metadata: metadata ?? null,
        sizeBytes: bytes.byteLength,
      };
      if (ifAbsent) return ns.registerIfAbsent(key, value, ttlOf(opts));
      ns.register(key, value, ttlOf(opts));
      return true;
    };
    const expired = () => ns.takeExpired().map(([key, r]) => info({ key, ...r }));
    return {
      register: async (key: string, bytes: Uint8Array, metadata: unknown, opts?: unknown) => {
        put(key, bytes, metadata, opts, false);
      },
      registerIfAbsent: async (key: string, bytes: Uint8Array, metadata: unknown, opts?: unknown) =>
        put(key, bytes, metadata, opts, true),
      lookup: async (key: string) => {
        const value = ns.lookup(key);
        const row = ns.rows.get(key);
        if (value === undefined || row === undefined) return undefined;
        return { ...info({ key, ...row }), bytes: new Uint8Array(Buffer.from(value.bytes, "base64")) };
      },
      entries: async () => ns.entries().map(info),
      delete: async (key: string) => ns.delete(key),
      deleteExpiredKey: async (key: string) => expired().find((e) => e.key === key),
      deleteExpired: async () => expired(),
      clear: async () => ns.clear(),
    };
  }
}
