import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { runR6 } from "../../harness/r6.js";

describe("R6 — command hook containment", () => {
  test("timeouts leave no process behind, memory stays bounded, credentials stay out unless passed through", async (t) => {
    const f = await runR6({ floodBytes: 256 * 1024 * 1024 });
    for (const c of f.cases)
      t.diagnostic(`${c.ok ? "ok" : "FAILED"}: ${c.name}: ${c.detail}${c.note ? ` (note: ${c.note})` : ""}`);
    assert.deepEqual(
      f.cases.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`),
      [],
    );
  });
});
