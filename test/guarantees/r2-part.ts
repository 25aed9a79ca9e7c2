import assert from "node:assert/strict";
import { test } from "node:test";
import { type Cell, matrixTable, type R2Options, runR2 } from "../../harness/r2.js";
import { SEED } from "./ci.js";

/**
 * One part of R2's matrix as one test (the parts are in separate files so that each stays well
 * inside npm test's per-file timeout): no failed cell.
 */
export function r2Part(name: string, options: Omit<R2Options, "seed">, check: (cells: readonly Cell[]) => void): void {
  test(`${name}: fail-closed cells block (attributed, nothing of the fault shown), fail-open ones change nothing`, async (t) => {
    const f = await runR2({ seed: SEED, ...options });
    t.diagnostic(`\n${matrixTable(f.cells)}`);
    t.diagnostic(`R2 ${name}: ${f.cells.length} cells, ${f.failed} failed, ${(f.ms / 1000).toFixed(1)} s`);
    const failures = f.cells
      .filter((c) => !c.ok)
      .map((c) => `${c.layer} ${c.hook} / ${c.fault}: ${c.problems.join("; ")}`);
    assert.deepEqual(failures, []);
    check(f.cells);
  });
}
