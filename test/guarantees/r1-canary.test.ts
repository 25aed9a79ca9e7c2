import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { runScenario } from "../../harness/r1.js";
import { type DenySource, describeScenario, generateScenario, type Scenario } from "../../harness/scenario.js";
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

  test("the checks can fail: without its deny rule, a curl call's input reaches the store and the report says so", async () => {
    let scenario: Scenario | undefined;
    let canary = "";
    for (let index = 0; !scenario; index++) {
      const s = generateScenario(SEED, index, { stores: ["sqlite"] });
      // A plain `curl …` call (no retry), which the code's allow rule runs once no deny rule is there.
      const t = s.targets.find(
        (x) =>
          x.kind === "deny-rule" &&
          !x.retryBy &&
          JSON.stringify(s.script).includes(`"curl --max-time 1 -s --data ${x.canary} `),
      );
      if (t && !s.kill) [scenario, canary] = [s, t.canary];
    }
    // No settings source holds the deny rule.
    const report = await runScenario({ ...scenario, denySource: "nowhere" as DenySource });
    const where = describeScenario(scenario);
    assert.ok(
      report.leaks.some((l) => l.canary === canary && l.sink.endsWith("gatehouse.db")),
      `${where}\n${JSON.stringify(report.leaks)}`,
    );
    assert.ok(
      report.failures.some((f) => f.startsWith("verdict did not take effect: deny-rule")),
      `${where}\n${report.failures.join("\n")}`,
    );
  });

  test("the checks can fail: a provider failure that is never got past puts its text in the run's error, and the report says so", async () => {
    let index = 0;
    const planned = (i: number) => generateScenario(SEED, i, { stores: ["sqlite"] });
    while (planned(index).providerFaults.steps.length === 0 || planned(index).kill) index++;
    const scenario = planned(index);
    // Every attempt fails: the run fails with the provider's message.
    const report = await runScenario(scenario, { failingAttempts: 3 });
    const tokens = scenario.providerFaults.steps.map((f) => f.token);
    assert.ok(
      report.leaks.some((l) => l.kind === "failed attempt" && tokens.includes(l.canary)),
      `${describeScenario(scenario)}\n${JSON.stringify(report.leaks)}`,
    );
    assert.ok(report.failures.length > 0);
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
