/**
 * OpenClaw's `api.runtime.state` stores: keyed (async), sync keyed (deprecated in OpenClaw, still
 * used by its bundled extensions) and blob stores, one set per plugin and namespace. Values are
 * the plugin's own state (ids, cursors, cached lookups), JSON-cloned on the way in and out so a
 * plugin never shares a live object with the store, with OpenClaw's bounds: `maxEntries` with an
 * overflow policy, per-entry TTLs, and a blob store's byte limits.
 *
 * They live for the life of the process (a `gatehouse run`, or a server). Session-store
 * persistence is not wired yet: a plugin that needs state across processes keeps its files under
 * `runtime.state.resolveStateDir()`.
 */

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

/** One namespace's rows, with OpenClaw's bounds; everything synchronous (the async store awaits nothing). */
class Namespace<T> {
  readonly rows = new Map<string, Row<T>>();

  constructor(
    private bounds: Bounds,
    private readonly now: () => number,
  ) {}

  reopen(bounds: Bounds): void {
    this.bounds = bounds;
  }

  private live(key: string): Row<T> | undefined {
    const row = this.rows.get(key);
    if (row?.expiresAt !== undefined && row.expiresAt <= this.now()) {
      this.rows.delete(key);
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
      if (oldest) this.rows.delete(oldest[0]);
    }
    const ttl = ttlMs ?? this.bounds.defaultTtlMs;
    const createdAt = this.now();
    this.rows.delete(key);
    this.rows.set(key, { value: stored, createdAt, ...(ttl ? { expiresAt: createdAt + ttl } : {}) });
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
    this.rows.delete(key);
    return value;
  }

  delete(key: string): boolean {
    const had = this.live(checkKey(key)) !== undefined;
    this.rows.delete(key);
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

/** Every namespace one plugin opened, by kind; the stores it is handed read and write these. */
export class PluginState {
  private readonly keyed = new Map<string, Namespace<unknown>>();
  private readonly blobs = new Map<string, Namespace<BlobValue>>();

  constructor(private readonly now: () => number = Date.now) {}

  private namespace<T>(map: Map<string, Namespace<T>>, ns: string, bounds: Bounds): Namespace<T> {
    const found = map.get(ns);
    if (found) {
      found.reopen(bounds);
      return found;
    }
    const made = new Namespace<T>(bounds, this.now);
    map.set(ns, made);
    return made;
  }

  /** `api.runtime.state.openKeyedStore`: OpenClaw's PluginStateKeyedStore, every operation a promise. */
  openKeyedStore(options: unknown): Obj {
    const ns = this.namespace(this.keyed, namespaceOf(options), boundsOf(options, true));
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
      clear: run(() => ns.rows.clear()),
    };
  }

  /** `api.runtime.state.openSyncKeyedStore`: the same namespace, synchronously. */
  openSyncKeyedStore(options: unknown): Obj {
    const ns = this.namespace(this.keyed, namespaceOf(options), boundsOf(options, false));
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
      clear: () => ns.rows.clear(),
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
    const ns = this.namespace(this.blobs, namespaceOf(options), boundsOf(options, false));
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
    const expired = () => {
      const now = this.now();
      const gone = [...ns.rows.entries()].filter(([, r]) => r.expiresAt !== undefined && r.expiresAt <= now);
      for (const [key] of gone) ns.rows.delete(key);
      return gone.map(([key, r]) => info({ key, ...r }));
    };
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
      clear: async () => ns.rows.clear(),
    };
  }
}
