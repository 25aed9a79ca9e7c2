import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { messageText } from "../../src/core/message.js";
import type { ScriptInput } from "../../src/models/index.js";
import { definePlugin, type PluginDefinition } from "../../src/plugins/index.js";
import { testGatehouse } from "./helpers.js";

// Claude Code writes the context its hooks add into the transcript hooks read (`transcript_path`):
// `hook_additional_context` attachments, and a Stop hook's feedback as a meta user line.

const SCRIPTS = {
  // Context for the first prompt only: a later run must not send it to the model again.
  "ups.sh": `grep -q first && printf '%s' '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"UPS-ATTACHED-CTX"}}'; exit 0`,
  "start.sh": `printf '%s' '{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"START-ATTACHED-CTX"}}'`,
  "stop.sh": `cat >/dev/null; [ -f "$(dirname "$0")/stopped" ] && exit 0; touch "$(dirname "$0")/stopped"; printf '%s' '{"decision":"block","reason":"STOP-FEEDBACK-CTX once more"}'`,
};

function withHooks(script: ScriptInput, plugins: PluginDefinition[] = []) {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-attach-"));
  for (const [name, body] of Object.entries(SCRIPTS)) {
    writeFileSync(join(dir, name), `#!/bin/sh\n${body}\n`);
    chmodSync(join(dir, name), 0o755);
  }
  const hook = (name: string) => [{ hooks: [{ type: "command", command: join(dir, name) }] }];
  const hooks = { UserPromptSubmit: hook("ups.sh"), SessionStart: hook("start.sh"), Stop: hook("stop.sh") };
  return testGatehouse(script, {
    plugins,
    config: { cwd: dir },
    commandHooks: { load: { homeDir: dir, cliSettings: JSON.stringify({ hooks }) } },
  });
}

const lines = (path: string) =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

const twoRuns: ScriptInput = {
  runs: [{ turns: [{ text: "first-answer" }, { text: "revised-answer" }] }, { turns: [{ text: "second-answer" }] }],
};

describe("hook context in the transcript hooks read", () => {
  test("SessionStart and UserPromptSubmit context become attachments after the prompt, Stop feedback a meta user line after the answer, and no later run sends them to the model again", async () => {
    const { gatehouse, store, calls } = withHooks(twoRuns);
    const first = await gatehouse.run({ prompt: "the first prompt" });
    assert.equal(first.outcome, "completed");
    const transcript = lines(await store.materializeTranscript(first.sessionId));
    const shapes = transcript.map((e) => {
      const attachment = e.attachment as { type: string; hookEvent: string; content: string[] } | undefined;
      if (attachment) return `attachment:${attachment.type}:${attachment.hookEvent}:${attachment.content.join()}`;
      const message = e.message as { content: unknown };
      const text = typeof message.content === "string" ? message.content : JSON.stringify(message.content);
      return `${e.type}${e.isMeta ? "(meta)" : ""}:${text}`;
    });
    assert.deepEqual(shapes, [
      "user:the first prompt",
      "attachment:hook_additional_context:SessionStart:START-ATTACHED-CTX",
      "attachment:hook_additional_context:UserPromptSubmit:UPS-ATTACHED-CTX",
      `assistant:[{"type":"text","text":"first-answer"}]`,
      "user(meta):STOP-FEEDBACK-CTX once more",
      `assistant:[{"type":"text","text":"revised-answer"}]`,
    ]);
    // Each line chains to the one before it, as Claude Code's do.
    for (let i = 1; i < transcript.length; i++) assert.equal(transcript[i]?.parentUuid, transcript[i - 1]?.uuid);

    // The model read the context in its run...
    assert.match(JSON.stringify(calls[0]?.prompt), /UPS-ATTACHED-CTX/);
    assert.match(JSON.stringify(calls[1]?.prompt), /STOP-FEEDBACK-CTX/);
    // ...and the next run's model reads the conversation without it (each run's context is its own).
    const second = await gatehouse.run({ prompt: "another prompt", sessionId: first.sessionId });
    assert.equal(second.outcome, "completed");
    const later = JSON.stringify(calls[2]?.prompt);
    assert.match(later, /first-answer/);
    assert.doesNotMatch(later, /UPS-ATTACHED-CTX|START-ATTACHED-CTX|STOP-FEEDBACK-CTX/);
  });

  test("context a before_message_write gate blocks is not stored, in the transcript or the store, though the model read it", async () => {
    const gate: PluginDefinition = definePlugin({
      id: "no-ups-context",
      setup(api) {
        api.on("before_message_write", (e) =>
          /UPS-ATTACHED-CTX/.test(messageText(e.message)) ? { block: true } : undefined,
        );
      },
    });
    const { gatehouse, store, calls } = withHooks(twoRuns, [gate]);
    const run = await gatehouse.run({ prompt: "the first prompt" });
    assert.equal(run.outcome, "completed");
    assert.match(JSON.stringify(calls[0]?.prompt), /UPS-ATTACHED-CTX/);
    const transcript = readFileSync(await store.materializeTranscript(run.sessionId), "utf8");
    assert.doesNotMatch(transcript, /UPS-ATTACHED-CTX/);
    // The gate kept out only what it blocked: the other context is recorded.
    assert.match(transcript, /START-ATTACHED-CTX/);
    const stored = (await store.runMessages(run.runId)).map((m) => messageText(m)).join("|");
    assert.doesNotMatch(stored, /UPS-ATTACHED-CTX/);
    let exported = "";
    for await (const line of store.exportSession(run.sessionId)) exported += line;
    assert.doesNotMatch(exported, /UPS-ATTACHED-CTX/);
  });
});
