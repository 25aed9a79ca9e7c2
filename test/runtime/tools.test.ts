import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { builtinTools } from "../../src/tools/index.js";
import { echoTool, plugin, promptText, runCancelledOnceStarted, testGatehouse, waitingTool } from "./helpers.js";

const MCP_SERVER = fileURLToPath(new URL("../tools/fixtures/mcp-server.mjs", import.meta.url));
const SECRET = "CANARY-subagent-51c";

describe("built-in tools in runs", () => {
  test("hooks see absolute file paths even when the model gives a relative one", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gatehouse-tools-"));
    writeFileSync(join(dir, "notes.txt"), "line one\nline two\n");
    const seen: unknown[] = [];
    const watcher = plugin("watch", (api) =>
      api.on("before_tool_call", (e) => void seen.push(e.params), { matcher: "Read" }),
    );
    const { gatehouse, calls } = testGatehouse(
      {
        runs: [{ turns: [{ toolCalls: [{ name: "Read", input: { file_path: "notes.txt" } }] }, { text: "read it" }] }],
      },
      { plugins: [watcher], tools: builtinTools(), config: { cwd: dir } },
    );
    await gatehouse.run({ prompt: "read my notes" });
    assert.deepEqual(seen, [{ file_path: join(dir, "notes.txt") }]);
    assert.match(promptText(calls[1] as never), /line two/);
  });
});

describe("MCP servers", () => {
  test("an MCP tool round-trips through a scripted run and a matcher mcp__test__.* sees the call", async () => {
    const seen: string[] = [];
    const watcher = plugin("watch", (api) => {
      api.on("before_tool_call", (e) => void seen.push(`pre:${e.toolName}`), { matcher: "mcp__test__.*" });
      api.on("after_tool_call", (e) => void seen.push(`post:${JSON.stringify(e.result)}`), {
        matcher: "mcp__test__.*",
      });
    });
    const { gatehouse, calls } = testGatehouse(
      {
        runs: [
          {
            turns: [
              { toolCalls: [{ name: "mcp__test__echo", input: { text: "ping" } }] },
              { text: "{{lastToolResult}}" },
            ],
          },
        ],
      },
      {
        plugins: [watcher],
        mcpServers: { test: { command: process.execPath, args: [MCP_SERVER, "--stdio"] } },
        // MCP tools ask in default mode (docs/permissions.md): allowed here by a server rule.
        permissions: { allow: ["mcp__test"] },
      },
    );
    try {
      const result = await gatehouse.run({ prompt: "call the server" });
      assert.equal(result.outcome, "completed");
      assert.match(result.reply ?? "", /echo: ping/);
      assert.equal(seen[0], "pre:mcp__test__echo");
      assert.match(seen[1] ?? "", /echo: ping/);
      assert.ok(calls[0]?.tools?.some((t) => t.name === "mcp__test__echo"));
    } finally {
      await gatehouse.close();
    }
  });

  test("a server that fails to start is a logged diagnostic, not a crash; the run still works", async () => {
    const { gatehouse, logLines } = testGatehouse(
      { runs: [{ turns: [{ text: "fine" }] }] },
      { mcpServers: { broken: { command: "/nonexistent/mcp-server" } } },
    );
    try {
      assert.equal((await gatehouse.run({ prompt: "q" })).reply, "fine");
      assert.ok(logLines.some((l) => l.includes('MCP server "broken"')));
    } finally {
      await gatehouse.close();
    }
  });
});

