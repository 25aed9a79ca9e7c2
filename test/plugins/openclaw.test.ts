import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { renderOpenClawTables, withOpenClawTables } from "../../scripts/openclaw-doc.js";
import type { HookContext } from "../../src/hooks/index.js";
import type { PluginDefinition } from "../../src/plugins/index.js";
import { HOOK_MAPPINGS } from "../../src/plugins/openclaw/hooks.js";
import {
  fromOpenClawParams,
  gatehouseMatcher,
  OPENCLAW_ONLY_TOOLS,
  TOOL_MAPPINGS,
  toOpenClawParams,
} from "../../src/plugins/openclaw/tools.js";
import { builtinTools } from "../../src/tools/index.js";
import { echoTool, testGatehouse } from "../runtime/helpers.js";
import { PUBLISHED_CORE_TOOLS, PUBLISHED_HOOK_NAMES } from "./fixtures/openclaw/published.js";

type Obj = Record<string, unknown>;
/** An OpenClaw plugin object handed over in code (it has `register`, not `setup`). */
const openclaw = (id: string, register: (api: Obj) => void) => ({ id, register }) as unknown as PluginDefinition;

describe("the OpenClaw mapping", () => {
  test("docs/plugins.md holds the tables rendered from the adapter's mapping data", () => {
    const doc = readFileSync(new URL("../../docs/plugins.md", import.meta.url), "utf8");
    assert.ok(doc.includes(renderOpenClawTables()), "run `npm run docs`: docs/plugins.md is out of date");
    assert.equal(withOpenClawTables(doc), doc);
  });

  test("every hook name in OpenClaw's published types has a mapping (so none is an unknown-hook error)", () => {
    const mapped = new Set(HOOK_MAPPINGS.map((m) => m.openclaw));
    assert.deepEqual(
      PUBLISHED_HOOK_NAMES.filter((n) => !mapped.has(n)),
      [],
    );
  });

  test("every core tool id OpenClaw publishes maps to a Gatehouse tool or is listed as OpenClaw-only", () => {
    const known = new Set([...TOOL_MAPPINGS.map((m) => m.openclaw), ...OPENCLAW_ONLY_TOOLS]);
    assert.deepEqual(
      PUBLISHED_CORE_TOOLS.filter((t) => !known.has(t)),
      [],
    );
  });

  test("params translate both ways: exec's timeoutSeconds, read's path, edit's edits list", () => {
    assert.deepEqual(toOpenClawParams("Bash", { command: "ls", timeout: 5000, description: "list" }), {
      command: "ls",
      timeoutSeconds: 5,
      title: "list",
    });
    assert.deepEqual(fromOpenClawParams("Bash", { command: "ls", timeoutSeconds: 2 }), {
      command: "ls",
      timeout: 2000,
    });
    assert.deepEqual(toOpenClawParams("Read", { file_path: "/a", limit: 3 }), { path: "/a", limit: 3 });
    assert.deepEqual(toOpenClawParams("Edit", { file_path: "/a", old_string: "x", new_string: "y" }), {
      path: "/a",
      edits: [{ oldText: "x", newText: "y" }],
    });
    assert.deepEqual(fromOpenClawParams("Edit", { path: "/a", edits: [{ oldText: "x", newText: "z" }] }), {
      file_path: "/a",
      old_string: "x",
      new_string: "z",
    });
    // Several edits have no Edit equivalent: left in place, the rewrite fails Edit's input check.
    assert.ok("edits" in (fromOpenClawParams("Edit", { path: "/a", edits: [{}, {}] }) as Obj));
    assert.deepEqual(toOpenClawParams("mcp__docs__search", { q: 1 }), { q: 1 });
  });

  test("matchers: OpenClaw ids become Gatehouse names; aliases and * are refused as OpenClaw refuses them", () => {
    assert.deepEqual(gatehouseMatcher(["exec", "READ"]), ["Bash", "Read"]);
    assert.deepEqual(gatehouseMatcher(["apply_patch"]), ["Write", "Edit"]);
    assert.deepEqual(gatehouseMatcher(["word_count"]), ["word_count"]);
    for (const bad of [[], ["*"], ["bash"], ["Write"], [""]]) assert.throws(() => gatehouseMatcher(bad));
  });
});

