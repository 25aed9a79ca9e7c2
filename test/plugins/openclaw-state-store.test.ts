import assert from "node:assert/strict";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { createGatehouse } from "../../src/assembly/gatehouse.js";
import { createScriptedModel } from "../../src/models/index.js";
import type { PluginDefinition } from "../../src/plugins/index.js";
import { PluginState } from "../../src/plugins/openclaw/state.js";
import { openStore, type StoreOptions } from "../../src/store/index.js";
import { captureLogger } from "../hooks/helpers.js";
import { tempDir } from "../store/helpers.js";

import { dropSchema, PG_SKIP, PG_URL, testSchema } from "../store/pg.js";

/**
 * OpenClaw plugins' `api.runtime.state` kept in the session store: what one Gatehouse writes, the next
 * one (same project, same database) reads back, with the same TTL and limit semantics as in memory.
 */

type Obj = Record<string, unknown>;
const dbFile = () => join(tempDir("gatehouse-plugin-state-").path, "gatehouse.db");
type Fn = (...args: unknown[]) => unknown;
type Stores = { sync: Record<string, Fn>; keyed: Record<string, Fn>; blobs: Record<string, Fn> };

/** An OpenClaw plugin that opens its three stores in register and records each prompt it sees. */
function statefulPlugin(opened: { stores?: Stores; atRegister?: unknown }): PluginDefinition {
  return {
    id: "keeper",
    register(api: Obj) {
      const state = (api.runtime as { state: Record<string, Fn> }).state;
      const stores: Stores = {
        sync: state.openSyncKeyedStore?.({ namespace: "seen", maxEntries: 2 }) as Record<string, Fn>,
        keyed: state.openKeyedStore?.({ namespace: "cursors", maxEntries: 10 }) as Record<string, Fn>,
        blobs: state.openBlobStore?.({
          namespace: "files",
          maxEntries: 5,
          maxBytesPerEntry: 16,
          maxBytesPerNamespace: 32,
        }) as Record<string, Fn>,
      };
      opened.stores = stores;
      // Read synchronously while registering: the stored rows are there before setup runs.
      opened.atRegister = stores.sync.lookup?.("last");
      (api.on as Fn)("message_received", async (e: Obj) => {
        stores.sync.register?.("last", { prompt: e.content });
        await stores.keyed.register?.("cursor", 7);
        await stores.blobs.register?.("b", new Uint8Array([0, 1, 2, 255]), { type: "bin" });
      });
    },
  } as unknown as PluginDefinition;
}

function gatehouseOn(store: StoreOptions, opened: { stores?: Stores; atRegister?: unknown }) {
  const { logger, lines } = captureLogger();
  const gatehouse = createGatehouse({
    model: createScriptedModel({ runs: [{ turns: [{ text: "ok" }] }] }),
    tools: [],
    logger,
    store,
    plugins: [statefulPlugin(opened)],
  });
  return { gatehouse, lines };
}

async function writesThenReadsBack(store: StoreOptions): Promise<void> {
  const first: { stores?: Stores; atRegister?: unknown } = {};
  const one = gatehouseOn(store, first);
  await one.gatehouse.run({ prompt: "remember me" });
  await one.gatehouse.close();
  assert.equal(first.atRegister, undefined);

  const second: { stores?: Stores; atRegister?: unknown } = {};
  const two = gatehouseOn(store, second);
  await two.gatehouse.ready();
  assert.deepEqual(second.atRegister, { prompt: "remember me" }, "the sync store read it while registering");
  const stores = second.stores as Stores;
  assert.equal(await stores.keyed.lookup?.("cursor"), 7);
  const blob = (await stores.blobs.lookup?.("b")) as { bytes: Uint8Array; metadata: unknown; sizeBytes: number };
  assert.deepEqual([...blob.bytes], [0, 1, 2, 255]);
  assert.deepEqual(blob.metadata, { type: "bin" });
  assert.equal(blob.sizeBytes, 4);
  // maxEntries (2) counts the stored rows: two more writes evict "last", in the database too.
  stores.sync.register?.("x", 1);
  stores.sync.register?.("y", 2);
  assert.deepEqual(
    (stores.sync.entries as () => { key: string }[])().map((e) => e.key),
    ["x", "y"],
  );
  await two.gatehouse.close();

  const third: { stores?: Stores; atRegister?: unknown } = {};
  const three = gatehouseOn(store, third);
  await three.gatehouse.ready();
  assert.equal(third.atRegister, undefined, "the evicted row is gone from the store");
  assert.deepEqual(
    ((third.stores as Stores).sync.entries as () => { key: string }[])().map((e) => e.key),
    ["x", "y"],
  );
  await three.gatehouse.close();
  assert.deepEqual(
    [...one.lines, ...two.lines, ...three.lines].filter((l) => l.includes("runtime.state")),
    [],
  );
}

