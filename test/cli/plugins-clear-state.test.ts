import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, test } from "node:test";
import { openStore } from "../../src/store/index.js";
import { gatehouse, tempProjects } from "./helpers.js";

const row = (key: string) => ({
  kind: "keyed" as const,
  namespace: "seen",
  key,
  value: JSON.stringify(key),
  bytes: null,
  createdAt: 1,
  expiresAt: null,
});

describe("gatehouse plugins clear-state", () => {
  const projects = tempProjects();

  test("deletes one plugin's runtime.state from the project's store and leaves other plugins' state", async () => {
    const dir = await projects();
    const path = join(dir, ".gatehouse", "gatehouse.db");
    const store = await openStore({ kind: "sqlite", path });
    await store.pluginState.put("keeper", row("a"));
    await store.pluginState.put("keeper", { ...row("b"), kind: "blob", bytes: new Uint8Array([1]) });
    await store.pluginState.put("other", row("c"));
    await store.close();

    const cleared = await gatehouse(["plugins", "clear-state", "keeper"], { cwd: dir });
    assert.equal(cleared.code, 0, cleared.stderr);
    assert.equal(cleared.stdout, "removed 2 runtime.state entries of plugin keeper\n");

    const after = await openStore({ kind: "sqlite", path });
    assert.deepEqual(await after.pluginState.load("keeper"), []);
    assert.deepEqual(
      (await after.pluginState.load("other")).map((r) => r.key),
      ["c"],
    );
    await after.close();
  });
});
