import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { runR1, runScenario } from "../../harness/r1.js";
import { BLOCK_KINDS, describeScenario, generateScenario } from "../../harness/scenario.js";
import type { SessionStore } from "../../src/store/types.js";
import { POSTGRES_URL, R1_SCENARIOS, SEED } from "./ci.js";

describe("R1 — canary: blocked content never persists", () => {
  test(`${R1_SCENARIOS} scenarios (seed ${SEED}): no leak, every verdict applied, every control found`, async (t) => {
    const f = await runR1({
      seed: SEED,
      scenarios: R1_SCENARIOS,
      ...(POSTGRES_URL ? { postgresUrl: POSTGRES_URL } : {}),
    });
    t.diagnostic(
      `R1: ${f.scenarios} scenarios, ${f.targets} canaries blocked or rewritten, ${f.controls} controls, ${f.leaks} leaks, ${f.failures} other failures, ${(f.ms / 1000).toFixed(1)} s`,
    );
    t.diagnostic(`R1 stores: ${JSON.stringify(f.byStore)}; verdicts: ${JSON.stringify(f.byKind)}`);
    const report = f.failed.flatMap((r) => [
      `replay: npm run soak -- --only R1 --seed ${SEED} --from ${r.scenario.index} --scenarios 1`,
      `  ${r.description}`,
      ...r.leaks.map((l) => `  leak: ${l.kind} canary from ${l.where} in ${l.sink}: …${l.excerpt}…`),
      ...r.failures.map((x) => `  failure: ${x}`),
    ]);
    assert.equal(f.leaks + f.failures, 0, report.join("\n"));
    for (const kind of BLOCK_KINDS) assert.ok((f.byKind[kind] ?? 0) > 0, `no scenario planted a ${kind} canary`);
    for (const store of POSTGRES_URL ? ["sqlite", "memory", "postgres"] : ["sqlite", "memory"])
      assert.ok((f.byStore[store] ?? 0) > 0, `no scenario ran on ${store}`);
  });

  test("the checks can fail: a store whose scrubs do nothing leaks, and the report says where", async () => {
    let index = 0;
    while (!generateScenario(SEED, index, { stores: ["sqlite"] }).targets.some((t) => t.kind === "response-block"))
      index++;
    const scenario = generateScenario(SEED, index, { stores: ["sqlite"] });
    const noScrub = (store: SessionStore): SessionStore =>
      new Proxy(store, {
        get(target, key) {
          if (key === "blockRun" || key === "rewriteRun") return async () => ({});
          const value = Reflect.get(target, key, target);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
    const report = await runScenario(scenario, { sabotage: noScrub });
    assert.ok(report.leaks.length > 0, describeScenario(scenario));
    assert.ok(report.leaks.some((l) => l.kind === "response-block" && l.sink.endsWith("gatehouse.db")));
    assert.ok(
      report.leaks.some((l) => l.sink.includes("after the verdict")),
      "later hook events are searched too",
    );
  });

  test("a scenario is the same whenever it is generated from (seed, index)", () => {
    for (const index of [0, 7, 123]) {
      const a = generateScenario(SEED, index, { stores: ["sqlite", "memory"] });
      const b = generateScenario(SEED, index, { stores: ["sqlite", "memory"] });
      assert.deepEqual(a, b);
    }
    assert.notDeepEqual(
      generateScenario(SEED, 1, { stores: ["sqlite"] }),
      generateScenario(SEED + 1, 1, { stores: ["sqlite"] }),
    );
  });
});
