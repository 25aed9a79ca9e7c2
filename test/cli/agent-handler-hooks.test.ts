// Claude Code's `agent` handler with scripted models: a read-only agent (Read, Grep, Glob; at
// most 50 model turns) checks the hook's condition and answers {ok, reason}; it continues on block,
// so a PreToolUse `ok: false` denies the call and the model reads the reason. What a `prompt` or
// `agent` hook's model calls cost counts in the run's usage. (Against a provider's server:
// agent-handler-hooks-provider.test.ts.)
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { agentHook, settings } from "./agent-hooks-fixtures.js";
import { gatehouse, tempProjects } from "./helpers.js";

/** The main agent's run: one Bash call, then a reply quoting what the tool said. */
const MAIN_RUN = {
  turns: [
    { toolCalls: [{ name: "Bash", input: { command: "rm -f keep.txt && touch ran" } }] },
    { text: "tool said: {{lastToolResult}}" },
  ],
};
/** `n` agent turns that only call a tool. */
const searching = (n: number) =>
  Array.from({ length: n }, () => ({ toolCalls: [{ name: "Glob", input: { pattern: "*.none" } }] }));

describe("agent hooks (scripted models)", { concurrency: 2 }, () => {
  const fresh = tempProjects();

  test("an agent hook reads a file and denies a PreToolUse call: the model reads its reason and the run goes on", async () => {
    const agent = {
      match: "^Check the project policy",
      turns: [
        {
          toolCalls: [
            { name: "Grep", input: { pattern: "never", path: "POLICY.md", output_mode: "content", "-n": false } },
          ],
        },
        { text: '{"ok": false, "reason": "the policy says: {{lastToolResult}}"}' },
      ],
    };
    const cwd = await fresh({
      "s.json": { runs: [agent, MAIN_RUN] },
      "POLICY.md": "Agents never delete keep.txt\n",
      "keep.txt": "kept",
      "gatehouse.json": {
        ...settings(agentHook()),
        // The agent's own tool calls are not the run's: no hook fires for them.
        hooks: {
          PreToolUse: [
            { matcher: "Bash", hooks: [agentHook()] },
            { matcher: "Read|Grep|Glob", hooks: [{ type: "command", command: "touch hooked" }] },
          ],
          PostToolUse: [{ matcher: "Read|Grep|Glob", hooks: [{ type: "command", command: "touch hooked" }] }],
        },
      },
    });
    const check = await gatehouse(["hooks", "check"], { cwd });
    assert.equal(check.code, 0, check.stdout);
    assert.doesNotMatch(check.stdout + check.stderr, /not supported|warning/i);
    const r = await gatehouse(["run", "--json", "-p", "clean up"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    const result = JSON.parse(r.stdout) as { outcome: string; reply: string; steps: number };
    assert.equal(result.outcome, "completed");
    assert.match(result.reply, /^tool said: .*the policy says: Agents never delete keep\.txt/);
    assert.equal(result.steps, 2, "the hook's model calls are not steps of the run");
    assert.equal(existsSync(join(cwd, "ran")), false);
    assert.equal(existsSync(join(cwd, "keep.txt")), true);
    assert.equal(existsSync(join(cwd, "hooked")), false, "no tool hook fired for the agent's Grep");
  });

  test("an agent still calling tools at its 50th model turn gives no answer: a failure under onFailure", async () => {
    const project = (turns: object[], hook: object) =>
      fresh({
        "s.json": { runs: [{ match: "^Check the project policy", turns }, MAIN_RUN] },
        "keep.txt": "kept",
        "gatehouse.json": settings(hook),
      });
    // The answer on turn 50 counts; the one on turn 51 is never asked for.
    const onTime = await project([...searching(49), { text: '{"ok": false, "reason": "not here"}' }], agentHook());
    const r50 = await gatehouse(["run", "-p", "clean up"], { cwd: onTime });
    assert.equal(r50.code, 0, r50.stderr);
    assert.match(r50.stdout, /^tool said: .*not here/);
    assert.equal(existsSync(join(onTime, "ran")), false);

    const late = [...searching(50), { text: '{"ok": false, "reason": "too late"}' }];
    const open = await project(late, agentHook());
    const r51 = await gatehouse(["run", "-p", "clean up"], { cwd: open });
    assert.equal(r51.code, 0, r51.stderr);
    assert.equal(existsSync(join(open, "ran")), true, "no answer fails open, as in Claude Code");
    assert.match(r51.stderr, /PreToolUse hook \(config, hooks\.PreToolUse\[0\]\.hooks\[0\]\) .*: no decision/);

    const closed = await project(late, agentHook({ onFailure: "block" }));
    const blocked = await gatehouse(["run", "-p", "clean up"], { cwd: closed });
    assert.equal(blocked.code, 0, blocked.stderr);
    assert.equal(existsSync(join(closed, "ran")), false, "a guard set to fail closed blocks");
    assert.match(blocked.stdout, /^tool said: .*a required hook gave no decision/);
  });

  test("what prompt and agent hooks' model calls cost counts in the run's usage (--json and the stored run)", async () => {
    const usage = (inputTokens: number, outputTokens: number) => ({ usage: { inputTokens, outputTokens } });
    const script = {
      runs: [
        { match: "^Prompt check", turns: [{ text: '{"ok": true}', ...usage(1000, 100) }] },
        {
          match: "^Agent check",
          turns: [
            { toolCalls: [{ name: "Glob", input: { pattern: "*.md" } }], ...usage(20_000, 2000) },
            { text: '{"ok": true}', ...usage(300_000, 30_000) },
          ],
        },
        {
          turns: [
            { toolCalls: [{ name: "Bash", input: { command: "touch ran" } }], ...usage(10, 1) },
            { text: "done", ...usage(10, 1) },
          ],
        },
      ],
    };
    const cwd = await fresh({
      "s.json": script,
      "gatehouse.json": settings(
        { type: "prompt", prompt: "Prompt check: $ARGUMENTS" },
        { type: "agent", prompt: "Agent check: $ARGUMENTS" },
      ),
    });
    const r = await gatehouse(["run", "--json", "--session", "s-usage", "-p", "go"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    const result = JSON.parse(r.stdout) as { steps: number; usage: { inputTokens: number; outputTokens: number } };
    assert.equal(existsSync(join(cwd, "ran")), true);
    assert.equal(result.steps, 2);
    assert.deepEqual([result.usage.inputTokens, result.usage.outputTokens], [321_020, 32_102]);
    const show = await gatehouse(["sessions", "show", "s-usage", "--json"], { cwd });
    assert.equal(show.code, 0, show.stderr);
    const runs = (JSON.parse(show.stdout) as { runs: { usage?: { inputTokens: number; outputTokens: number } }[] })
      .runs;
    assert.deepEqual(
      [runs[0]?.usage?.inputTokens, runs[0]?.usage?.outputTokens],
      [321_020, 32_102],
      "the stored run counts them too",
    );
  });
});
