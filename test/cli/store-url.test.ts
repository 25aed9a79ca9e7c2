// The store as a string, read one way everywhere: a PostgreSQL URL that is not one exits 2 naming
// where it came from (never a SQLite file of that name); pg's sslmode notice is one line.
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { describe, test } from "node:test";
import { parseStoreSpelling } from "../../src/store/index.js";
import { gatehouse, tempProjects } from "./helpers.js";

const PG = process.env.GATEHOUSE_TEST_DATABASE_URL;

describe("store URLs", { concurrency: 3 }, () => {
  const fresh = tempProjects();

  test("parseStoreSpelling: postgres and postgresql URLs, memory, SQLite paths; a broken PostgreSQL URL or another scheme throws", () => {
    assert.deepEqual(parseStoreSpelling("postgresql://u@h:5432/db"), {
      kind: "postgres",
      url: "postgresql://u@h:5432/db",
    });
    assert.deepEqual(parseStoreSpelling("memory"), { kind: "memory" });
    assert.deepEqual(parseStoreSpelling(":memory:"), { kind: "memory" });
    assert.deepEqual(parseStoreSpelling("sqlite:data/x.db"), { kind: "sqlite", path: "data/x.db" });
    for (const bad of ["postgres:/broken", "postgresql:host/db", "POSTGRES:x", "mysql://h/db"])
      assert.throws(() => parseStoreSpelling(bad), /PostgreSQL URL|expected a postgres:\/\//, bad);
  });

  test("GATEHOUSE_DATABASE_URL=postgres:/broken exits 2 naming the variable, and creates no file", async () => {
    for (const url of ["postgres:/broken", "postgresql:broken"]) {
      const cwd = await fresh();
      const r = await gatehouse(["run", "--model", "scripted:echo", "-p", "hi"], {
        cwd,
        env: { GATEHOUSE_DATABASE_URL: url },
      });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /^gatehouse: GATEHOUSE_DATABASE_URL: expected a PostgreSQL URL/m);
      assert.deepEqual(readdirSync(cwd), [], "nothing written");
      const list = await gatehouse(["sessions", "list"], { cwd, env: { GATEHOUSE_DATABASE_URL: url } });
      assert.equal(list.code, 2, list.stderr);
    }
  });

  test('gatehouse.json "store": "postgres:/broken" exits 2 naming the file and field', async () => {
    const cwd = await fresh({ "gatehouse.json": { model: "scripted:echo", store: "postgres:/broken" } });
    const r = await gatehouse(["run", "-p", "hi"], { cwd });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /gatehouse\.json.*store.*expected a PostgreSQL URL/);
  });

  test("sslmode=require: pg's notice is one line", {
    skip: !PG && "GATEHOUSE_TEST_DATABASE_URL is not set",
  }, async () => {
    const url = new URL(PG as string);
    url.searchParams.set("sslmode", "require");
    const r = await gatehouse(["run", "--model", "scripted:echo", "-p", "hi"], {
      cwd: await fresh(),
      env: { GATEHOUSE_DATABASE_URL: url.toString() },
    });
    // The test server may or may not speak TLS: either way the notice is the same single line.
    // (A failure to connect names the store's URL, sslmode included: that line is not the notice.)
    const notice = r.stderr
      .split("\n")
      .filter((l) => /sslmode|SSL modes|libpq/.test(l) && !l.includes("the PostgreSQL store at"));
    assert.equal(notice.length, 1, r.stderr);
    assert.match(notice[0] ?? "", /^gatehouse: warning: pg reads sslmode=require/);
    assert.ok(!r.stderr.includes("SECURITY WARNING"), r.stderr);
  });
});
