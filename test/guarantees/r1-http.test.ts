import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { runR1 } from "../../harness/r1.js";
import { BLOCK_KINDS, SANDBOX_KINDS } from "../../harness/scenario.js";
import { POSTGRES_URL, SEED } from "./ci.js";

/**
 * R1 through `gatehouse serve`: the same scenarios, each run an HTTP request (JSON, or SSE when
 * streamed). 70 since the scenarios carry permission denials and retries too: as many canaries
 * as 80 did before, every verdict still among them, the file's time unchanged.
 */
const HTTP_SCENARIOS = 70;

describe("R1 — canary, through the HTTP API (JSON and SSE) as a further surface", () => {
  test(`scenarios 0–${HTTP_SCENARIOS - 1} (seed ${SEED}) over HTTP: no leak in the store, on the wire, in the console's pages or in the trace spans, every verdict applied, SSE events exactly as the run pushed them`, async (t) => {
    const f = await runR1({
      seed: SEED,
      scenarios: HTTP_SCENARIOS,
      surface: "http",
      ...(POSTGRES_URL ? { postgresUrl: POSTGRES_URL } : {}),
    });
    t.diagnostic(
      `R1 over HTTP: ${f.scenarios} scenarios, ${f.targets} canaries, ${f.controls} controls, ${f.leaks} leaks, ${f.failures} other failures, ${(f.ms / 1000).toFixed(1)} s`,
    );
    const report = f.failed.flatMap((r) => [
      `replay: npm run soak -- --only R1 --surface http --seed ${SEED} --from ${r.scenario.index} --scenarios 1`,
      `  ${r.description}`,
      ...r.leaks.map((l) => `  leak: ${l.kind} canary from ${l.where} in ${l.sink}: …${l.excerpt}…`),
      ...r.failures.map((x) => `  failure: ${x}`),
    ]);
    assert.equal(f.leaks + f.failures, 0, report.join("\n"));
    if (f.sandboxSkipped) t.diagnostic(`R1 sandbox kinds skipped: ${f.sandboxSkipped}`);
    for (const kind of BLOCK_KINDS.filter((k) => !f.sandboxSkipped || !SANDBOX_KINDS.includes(k)))
      assert.ok((f.byKind[kind] ?? 0) > 0, `no scenario planted a ${kind} canary`);
  });
});
