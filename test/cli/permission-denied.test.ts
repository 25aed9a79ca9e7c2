import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { type CliResult, gatehouse, tempProjects } from "./helpers.js";

// Claude Code's PermissionDenied (docs/command-hooks.md): as Claude Code's, it sees the denials no
// one made by hand (auto mode's there, the permission mode's here) and not a deny rule's, nobody to
// ask, a person's or a PermissionRequest deny; it gets the payload Claude Code sends, and
// `retry: true` tells the model it may try again, while the call stays denied. And a
// PreToolUse `defer`, which means nothing here, says so on stderr instead of passing silently.

/** The model runs `command` with Bash, then answers with what the call returned. */
const bashScript = (command: string) => ({
  runs: [{ turns: [{ toolCalls: [{ name: "Bash", input: { command } }] }, { text: "said: {{lastToolResult}}" }] }],
});

/** A PermissionDenied hook that appends its payload to denied.jsonl and prints `output`. */
const recordDenied = (output?: object) => ({
  hooks: {
    PermissionDenied: [
      {
        matcher: "Bash",
        hooks: [
          {
            type: "command",
            command: `cat >> "$CLAUDE_PROJECT_DIR/denied.jsonl"; echo >> "$CLAUDE_PROJECT_DIR/denied.jsonl"${
              output ? `; echo '${JSON.stringify(output)}'` : ""
            }`,
          },
        ],
      },
    ],
  },
});

function jsonOf(r: CliResult): { reply: string; permissionDenials: { reason: string }[] } {
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

async function payloads(cwd: string): Promise<Record<string, unknown>[]> {
  const text = await readFile(join(cwd, "denied.jsonl"), "utf8");
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l));
}

describe("PermissionDenied and defer in gatehouse run", { concurrency: 4 }, () => {
  const fresh = tempProjects();
  const run = (cwd: string, args: string[] = []) => gatehouse(["run", "-p", "go", "--json", ...args], { cwd });

  test("plan mode's denial reaches PermissionDenied with Claude Code's payload; the model reads the denial", async () => {
    const cwd = await fresh({
      "s.json": bashScript("rm -rf victim"),
      "gatehouse.json": { model: "scripted:s.json" },
      ".claude/settings.json": recordDenied(),
    });
    const r = jsonOf(await run(cwd, ["--permission-mode", "plan"]));
    const [payload, ...more] = await payloads(cwd);
    assert.equal(more.length, 0, "one denial, one PermissionDenied");
    assert.equal(payload?.hook_event_name, "PermissionDenied");
    assert.equal(payload?.tool_name, "Bash");
    assert.deepEqual(payload?.tool_input, { command: "rm -rf victim" });
    assert.equal(typeof payload?.tool_use_id, "string");
    assert.equal(payload?.permission_mode, "plan");
    assert.match(String(payload?.reason), /denied \(plan mode\)/);
    assert.equal(r.reply, `said: ${payload?.reason}`, "the model read the same denial, with no retry line");
  });

  test("a deny rule, nobody to ask and a PermissionRequest deny fire no PermissionDenied, as in Claude Code; the model reads Claude Code's words for the rule's", async () => {
    const cwd = await fresh({
      "s.json": bashScript("touch made-here"),
      "gatehouse.json": { model: "scripted:s.json" },
      ".claude/settings.json": recordDenied(),
    });
    const nobody = jsonOf(await run(cwd));
    assert.deepEqual(
      nobody.permissionDenials.map((d) => d.reason),
      ["nobody"],
    );
    const ruled = await fresh({
      "s.json": bashScript("touch made-here"),
      "gatehouse.json": { model: "scripted:s.json", permissions: { deny: ["Bash(touch:*)"] } },
      ".claude/settings.json": recordDenied(),
    });
    const rule = jsonOf(await run(ruled));
    await assert.rejects(readFile(join(ruled, "denied.jsonl")), "no PermissionDenied for the rule's denial");
    assert.deepEqual(
      rule.permissionDenials.map((d) => d.reason),
      ["rule"],
    );
    assert.equal(rule.reply, "said: Permission to use Bash with touch:* has been denied.");
    const requestDeny = {
      hooks: {
        PermissionRequest: [
          {
            hooks: [
              {
                type: "command",
                command: `echo '${JSON.stringify({ hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "deny", message: "not today" } } })}'`,
              },
            ],
          },
        ],
      },
    };
    const denied = jsonOf(await run(cwd, ["--settings", JSON.stringify(requestDeny)]));
    assert.deepEqual(
      denied.permissionDenials.map((d) => d.reason),
      ["hook"],
    );
    await assert.rejects(readFile(join(cwd, "denied.jsonl")), "no PermissionDenied ran");
    await assert.rejects(readFile(join(cwd, "made-here")), "the call never ran");
  });

  test("retry: true adds a line telling the model it may try again; the call still does not run", async () => {
    const cwd = await fresh({
      "s.json": bashScript("touch ran"),
      "gatehouse.json": { model: "scripted:s.json" },
      ".claude/settings.json": recordDenied({ hookSpecificOutput: { hookEventName: "PermissionDenied", retry: true } }),
    });
    const r = jsonOf(await run(cwd, ["--permission-mode", "dontAsk"]));
    assert.match(r.reply, /denied \(dontAsk mode\).*may try this call again/);
    await assert.rejects(readFile(join(cwd, "ran")), "the call stayed denied");
  });

  test("hooks test PermissionDenied sends a denial's payload and shows the hook's retry", async () => {
    const cwd = await fresh({
      ".claude/settings.json": recordDenied({ hookSpecificOutput: { hookEventName: "PermissionDenied", retry: true } }),
    });
    const r = await gatehouse(["hooks", "test", "PermissionDenied", "--tool", "Bash"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /PermissionDenied \(tool_name "Bash"\): 1 handler/);
    assert.match(r.stdout, /retry: true/);
    const [payload] = await payloads(cwd);
    assert.equal(typeof payload?.reason, "string");
    assert.equal(typeof payload?.tool_use_id, "string");
  });

  test("a PreToolUse defer is no decision, and a warning line on stderr says it means nothing here", async () => {
    const deferHook = {
      type: "command",
      command: `echo '${JSON.stringify({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "defer" } })}'`,
    };
    const cwd = await fresh({
      "s.json": bashScript("touch ran"),
      "gatehouse.json": { model: "scripted:s.json", permissions: { allow: ["Bash(touch:*)"] } },
      ".claude/settings.json": { hooks: { PreToolUse: [{ matcher: "Bash", hooks: [deferHook] }] } },
    });
    const r = await run(cwd);
    jsonOf(r);
    await readFile(join(cwd, "ran"));
    assert.match(r.stderr, /permissionDecision "defer" has no meaning in Gatehouse/);
  });
});
