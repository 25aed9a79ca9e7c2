// MCP servers as a daily user meets them: per-server startup and tool-call timeouts (Claude Code's
// `"timeout"` accepted), servers started concurrently in the background (a turn that calls no
// model does not wait for a server still starting), and `gatehouse mcp list`.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { gatehouse, tempProjects } from "./helpers.js";
import { gatehouseInProcess } from "./in-process.js";
import { parseJson } from "./project-helpers.js";

const ECHO = fileURLToPath(new URL("fixtures/mcp-echo.mjs", import.meta.url));
const SLOW = fileURLToPath(new URL("fixtures/mcp-slow.mjs", import.meta.url));
const POLICY = fileURLToPath(new URL("fixtures/mcp-policy.mjs", import.meta.url));

const echoServer = { command: process.execPath, args: [ECHO] };
/** Never answers the handshake. */
const hungServer = (startupTimeoutMs: number) => ({
  command: process.execPath,
  args: [SLOW, "handshake"],
  startupTimeoutMs,
});

/** A script whose run calls `tool` once, then answers with what it returned. */
const callOnce = (tool: string, input: unknown = {}) => ({
  runs: [{ turns: [{ toolCalls: [{ name: tool, input }] }, { text: "result: {{lastToolResult}}" }] }],
});

describe("MCP servers: timeouts, background start, mcp list", { concurrency: 3 }, () => {
  const fresh = tempProjects();

  test("a per-server startupTimeoutMs fails only that server, named with its limit; the other's tool still runs", async () => {
    const cwd = await fresh({
      "s.json": callOnce("mcp__fx__echo", { text: "ping" }),
      "gatehouse.json": {
        model: "scripted:s.json",
        mcpServers: { fx: echoServer, hung: hungServer(300) },
        tools: { allow: ["mcp__*"] },
        permissions: { allow: ["mcp__fx", "mcp__hung"] },
      },
    });
    const r = await gatehouseInProcess(["run", "-p", "call it"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /result: echo: ping/);
    assert.match(r.stderr, /MCP server "hung" is unavailable: no answer to the MCP handshake within 300 ms/);
    // When the model call had to wait, that is said once, naming the servers still starting then.
    // Which ones depends on timing: hung may already have failed, and on a loaded machine fx may
    // not have started yet (test/runtime/late-tools.test.ts proves the wait and its one notice exactly).
    const waits = r.stderr.split("\n").filter((l) => l.includes("waiting for MCP"));
    assert.ok(waits.length <= 1, r.stderr);
    for (const line of waits)
      assert.match(line, /^gatehouse: waiting for MCP (server "fx"|server "hung"|servers "fx", "hung") to start$/);
  });

  test('"timeout" (Claude Code\'s per-call limit, ms) and toolTimeoutMs stop a tool call that never returns', async () => {
    for (const limit of [{ timeout: 400 }, { toolTimeoutMs: 400 }]) {
      const cwd = await fresh({
        "s.json": callOnce("mcp__slow__wait"),
        "gatehouse.json": {
          model: "scripted:s.json",
          mcpServers: { slow: { command: process.execPath, args: [SLOW, "tool"], ...limit } },
          tools: { allow: ["mcp__*"] },
          permissions: { allow: ["mcp__slow"] },
        },
      });
      const r = await gatehouseInProcess(["run", "-p", "wait"], { cwd });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /result: .*MCP server "slow", tool wait: .*timed out/i, JSON.stringify(limit));
    }
  });

  test("timeout and toolTimeoutMs that disagree, or a timeout that is not a positive whole number, exit 2 naming the field", async () => {
    for (const [entry, field] of [
      [{ ...echoServer, timeout: 1000, toolTimeoutMs: 2000 }, /mcpServers\.fx\.timeout/],
      [{ ...echoServer, startupTimeoutMs: -1 }, /mcpServers\.fx\.startupTimeoutMs/],
    ] as const) {
      const cwd = await fresh({ "gatehouse.json": { model: "scripted:echo", mcpServers: { fx: entry } } });
      const r = await gatehouseInProcess(["run", "-p", "hi"], { cwd });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, field);
    }
  });

  test("a server still starting does not hold up a turn that calls no model (a blocked prompt)", async () => {
    const blocker = `export default { id: "blocker", setup(api) {
      api.on("before_agent_run", () => ({ outcome: "block", reason: "internal", message: "Not here." }));
    } };`;
    const cwd = await fresh({
      "blocker.mjs": blocker,
      "gatehouse.json": {
        model: "scripted:echo",
        // Ten minutes to start: a run that waited for it would outlast the test.
        mcpServers: { hung: hungServer(600_000) },
        plugins: [{ path: "blocker.mjs", hooks: { allowConversationAccess: true } }],
      },
    });
    const r = await gatehouseInProcess(["run", "-p", "hi", "--json"], { cwd });
    assert.equal(r.code, 3, r.stderr);
    assert.equal((parseJson(r) as { outcome: string }).outcome, "blocked");
    assert.ok(!r.stderr.includes("waiting for MCP"), "nothing waited");
  });

  test("an mcp_tool hook at the input door (before any model call) waits for its server still starting", async () => {
    const block = JSON.stringify({ decision: "block", reason: "the policy server says no" });
    const cwd = await fresh({
      "gatehouse.json": {
        model: "scripted:echo",
        mcpServers: { policy: { command: process.execPath, args: [POLICY] } },
        hooks: {
          UserPromptSubmit: [
            { hooks: [{ type: "mcp_tool", server: "policy", tool: "answer", input: { text: block } }] },
          ],
        },
      },
    });
    const r = await gatehouseInProcess(["run", "-p", "hi", "--json"], { cwd });
    assert.equal(r.code, 3, r.stderr);
    assert.equal((parseJson(r) as { outcome: string }).outcome, "blocked");
  });

  test("mcp list: each server's status, transport, tools and errors; exit 1 when one failed", async () => {
    const cwd = await fresh({
      "gatehouse.json": { model: "scripted:echo", mcpServers: { fx: echoServer, hung: hungServer(300) } },
    });
    const table = await gatehouse(["mcp", "list"], { cwd });
    assert.equal(table.code, 1, table.stderr);
    assert.match(table.stdout, /^SERVER\s+STATUS\s+TRANSPORT\s+STARTUP\s+TOOLS$/m);
    assert.match(table.stdout, /^fx\s+connected\s+stdio\s+\d+ms\s+mcp__fx__echo, mcp__fx__env$/m);
    assert.match(table.stdout, /^hung\s+failed\s+stdio\s+\d+ms\s+-$/m);
    assert.match(table.stdout, /^hung: no answer to the MCP handshake within 300 ms/m);
    const json = await gatehouseInProcess(["mcp", "list", "--json"], { cwd });
    const servers = parseJson(json) as { name: string; status: string; tools: string[]; errors: string[] }[];
    assert.deepEqual(
      servers.map((s) => [s.name, s.status, s.tools]),
      [
        ["fx", "connected", ["mcp__fx__echo", "mcp__fx__env"]],
        ["hung", "failed", []],
      ],
    );
    const none = await gatehouseInProcess(["mcp", "list"], { cwd: await fresh() });
    assert.equal(none.code, 0);
    assert.equal(none.stdout, "no MCP servers configured\n");
  });
});
