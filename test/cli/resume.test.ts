// Titles and history read what the store holds: when a scrub takes a prompt away, the title and
// the history entry it would have given go with it (nothing keeps a copy).
import assert from "node:assert/strict";
import { test } from "node:test";
import { firstPrompt, storedPrompts } from "../../src/cli/resume.js";
import { openMemoryStore } from "../../src/store/index.js";

test("a prompt scrubbed by a block titles nothing and gives history nothing; the next one does", async () => {
  const store = openMemoryStore();
  try {
    const session = await store.createSession();
    const run = await store.startRun({ sessionId: session.id });
    await store.appendMessage({
      sessionId: session.id,
      runId: run.id,
      role: "user",
      parts: [{ type: "text", text: "the launch codes" }],
    });
    assert.equal(await firstPrompt(store, session.id), "the launch codes");
    await store.blockPrompt(run.id, { notice: "Not here.", blockedBy: "guard", hook: "before_agent_run" });
    await store.finishRun(run.id, "blocked");
    assert.equal(await firstPrompt(store, session.id), null, "the notice left in its place is no title");
    assert.deepEqual(await storedPrompts(store, run.id), []);
    const next = await store.startRun({ sessionId: session.id });
    await store.appendMessage({
      sessionId: session.id,
      runId: next.id,
      role: "user",
      parts: [{ type: "text", text: "plan the garden" }],
    });
    assert.equal(await firstPrompt(store, session.id), "plan the garden");
    assert.deepEqual(await storedPrompts(store, next.id), ["plan the garden"]);
  } finally {
    await store.close();
  }
});
