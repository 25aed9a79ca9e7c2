import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { filesUnder } from "../../harness/sinks.js";
import type { ApprovalRequest } from "../../src/runtime/types.js";
import { openStore } from "../../src/store/index.js";
import { fakeBash, testGatehouse } from "./helpers.js";

// The audit trail keeps identifiers, not content (docs/permissions.md): a decision names its rule
// by source and id, with the rule's text only when a settings file holds it; an "always" rule is
// built from the command's prefix and recorded by id, so nothing the model wrote outlives
// `sessions rm` in the audit records.

const CANARY = "CANARY-always-rule-7f3a";

/** One run per prompt: the model runs the prompt with Bash, then answers. */
const bashEcho = {
  runs: [{ turns: [{ toolCalls: [{ name: "Bash", input: { command: "{{prompt}}" } }] }, { text: "done" }] }],
};

describe("the audit trail keeps identifiers, not content", () => {
  test('an "always" answer for TOKEN=<secret> echo hi leaves no trace of the secret in the database files once the session is removed', async () => {
    const dir = mkdtempSync(join(tmpdir(), "gatehouse-perm-audit-"));
    try {
      const store = await openStore({ kind: "sqlite", path: join(dir, "data", "gatehouse.db") });
      const bash = fakeBash();
      const asked: ApprovalRequest[] = [];
      const { gatehouse } = testGatehouse(bashEcho, {
        store,
        tools: [bash.tool],
        approver: async (request) => {
          asked.push(request);
          return "allow-always";
        },
        config: { cwd: dir },
      });
      const secretLine = `TOKEN=${CANARY} echo hi`;
      const { sessionId } = await gatehouse.run({ prompt: secretLine });
      assert.deepEqual(asked[0]?.suggestions, ["Bash(echo:*)"], "the rule offered is the prefix, not the line");
      await gatehouse.run({ prompt: secretLine, sessionId });
      await gatehouse.run({ prompt: "echo again", sessionId });
      assert.equal(asked.length, 2, "the prefix rule does not cover the assignment; it covers echo again");
      assert.deepEqual(bash.ran, [secretLine, secretLine, "echo again"]);

      const categories = (await store.listAudit({ sessionId })).map((a) => `${a.hook}:${a.outcome}:${a.category}`);
      assert.ok(categories.includes("permission:approve:session.allow.0"), categories.join(" "));
      assert.ok(
        categories.every((c) => !c.includes(CANARY) && !c.includes("TOKEN")),
        categories.join(" "),
      );

      assert.equal(await store.deleteSession(sessionId), true);
      await gatehouse.close();
      for (const file of filesUnder(join(dir, "data"))) assert.equal(file.bytes.indexOf(CANARY), -1, file.path);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a settings-file rule is recorded with its id and text; a flag or code rule by its id alone", async () => {
    const bash = fakeBash();
    const { gatehouse, store } = testGatehouse(bashEcho, {
      tools: [bash.tool],
      permissions: { deny: ["Bash(rm:*)"] },
    });
    const { sessionId, permissionDenials } = await gatehouse.run({ prompt: `rm -rf ${CANARY}` });
    assert.deepEqual(
      permissionDenials.map((d) => [d.reason, d.ruleId, d.source]),
      [["rule", "library.deny.0", "library"]],
    );
    const categories = (await store.listAudit({ sessionId })).map((a) => a.category);
    assert.deepEqual(categories, ["library.deny.0"]);
    assert.deepEqual(bash.ran, []);

    const dir = mkdtempSync(join(tmpdir(), "gatehouse-perm-audit-"));
    try {
      mkdirSync(join(dir, ".claude"));
      writeFileSync(join(dir, ".claude", "settings.json"), JSON.stringify({ permissions: { deny: ["Bash(rm:*)"] } }));
      const fromFile = testGatehouse(bashEcho, {
        tools: [bash.tool],
        permissions: { fromSettings: true },
        config: { cwd: dir },
      });
      const denied = await fromFile.gatehouse.run({ prompt: "rm -rf x" });
      const recorded = (await fromFile.store.listAudit({ sessionId: denied.sessionId })).map((a) => a.category);
      assert.deepEqual(recorded, ["project.deny.0:Bash-rm:--"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
