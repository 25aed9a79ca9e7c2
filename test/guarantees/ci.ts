import assert from "node:assert/strict";
import { test } from "node:test";
import { runR1 } from "../../harness/r1.js";
import { BLOCK_KINDS, PATHS, SANDBOX_KINDS } from "../../harness/scenario.js";

/**
 * The guarantee suite's CI size: a fixed seed, bounded counts (`npm run soak` runs any size).
 * `npm test` runs these files after the others, with a budget of their own: 300 s per file (its
 * --test-timeout applies per file; the other files get 120 s). The sizes, and the files each is
 * split over, keep every file near a quarter of that on an idle 2-core machine (R3: about 40 s a
 * part), so that a machine busy with other work cannot time one out.
 */
export const SEED = 1130;
export const R1_SCENARIOS = 300;
export const R3_KILLS = 50;
/** R3's CI size is split over this many files (r3-crash.test.ts, r3-crash-2.test.ts). */
export const R3_PARTS = 2;
export const POSTGRES_URL = process.env.GATEHOUSE_TEST_DATABASE_URL || undefined;

/** R1 scenarios [from, from + count) of the CI seed, as one test: no leak, every verdict applied, every control found. */
export function r1Part(from: number, count: number): void {
  test(`scenarios ${from}–${from + count - 1} (seed ${SEED}): no leak, every verdict applied, every control found`, async (t) => {
    const f = await runR1({
      seed: SEED,
      from,
      scenarios: count,
      ...(POSTGRES_URL ? { postgresUrl: POSTGRES_URL } : {}),
    });
    t.diagnostic(
      `R1: ${f.scenarios} scenarios, ${f.targets} canaries blocked or rewritten, ${f.controls} controls, ${f.leaks} leaks, ${f.failures} other failures, ${(f.ms / 1000).toFixed(1)} s`,
    );
    t.diagnostic(`R1 stores: ${JSON.stringify(f.byStore)}; verdicts: ${JSON.stringify(f.byKind)}`);
    t.diagnostic(`R1 paths: ${JSON.stringify(f.byPath)}; killed mid-way: ${f.killed}`);
    t.diagnostic(`R1 permission hooks and retries: ${JSON.stringify(f.counts)}`);
    // Where the platform has no OS sandbox the sandbox kinds are not generated: said, never silent.
    const skipped: readonly string[] = f.sandboxSkipped ? SANDBOX_KINDS : [];
    if (f.sandboxSkipped) t.diagnostic(`R1 sandbox kinds skipped (${skipped.join(", ")}): ${f.sandboxSkipped}`);
    const report = f.failed.flatMap((r) => [
      `replay: npm run soak -- --only R1 --seed ${SEED} --from ${r.scenario.index} --scenarios 1`,
      `  ${r.description}`,
      ...r.leaks.map((l) => `  leak: ${l.kind} canary from ${l.where} in ${l.sink}: …${l.excerpt}…`),
      ...r.failures.map((x) => `  failure: ${x}`),
    ]);
    assert.equal(f.leaks + f.failures, 0, report.join("\n"));
    for (const kind of BLOCK_KINDS.filter((k) => !skipped.includes(k)))
      assert.ok((f.byKind[kind] ?? 0) > 0, `no scenario planted a ${kind} canary`);
    for (const path of PATHS.filter((p) => !skipped.includes(p)))
      assert.ok((f.byPath[path] ?? 0) > 0, `no scenario tried the path ${path}`);
    for (const store of POSTGRES_URL ? ["sqlite", "memory", "postgres"] : ["sqlite", "memory"])
      assert.ok((f.byStore[store] ?? 0) > 0, `no scenario ran on ${store}`);
  });
}
