// Gemini CLI's AfterTool and BeforeAgent answers as Gemini CLI applies them
// (google-gemini/gemini-cli docs/hooks/reference.md; packages/core/src/core/coreToolHookTriggers.ts):
// an AfterTool deny replaces the tool's result with "Tool result blocked: <reason>"; a BeforeAgent
// deny or `continue: false` ends the turn before the model is called.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { testGatehouse } from "../runtime/helpers.js";

const roots: string[] = [];
after(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

/** A project whose .gemini/settings.json has these hooks, and a Gatehouse reading it. */
function geminiProject(hooks: object, script: object) {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-gemini-"));
  roots.push(dir);
  mkdirSync(join(dir, ".gemini"));
  writeFileSync(join(dir, ".gemini", "settings.json"), JSON.stringify({ hooks }));
  return testGatehouse(script as never, {
    config: { cwd: dir },
    commandHooks: { load: { homeDir: join(dir, "home"), gemini: true } },
  });
}

const answer = (json: object) => ({ type: "command", command: `printf '%s' '${JSON.stringify(json)}'` });

describe("Gemini CLI's AfterTool and BeforeAgent", () => {
  test("an AfterTool deny: the model reads 'Tool result blocked: <reason>' instead of the output", async () => {
    const { gatehouse, calls } = geminiProject(
      { AfterTool: [{ matcher: "Echo", hooks: [answer({ decision: "deny", reason: "it holds a key" })] }] },
      { runs: [{ turns: [{ toolCalls: [{ name: "Echo", input: { text: "KEY-0123-OUTPUT" } }] }, { text: "done" }] }] },
    );
    try {
      const result = await gatehouse.run({ prompt: "go" });
      assert.equal(result.reply, "done");
      const results = JSON.stringify((calls[1]?.prompt ?? []).filter((m) => m.role === "tool"));
      assert.match(results, /Tool result blocked: it holds a key/);
      assert.doesNotMatch(results, /KEY-0123-OUTPUT/, "the output is withheld");
    } finally {
      await gatehouse.close();
    }
  });

  for (const [name, json] of [
    ["deny", { decision: "deny", reason: "not this prompt" }],
    ["continue: false", { continue: false, stopReason: "not this prompt" }],
  ] as const) {
    test(`a BeforeAgent ${name} ends the turn before the model is called`, async () => {
      const { gatehouse, calls } = geminiProject(
        { BeforeAgent: [{ hooks: [answer(json)] }] },
        { runs: [{ turns: [{ text: "should not be said" }] }] },
      );
      try {
        const result = await gatehouse.run({ prompt: "go" });
        assert.notEqual(result.reply, "should not be said");
        assert.equal(calls.length, 0, "no model call");
      } finally {
        await gatehouse.close();
      }
    });
  }
});
