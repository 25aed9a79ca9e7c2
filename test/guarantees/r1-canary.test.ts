import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { runScenario } from "../../harness/r1.js";
import { describeScenario, generateScenario } from "../../harness/scenario.js";
import type { SessionStore } from "../../src/store/types.js";
import { R1_SCENARIOS, r1Part, SEED } from "./ci.js";

describe("R1 — canary: blocked content never persists", () => {
  // The CI size is split over three files (this one, r1-canary-2 and -3), each within npm test's per-file timeout.
  r1Part(0, R1_SCENARIOS / 3);

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
