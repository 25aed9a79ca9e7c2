import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { runR5 } from "../../harness/r5.js";
import { POSTGRES_URL } from "./ci.js";

describe("R5 — concurrency", () => {
  for (const store of ["sqlite", "postgres"] as const) {
    test(`${store}: processes running turns on the same sessions are serialized per session, none lost, none interleaved; sessions run in parallel`, {
      skip: store === "postgres" && !POSTGRES_URL ? "GATEHOUSE_TEST_DATABASE_URL not set" : false,
    }, async (t) => {
      const f = await runR5({
        store,
        ...(POSTGRES_URL ? { postgresUrl: POSTGRES_URL } : {}),
        processes: 3,
        turnsPerProcess: 12,
        concurrency: 3,
        sessions: 4,
      });
      t.diagnostic(
        `R5 ${store}: ${f.turns} turns, ${f.stored} stored, ${f.lost} lost, ${f.interleaved} interleaved, ${f.overlapsWithinSession} overlaps within a session, ${f.parallelPairs} parallel pairs, ${(f.ms / 1000).toFixed(1)} s`,
      );
      assert.deepEqual(f.problems, []);
      assert.equal(f.stored, f.turns);
    });
  }
});
