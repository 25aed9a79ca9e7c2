import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { runR3 } from "../../harness/r3.js";
import { POSTGRES_URL, R3_KILLS, SEED } from "./ci.js";

describe("R3 — crashes", () => {
  test(`${R3_KILLS} SIGKILLs at random moments: the store opens, finished runs are whole, nothing a verdict removed is on disk, the next run works`, async (t) => {
    const f = await runR3({ seed: SEED, kills: R3_KILLS, ...(POSTGRES_URL ? { postgresUrl: POSTGRES_URL } : {}) });
    t.diagnostic(
      `R3: ${f.kills} kills, ${f.runsStarted} runs started, ${f.runsFinished} finished, ${f.interrupted} left running (recovered; ${f.ungatedStored} with unchecked content), ${f.failures} failures, ${(f.ms / 1000).toFixed(1)} s`,
    );
    const problems = f.failed.flatMap((r) =>
      r.problems.map((p) => `kill ${r.kill} (${r.store}, +${r.delayMs} ms): ${p}`),
    );
    assert.deepEqual(problems, []);
    assert.ok(f.interrupted > 0, "some kill landed inside a run");
  });
});
