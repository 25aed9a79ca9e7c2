import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { runR6 } from "../../harness/r6.js";

describe("R6 — containment of command hooks, the Bash tool, MCP servers and hook models", () => {
  test("timeouts, cancels and shutdowns leave no process behind, memory stays bounded, secrets stay out unless passed through", async (t) => {
    const f = await runR6({ floodBytes: 256 * 1024 * 1024 });
    for (const c of f.cases)
      t.diagnostic(`${c.ok ? "ok" : "FAILED"}: ${c.name}: ${c.detail}${c.note ? ` (note: ${c.note})` : ""}`);
    t.diagnostic(
      `processes started ${f.processesStarted}, left ${f.processesLeft}; secret variables leaked ${f.variablesLeaked}`,
    );
    assert.equal(f.processesLeft, 0);
    assert.equal(f.variablesLeaked, 0);
    for (const part of ["Bash tool", "MCP server"])
      assert.ok(f.cases.filter((c) => c.name.startsWith(part)).length >= 3, `${part} cases ran`);
    assert.ok(
      f.cases.some((c) => c.name.startsWith("prompt and agent hooks")),
      "the hook-model case ran",
    );
    assert.deepEqual(
      f.cases.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`),
      [],
    );
  });
});
