import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { assertNowhere, doorProjects, resultOf } from "./doors-helpers.js";

// Issue 11, paths 2 and 3: every top-level input meets UserPromptSubmit first, before slash
// commands and claims; /compact's instructions are part of the input, and before_compaction sees them.

/** A UserPromptSubmit guard: a prompt holding `SECRET-UPS` is rejected with exit 2. */
const GUARD = `#!/bin/sh
input=$(cat)
case "$input" in *SECRET-UPS*) echo "prompts holding secrets are not accepted" >&2; exit 2 ;; esac
exit 0
`;
const UPS = { UserPromptSubmit: [{ hooks: [{ type: "command", command: "/bin/sh", args: ["guard.sh"] }] }] };

describe("the input door, through the CLI", { concurrency: 4 }, () => {
  const fresh = doorProjects();

  test("path 2: UserPromptSubmit blocks a turn a plugin would claim, and the prompt is stored only as the notice", async () => {
    const claimer = `export default {
      id: "claimer",
      setup(api) {
        api.on("before_agent_reply", (e) => e.cleanedBody.startsWith("claim") ? { handled: true, reply: { text: "claimed it" } } : undefined);
      },
    };`;
    const p = await fresh({
      "gatehouse.json": {
        model: "scripted:echo",
        plugins: [{ path: "claimer.mjs", hooks: { allowConversationAccess: true } }],
        hooks: UPS,
      },
      "claimer.mjs": claimer,
      "guard.sh": GUARD,
    });
    const blocked = await p.run(["run", "--session", "s2", "-p", "claim SECRET-UPS-2", "--json"]);
    assert.equal(blocked.code, 3, blocked.stderr);
    const result = resultOf(blocked);
    assert.equal(result.outcome, "blocked");
    assert.equal(result.reply, "prompts holding secrets are not accepted");
    assert.deepEqual(result.blockedBy, {
      pluginId: "command-hooks",
      hook: "before_input",
      category: "UserPromptSubmit",
    });
    const claimed = await p.run(["run", "--session", "s2", "-p", "claim this one", "--json"]);
    assert.equal(claimed.code, 0, claimed.stderr);
    assert.equal(resultOf(claimed).reply, "claimed it");
    await assertNowhere(p, "SECRET-UPS-2", [blocked, claimed]);
  });

  test("path 3: /compact's instructions meet UserPromptSubmit, and before_compaction sees them and may block", async () => {
    const compactGuard = `export default {
      id: "compact-guard",
      setup(api) {
        api.on("before_compaction", (e) => (e.instructions ?? "").includes("SECRET-PLG") ? { block: true } : undefined);
      },
    };`;
    const p = await fresh({
      "gatehouse.json": {
        model: "scripted:echo",
        plugins: [{ path: "compact-guard.mjs" }],
        hooks: UPS,
        compaction: { keepRecent: 0 },
      },
      "compact-guard.mjs": compactGuard,
      "guard.sh": GUARD,
    });
    const first = await p.run(["run", "--session", "s3", "-p", "hello there"]);
    assert.equal(first.code, 0, first.stderr);
    const byHook = await p.run(["run", "--session", "s3", "-p", "/compact keep SECRET-UPS-3 in mind", "--json"]);
    assert.equal(byHook.code, 3, byHook.stderr);
    assert.equal(resultOf(byHook).reply, "prompts holding secrets are not accepted");
    const byPlugin = await p.run(["run", "--session", "s3", "-p", "/compact keep SECRET-PLG-3 in mind", "--json"]);
    assert.equal(byPlugin.code, 0, byPlugin.stderr);
    assert.equal(resultOf(byPlugin).reply, "Compaction was blocked by a policy (compact-guard).");
    const shown = await p.run(["sessions", "show", "s3", "--json"]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.deepEqual((JSON.parse(shown.stdout) as { compactions: unknown[] }).compactions, [], "nothing was compacted");
    const allowed = await p.run(["run", "--session", "s3", "-p", "/compact keep it short", "--json"]);
    assert.equal(
      resultOf(allowed).reply,
      "Compacted 3 messages into a summary.",
      "the blocked input stands as its notice",
    );
    for (const secret of ["SECRET-UPS-3", "SECRET-PLG-3"]) await assertNowhere(p, secret, [byHook, byPlugin, shown]);
  });
});
