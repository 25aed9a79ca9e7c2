// Claude Code's `mcp_tool` handler: a hook that calls a connected MCP server's tool, with
// `${path}` values taken from the hook input; the tool's text is read like stdout.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { gatehouse, tempProjects } from "./helpers.js";

/** Claude Code's `${path}` placeholder of an mcp_tool input. */
const ref = (path: string) => `\${${path}}`;
const POLICY_FIXTURE = fileURLToPath(new URL("fixtures/mcp-policy.mjs", import.meta.url));

describe("mcp_tool hooks", () => {
  const fresh = tempProjects();

  test("a PreToolUse mcp_tool hook calls the server's tool with values from the hook input, and its answer decides", async () => {
    const deny = JSON.stringify({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: `policy server refuses: ${ref("tool_input.command")}`,
      },
    });
    const cwd = await fresh({
      "s.json": {
        runs: [
          {
            turns: [
              { toolCalls: [{ name: "Bash", input: { command: "touch ran" } }] },
              { text: "model saw: {{lastToolResult}}" },
            ],
          },
        ],
      },
      "gatehouse.json": {
        model: "scripted:s.json",
        mcpServers: { policy: { command: process.execPath, args: [POLICY_FIXTURE] } },
        hooks: {
          PreToolUse: [
            { matcher: "Bash", hooks: [{ type: "mcp_tool", server: "policy", tool: "answer", input: { text: deny } }] },
          ],
        },
      },
    });
    const r = await gatehouse(["run", "-p", "deploy"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(existsSync(join(cwd, "ran")), false, "denied by the MCP tool's answer");
    assert.match(r.stdout, /model saw: .*policy server refuses: touch ran/);
  });

  test("a server that is not configured fails under onFailure: a fail-closed guard blocks", async () => {
    const cwd = await fresh({
      "s.json": {
        runs: [{ turns: [{ toolCalls: [{ name: "Bash", input: { command: "touch ran" } }] }, { text: "done" }] }],
      },
      "gatehouse.json": {
        model: "scripted:s.json",
        hooks: {
          PreToolUse: [
            { matcher: "Bash", hooks: [{ type: "mcp_tool", server: "absent", tool: "check", onFailure: "block" }] },
          ],
        },
      },
    });
    const r = await gatehouse(["run", "-p", "go"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(existsSync(join(cwd, "ran")), false);
  });
});
