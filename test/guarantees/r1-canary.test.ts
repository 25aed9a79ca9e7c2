import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { runScenario, sandboxUnavailable } from "../../harness/r1.js";
import {
  type BlockKind,
  type DenySource,
  describeScenario,
  generateScenario,
  SANDBOX_KINDS,
  type Scenario,
} from "../../harness/scenario.js";
import { resetSandbox } from "../../src/sandbox/runtime.js";
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

  /** The first scenario of the CI seed (not killed) planting a canary of `kind`. */
  const firstWith = (kind: BlockKind, also: (s: Scenario) => boolean = () => true): Scenario => {
    for (let index = 0; ; index++) {
      const s = generateScenario(SEED, index, { stores: ["sqlite"] });
      if (!s.kill && s.targets.some((t) => t.kind === kind) && also(s)) return s;
    }
  };

  test("the checks can fail: a sandboxed scenario run without the sandbox lets its canaries out (printed, copied outside the project, posted to the loopback sink), and the report says where", {
    skip: sandboxUnavailable() ?? false,
  }, async (t) => {
    t.after(resetSandbox);
    const scenario = firstWith("sandbox-read", (s) => s.targets.some((x) => x.kind === "sandbox-host" && !x.audited));
    const report = await runScenario(scenario, { noSandbox: true });
    const where = `${describeScenario(scenario)}\n${JSON.stringify(report.leaks.map((l) => [l.kind, l.sink]))}`;
    for (const kind of SANDBOX_KINDS)
      assert.ok(
        report.leaks.some((l) => l.kind === kind),
        `${kind}: ${where}`,
      );
    assert.ok(
      report.leaks.some((l) => l.kind === "sandbox-write" && l.sink.includes("outside the project")),
      where,
    );
    assert.ok(
      report.leaks.some((l) => l.kind === "sandbox-host" && l.sink.includes("loopback sink")),
      where,
    );
    assert.ok(
      report.leaks.some((l) => l.kind === "sandbox-read" && l.sink.endsWith("gatehouse.db")),
      where,
    );
    assert.ok(report.failures.some((f) => f.includes("did not reach the model as a tool error")));
    assert.ok(report.failures.some((f) => f.includes("no sandbox:filesystem decision in the audit trail")));
  });

  test("the checks can fail: a runtime not told the withheld value prints it unmasked, and the report finds it in the store", async () => {
    const scenario = firstWith("masked-secret");
    const { maskedSecret, ...unmasked } = scenario;
    const report = await runScenario(unmasked);
    assert.ok(
      report.leaks.some((l) => l.canary === maskedSecret && l.sink.endsWith("gatehouse.db")),
      `${describeScenario(scenario)}\n${JSON.stringify(report.leaks)}`,
    );
  });

  test("the checks can fail: an approver that says yes to everything runs the refused asks and a line the shell reader cannot read, and the report says so", async () => {
    const scenario = firstWith("parser-refusal", (s) => s.attended && s.targets.some((t) => t.kind === "ask-denied"));
    const report = await runScenario(scenario, { approveAll: true });
    const where = `${describeScenario(scenario)}\n${report.failures.join("\n")}`;
    for (const kind of ["parser-refusal", "ask-denied"] as const) {
      assert.ok(
        report.leaks.some((l) => l.kind === kind && l.sink.endsWith("gatehouse.db")),
        `${kind}: ${where}`,
      );
      assert.ok(
        report.failures.some((f) => f.startsWith(`verdict did not take effect: ${kind}`)),
        where,
      );
    }
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
