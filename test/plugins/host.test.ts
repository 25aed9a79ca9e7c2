import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { HookEngine } from "../../src/hooks/index.js";
import { definePlugin, PluginEntrySchema, PluginHost } from "../../src/plugins/index.js";
import { captureLogger } from "../hooks/helpers.js";

function setup() {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-plugins-"));
  const { lines, logger } = captureLogger();
  const engine = new HookEngine({ logger });
  const host = new PluginHost(engine, { cwd: dir, logger });
  return { dir, lines, engine, host };
}

const runEvent = { prompt: "p", modelPrompt: "p", messages: [], systemPrompt: "" };

const firewall = definePlugin({
  id: "firewall",
  setup(api) {
    api.on("before_agent_run", () => ({ outcome: "block", reason: "r" }));
    api.on("before_tool_call", () => ({ block: true }));
    api.on("before_prompt_build", () => ({ appendContext: "ctx" }));
  },
});

describe("plugin permissions", () => {
  test("a plugin from configuration cannot register conversation hooks without allowConversationAccess; its other hooks work", async () => {
    const { host, engine, lines } = setup();
    const diagnostics = await host.add(firewall, { trusted: false });
    assert.deepEqual(
      diagnostics.map((d) => [d.hook, d.code]),
      [
        ["before_agent_run", "refused"],
        ["before_prompt_build", "refused"],
      ],
    );
    assert.match(diagnostics[0]?.message ?? "", /allowConversationAccess: true/);
    assert.equal(engine.hasHooks("before_agent_run"), false);
    assert.equal(engine.hasHooks("before_tool_call"), true);
    assert.equal(lines.filter((l) => l.startsWith("warn plugin firewall (before_agent_run)")).length, 1);
    assert.deepEqual(host.diagnostics, diagnostics);
  });

  test("allowConversationAccess: true grants the conversation hooks", async () => {
    const { host, engine } = setup();
    assert.deepEqual(await host.add(firewall, { trusted: false, hooks: { allowConversationAccess: true } }), []);
    assert.equal((await engine.emit("before_agent_run", runEvent)).outcome, "block");
  });

  test("allowPromptInjection: false refuses prompt-injecting hooks even to trusted plugins", async () => {
    const { host, engine } = setup();
    const diagnostics = await host.add(firewall, { hooks: { allowPromptInjection: false } });
    assert.deepEqual(
      diagnostics.map((d) => d.hook),
      ["before_prompt_build"],
    );
    assert.equal(engine.hasHooks("before_agent_run"), true);
  });

  test("a trusted (bundled or in-code) plugin has conversation access unless explicitly denied", async () => {
    const { host, engine } = setup();
    await host.add(firewall);
    assert.equal(engine.hasHooks("before_agent_run"), true);
    const other = setup();
    await other.host.add(firewall, { hooks: { allowConversationAccess: false } });
    assert.equal(other.engine.hasHooks("before_agent_run"), false);
  });
});

