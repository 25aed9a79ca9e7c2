import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { promptHookText, runModelHandler } from "../../src/command-hooks/prompt-handler.js";
import type { HookAgentRequest } from "../../src/runtime/hook-model.js";

const input = { tool_name: "Bash", tool_input: { command: "echo hi" } };

describe("prompt handlers", () => {
  test("$ARGUMENTS is the hook input as JSON; \\$ is a dollar; without the placeholder the input is appended", () => {
    assert.equal(promptHookText("Check $ARGUMENTS costs \\$5", input, {}), `Check ${JSON.stringify(input)} costs $5`);
    assert.equal(promptHookText("Check it.", input, {}), `Check it.\n\n${JSON.stringify(input)}`);
  });

  test("the model never reads a provider key or a Gatehouse secret, even one a tool printed", () => {
    const key = "live-key-value-1234567890";
    const printed = { tool_response: { stdout: `OPENAI_API_KEY=${key} token sk-ant-abcdefghijklmnopqrstuvwx` } };
    const text = promptHookText("Review $ARGUMENTS", printed, { OPENAI_API_KEY: key, HOME: "/home/someone" });
    assert.doesNotMatch(text, new RegExp(key));
    assert.doesNotMatch(text, /sk-ant-abcdefghijklmnop/);
    assert.match(text, /OPENAI_API_KEY=\*\*\*\*/);
  });

  test("ok:false maps per event as Claude Code does; ok:true and impossible:true give no verdict", async () => {
    const answer = (text: string) => async () => text;
    const def = { type: "prompt", prompt: "p" } as const;
    const run = (event: Parameters<typeof runModelHandler>[0], reply: string, extra = {}) =>
      runModelHandler(
        event,
        { ...def, ...extra },
        {},
        {
          onFailure: "continue",
          timeoutMs: 1000,
          env: {},
          evaluatePrompt: answer(reply),
        },
      );
    const no = '{"ok": false, "reason": "nope"}';
    assert.deepEqual((await run("PreToolUse", no)).verdict, {
      decision: "deny",
      reason: "nope",
      continue: false,
      stopReason: "nope",
    });
    assert.deepEqual((await run("PreToolUse", no, { continueOnBlock: true })).verdict, {
      decision: "deny",
      reason: "nope",
    });
    assert.deepEqual((await run("Stop", no)).verdict, { decision: "block", reason: "nope" });
    assert.deepEqual((await run("Stop", '{"ok": false, "reason": "x", "impossible": true}')).verdict, {});
    assert.deepEqual((await run("PostToolUseFailure", no)).verdict, { additionalContext: "nope" });
    assert.deepEqual((await run("PreToolUse", '{"ok": true}')).verdict, {});
    assert.equal((await run("PreToolUse", "I think it is fine")).verdict.error, "unparseable");
  });

  test("an agent hook continues on block, masks its tool results like its prompt, and no answer is a failure", async () => {
    const key = "live-key-value-1234567890";
    const def = { type: "agent", prompt: "Check $ARGUMENTS" } as const;
    const options = { onFailure: "block" as const, timeoutMs: 1000, env: { OPENAI_API_KEY: key } };
    let seen: HookAgentRequest | undefined;
    const denied = await runModelHandler(
      "PreToolUse",
      def,
      { tool_input: { command: key } },
      {
        ...options,
        evaluateAgent: async (request) => {
          seen = request;
          return '{"ok": false, "reason": "nope"}';
        },
      },
    );
    assert.deepEqual(denied.verdict, { decision: "deny", reason: "nope" }, "no continue:false: the turn goes on");
    assert.equal(seen?.maxTurns, 50);
    assert.doesNotMatch(seen?.prompt ?? "", new RegExp(key));
    assert.equal(seen?.mask(`KEY=${key} sk-ant-abcdefghijklmnopqrstuvwx`), "KEY=**** ****");
    const silent = await runModelHandler("PreToolUse", def, {}, { ...options, evaluateAgent: async () => undefined });
    assert.equal(silent.verdict.error, "unparseable");
    assert.equal(silent.verdict.decision, "deny", "onFailure block: no answer blocks");
    const unset = await runModelHandler("PreToolUse", def, {}, { ...options, onFailure: "continue" });
    assert.deepEqual([unset.verdict.error, unset.verdict.decision], ["spawn", undefined]);
  });
});