describe("OpenClaw runtime.state in the session store (sqlite)", () => {
  test("what a plugin stores in one Gatehouse, a second Gatehouse on the same project reads back (sync, keyed, blob), maxEntries included", async () => {
    await writesThenReadsBack({ kind: "sqlite", path: dbFile() });
  });

  test("a row whose TTL passed while no process ran is gone when the plugin opens its namespace, and deleted from the file", async () => {
    const path = dbFile();
    let clock = 1_000;
    const store = await openStore({ kind: "sqlite", path });
    const writer = new PluginState(() => clock);
    await writer.persist(store.pluginState, "p", (m) => assert.fail(m));
    const keyed = writer.openKeyedStore({ namespace: "n", maxEntries: 5 }) as Record<string, Fn>;
    await keyed.register?.("short", 1, { ttlMs: 50 });
    await keyed.register?.("long", 2, { ttlMs: 5_000 });
    await writer.flush();
    await store.close();

    clock += 100;
    const reopened = await openStore({ kind: "sqlite", path });
    const reader = new PluginState(() => clock);
    await reader.persist(reopened.pluginState, "p", (m) => assert.fail(m));
    const again = reader.openKeyedStore({ namespace: "n", maxEntries: 5 }) as Record<string, Fn>;
    assert.equal(await again.lookup?.("short"), undefined);
    assert.equal(await again.lookup?.("long"), 2);
    await reader.flush();
    assert.deepEqual(
      (await reopened.pluginState.load("p")).map((r) => [r.key, r.createdAt, r.expiresAt]),
      [["long", 1_000, 6_000]],
    );
    await reopened.close();
  });

  test("reject-new counts the stored rows; another plugin id and another namespace do not see them; clear removes them", async () => {
    const store = await openStore({ kind: "sqlite", path: dbFile() });
    const a = new PluginState();
    await a.persist(store.pluginState, "a", (m) => assert.fail(m));
    const full = a.openSyncKeyedStore({ namespace: "n", maxEntries: 1, overflowPolicy: "reject-new" }) as Record<
      string,
      Fn
    >;
    full.register?.("k", "v");
    await a.flush();

    const again = new PluginState();
    await again.persist(store.pluginState, "a", (m) => assert.fail(m));
    const reopened = again.openSyncKeyedStore({
      namespace: "n",
      maxEntries: 1,
      overflowPolicy: "reject-new",
    }) as Record<string, Fn>;
    assert.throws(() => reopened.register?.("other", 1), /maxEntries/);
    const otherNamespace = again.openSyncKeyedStore({ namespace: "m", maxEntries: 1 }) as Record<string, Fn>;
    assert.equal(otherNamespace.lookup?.("k"), undefined);
    const b = new PluginState();
    await b.persist(store.pluginState, "b", (m) => assert.fail(m));
    assert.equal(
      (b.openSyncKeyedStore({ namespace: "n", maxEntries: 1 }) as Record<string, Fn>).lookup?.("k"),
      undefined,
    );

    reopened.clear?.();
    await again.flush();
    assert.deepEqual(await store.pluginState.load("a"), []);
    await store.close();
  });

  test("a write the store refuses is reported as an error naming the namespace, and flush still resolves", async () => {
    const store = await openStore({ kind: "sqlite", path: dbFile() });
    const reports: string[] = [];
    const state = new PluginState();
    await state.persist(store.pluginState, "p", (m) => reports.push(m));
    await store.close();
    const sync = state.openSyncKeyedStore({ namespace: "n", maxEntries: 5 }) as Record<string, Fn>;
    sync.register?.("k", 1);
    await state.flush();
    assert.equal(reports.length, 1);
    assert.match(reports[0] as string, /^runtime\.state: a write to keyed namespace "n" was not saved: /);
  });

  test("a Gatehouse logs a failed state write as the plugin's error", async () => {
    const path = dbFile();
    const opened: { stores?: Stores } = {};
    const { gatehouse, lines } = gatehouseOn({ kind: "sqlite", path }, opened);
    await gatehouse.ready();
    await gatehouse.store.close();
    (opened.stores as Stores).sync.register?.("k", 1);
    await gatehouse.plugins.flushState();
    assert.ok(
      lines.some((l) => /keeper/.test(l) && /runtime\.state: a write to keyed namespace "seen" was not saved/.test(l)),
      lines.join("\n"),
    );
  });
});

describe("OpenClaw runtime.state in the session store (postgres)", { skip: PG_URL ? undefined : PG_SKIP }, () => {
  const schema = testSchema();
  after(() => dropSchema(PG_URL as string, schema));

  test("what a plugin stores in one Gatehouse, a second Gatehouse on the same database reads back (sync, keyed, blob), maxEntries included", async () => {
    await writesThenReadsBack({ kind: "postgres", url: PG_URL as string, schema });
  });
});