describe("an OpenClaw plugin on the runtime", { concurrency: 4 }, () => {
  test("a guard on exec blocks Gatehouse's Bash, sees exec's params, and ctx.toolName / ctx.abortSignal", async () => {
    const seen: Obj[] = [];
    const guard = openclaw("exec-guard", (api) => {
      (api.on as (h: string, f: unknown, o?: unknown) => void)(
        "before_tool_call",
        (event: Obj, ctx: Obj) => {
          seen.push({
            toolName: event.toolName,
            params: event.params,
            ctxTool: ctx.toolName,
            aborts: ctx.abortSignal instanceof AbortSignal,
          });
          return { block: true, blockReason: "no shell here" };
        },
        { matcher: ["exec"], registrationId: "no-shell" },
      );
    });
    const { gatehouse } = testGatehouse(
      {
        runs: [
          {
            turns: [
              { toolCalls: [{ name: "Bash", input: { command: "echo hi" } }] },
              { text: "after: {{lastToolResult}}" },
            ],
          },
        ],
      },
      { plugins: [guard], tools: builtinTools() },
    );
    const result = await gatehouse.run({ prompt: "go" });
    assert.match(result.reply ?? "", /no shell here/);
    assert.deepEqual(seen, [{ toolName: "exec", params: { command: "echo hi" }, ctxTool: "exec", aborts: true }]);
    assert.deepEqual(
      gatehouse.engine.registrations("before_tool_call").map((r) => [r.pluginId, r.id, r.matcher]),
      [["exec-guard", "no-shell", true]],
    );
    await gatehouse.close();
  });

  test("after_tool_call returning a value or throwing changes nothing for an adapted plugin; a Gatehouse plugin's invalid result withholds", async () => {
    const seen: unknown[] = [];
    const observer = openclaw("observer", (api) => {
      const on = api.on as (h: string, f: unknown) => void;
      on("after_tool_call", (e: Obj) => seen.push(e.result));
      on("after_tool_call", () => {
        throw new Error("observer broke");
      });
    });
    const script = {
      runs: [
        { turns: [{ toolCalls: [{ name: "Echo", input: { text: "visible" } }] }, { text: "got {{lastToolResult}}" }] },
      ],
    };
    const adapted = testGatehouse(script, { plugins: [observer] });
    const result = await adapted.gatehouse.run({ prompt: "go" });
    assert.match(result.reply ?? "", /visible/);
    assert.deepEqual(seen, [
      { content: [{ type: "text", text: '{"echoed":"visible"}' }], details: { echoed: "visible" } },
    ]);
    assert.ok(
      adapted.logLines.some((l) => /observer.*after_tool_call: handler failed \(Error/.test(l)),
      adapted.logLines.join("\n"),
    );
    await adapted.gatehouse.close();

    const native = testGatehouse(script, {
      plugins: [{ id: "native", setup: (api) => api.on("after_tool_call", ((e: Obj) => [e]) as never) }],
    });
    const strict = await native.gatehouse.run({ prompt: "go" });
    assert.doesNotMatch(strict.reply ?? "", /visible/);
    await native.gatehouse.close();
  });

  test("a before_agent_run gate with metadata blocks with its message; the metadata key is reported once", async () => {
    const gate = openclaw("gate", (api) => {
      (api.on as (h: string, f: unknown) => void)("before_agent_run", (e: Obj) =>
        String(e.prompt).includes("secret")
          ? { outcome: "block", reason: "internal", message: "Not here.", category: "policy", metadata: { rule: 7 } }
          : { outcome: "pass" },
      );
    });
    const { gatehouse, logLines } = testGatehouse(
      { runs: [{ turns: [{ text: "ok" }] }] },
      {
        plugins: [{ plugin: gate, hooks: { allowConversationAccess: true } }],
      },
    );
    const first = await gatehouse.run({ prompt: "tell me the secret" });
    const second = await gatehouse.run({ prompt: "another secret" });
    for (const r of [first, second]) {
      assert.equal(r.outcome, "blocked");
      assert.match(r.reply ?? "", /Not here\./);
      assert.equal(r.blockedBy?.pluginId, "gate");
    }
    assert.equal(logLines.filter((l) => l.includes('"metadata"')).length, 1, logLines.join("\n"));
    assert.ok(!logLines.some((l) => /invalid result/.test(l)), logLines.join("\n"));
    await gatehouse.close();
  });

  test("a before_response_emit redactor works unchanged: the delivered and stored answer are redacted", async () => {
    const redactor = openclaw("redactor", (api) => {
      (api.on as (h: string, f: unknown) => void)("before_response_emit", (e: Obj) => ({
        allContent: (e.allContent as string[]).map((t) => t.replace(/\d{4}-\d{4}/g, "[redacted]")),
      }));
    });
    const { gatehouse, store } = testGatehouse(
      { runs: [{ turns: [{ text: "card 1234-5678 on file" }] }] },
      { plugins: [redactor] },
    );
    const result = await gatehouse.run({ prompt: "card?" });
    assert.equal(result.reply, "card [redacted] on file");
    assert.doesNotMatch(JSON.stringify(await store.history(result.sessionId)), /1234-5678/);
    await gatehouse.close();
  });

  test("before_dispatch claims at the input door; a tool the plugin registers is offered and hooked", async () => {
    const plugin = openclaw("door", (api) => {
      const on = api.on as (h: string, f: unknown, o?: unknown) => void;
      on("before_dispatch", (e: Obj) => (e.content === "ping" ? { handled: true, text: "pong" } : undefined));
      (api.registerTool as (t: unknown) => void)({
        name: "word_count",
        description: "counts words",
        parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
        async execute(_id: string, params: Obj) {
          const n = String(params.text).split(/\s+/).filter(Boolean).length;
          return { content: [{ type: "text", text: `${n} words` }], details: { n } };
        },
      });
      on(
        "before_tool_call",
        (e: Obj) =>
          String((e.params as Obj).text).includes("forbidden") ? { block: true, blockReason: "not that" } : undefined,
        {
          matcher: ["word_count"],
        },
      );
    });
    const { gatehouse } = testGatehouse(
      {
        runs: [
          {
            match: "count",
            turns: [
              { toolCalls: [{ name: "word_count", input: { text: "one two three" } }] },
              { text: "{{lastToolResult}}" },
            ],
          },
          {
            match: "bad",
            turns: [
              { toolCalls: [{ name: "word_count", input: { text: "forbidden words" } }] },
              { text: "{{lastToolResult}}" },
            ],
          },
        ],
      },
      { plugins: [plugin], tools: [echoTool] },
    );
    assert.equal((await gatehouse.run({ prompt: "ping" })).reply, "pong");
    assert.match((await gatehouse.run({ prompt: "count these" })).reply ?? "", /3 words/);
    assert.match((await gatehouse.run({ prompt: "bad one" })).reply ?? "", /not that/);
    await gatehouse.close();
  });

  test("tool_result_persist sees OpenClaw's toolResult message; a redaction of its text is what is stored", async () => {
    const plugin = openclaw("persist", (api) => {
      (api.on as (h: string, f: unknown) => void)(
        "tool_result_persist",
        (e: { message: { content: { text: string }[] } }) => ({
          message: {
            ...e.message,
            content: [{ type: "text", text: e.message.content[0]?.text.replace(/s3cret/g, "***") }],
          },
        }),
      );
    });
    const { gatehouse, store } = testGatehouse(
      { runs: [{ turns: [{ toolCalls: [{ name: "Echo", input: { text: "s3cret" } }] }, { text: "done" }] }] },
      { plugins: [plugin] },
    );
    const result = await gatehouse.run({ prompt: "go" });
    const toolMessage = (await store.history(result.sessionId)).find((m) => m.role === "tool");
    assert.deepEqual(
      toolMessage?.parts.map((p) => (p.type === "tool_result" ? p.output : p.type)),
      ['{"echoed":"***"}'],
    );
    await gatehouse.close();
  });

  test("names with no meaning are warnings, an unknown name is an error, and api surfaces Gatehouse lacks are warnings", async () => {
    const plugin = openclaw("mixed", (api) => {
      const on = api.on as (h: string, f: unknown) => void;
      on("gateway_start", () => {});
      on("cron_changed", () => {});
      on("before_tool_calls", () => {});
      (api.registerHttpRoute as (p: unknown) => void)({ path: "/x" });
      (api.session as { workflow: { enqueue: () => void } }).workflow;
      assert.equal(typeof (api.runtime as Obj).version, "string");
      assert.equal((api.runtime as Obj).llm, undefined);
    });
    const { gatehouse } = testGatehouse({ runs: [{ turns: [{ text: "ok" }] }] }, { plugins: [plugin] });
    await gatehouse.ready();
    const found = gatehouse.plugins.diagnostics.map((d) => `${d.level} ${d.code} ${d.hook ?? ""}`);
    assert.deepEqual(found, [
      "warning no-meaning gateway_start",
      "warning no-meaning cron_changed",
      "error unknown-hook before_tool_calls",
      "warning no-meaning ",
    ]);
    assert.equal(gatehouse.plugins.list()[0]?.format, "openclaw");
    await gatehouse.close();
  });

  test("a bare function export is OpenClaw's register only beside an OpenClaw manifest or when named register", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gatehouse-openclaw-bare-"));
    try {
      mkdirSync(join(dir, "oc"));
      const body = (name: string) =>
        `export default function ${name}(api) { api.on("before_tool_call", () => undefined); }\n`;
      writeFileSync(join(dir, "setup.mjs"), body("setup"));
      writeFileSync(join(dir, "register.mjs"), body("register"));
      writeFileSync(join(dir, "oc", "index.mjs"), body("setup"));
      writeFileSync(join(dir, "oc", "openclaw.plugin.json"), JSON.stringify({ id: "with-manifest" }));
      const { gatehouse } = testGatehouse(
        { runs: [{ turns: [{ text: "ok" }] }] },
        {
          pluginEntries: [
            { path: join(dir, "setup.mjs") },
            { path: join(dir, "register.mjs") },
            { path: join(dir, "oc") },
          ],
        },
      );
      await gatehouse.ready();
      assert.deepEqual(
        gatehouse.plugins.list().map((p) => [p.id.replace(dir, ""), p.status, p.format ?? null]),
        [
          ["/setup.mjs", "failed", null],
          ["register", "loaded", "openclaw"],
          ["with-manifest", "loaded", "openclaw"],
        ],
      );
      await gatehouse.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("ctx carries the run context under OpenClaw's names", async () => {
    let ctxSeen: Obj | undefined;
    const plugin = openclaw("ctx", (api) => {
      (api.on as (h: string, f: unknown) => void)("message_sending", (_e: Obj, ctx: HookContext & Obj) => {
        ctxSeen = {
          runId: ctx.runId,
          sessionKey: ctx.sessionKey,
          channelId: ctx.channelId,
          aborts: ctx.abortSignal instanceof AbortSignal,
        };
      });
    });
    const { gatehouse } = testGatehouse({ runs: [{ turns: [{ text: "ok" }] }] }, { plugins: [plugin] });
    const result = await gatehouse.run({ prompt: "hi", sessionKey: "k1" });
    assert.deepEqual(ctxSeen, { runId: result.runId, sessionKey: "k1", channelId: "api", aborts: true });
    await gatehouse.close();
  });
});
