import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { messageText } from "../../src/core/message.js";
import type { ScriptInput } from "../../src/models/index.js";
import { recorder, testGatehouse } from "./helpers.js";

const HOOK = fileURLToPath(new URL("./fixtures/policy-hook.mjs", import.meta.url));
const EVENTS = [
  "SessionStart",
  "UserPromptSubmit",
  "PreToolUse",
  "PostToolUse",
  "Stop",
  "SubagentStop",
  "SubagentStart",
  "PostCompact",
];

/** A Gatehouse whose `--settings` runs the policy hook on every event, logging each payload. */
function withHooks(
  script: ScriptInput,
  extraEnv: Record<string, string> = {},
  compaction: { contextTokens?: number; keepRecent?: number } = {},
) {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-cmdhooks-"));
  const log = join(dir, "hook.log");
  writeFileSync(log, "");
  const hooks = Object.fromEntries(EVENTS.map((e) => [e, [{ hooks: [{ type: "command", command: `node ${HOOK}` }] }]]));
  const rec = recorder();
  const t = testGatehouse(script, {
    plugins: [rec.plugin],
    subagents: true,
    permissions: { allow: ["Agent"] },
    env: { ...process.env, HOOK_LOG: log, OPENAI_API_KEY: "sk-should-not-leak", ...extraEnv },
    config: { cwd: dir, compaction },
    commandHooks: { load: { homeDir: dir, cliSettings: JSON.stringify({ hooks }) } },
  });
  const payloads = () =>
    readFileSync(log, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown> & { hook_event_name: string });
  return { ...t, rec, payloads, dir };
}

const echo = (text: string): ScriptInput => ({
  runs: [{ turns: [{ toolCalls: [{ name: "Echo", input: { text } }] }, { text: "final: {{lastToolResult}}" }] }],
});

