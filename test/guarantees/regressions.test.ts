import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { captureLogger } from "../../harness/capture.js";
import { runScenario } from "../../harness/r1.js";
import type { Scenario } from "../../harness/scenario.js";
import { filesUnder } from "../../harness/sinks.js";
import { echoTool, harnessModel } from "../../harness/world.js";
import { createGatehouse } from "../../src/assembly/gatehouse.js";
import { HOOKS } from "../../src/hooks/index.js";
import { definePlugin } from "../../src/plugins/index.js";
import { openStore } from "../../src/store/index.js";

// Minimal reproductions of what the guarantee harness found, kept so the fixes stay fixed.

const R1_4242_1319 = fileURLToPath(new URL("fixtures/r1-seed-4242-index-1319.json", import.meta.url));

describe("found by R1", () => {
  test("a rewrite drops a summary written from an earlier summary of the rewritten text (seed 2, index 21)", async () => {
    // Every step compacts. S2 summarizes the first answer (with the canary); S3 summarizes the
    // next messages with S2 in its prompt, so S3 carries the canary without covering the
    // rewritten message. Dropping only the summaries that cover the changed message kept S3.
    const canary = "CANARY-regression-summary-chain";
    const dir = mkdtempSync(join(tmpdir(), "gatehouse-regression-"));
    try {
      const store = await openStore({ kind: "sqlite", path: join(dir, "data", "gatehouse.db") });
      let compactions = 0;
      const echo = { toolCalls: [{ name: "Echo", input: { text: "x" } }] };
      const gatehouse = createGatehouse({
        model: harnessModel({
          runs: [{ turns: [{ text: `first ${canary}`, ...echo }, echo, echo, { text: "final" }] }],
        }),
        store,
        tools: [echoTool],
        logger: captureLogger().logger,
        config: { cwd: dir, compaction: { contextTokens: 1, keepRecent: 1 } },
        plugins: [
          definePlugin({ id: "count", setup: (api) => api.on("after_compaction", () => void compactions++) }),
          definePlugin({
            id: "redactor",
            setup: (api) =>
              api.on("before_response_emit", (e) => ({
                allContent: e.allContent.map((t) => t.replaceAll(canary, "[redacted]")),
              })),
          }),
        ],
      });
      const result = await gatehouse.run({ prompt: "go" });
      assert.equal(result.outcome, "completed");
      assert.ok(compactions >= 3, "every step compacts");
      assert.doesNotMatch(JSON.stringify(await store.sessionMessages(result.sessionId)), new RegExp(canary));
      assert.doesNotMatch(JSON.stringify(await store.history(result.sessionId)), new RegExp(canary));
      await gatehouse.close();
      for (const file of filesUnder(join(dir, "data"))) assert.equal(file.bytes.indexOf(canary), -1, file.path);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("found by R1 with fresh seeds (issue 20)", () => {
  test("a compaction summary a block drops leaves no byte in the SQLite file, where a rebalance had left an old copy of it (seed 4242, index 1319)", async () => {
    // secure_delete zeroed the summary's live cell, not the copy a b-tree rebalance had left in the unused
    // middle of a page it rebuilt. The scenario as generated then (a snapshot: it replays even if the
    // generator changes). Its three response-block canaries were in that copy.
    // Fields the generator gained later (issue 11's paths, the permission rules' source, the
    // provider's failures, the approver, the sandbox and the permission paths) are empty or defaulted in this scenario.
    const scenario = {
      failing: {},
      mcp: {},
      replies: {},
      denySource: "project",
      providerFaults: { steps: [] },
      attended: false,
      sandbox: false,
      files: {},
      allowed: [],
      ...JSON.parse(readFileSync(R1_4242_1319, "utf8")),
    } as Scenario;
    assert.equal(scenario.store, "sqlite");
    const report = await runScenario(scenario);
    assert.deepEqual(report.leaks, []);
    assert.deepEqual(report.failures, []);
  });
});

describe("found by R1 (child-derived probe)", () => {
  test("a sub-agent's answer the parent withholds does not stay in the sub-agent's session", async () => {
    const canary = "CANARY-regression-child-answer";
    const dir = mkdtempSync(join(tmpdir(), "gatehouse-regression-"));
    try {
      const store = await openStore({ kind: "sqlite", path: join(dir, "data", "gatehouse.db") });
      const gatehouse = createGatehouse({
        model: harnessModel({
          runs: [
            { match: "^\\[kid\\]", turns: [{ text: `kid answer WITHHOLD ${canary}` }] },
            {
              turns: [
                { toolCalls: [{ name: "Agent", input: { description: "d", prompt: "[kid] go" } }] },
                { text: "parent saw {{lastToolResult}}" },
              ],
            },
          ],
        }),
        store,
        subagents: true,
        // Agent calls ask in default mode and no one is asked here: a rule lets them run.
        permissions: { allow: ["Agent"] },
        logger: captureLogger().logger,
        config: { cwd: dir },
        plugins: [
          definePlugin({
            id: "dlp",
            setup: (api) =>
              api.on("after_tool_call", (e) =>
                JSON.stringify(e.result).includes("WITHHOLD") ? { block: true } : undefined,
              ),
          }),
        ],
      });
      const result = await gatehouse.run({ prompt: "delegate" });
      assert.equal(result.outcome, "completed");
      assert.match(result.reply ?? "", /withheld by a policy \(dlp\)/);
      for (const session of await store.listSessions({ limit: 100 }))
        assert.doesNotMatch(JSON.stringify(await store.sessionMessages(session.id)), new RegExp(canary), session.id);
      await gatehouse.close();
      for (const file of filesUnder(join(dir, "data"))) assert.equal(file.bytes.indexOf(canary), -1, file.path);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("found by R2", () => {
  for (const hook of ["tool_result_persist", "before_message_write"] as const) {
    test(`a malformed message from ${hook} (fail open) is discarded, not stored: the run goes on`, async () => {
      const { logger, lines } = captureLogger();
      const store = await openStore({ kind: "memory" });
      const gatehouse = createGatehouse({
        model: harnessModel({
          runs: [{ turns: [{ toolCalls: [{ name: "Echo", input: { text: "x" } }] }, { text: "done" }] }],
        }),
        store,
        tools: [echoTool],
        logger,
        plugins: [
          definePlugin({ id: "bad", setup: (api) => api.on(hook, () => ({ message: { nested: "x" } }) as never) }),
        ],
      });
      const result = await gatehouse.run({ prompt: "go" });
      assert.equal(result.outcome, "completed", result.error?.message);
      assert.equal(result.reply, "done");
      const stored = await store.runMessages(result.runId);
      assert.deepEqual(
        stored.map((m) => m.role),
        ["user", "assistant", "tool", "assistant"],
      );
      assert.ok(lines.some((l) => l.includes(`hook ${hook}: handler bad returned an invalid result`)));
    });
  }

  test("the message a sync hook returns is checked against the message shape", () => {
    const schema = HOOKS.tool_result_persist.result;
    assert.equal(schema.safeParse({ message: { nested: "x" } }).success, false);
    assert.equal(schema.safeParse({ message: { role: "tool", parts: [{ type: "text", text: 1 }] } }).success, false);
    assert.equal(
      schema.safeParse({ message: { role: "tool", parts: [{ type: "text", text: "ok" }], metadata: {} } }).success,
      true,
    );
  });
});

describe("found by R3", () => {
  test("a run its process left running is recovered at the next admission: unchecked output removed, history valid", async () => {
    // What a SIGKILL between a tool call and its result leaves: a run still "running" whose
    // answer never reached the output gates, with a call that has no result.
    const canary = "CANARY-regression-interrupted";
    const dir = mkdtempSync(join(tmpdir(), "gatehouse-regression-"));
    try {
      const store = await openStore({ kind: "sqlite", path: join(dir, "data", "gatehouse.db") });
      const session = await store.createSession({});
      const dead = await store.startRun({ sessionId: session.id });
      await store.appendMessage({
        sessionId: session.id,
        runId: dead.id,
        role: "user",
        parts: [{ type: "text", text: "q" }],
      });
      await store.appendMessage({
        sessionId: session.id,
        runId: dead.id,
        role: "assistant",
        parts: [
          { type: "text", text: `unchecked ${canary}` },
          { type: "tool_call", toolCallId: "c1", toolName: "Echo", input: { text: "x" } },
        ],
      });
      // Its sub-agent had finished: its answer never passed the parent's after_tool_call.
      const childSession = await store.createSession({ parentSessionId: session.id });
      const childRun = await store.startRun({ sessionId: childSession.id, depth: 1, parentRunId: dead.id });
      await store.appendMessage({
        sessionId: childSession.id,
        runId: childRun.id,
        role: "user",
        parts: [{ type: "text", text: "sub" }],
      });
      await store.appendMessage({
        sessionId: childSession.id,
        runId: childRun.id,
        role: "assistant",
        parts: [{ type: "text", text: `child ${canary}` }],
      });
      await store.finishRun(childRun.id, "completed");
      const { logger, lines } = captureLogger();
      const gatehouse = createGatehouse({
        model: harnessModel({ runs: [{ turns: [{ text: "fine" }] }] }),
        store,
        logger,
        config: { cwd: dir },
      });
      const result = await gatehouse.run({ prompt: "next", sessionId: session.id });
      assert.equal(result.outcome, "completed");
      assert.notEqual((await store.getRun(dead.id))?.status, "running");
      const history = await store.history(session.id);
      const calls = history.flatMap((m) => m.parts.filter((p) => p.type === "tool_call"));
      assert.deepEqual(calls, [], "no tool call is left without its result");
      assert.doesNotMatch(JSON.stringify(await store.sessionMessages(session.id)), new RegExp(canary));
      assert.doesNotMatch(JSON.stringify(await store.sessionMessages(childSession.id)), new RegExp(canary));
      assert.ok(lines.some((l) => l.includes("interrupted")));
      await gatehouse.close();
      for (const file of filesUnder(join(dir, "data"))) assert.equal(file.bytes.indexOf(canary), -1, file.path);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
