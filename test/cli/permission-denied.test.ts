import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { type CliResult, gatehouse, tempProjects } from "./helpers.js";

// Claude Code's PermissionDenied (docs/command-hooks.md): it sees every denial of the permission
// check — a deny rule, the mode, nobody to ask, a PermissionRequest deny — with the payload Claude
// Code sends; `retry: true` tells the model it may try again, and the call stays denied. And a
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

  test("a deny rule's denial reaches PermissionDenied with Claude Code's payload; the model reads the denial", async () => {
    const cwd = await fresh({
      "s.json": bashScript("rm -rf victim"),
      "gatehouse.json": { model: "scripted:s.json", permissions: { deny: ["Bash(rm:*)"] } },
      ".claude/settings.json": recordDenied(),
    });
    const r = jsonOf(await run(cwd));
    const [payload, ...more] = await payloads(cwd);
    assert.equal(more.length, 0, "one denial, one PermissionDenied");
    assert.equal(payload?.hook_event_name, "PermissionDenied");
    assert.equal(payload?.tool_name, "Bash");
    assert.deepEqual(payload?.tool_input, { command: "rm -rf victim" });
    assert.equal(typeof payload?.tool_use_id, "string");
    assert.equal(payload?.permission_mode, "default");
    // Claude Code's words for a deny rule's denial: the rule's content, never the refused command.
    assert.equal(payload?.reason, "Permission to use Bash with rm:* has been denied.");
    assert.equal(r.reply, `said: ${payload?.reason}`, "the model read the same denial, with no retry line");
  });

  test("nobody to ask, plan mode and a PermissionRequest deny each fire PermissionDenied", async () => {
    const cwd = await fresh({
      "s.json": bashScript("touch made-here"),
      "gatehouse.json": { model: "scripted:s.json" },
      ".claude/settings.json": recordDenied(),
    });
    jsonOf(await run(cwd));
    jsonOf(await run(cwd, ["--permission-mode", "plan"]));
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
    const sent = await payloads(cwd);
    assert.deepEqual(
      sent.map((p) => p.permission_mode),
      ["default", "plan", "default"],
      "permission_mode is the mode in force",
    );
    const reasons = sent.map((p) => String(p.reason));
    assert.equal(reasons.length, 3, reasons.join("\n"));
    assert.match(reasons[0] as string, /no one can be asked here/);
    assert.match(reasons[1] as string, /plan mode/);
    assert.equal(reasons[2], "not today", "the PermissionRequest hook's message is what the model reads");
  });

  test("retry: true adds a line telling the model it may try again; the call still does not run", async () => {
    const cwd = await fresh({
      "s.json": bashScript("touch ran"),
      "gatehouse.json": { model: "scripted:s.json", permissions: { deny: ["Bash(touch:*)"] } },
      ".claude/settings.json": recordDenied({ hookSpecificOutput: { hookEventName: "PermissionDenied", retry: true } }),
    });
    const r = jsonOf(await run(cwd));
    assert.match(r.reply, /^said: Permission to use Bash with touch:\* has been denied\. .*may try this call again/);
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
