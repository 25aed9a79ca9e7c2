import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { join } from "node:path";
import { describe, test } from "node:test";
import { openStore, resolveStoreOptions, StoreError } from "../../src/store/index.js";
import { tempDir } from "./helpers.js";
import { dropSchema, PG_SKIP, PG_URL, testSchema } from "./pg.js";

describe("choosing a store", () => {
  test("with nothing configured, the store is a SQLite file in the project's .gatehouse folder", () => {
    assert.deepEqual(resolveStoreOptions({ projectDir: "/p", env: {} }), {
      kind: "sqlite",
      path: "/p/.gatehouse/gatehouse.db",
    });
    assert.deepEqual(resolveStoreOptions({ projectDir: "/p", dataDir: "/data", env: {} }), {
      kind: "sqlite",
      path: "/data/gatehouse.db",
    });
  });

  test("a postgres:// URL in config or in GATEHOUSE_DATABASE_URL selects PostgreSQL, config first; transcripts stay in the data folder", () => {
    const url = "postgres://u@db:5432/app";
    const transcriptDir = "/p/.gatehouse/transcripts";
    assert.deepEqual(resolveStoreOptions({ projectDir: "/p", database: url, env: {} }), {
      kind: "postgres",
      url,
      transcriptDir,
    });
    assert.deepEqual(resolveStoreOptions({ projectDir: "/p", env: { GATEHOUSE_DATABASE_URL: "postgresql://x/y" } }), {
      kind: "postgres",
      url: "postgresql://x/y",
      transcriptDir,
    });
    assert.deepEqual(
      resolveStoreOptions({ projectDir: "/p", database: "memory", env: { GATEHOUSE_DATABASE_URL: url } }),
      { kind: "memory", transcriptDir },
    );
  });

  test("a relative SQLite path is taken from the project folder; other URL schemes are refused", () => {
    assert.deepEqual(resolveStoreOptions({ projectDir: "/p", database: "data/s.db", env: {} }), {
      kind: "sqlite",
      path: "/p/data/s.db",
    });
    assert.throws(
      () => resolveStoreOptions({ database: "mysql://h/db", env: {} }),
      (e: unknown) => e instanceof StoreError && e.code === "invalid",
    );
  });

  test("the default store is created on first use under the project folder", async () => {
    const dir = tempDir();
    try {
      const store = await openStore(resolveStoreOptions({ projectDir: dir.path, env: {} }));
      assert.equal(store.kind, "sqlite");
      await store.createSession();
      await store.close();
      assert.ok(existsSync(join(dir.path, ".gatehouse", "gatehouse.db")));
    } finally {
      dir.remove();
    }
  });

  test("opening a SQLite store does not load the pg module", () => {
    const dir = tempDir();
    try {
      const fixture = new URL("./fixtures/lazy-pg.ts", import.meta.url).pathname;
      const result = spawnSync(process.execPath, ["--import", "tsx", fixture, join(dir.path, "g.db")], {
        encoding: "utf8",
      });
      assert.equal(result.status, 0, result.stderr);
      assert.deepEqual(JSON.parse(result.stdout), { pgLoaded: false });
    } finally {
      dir.remove();
    }
  });

  test("a PostgreSQL store that is down is named in the error, its URL without the password", async () => {
    // A loopback port nothing listens on: bound, then released.
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const url = `postgres://bob:s3cret-pw@127.0.0.1:${port}/app`;
    const error = await openStore(resolveStoreOptions({ database: url, env: {} })).then(
      () => assert.fail("the store opened"),
      (e: unknown) => e as Error & { code?: string },
    );
    assert.equal(
      error.message,
      `cannot reach the PostgreSQL store at postgres://bob@127.0.0.1:${port}/app (password hidden): connect ECONNREFUSED 127.0.0.1:${port}`,
    );
    assert.equal(error.code, "ECONNREFUSED");
    assert.doesNotMatch(String(error.stack), /s3cret-pw/);
  });

  test("a postgres store opens from its URL and reports its kind", { skip: PG_URL ? undefined : PG_SKIP }, async () => {
    const schema = testSchema();
    try {
      const store = await openStore({ ...resolveStoreOptions({ database: PG_URL, env: {} }), schema } as never);
      assert.equal(store.kind, "postgres");
      await store.close();
    } finally {
      await dropSchema(PG_URL as string, schema);
    }
  });
});