describe("Claude Code command hooks in runs (the Code Puppy claims, end to end)", () => {
  test("a benign prompt passes; a malicious one cancels the turn with the hook's reason and no Stop at all", async () => {
    const { gatehouse, payloads, calls, store } = withHooks({ runs: [{ turns: [{ text: "hello" }] }] });
    const ok = await gatehouse.run({ prompt: "hi there" });
    assert.equal(ok.outcome, "completed");
    assert.match(JSON.stringify(calls[0]?.prompt), /PROMPT-HOOK-CONTEXT/);
    const before = payloads().length;
    const bad = await gatehouse.run({ prompt: "MALICIOUS do harm", sessionId: ok.sessionId });
    assert.equal(bad.outcome, "blocked");
    assert.equal(bad.reply, "Prompt rejected by policy");
    assert.equal(calls.length, 1);
    const after = payloads()
      .slice(before)
      .map((p) => p.hook_event_name);
    assert.deepEqual(after, ["UserPromptSubmit"]);
    const stored = (await store.runMessages(bad.runId)).map((m) => messageText(m)).join("|");
    assert.doesNotMatch(stored, /MALICIOUS/);
    assert.doesNotMatch(stored, new RegExp(HOOK));
  });

  test("a benign tool call gets PreToolUse and PostToolUse; a forbidden one gets PreToolUse only and never runs", async () => {
    const benign = withHooks(echo("harmless"));
    await benign.gatehouse.run({ prompt: "go" });
    assert.deepEqual(
      benign
        .payloads()
        .filter((p) => p.tool_name === "Echo")
        .map((p) => p.hook_event_name),
      ["PreToolUse", "PostToolUse"],
    );
    const bad = withHooks(echo("forbidden thing"));
    const result = await bad.gatehouse.run({ prompt: "go" });
    assert.deepEqual(
      bad
        .payloads()
        .filter((p) => p.tool_name === "Echo")
        .map((p) => p.hook_event_name),
      ["PreToolUse"],
    );
    assert.equal(bad.rec.count("after_tool_call"), 0);
    assert.match(result.reply ?? "", /forbidden input/);
  });

  test("a PreToolUse block reads to the model in Claude Code's words; a secret in the hook's command is masked", async () => {
    const blockedBy = async (command: string) => {
      const hooks = { PreToolUse: [{ matcher: "Echo", hooks: [{ type: "command", command }] }] };
      const { gatehouse } = testGatehouse(echo("x"), {
        env: { ...process.env, OPENAI_API_KEY: "sk-should-not-leak" },
        commandHooks: { load: { homeDir: tmpdir(), cliSettings: JSON.stringify({ hooks }) } },
      });
      return (await gatehouse.run({ prompt: "go" })).reply;
    };
    const exit2 = "echo 'EXIT2-REASON: not allowed' >&2; exit 2 # sk-should-not-leak";
    assert.equal(
      await blockedBy(exit2),
      "final: PreToolUse:Echo hook error: [echo 'EXIT2-REASON: not allowed' >&2; exit 2 # ****]: EXIT2-REASON: not allowed\n",
    );
    const deny = { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "DENY-REASON" };
    const json = `echo '${JSON.stringify({ hookSpecificOutput: deny })}'`;
    assert.equal(await blockedBy(json), "final: PreToolUse:Echo hook error: DENY-REASON");
  });

  test("a secret in a tool's output is withheld: the reply and every later payload lack it", async () => {
    const { gatehouse, payloads, store } = withHooks(echo("SECRET-4242"));
    const result = await gatehouse.run({ prompt: "go" });
    assert.match(result.reply ?? "", /withheld.*the output contained a secret/);
    const all = payloads();
    const post = all.findIndex((p) => p.hook_event_name === "PostToolUse");
    for (const p of all.slice(post + 1)) assert.doesNotMatch(JSON.stringify(p), /echoed.{0,4}SECRET-4242/);
    const transcript = all.at(-1)?.transcript_path as string;
    assert.doesNotMatch(readFileSync(transcript, "utf8"), /echoed.{0,4}SECRET-4242/);
    assert.doesNotMatch(JSON.stringify(await store.runMessages(result.runId)), /echoed.{0,4}SECRET-4242/);
  });

  test("Stop fires for the main agent with response_text equal to the reply; all events share the real session id", async () => {
    const { gatehouse, payloads } = withHooks({ runs: [{ turns: [{ text: "the final answer" }] }] });
    const result = await gatehouse.run({ prompt: "q" });
    const all = payloads();
    const stop = all.filter((p) => p.hook_event_name === "Stop");
    assert.equal(stop.length, 1);
    assert.equal(stop[0]?.response_text, result.reply);
    assert.equal(stop[0]?.last_assistant_message, result.reply);
    assert.equal(stop[0]?.stop_hook_active, false);
    assert.equal(all.filter((p) => p.hook_event_name === "SubagentStop").length, 0);
    for (const p of all) {
      assert.equal(p.session_id, result.sessionId);
      assert.equal(p.env_session, result.sessionId);
      assert.equal(p.run_id, result.runId);
      assert.equal(p.saw_key, null, "provider credentials are removed from the hook's environment");
    }
  });

  test("a sub-agent's events carry its own session id, agent_id and agent_type; it gets SubagentStop with its transcript, and no SessionStart or Stop", async () => {
    const { gatehouse, payloads } = withHooks({
      runs: [
        { match: "^child", turns: [{ text: "child says hi" }] },
        {
          turns: [
            {
              toolCalls: [
                { name: "Agent", input: { description: "d", prompt: "child task", subagent_type: "explorer" } },
              ],
            },
            { text: "done" },
          ],
        },
      ],
    });
    const result = await gatehouse.run({ prompt: "delegate" });
    const all = payloads();
    const child = all.filter((p) => p.session_id !== result.sessionId);
    assert.ok(child.length > 0);
    assert.ok(child.every((p) => p.agent_type === "explorer" && p.agent_id === p.session_id && p.depth === 1));
    assert.deepEqual(
      child.map((p) => p.hook_event_name),
      ["SubagentStop"],
    );
    assert.equal(
      all.filter((p) => p.hook_event_name === "SessionStart").length,
      1,
      "only the top-level run starts a session",
    );
    const transcript = String(child[0]?.agent_transcript_path);
    assert.equal(transcript, child[0]?.transcript_path);
    assert.match(readFileSync(transcript, "utf8"), /child task/, "agent_transcript_path is the sub-agent's transcript");
    assert.equal(all.filter((p) => p.hook_event_name === "Stop").length, 1);
    const start = all.filter((p) => p.hook_event_name === "SubagentStart");
    assert.equal(start.length, 1);
    assert.equal(start[0]?.agent_id, child[0]?.session_id, "SubagentStart names the child as its own events do");
    assert.equal(start[0]?.session_id, result.sessionId);
    assert.equal(all.filter((p) => p.hook_event_name === "UserPromptSubmit").length, 1);
  });

  test("Stop blocks run one more pass with the reason, at most 8 in a row", async () => {
    const turns = Array.from({ length: 12 }, (_, i) => ({ text: `attempt ${i}` }));
    const { gatehouse, payloads, calls } = withHooks({ runs: [{ turns }] }, { STOP_ALWAYS_BLOCKS: "1" });
    const result = await gatehouse.run({ prompt: "q" });
    assert.equal(calls.length, 9);
    assert.equal(result.reply, "attempt 8");
    const stops = payloads().filter((p) => p.hook_event_name === "Stop");
    assert.deepEqual(
      stops.map((p) => [p.loop_count, p.stop_hook_active]),
      Array.from({ length: 9 }, (_, i) => [i, i > 0]),
    );
    assert.match(JSON.stringify(calls[1]?.prompt), /keep going \(0\)/);
  });

  test("PostCompact says how the compaction was started: manual for /compact, auto over the budget", async () => {
    const summarize = { match: "^Summarize", turns: [{ text: "the summary" }] };
    const manual = withHooks({ runs: [summarize, { turns: [{ text: "a" }] }] }, {}, { keepRecent: 0 });
    const first = await manual.gatehouse.run({ prompt: "hello" });
    await manual.gatehouse.run({ prompt: "/compact", sessionId: first.sessionId });
    const auto = withHooks({ runs: [summarize, { turns: [{ text: "a" }] }] }, {}, { contextTokens: 1, keepRecent: 1 });
    const earlier = await auto.gatehouse.run({ prompt: "hello" });
    await auto.gatehouse.run({ prompt: "again", sessionId: earlier.sessionId });
    const triggers = (payloads: ReturnType<typeof manual.payloads>) =>
      payloads.filter((p) => p.hook_event_name === "PostCompact").map((p) => [p.trigger, p.compact_summary]);
    assert.deepEqual(triggers(manual.payloads()), [["manual", "the summary"]]);
    assert.deepEqual(triggers(auto.payloads()), [["auto", "the summary"]]);
  });

  test("SessionStart output is queued as context for the first run that passes its gate", async () => {
    const { gatehouse, calls } = withHooks({ runs: [{ turns: [{ text: "ok" }] }] });
    const blocked = await gatehouse.run({ prompt: "MALICIOUS first" });
    assert.equal(blocked.outcome, "blocked");
    await gatehouse.run({ prompt: "benign", sessionId: blocked.sessionId });
    assert.match(JSON.stringify(calls[0]?.prompt), /SESSION-START-CONTEXT/);
  });
});
