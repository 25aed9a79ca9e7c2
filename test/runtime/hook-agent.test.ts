// The agent of an `agent` command hook (src/runtime/hook-model.ts): what its tools may read, what
// its model is told, where its usage goes, and that the caller's signal stops it.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import type { LanguageModelV3, LanguageModelV3CallOptions } from "@ai-sdk/provider";
import type { ModelUsage } from "../../src/models/collect.js";
import { createScriptedModel, type ScriptInput } from "../../src/models/scripted.js";
import { type PermissionMode, PermissionPolicy, type PermissionRule, parseRule } from "../../src/permissions/index.js";
import type { ModelResolver } from "../../src/runtime/deps.js";
import { hookAgentCall } from "../../src/runtime/hook-model.js";

const project = mkdtempSync(join(tmpdir(), "gatehouse-hook-agent-"));
after(() => rmSync(project, { recursive: true, force: true }));
writeFileSync(join(project, "secret.env"), "TOKEN=swordfish-not-for-models\n");
writeFileSync(join(project, "notes.md"), "nothing secret here\n");
symlinkSync(join(project, "secret.env"), join(project, "innocent.txt"));

const policy = (mode: PermissionMode, rules: Record<"deny" | "ask" | "allow", string[]>) =>
  new PermissionPolicy({
    mode,
    cwd: project,
    rules: (["deny", "ask", "allow"] as const).flatMap((behavior) =>
      rules[behavior].map(
        (rule): PermissionRule => ({
          behavior,
          rule,
          parsed: parseRule(rule, behavior) as never,
          id: `project.${behavior}.${rule}`,
          source: "project",
          baseDir: project,
        }),
      ),
    ),
  });

/** The sandbox with nothing unreadable: only the permission rules refuse. */
const NO_SANDBOX_READS = { allowWrite: [], denyWrite: [], denyRead: [], allowRead: [] };

/** A scripted model that records each call's prompt (and can act when called). */
function recording(script: ScriptInput, onCall?: (n: number) => void) {
  const inner = createScriptedModel(script);
  const calls: LanguageModelV3CallOptions[] = [];
  const model: LanguageModelV3 = {
    ...inner,
    specificationVersion: "v3",
    provider: inner.provider,
    modelId: inner.modelId,
    supportedUrls: {},
    doGenerate: (o) => inner.doGenerate(o),
    doStream: (o) => {
      calls.push(o);
      onCall?.(calls.length);
      return inner.doStream(o);
    },
  };
  const models: ModelResolver = { resolve: async () => ({ model, provider: "scripted", modelId: "agent" }) };
  return { models, calls };
}

const toolResults = (call: LanguageModelV3CallOptions | undefined) =>
  (call?.prompt ?? []).flatMap((m) =>
    m.role === "tool"
      ? m.content.flatMap((p) => (p.type === "tool-result" && "value" in p.output ? [String(p.output.value)] : []))
      : [],
  );

