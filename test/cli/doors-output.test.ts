import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { assertNowhere, doorProjects, resultOf } from "./doors-helpers.js";

// Issue 11, paths 1, 5, 6, 9 and 11: every text delivered to a user passes the output door
// (before_response_emit, then message_sending), and the store keeps what was delivered.

/** Redacts `SECRET-…` in every reply, and marks what message_sending saw. */
const REDACTOR = `export default {
  id: "redactor",
  setup(api) {
    api.registerCommand("lookup", { description: "looks a key up", run: (args) => "value of " + args + ": SECRET-CMD-1" });
    api.on("inbound_claim", (e) => e.content.startsWith("inbound:") ? { handled: true, reply: "inbound SECRET-IN-1" } : undefined);
    api.on("before_response_emit", (e) => {
      const allContent = e.allContent.map((t) => t.replace(/SECRET-[A-Z0-9-]+/g, "[redacted]"));
      return allContent.some((t, i) => t !== e.allContent[i]) ? { allContent } : undefined;
    });
    api.on("message_sending", (e) => ({ content: e.content + " (checked)" }));
  },
};
`;

describe("the output door, through the CLI", { concurrency: 4 }, () => {
  const fresh = doorProjects();

  test("path 1: a plugin command's reply and an inbound_claim reply pass before_response_emit and message_sending", async () => {
    const p = await fresh({
      "gatehouse.json": { model: "scripted:echo", plugins: [{ path: "redactor.mjs" }] },
      "redactor.mjs": REDACTOR,
    });
    const command = await p.run(["run", "-p", "/lookup k", "--json"]);
    assert.equal(command.code, 0, command.stderr);
    assert.equal(resultOf(command).reply, "value of k: [redacted] (checked)");
    const claimed = await p.run(["run", "-p", "inbound: hi", "--json"]);
    assert.equal(claimed.code, 0, claimed.stderr);
    assert.equal(resultOf(claimed).reply, "inbound [redacted] (checked)");
    for (const secret of ["SECRET-CMD-1", "SECRET-IN-1"]) await assertNowhere(p, secret, [command, claimed]);
  });

  test("path 5: a message_sending rewrite is what the store keeps, and a cancel leaves a notice in its place", async () => {
    const sender = `export default {
      id: "sender",
      setup(api) {
        api.on("message_sending", (e) =>
          e.content.includes("CANCEL-ME") ? { cancel: true, cancelReason: "INTERNAL-5 cancel" }
          : { content: e.content.replace(/SECRET-[A-Z0-9-]+/g, "[x]") });
      },
    };`;
    const p = await fresh({
      "gatehouse.json": { model: "scripted:script.json", plugins: [{ path: "sender.mjs" }] },
      "sender.mjs": sender,
      "script.json": {
        runs: [
          { match: "cancel", turns: [{ text: "CANCEL-ME the code is SECRET-CANCEL-5" }] },
          { turns: [{ text: "the code is SECRET-SEND-5" }] },
        ],
      },
    });
    const sent = await p.run(["run", "--session", "s5", "-p", "tell me", "--json"]);
    assert.equal(sent.code, 0, sent.stderr);
    assert.equal(resultOf(sent).reply, "the code is [x]");
    const cancelled = await p.run(["run", "--session", "s5", "-p", "cancel it", "--json"]);
    assert.equal(cancelled.code, 0, cancelled.stderr);
    assert.equal(resultOf(cancelled).reply, null);
    const exported = await p.run(["sessions", "export", "s5"]);
    assert.equal(exported.code, 0, exported.stderr);
    assert.match(exported.stdout, /the code is \[x\]/);
    assert.match(exported.stdout, /not delivered/);
    for (const secret of ["SECRET-SEND-5", "SECRET-CANCEL-5", "INTERNAL-5"])
      await assertNowhere(p, secret, [sent, cancelled, exported]);
  });

  test("path 6: the reasoning of a rewritten run is dropped from the store, in every message of the run", async () => {
    const p = await fresh({
      "gatehouse.json": { model: "scripted:script.json", plugins: [{ path: "redactor.mjs" }] },
      "redactor.mjs": REDACTOR,
      "script.json": {
        runs: [
          {
            turns: [
              {
                parts: [{ type: "reasoning", text: "thinking about SECRET-RSN-6" }],
                toolCalls: [{ name: "Bash", input: { command: "echo hi" } }],
              },
              {
                parts: [
                  { type: "reasoning", text: "more SECRET-RSN2-6" },
                  { type: "text", text: "done SECRET-TXT-6" },
                ],
              },
            ],
          },
        ],
      },
    });
    const r = await p.run(["run", "--session", "s6", "-p", "go", "--json"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(resultOf(r).reply, "done [redacted] (checked)");
    for (const secret of ["SECRET-RSN-6", "SECRET-RSN2-6", "SECRET-TXT-6"]) await assertNowhere(p, secret, [r]);
  });

  test("path 9: a result whose getter throws is an invalid result — a fail-closed hook blocks, a fail-open one is ignored, nothing is printed", async () => {
    const getters = `export default {
      id: "getters",
      setup(api) {
        api.on("before_agent_reply", () => ({ handled: true, get reply() { throw new Error("SECRET-GET-9a claim"); } }));
        api.on("before_response_emit", (e) =>
          e.content.includes("emit") ? { get content() { throw new Error("SECRET-GET-9b emit"); } } : undefined);
        api.on("before_agent_run", (e) =>
          e.prompt.includes("gate") ? { get outcome() { throw new Error("SECRET-GET-9c gate"); } } : undefined);
      },
    };`;
    const p = await fresh({
      "gatehouse.json": {
        model: "scripted:echo",
        plugins: [{ path: "getters.mjs", hooks: { allowConversationAccess: true } }],
      },
      "getters.mjs": getters,
    });
    const emit = await p.run(["run", "-p", "emit this", "--json"]);
    assert.equal(emit.code, 3, emit.stderr);
    assert.deepEqual(resultOf(emit).blockedBy, { pluginId: "getters", hook: "before_response_emit" });
    assert.equal(resultOf(emit).reply, "The response was blocked by a policy (getters).");
    const gate = await p.run(["run", "-p", "gate this", "--json"]);
    assert.equal(gate.code, 3, gate.stderr);
    assert.deepEqual(resultOf(gate).blockedBy, { pluginId: "getters", hook: "before_agent_run" });
    const plain = await p.run(["run", "-p", "plain words"]);
    assert.equal(plain.code, 0, plain.stderr);
    assert.equal(plain.stdout, "plain words\n", "the claim's invalid result was ignored (fail open)");
    for (const secret of ["SECRET-GET-9a", "SECRET-GET-9b", "SECRET-GET-9c"])
      await assertNowhere(p, secret, [emit, gate, plain]);
  });

  test("path 11: before_response_emit's blockReason stays internal; message is what the user is shown", async () => {
    const blocker = `export default {
      id: "emit-block",
      setup(api) {
        api.on("before_response_emit", (e) =>
          e.content.includes("polite") ? { block: true, blockReason: "INTERNAL-11 card number", message: "We cannot show that answer." }
          : { block: true, blockReason: "INTERNAL-11 card number" });
      },
    };`;
    const p = await fresh({
      "gatehouse.json": { model: "scripted:echo", plugins: [{ path: "blocker.mjs" }] },
      "blocker.mjs": blocker,
    });
    const bare = await p.run(["run", "-p", "answer with 4111"]);
    assert.equal(bare.code, 3, bare.stderr);
    assert.equal(bare.stdout, "The response was blocked by a policy (emit-block).\n");
    const polite = await p.run(["run", "-p", "a polite answer", "--json"]);
    assert.equal(polite.code, 3, polite.stderr);
    assert.equal(resultOf(polite).reply, "We cannot show that answer.");
    await assertNowhere(p, "INTERNAL-11", [bare, polite]);
  });
});
