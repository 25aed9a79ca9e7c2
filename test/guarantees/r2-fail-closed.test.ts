import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { matrixTable, runR2 } from "../../harness/r2.js";
import { HOOK_NAMES } from "../../src/hooks/index.js";
import { SEED } from "./ci.js";

describe("R2 — fail-closed matrix", () => {
  test("every hook under every fault: fail-closed ones block (attributed, nothing of the fault shown), fail-open ones change nothing", async (t) => {
    const f = await runR2({ seed: SEED });
    t.diagnostic(`\n${matrixTable(f.cells)}`);
    t.diagnostic(`R2: ${f.cells.length} cells, ${f.failed} failed, ${(f.ms / 1000).toFixed(1)} s`);
    const failures = f.cells
      .filter((c) => !c.ok)
      .map((c) => `${c.layer} ${c.hook} / ${c.fault}: ${c.problems.join("; ")}`);
    assert.deepEqual(failures, []);
    assert.equal(new Set(f.cells.filter((c) => c.layer === "plugin").map((c) => c.hook)).size, HOOK_NAMES.length);
  });
});