describe("sub-agents", () => {
  const delegate = (childTurns: object[]) => ({
    runs: [
      { match: "^child", turns: childTurns },
      {
        turns: [
          { toolCalls: [{ name: "Agent", input: { description: "d", prompt: "child task" } }] },
          { text: "parent saw: {{lastToolResult}}" },
        ],
      },
    ],
  });

  test("a parent-level plugin blocks the sub-agent's own tool calls", async () => {
    let executed = false;
    const guard = plugin("guard", (api) =>
      api.on(
        "before_tool_call",
        (_e, ctx) => (ctx.depth > 0 ? { block: true, blockReason: "no tools in sub-agents" } : undefined),
        {
          matcher: "Echo",
        },
      ),
    );
    const tool = {
      ...echoTool,
      async execute() {
        executed = true;
        return { echoed: "ran" };
      },
    };
    const { gatehouse } = testGatehouse(
      delegate([{ toolCalls: [{ name: "Echo", input: { text: "x" } }] }, { text: "child: {{lastToolResult}}" }]),
      { plugins: [guard], subagents: true, permissions: { allow: ["Agent"] }, tools: [tool] },
    );
    const result = await gatehouse.run({ prompt: "delegate" });
    assert.equal(executed, false);
    assert.match(result.reply ?? "", /no tools in sub-agents/);
  });

  test("a blocked sub-agent answer never reaches the parent: the parent gets the notice", async () => {
    const dlp = plugin("dlp", (api) =>
      api.on("before_response_emit", (e, ctx) =>
        ctx.depth > 0 && e.content.includes(SECRET) ? { block: true } : undefined,
      ),
    );
    const { gatehouse, calls, store } = testGatehouse(delegate([{ text: `the secret is ${SECRET}` }]), {
      plugins: [dlp],
      subagents: true,
      permissions: { allow: ["Agent"] },
    });
    const result = await gatehouse.run({ prompt: "delegate" });
    assert.equal(result.outcome, "completed");
    assert.match(result.reply ?? "", /blocked by a policy \(dlp\)/);
    assert.doesNotMatch(JSON.stringify(calls.at(-1)?.prompt), new RegExp(SECRET));
    const children = await store.listSessions({ parentSessionId: result.sessionId });
    assert.equal(children.length, 1);
    const childMessages = await store.sessionMessages(children[0]?.id as string);
    assert.doesNotMatch(JSON.stringify(childMessages), new RegExp(SECRET));
    assert.doesNotMatch(JSON.stringify(await store.runMessages(result.runId)), new RegExp(SECRET));
  });

  test("the child's answer passes the parent's after_tool_call, which may rewrite it", async () => {
    const rewrite = plugin("rw", (api) =>
      api.on("after_tool_call", (e) => ({ result: String(e.result).toUpperCase() }), { matcher: "Agent" }),
    );
    const { gatehouse } = testGatehouse(delegate([{ text: "quiet child" }]), {
      plugins: [rewrite],
      subagents: true,
      permissions: { allow: ["Agent"] },
    });
    assert.equal((await gatehouse.run({ prompt: "delegate" })).reply, "parent saw: QUIET CHILD");
  });

  test("a failed child is reported to the parent as a tool error, never lost", async () => {
    const { gatehouse, store } = testGatehouse(delegate([{ error: { message: "child model down" } }]), {
      subagents: true,
      permissions: { allow: ["Agent"] },
    });
    const result = await gatehouse.run({ prompt: "delegate" });
    assert.equal(result.outcome, "completed");
    const tool = (await store.runMessages(result.runId)).find((m) => m.role === "tool");
    const part = tool?.parts[0];
    assert.ok(part?.type === "tool_result" && part.isError === true);
    assert.match(JSON.stringify(part), /sub-agent failed/);
  });

  test("a sub-agent cancelled mid-run: the child run is cancelled and the parent's Agent call gets a result saying so", async () => {
    const { tool, started } = waitingTool();
    const { gatehouse, store } = testGatehouse(delegate([{ toolCalls: [{ name: "Wait", input: { note: "n" } }] }]), {
      subagents: true,
      permissions: { allow: ["Agent"] },
      tools: [tool],
    });
    const result = await runCancelledOnceStarted(gatehouse, { prompt: "delegate" }, started);
    assert.equal(result.outcome, "cancelled");
    const [child] = await store.listSessions({ parentSessionId: result.sessionId });
    const [childRun] = await store.listRuns(child?.id as string);
    assert.equal(childRun?.status, "cancelled");
    const parts = (await store.history(result.sessionId)).flatMap((m) => m.parts);
    const call = parts.find((p) => p.type === "tool_call" && p.toolName === "Agent");
    assert.ok(call?.type === "tool_call");
    const answer = parts.find((p) => p.type === "tool_result" && p.toolCallId === call.toolCallId);
    assert.ok(answer?.type === "tool_result" && answer.isError === true);
    assert.match(String(answer.output), /cancelled/);
    const childParts = (await store.runMessages(childRun?.id as string)).flatMap((m) => m.parts);
    assert.equal(
      childParts.filter((p) => p.type === "tool_call").length,
      childParts.filter((p) => p.type === "tool_result").length,
      "the child's own call is answered too",
    );
  });

  test("without maxDepth above 1 a sub-agent has no Agent tool of its own", async () => {
    const { gatehouse, calls } = testGatehouse(delegate([{ text: "leaf" }]), {
      subagents: true,
      permissions: { allow: ["Agent"] },
    });
    await gatehouse.run({ prompt: "delegate" });
    const childCall = calls.find((c) => JSON.stringify(c.prompt).includes("child task"));
    assert.ok(childCall);
    assert.equal(childCall.tools?.some((t) => t.name === "Agent") ?? false, false);
    assert.ok(calls[0]?.tools?.some((t) => t.name === "Agent"));
  });
});