describe("a hook's agent", () => {
  test("a file reached through a symbolic link meets the rule on the file; a search skips it; results are masked", async () => {
    const { models, calls } = recording({
      runs: [
        {
          turns: [
            {
              toolCalls: [
                { name: "Read", input: { file_path: "innocent.txt" } },
                { name: "Grep", input: { pattern: "TOKEN", output_mode: "content" } },
                { name: "Glob", input: { pattern: "*" } },
                { name: "Read", input: { file_path: "notes.md" } },
                { name: "Bash", input: { command: "cat secret.env" } },
              ],
            },
            { text: '{"ok": true}' },
          ],
        },
      ],
    });
    const agent = hookAgentCall(
      models,
      policy("default", { deny: ["Read(./secret.env)"], ask: [], allow: [] }),
      project,
      NO_SANDBOX_READS,
    );
    const reply = await agent({
      model: undefined,
      system: "s",
      prompt: "check",
      signal: new AbortController().signal,
      maxTurns: 50,
      mask: (t) => t.replace("nothing", "[masked]"),
    });
    assert.equal(reply, '{"ok": true}');
    const [link, grep, glob, notes, bash] = toolResults(calls[1]);
    assert.match(link ?? "", /denied \(rule Read\(\.\/secret\.env\) from project settings\)/);
    assert.equal(grep, "No matches found");
    assert.deepEqual((glob ?? "").split("\n").sort(), [join(project, "notes.md")]);
    assert.match(notes ?? "", /\[masked\] secret here/, "every result goes through the mask");
    assert.equal(bash, "There is no tool named Bash.");
    assert.ok(!JSON.stringify(calls).includes("swordfish"));
  });

  test("an ask rule refuses even in bypassPermissions mode; without rules, reads run", async () => {
    const script = {
      runs: [{ turns: [{ toolCalls: [{ name: "Read", input: { file_path: "notes.md" } }] }, { text: "done" }] }],
    };
    const run = async (p: PermissionPolicy) => {
      const { models, calls } = recording(script);
      const signal = new AbortController().signal;
      await hookAgentCall(
        models,
        p,
        project,
        NO_SANDBOX_READS,
      )({ model: undefined, system: "s", prompt: "p", signal, maxTurns: 5, mask: (t) => t });
      return toolResults(calls[1])[0] ?? "";
    };
    assert.match(
      await run(policy("bypassPermissions", { deny: [], ask: ["Read(./notes.md)"], allow: [] })),
      /asks, and no one can be asked/,
    );
    assert.match(await run(policy("plan", { deny: [], ask: [], allow: [] })), /nothing secret here/);
  });

  test("each model call's usage goes to the request's sink; the caller's signal stops the loop", async () => {
    const script = {
      runs: [
        {
          turns: [
            { toolCalls: [{ name: "Glob", input: { pattern: "*.md" } }], usage: { inputTokens: 5, outputTokens: 1 } },
            { toolCalls: [{ name: "Glob", input: { pattern: "*.md" } }], usage: { inputTokens: 7, outputTokens: 2 } },
            { text: "done", usage: { inputTokens: 11, outputTokens: 3 } },
          ],
        },
      ],
    };
    const seen: ModelUsage[] = [];
    const open = recording(script);
    const reply = await hookAgentCall(
      open.models,
      policy("default", { deny: [], ask: [], allow: [] }),
      project,
      NO_SANDBOX_READS,
    )({
      model: undefined,
      system: "s",
      prompt: "p",
      signal: new AbortController().signal,
      maxTurns: 50,
      mask: (t) => t,
      onUsage: (u) => seen.push(u),
    });
    assert.equal(reply, "done");
    assert.deepEqual(
      seen.map((u) => [u.inputTokens, u.outputTokens]),
      [
        [5, 1],
        [7, 2],
        [11, 3],
      ],
    );

    const controller = new AbortController();
    const stopped = recording(script, (n) => {
      if (n === 2) controller.abort();
    });
    await assert.rejects(
      hookAgentCall(
        stopped.models,
        policy("default", { deny: [], ask: [], allow: [] }),
        project,
        NO_SANDBOX_READS,
      )({
        model: undefined,
        system: "s",
        prompt: "p",
        signal: controller.signal,
        maxTurns: 50,
        mask: (t) => t,
      }),
    );
    assert.equal(stopped.calls.length, 2, "no model call after the abort");
  });

  test("an agent still calling tools at maxTurns gives no answer", async () => {
    const { models, calls } = recording({
      runs: [{ turns: Array.from({ length: 4 }, () => ({ toolCalls: [{ name: "Glob", input: { pattern: "x" } }] })) }],
    });
    const signal = new AbortController().signal;
    const reply = await hookAgentCall(
      models,
      policy("default", { deny: [], ask: [], allow: [] }),
      project,
      NO_SANDBOX_READS,
    )({
      model: undefined,
      system: "s",
      prompt: "p",
      signal,
      maxTurns: 3,
      mask: (t) => t,
    });
    assert.equal(reply, undefined);
    assert.equal(calls.length, 3);
  });
});
