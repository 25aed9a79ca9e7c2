import assert from "node:assert/strict";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { onDemandHome } from "../cli/real-hooks-helpers.js";
import { testGatehouse } from "../runtime/helpers.js";

/**
 * OpenClaw plugins from npm, installed on demand in the test cache as a user installs them, each
 * checked for what it promises with a control: oh-my-openclaw (commands and tools named with
 * `_`) and openclaw-mem0 (its configSchema, hidden by its `exports` map, enforced; memories
 * recalled into the prompt and stored through its tool, against a mem0 platform on loopback).
 */

type Obj = Record<string, unknown>;
const ok = { runs: [{ turns: [{ text: "echo: {{prompt}}" }] }] };

describe("@happycastle/oh-my-openclaw from npm", { timeout: 600_000 }, () => {
  let cwd: string;
  before(async () => {
    cwd = await onDemandHome("@happycastle/oh-my-openclaw");
  });
  const entry = { package: "@happycastle/oh-my-openclaw", hooks: { allowPromptInjection: true } };

  test("it starts: its _ commands answer and its todo tools keep what the model wrote; without it /omoc_status is a prompt (control)", async () => {
    const script = {
      runs: [
        {
          match: "plan",
          turns: [
            { toolCalls: [{ name: "omoc_todo_create", input: { content: "write the release notes" } }] },
            { toolCalls: [{ name: "omoc_todo_list", input: {} }] },
            { text: "todos: {{lastToolResult}}" },
          ],
        },
        ...ok.runs,
      ],
    };
    // Its todo tools are optional (OpenClaw's allowlist): allowed here by the plugin's id.
    const { gatehouse } = testGatehouse(script, {
      config: { cwd },
      pluginEntries: [entry],
      optionalTools: ["oh-my-openclaw"],
    });
    await gatehouse.ready();
    const errors = gatehouse.plugins.diagnostics.filter((d) => d.level === "error");
    assert.deepEqual(errors, []);
    assert.equal(gatehouse.plugins.list()[0]?.status, "loaded");
    const status = await gatehouse.run({ prompt: "/omoc_status" });
    assert.doesNotMatch(status.reply ?? "", /^echo:/);
    assert.match(status.reply ?? "", /oh-my-openclaw|omoc/i);
    const planned = await gatehouse.run({ prompt: "plan the release" });
    assert.match(planned.reply ?? "", /write the release notes/);
    await gatehouse.close();

    const control = testGatehouse(ok, { config: { cwd } });
    assert.equal((await control.gatehouse.run({ prompt: "/omoc_status" })).reply, "echo: /omoc_status");
    await control.gatehouse.close();
  });
});

describe("@mem0/openclaw-mem0 from npm", { timeout: 600_000 }, () => {
  let cwd: string;
  let baseUrl: string;
  const received: { method: string; path: string; auth: string; body: Obj }[] = [];
  const server = createServer(async (req: IncomingMessage, res) => {
    let text = "";
    for await (const chunk of req) text += chunk;
    const path = (req.url ?? "").split("?")[0] ?? "";
    received.push({
      method: req.method ?? "",
      path,
      auth: String(req.headers.authorization),
      body: text ? (JSON.parse(text) as Obj) : {},
    });
    res.setHeader("content-type", "application/json");
    // mem0's platform API as its SDK calls it: ping, search, add.
    if (path === "/v1/ping/") res.end(JSON.stringify({ status: "ok", org_id: "o", project_id: "p" }));
    else if (path.includes("/search"))
      res.end(
        JSON.stringify({
          results: [{ id: "m1", memory: "The user indents with tabs", score: 0.93, categories: ["preference"] }],
        }),
      );
    else if (req.method === "POST" && path.includes("/memories"))
      res.end(JSON.stringify({ results: [{ id: "m2", memory: "likes green tea", event: "ADD" }] }));
    else res.end(JSON.stringify({ results: [] }));
  });
  before(async () => {
    // The plugin and the mem0 SDK report usage to PostHog unless told not to; a test sends nothing anywhere.
    (globalThis as Obj).__mem0_telemetry_override = "false";
    process.env.MEM0_TELEMETRY = "false";
    cwd = await onDemandHome("@mem0/openclaw-mem0");
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());
  const entry = (config: Obj) => ({
    package: "@mem0/openclaw-mem0",
    config,
    hooks: { allowConversationAccess: true, allowPromptInjection: true },
  });
  const platform = () => ({ mode: "platform", apiKey: "test-key", userId: "ada", baseUrl, autoCapture: false });

  test("its configSchema is enforced although its exports map hides package.json; a config it accepts loads (control)", async () => {
    const bad = testGatehouse(ok, { config: { cwd }, pluginEntries: [entry({ mode: "cloud" })] });
    await bad.gatehouse.ready().catch(() => undefined);
    const problems = bad.gatehouse.plugins.diagnostics.map((d) => d.message);
    assert.ok(
      problems.some((m) => /config\.mode: .*openclaw\.plugin\.json/.test(m)),
      problems.join("\n"),
    );
    assert.equal(bad.gatehouse.plugins.list()[0]?.status, "failed");
    await bad.gatehouse.close();
    const good = testGatehouse(ok, { config: { cwd }, pluginEntries: [entry(platform())] });
    await good.gatehouse.ready();
    assert.equal(good.gatehouse.plugins.list()[0]?.status, "loaded");
    await good.gatehouse.close();
  });

  test("autoRecall puts the memories mem0 finds in front of the model; with autoRecall off they are not there (control)", async () => {
    for (const autoRecall of [true, false]) {
      received.length = 0;
      const { gatehouse, calls } = testGatehouse(ok, {
        config: { cwd },
        pluginEntries: [entry({ ...platform(), autoRecall })],
      });
      await gatehouse.run({ prompt: "how should I indent this file?", sessionKey: "main" });
      const sent = JSON.stringify(calls[0]?.prompt);
      if (autoRecall) {
        assert.match(sent, /relevant-memories/);
        assert.match(sent, /The user indents with tabs/);
        assert.ok(received.some((r) => r.path.includes("/search") && r.auth === "Token test-key"));
      } else {
        assert.doesNotMatch(sent, /indents with tabs/);
        assert.ok(!received.some((r) => r.path.includes("/search")));
      }
      await gatehouse.close();
    }
  });

  test("its memory_add tool stores a fact through mem0's API, for the configured user", async () => {
    received.length = 0;
    const script = {
      runs: [
        { turns: [{ toolCalls: [{ name: "memory_add", input: { text: "likes green tea" } }] }, { text: "done" }] },
      ],
    };
    const { gatehouse } = testGatehouse(script, {
      config: { cwd },
      pluginEntries: [entry({ ...platform(), autoRecall: false })],
    });
    await gatehouse.run({ prompt: "remember that I like green tea" });
    const added = received.find((r) => r.method === "POST" && /memories\/(add\/)?$/.test(r.path));
    assert.ok(added, JSON.stringify(received));
    assert.match(JSON.stringify(added.body), /likes green tea/);
    assert.equal(added.body.user_id, "ada");
    await gatehouse.close();
  });
});
