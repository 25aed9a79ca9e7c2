import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { openMemoryStore } from "../../src/store/index.js";
import { plugin, testGatehouse } from "./helpers.js";

const ANSWER = { runs: [{ match: ".", turns: [{ text: "Answer." }] }] };

describe("a block's category as a plugin wrote it never costs the block", () => {
  for (const hook of ["before_input", "before_agent_run"] as const)
    test(`a ${hook} block with category "refund limit": the run is blocked with its notice, and the audit keeps "refund-limit"`, async () => {
      const store = openMemoryStore();
      const policy = plugin("support-policy", (api) =>
        api.on(hook, () => ({
          outcome: "block",
          reason: "over the limit",
          message: "Refunds over the limit need a person.",
          category: "refund limit",
        })),
      );
      const { gatehouse } = testGatehouse(ANSWER, { plugins: [policy], store });
      const result = await gatehouse.run({ prompt: "refund me" });
      await gatehouse.engine.drain();
      assert.equal(result.outcome, "blocked");
      assert.equal(result.reply, "Refunds over the limit need a person.");
      assert.equal(result.blockedBy?.category, "refund-limit");
      const audit = await store.listAudit({ runId: result.runId });
      assert.deepEqual(
        audit.map((a) => [a.hook, a.pluginId, a.outcome, a.category]),
        [[hook, "support-policy", "block", "refund-limit"]],
      );
      await gatehouse.close();
    });

  test("a category with nothing a slug can keep (only spaces and punctuation): blocked with its notice, recorded without a category", async () => {
    const store = openMemoryStore();
    const policy = plugin("support-policy", (api) =>
      api.on("before_agent_run", () => ({ outcome: "block", reason: "r", message: "No.", category: " !! " })),
    );
    const { gatehouse } = testGatehouse(ANSWER, { plugins: [policy], store });
    const result = await gatehouse.run({ prompt: "x" });
    await gatehouse.engine.drain();
    assert.equal(result.outcome, "blocked");
    assert.equal(result.reply, "No.");
    assert.deepEqual(
      (await store.listAudit({ runId: result.runId })).map((a) => [a.outcome, a.category]),
      [["block", null]],
    );
    await gatehouse.close();
  });
});