describe("loading plugins from gatehouse.json entries", () => {
  test("a .ts plugin file loads with its config block and operator timeouts", async () => {
    const { host, engine, dir } = setup();
    writeFileSync(
      join(dir, "redact.ts"),
      `interface Cfg { word: string }
export default {
  id: "redact",
  setup(api: { config: Cfg; on: Function }) {
    api.on("message_sending", (e: { content: string }) => ({ content: e.content.replaceAll(api.config.word, "***") }));
  },
};
`,
    );
    const diagnostics = await host.load([
      { path: "./redact.ts", config: { word: "secret" }, hooks: { timeouts: { message_sending: 1234 } } },
    ]);
    assert.deepEqual(diagnostics, []);
    const outcome = await engine.emit("message_sending", { to: "u", content: "a secret here", source: "model" });
    assert.equal(outcome.result.content, "a *** here");
    assert.equal(engine.registrations("message_sending")[0]?.timeoutMs, 1234);
    assert.deepEqual(
      host.list().map((p) => [p.id, p.status, p.trusted]),
      [["redact", "loaded", false]],
    );
  });

  test("a .mjs plugin that does not import Gatehouse loads as a plain object", async () => {
    const { host, engine, dir } = setup();
    writeFileSync(
      join(dir, "plain.mjs"),
      `export default { id: "plain", setup(api) { api.on("before_tool_call", () => ({ blockReason: "x", block: true })); } };\n`,
    );
    await host.load([{ path: join(dir, "plain.mjs") }]);
    assert.equal(
      (await engine.emit("before_tool_call", { toolName: "Bash", params: {}, toolCallId: "1" })).result.block,
      true,
    );
  });

  test("a plugin from an npm package in the project's node_modules loads", async () => {
    const { host, engine, dir } = setup();
    const pkg = join(dir, "node_modules", "gatehouse-plugin-audit");
    mkdirSync(pkg, { recursive: true });
    writeFileSync(
      join(pkg, "package.json"),
      JSON.stringify({ name: "gatehouse-plugin-audit", type: "module", exports: "./index.js" }),
    );
    writeFileSync(
      join(pkg, "index.js"),
      `export default { id: "audit", setup(api) { api.on("message_sent", () => {}); } };\n`,
    );
    assert.deepEqual(await host.load([{ package: "gatehouse-plugin-audit" }]), []);
    assert.equal(engine.hasHooks("message_sent"), true);
  });

  test("the configured id renames a plugin, so one plugin can load twice with different config", async () => {
    const { host, engine, dir } = setup();
    writeFileSync(
      join(dir, "word.mjs"),
      `export default { id: "word", setup(api) { api.on("message_sending", (e) => ({ content: e.content.replaceAll(api.config, "#") })); } };\n`,
    );
    await host.load([
      { path: "word.mjs", id: "word-a", config: "a" },
      { path: "word.mjs", id: "word-b", config: "b" },
    ]);
    assert.equal(
      (await engine.emit("message_sending", { to: "u", content: "abc", source: "model" })).result.content,
      "##c",
    );
  });

  test("a disabled entry is listed and not loaded", async () => {
    const { host, engine, dir } = setup();
    writeFileSync(join(dir, "off.mjs"), `throw new Error("must not be imported");\n`);
    assert.deepEqual(await host.load([{ path: "off.mjs", id: "off", enabled: false }]), []);
    assert.deepEqual(
      host.list().map((p) => [p.id, p.status]),
      [["off", "disabled"]],
    );
    assert.deepEqual(engine.registrations(), []);
  });

  test("a missing file, a module that is not a plugin, a setup that throws and a duplicate id are diagnostics naming the plugin and file", async () => {
    const { host, dir } = setup();
    writeFileSync(join(dir, "notplugin.mjs"), `export default { name: "x" };\n`);
    writeFileSync(
      join(dir, "throws.mjs"),
      `export default { id: "throws", setup() { throw new TypeError("bad"); } };\n`,
    );
    writeFileSync(join(dir, "first.mjs"), `export default { id: "same", setup() {} };\n`);
    writeFileSync(join(dir, "dup.mjs"), `export default { id: "same", setup() {} };\n`);
    const diagnostics = await host.load([
      { path: "missing.mjs" },
      { path: "notplugin.mjs" },
      { path: "throws.mjs" },
      { path: "first.mjs" },
      { path: "dup.mjs" },
    ]);
    assert.deepEqual(
      diagnostics.map((d) => d.code),
      ["load-failed", "bad-module", "setup-failed", "duplicate-id"],
    );
    assert.match(diagnostics[0]?.message ?? "", /missing\.mjs/);
    assert.match(diagnostics[1]?.message ?? "", /notplugin\.mjs.*id: .*setup: /);
    assert.match(diagnostics[2]?.message ?? "", /TypeError/);
    assert.deepEqual(
      host.list().map((p) => [p.id, p.status]),
      [
        [join(dir, "missing.mjs"), "failed"],
        [join(dir, "notplugin.mjs"), "failed"],
        ["throws", "failed"],
        ["same", "loaded"],
      ],
    );
  });

  test("a setup that never settles fails after the setup timeout instead of hanging start-up; nothing it registered stays", async () => {
    const { lines, logger } = captureLogger();
    const engine = new HookEngine({ logger });
    const host = new PluginHost(engine, { cwd: tmpdir(), logger, setupTimeoutMs: 30 });
    const hanging = definePlugin({
      id: "hanging",
      setup(api) {
        api.on("message_sent", () => {});
        return new Promise<void>(() => {});
      },
    });
    const diagnostics = await host.add(hanging);
    assert.deepEqual(
      diagnostics.map((d) => [d.level, d.code, d.message]),
      [["error", "setup-failed", "setup did not finish within 30 ms; plugin not (re)loaded"]],
    );
    assert.deepEqual(engine.registrations(), []);
    assert.equal(host.list()[0]?.status, "failed");
    assert.ok(lines.some((l) => l.includes("did not finish within 30 ms")));
  });

  test("a setup that returns something (a teardown function, a value) is refused with what it returned; nothing it registered stays", async () => {
    const { host, engine, dir } = setup();
    writeFileSync(
      join(dir, "teardown.mjs"),
      `export default { id: "teardown", setup(api) { api.on("message_sent", () => {}); return () => {}; } };\n`,
    );
    writeFileSync(join(dir, "value.mjs"), `export default { id: "value", async setup() { return 42; } };\n`);
    const diagnostics = await host.load([{ path: "teardown.mjs" }, { path: "value.mjs" }]);
    assert.deepEqual(
      diagnostics.map((d) => [d.code, /setup returned (a \w+)/.exec(d.message)?.[1]]),
      [
        ["setup-failed", "a function"],
        ["setup-failed", "a number"],
      ],
    );
    assert.deepEqual(engine.registrations(), []);
    assert.deepEqual(
      host.list().map((p) => p.status),
      ["failed", "failed"],
    );
  });

  test("reload swaps a changed plugin file in atomically; a broken new version keeps the old one", async () => {
    const { host, engine, dir } = setup();
    const file = join(dir, "ctx.mjs");
    const version = (v: string) =>
      `export default { id: "ctx", setup(api) { api.on("subagent_start", () => ({ additionalContext: "${v}" })); api.on("message_sent", () => {}); } };\n`;
    writeFileSync(file, version("v1"));
    await host.load([{ path: file }]);
    writeFileSync(file, version("v2"));
    assert.deepEqual(await host.reload("ctx"), []);
    const subagent = { agentType: "a", prompt: "p", childSessionId: "c" };
    assert.equal((await engine.emit("subagent_start", subagent)).result.additionalContext, "v2");
    assert.equal(engine.registrations().length, 2);
    writeFileSync(file, `export default { id: "ctx", setup() { throw new Error("broken"); } };\n`);
    assert.equal((await host.reload("ctx"))[0]?.code, "setup-failed");
    assert.equal((await engine.emit("subagent_start", subagent)).result.additionalContext, "v2");
  });

  test("the entry schema accepts exactly one of path or package and rejects unknown keys", () => {
    assert.equal(PluginEntrySchema.safeParse({ path: "a.ts" }).success, true);
    assert.equal(PluginEntrySchema.safeParse({ path: "a.ts", package: "b" }).success, false);
    assert.equal(PluginEntrySchema.safeParse({}).success, false);
    assert.equal(PluginEntrySchema.safeParse({ path: "a.ts", hooks: { allowConversationAcess: true } }).success, false);
    assert.equal(
      PluginEntrySchema.safeParse({ path: "a.ts", hooks: { timeouts: { no_such_hook: 5 } } }).success,
      false,
    );
  });
});

