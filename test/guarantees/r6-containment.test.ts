import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { runR6 } from "../../harness/r6.js";
import { maskedSecretCase } from "../../harness/r6-masked-secrets.js";

describe("R6 — containment of command hooks, the Bash tool, MCP servers and hook models", () => {
  test("timeouts, cancels and shutdowns leave no process behind, memory stays bounded, secrets stay out unless passed through", async (t) => {
    const f = await runR6({ floodBytes: 256 * 1024 * 1024 });
    for (const c of f.cases)
      t.diagnostic(`${c.ok ? "ok" : "FAILED"}: ${c.name}: ${c.detail}${c.note ? ` (note: ${c.note})` : ""}`);
    t.diagnostic(
      `processes started ${f.processesStarted}, left ${f.processesLeft}; secret variables leaked ${f.variablesLeaked}`,
    );
    assert.equal(f.processesLeft, 0);
    assert.equal(f.variablesLeaked, 0);
    for (const part of ["Bash tool", "MCP server"])
      assert.ok(f.cases.filter((c) => c.name.startsWith(part)).length >= 3, `${part} cases ran`);
    assert.ok(
      f.cases.some((c) => c.name.startsWith("prompt and agent hooks")),
      "the hook-model case ran",
    );
    assert.ok(
      f.cases.some((c) => c.name.startsWith("masked secrets")),
      "the masked-secret sink check ran",
    );
    assert.deepEqual(
      f.cases.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`),
      [],
    );
  });

  test("the masked-secret sink check finds every withheld value in every sink when the runtime is not told of them (sabotage)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gh-r6-sabotage-"));
    try {
      const sabotaged = await maskedSecretCase(dir, { sabotage: true });
      assert.equal(sabotaged.ok, false);
      for (const sink of [
        "gatehouse.db",
        "session export",
        "run events",
        "model requests",
        "after_tool_call",
        "PostToolUse payloads",
      ])
        for (const name of ["OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "GATEHOUSE_DATABASE_URL", "DEPLOY_TOKEN"])
          assert.ok(
            sabotaged.leaked?.some((l) => l.startsWith(`${name} in`) && l.includes(sink)),
            `${name} found in ${sink}`,
          );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
