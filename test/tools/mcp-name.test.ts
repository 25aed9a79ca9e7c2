import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { ifRuleMatches, parseIfRule } from "../../src/command-hooks/if-rule.js";
import { PermissionPolicy, parseRule } from "../../src/permissions/index.js";
import { hookMcpCall } from "../../src/runtime/hook-model.js";
import { connectMcpServers } from "../../src/tools/mcp.js";
import { canonicalMcpName, mcpToolName, parseMcpName } from "../../src/tools/mcp-name.js";
import type { Tool } from "../../src/tools/types.js";
import { tempDir } from "./helpers.js";

// One MCP tool name (src/tools/mcp-name.ts): a server configured as `my.server` is registered,
// called by a hook, and named by permission and `if` rules under one spelling.

const FIXTURE = fileURLToPath(new URL("./fixtures/mcp-server.mjs", import.meta.url));

describe("one MCP tool name", () => {
  test("built, read back and normalised as Claude Code does", () => {
    assert.equal(mcpToolName("my.server", "get data"), "mcp__my_server__get_data");
    assert.deepEqual(parseMcpName("mcp__my_server__get_data"), { server: "my_server", tool: "get_data" });
    assert.deepEqual(parseMcpName("mcp__github"), { server: "github", tool: undefined });
    assert.equal(parseMcpName("Bash"), undefined);
    assert.equal(canonicalMcpName("mcp__my.server__get_*"), "mcp__my_server__get_*");
    assert.equal(canonicalMcpName("mcp__*"), "mcp__*");
  });

  test("a server named my.server: its tool is registered, called by a hook by the configured name, and matched by a permission rule and an if rule", async (t) => {
    const dir = await tempDir(t);
    const conn = await connectMcpServers(
      { "my.server": { command: process.execPath, args: [FIXTURE, "--stdio"] } },
      { cwd: dir },
    );
    t.after(() => conn.close());
    const registered = conn.tools.find((tool) => tool.name.endsWith("__echo"));
    assert.equal(registered?.name, "mcp__my_server__echo");

    // An mcp_tool hook names the server as configured: the lookup finds the registered tool.
    const tools = new Map<string, Tool>(conn.tools.map((tool) => [tool.name, tool]));
    const call = hookMcpCall(() => tools, dir);
    const out = await call("my.server", "echo", { text: "hi" }, AbortSignal.timeout(10_000));
    assert.deepEqual(out, { text: "echo: hi", isError: false });

    for (const rule of ["mcp__my.server__echo", "mcp__my.server", "mcp__my_server__*"]) {
      const parsed = parseRule(rule, "deny");
      assert.ok(typeof parsed !== "string", rule);
      const policy = new PermissionPolicy({
        mode: "default",
        cwd: dir,
        rules: [{ behavior: "deny", rule, parsed, id: "project.deny.0", source: "project", baseDir: dir }],
      });
      assert.equal(policy.denyRule("mcp__my_server__echo", { text: "hi" })?.rule, rule, `permission rule ${rule}`);
      const ifRule = parseIfRule(rule);
      assert.ok(ifRule, rule);
      assert.equal(ifRuleMatches(ifRule, "mcp__my_server__echo", { text: "hi" }, dir), true, `if rule ${rule}`);
    }
  });
});