describe("api.logger", () => {
  test("a plugin's log line is one line of at most 500 characters, without control characters, prefixed [plugin-id]", async () => {
    const { host, lines } = setup();
    const forged = "done\ngatehouse: plugin admin granted allowConversationAccess\r\u001b[2K\u0007\u2028tail";
    await host.add(
      definePlugin({
        id: "chatty",
        setup(api) {
          api.logger.info(`${forged} ${"x".repeat(1_000)}`);
          api.logger.error(`bad\tthing\u0000\u009b happened`);
        },
      }),
    );
    assert.equal(lines.length, 2);
    const [info, error] = lines.map((l) => l.replace(/^(info|error) /, "")) as [string, string];
    assert.ok(lines[0]?.startsWith("info [chatty] done gatehouse: plugin admin granted"), lines[0]);
    assert.equal(error, "[chatty] bad thing happened");
    for (const line of [info, error]) {
      assert.ok(line.startsWith("[chatty] "));
      assert.ok(line.length <= 500, `${line.length} characters`);
      const control = [...line].filter((c) => {
        const code = c.codePointAt(0) as number;
        return code < 0x20 || (code >= 0x7f && code <= 0x9f) || code === 0x2028 || code === 0x2029;
      });
      assert.deepEqual(control, []);
    }
    assert.ok(info.endsWith("…"), "cut at 500 characters");
  });
});

describe("definePlugin", () => {
  test("returns its argument and types handlers from the catalog", () => {
    const plugin = definePlugin({
      id: "typed",
      setup(api) {
        api.on("before_tool_call", (event, ctx) => {
          const name: string = event.toolName;
          const depth: number = ctx.depth;
          return name && depth >= 0 ? { block: true, blockReason: "x" } : undefined;
        });
        // @ts-expect-error unknown hook names do not compile
        api.on("before_tool_cal", () => undefined);
        // @ts-expect-error a gate must answer with outcome pass|block (or its alias, block: boolean)
        api.on("before_agent_run", () => ({ outcome: "stop" }));
        // @ts-expect-error result fields are checked
        api.on("message_sending", () => ({ contnet: "x" }));
        // @ts-expect-error sync hooks cannot be async
        api.on("before_message_write", async () => ({ block: true }));
        // @ts-expect-error option names are checked
        api.on("before_tool_call", () => undefined, { timeoutMS: 5 });
      },
    });
    assert.equal(plugin.id, "typed");
  });
});
