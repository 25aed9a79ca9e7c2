import assert from "node:assert/strict";
import { test } from "node:test";
import { R4_PARTS, runR4 } from "../../harness/r4.js";
import { SEED } from "./ci.js";

/**
 * One part of R4's corpus (all of it runs at CI size, in three files so that each stays well
 * inside npm test's per-file timeout): one subtest per family; a failure names its cases.
 */
export function r4Part(part: number): void {
  const families = R4_PARTS[part] ?? [];
  test(`R4 part ${part + 1}: every malformed input exits 2 naming its file and field, no stack trace, store unchanged`, async (t) => {
    const f = await runR4({ seed: SEED, concurrency: 3, filter: (c) => families.includes(c.family) });
    t.diagnostic(`R4 bad input: ${f.cases} cases, ${f.passed} passed, ${f.todo} todo (${(f.ms / 1000).toFixed(1)} s)`);
    for (const r of f.results.filter((x) => !x.ok && x.case.todo))
      t.diagnostic(`todo: [${r.case.family}] ${r.case.name}: ${r.case.todo}`);
    for (const family of families) {
      await t.test(family, () => {
        const mine = f.results.filter((r) => r.case.family === family);
        assert.ok(mine.length > 0, `no case in family ${family}`);
        const failed = mine.filter((r) => !r.ok && !r.case.todo);
        assert.deepEqual(
          failed.map((r) => `${r.case.name}: ${r.problems.join("; ")} — stderr: ${r.stderr.slice(0, 300)}`),
          [],
        );
      });
    }
  });
}
