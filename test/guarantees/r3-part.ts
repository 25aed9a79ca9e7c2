import assert from "node:assert/strict";
import { test } from "node:test";
import { runR3 } from "../../harness/r3.js";
import { POSTGRES_URL, R3_KILLS, R3_PARTS, SEED } from "./ci.js";

/**
 * One part of R3's CI size: kills [part × size, (part + 1) × size) of the CI seed, each part in a
 * file of its own so that each stays well inside npm test's per-file timeout.
 */
export function r3Part(part: number): void {
  const kills = R3_KILLS / R3_PARTS;
  const firstKill = part * kills;
  test(`kills ${firstKill}–${firstKill + kills - 1}: SIGKILLs at random moments: the store opens, finished runs are whole, nothing a verdict removed is on disk, the next run works`, async (t) => {
    const f = await runR3({
      seed: SEED,
      kills,
      firstKill,
      ...(POSTGRES_URL ? { postgresUrl: POSTGRES_URL } : {}),
    });
    t.diagnostic(
      `R3: ${f.kills} kills, ${f.runsStarted} runs started, ${f.runsFinished} finished, ${f.interrupted} left running (recovered; ${f.ungatedStored} with unchecked content), ${f.failures} failures, ${(f.ms / 1000).toFixed(1)} s`,
    );
    const problems = f.failed.flatMap((r) =>
      r.problems.map((p) => `kill ${r.kill} (${r.store}, +${r.delayMs} ms): ${p}`),
    );
    assert.deepEqual(problems, []);
    assert.ok(f.interrupted > 0, "some kill landed inside a run");
  });
}
