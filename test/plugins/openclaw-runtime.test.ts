import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import type { PluginDefinition } from "../../src/plugins/index.js";
import { PluginState } from "../../src/plugins/openclaw/state.js";
import { testGatehouse } from "../runtime/helpers.js";

/**
 * OpenClaw's api surfaces its own bundled extensions call (runtime.config.current, runtimeSource,
 * runtime.state stores), internal hooks (api.registerHook), optional tools behind an allowlist,
 * `_` in command names, and a manifest an `exports` map hides.
 */

type Obj = Record<string, unknown>;
type Fn = (...args: unknown[]) => unknown;
const openclaw = (id: string, register: (api: Obj) => void) => ({ id, register }) as unknown as PluginDefinition;
const ok = { runs: [{ turns: [{ text: "ok" }] }] };

const wordCount = (extra: Obj = {}) => ({
  name: "word_count",
  description: "counts words",
  parameters: { type: "object", properties: { text: { type: "string" } } },
  async execute() {
    return { content: [{ type: "text", text: "2 words" }] };
  },
  ...extra,
});

describe("OpenClaw's runtime surfaces", () => {
  test("runtime.config.current holds the plugin's entry, runtimeSource is the entry, config writes are refused", async () => {
    let seen: Obj | undefined;
    const plugin = openclaw("cfg", (api) => {
      const runtime = api.runtime as { config: Record<string, Fn> };
      seen = { current: runtime.config.current?.(), runtimeSource: api.runtimeSource };
      seen.write = runtime.config.mutateConfigFile?.({});
    });
    const { gatehouse } = testGatehouse(ok, { plugins: [{ plugin, config: { apiKey: "k" } }] });
    await gatehouse.ready();
    assert.deepEqual(seen?.current, { plugins: { entries: { cfg: { enabled: true, config: { apiKey: "k" } } } } });
    assert.equal(seen?.runtimeSource, "code");
    await assert.rejects(seen?.write as Promise<unknown>, /gatehouse\.json, which plugins do not write/);
    await gatehouse.close();
  });

  test("a keyed store keeps values (copied, never shared), honours TTL, maxEntries and reject-new; the sync store sees the same namespace", async () => {
    let clock = 1000;
    const state = new PluginState(() => clock);
    const keyed = state.openKeyedStore({ namespace: "cursors", maxEntries: 2 }) as Record<string, Fn>;
    const value = { at: 1 };
    await keyed.register?.("a", value);
    value.at = 99;
    assert.deepEqual(await keyed.lookup?.("a"), { at: 1 });
    await keyed.register?.("b", 2, { ttlMs: 50 });
    assert.equal(await keyed.registerIfAbsent?.("a", 3), false);
    await keyed.register?.("c", 3);
    assert.equal(await keyed.lookup?.("a"), undefined, "evict-oldest dropped the oldest entry");
    clock += 60;
    assert.equal(await keyed.lookup?.("b"), undefined, "expired");
    const sync = state.openSyncKeyedStore({ namespace: "cursors", maxEntries: 2 }) as Record<string, Fn>;
    assert.equal(sync.lookup?.("c"), 3);
    assert.equal(sync.consume?.("c"), 3);
    assert.equal(sync.lookup?.("c"), undefined);

    const strict = state.openSyncKeyedStore({
      namespace: "strict",
      maxEntries: 1,
      overflowPolicy: "reject-new",
    }) as Record<string, Fn>;
    strict.register?.("x", 1);
    assert.throws(() => strict.register?.("y", 2), /maxEntries/);
    assert.throws(() => state.openSyncKeyedStore({ namespace: "bad name!", maxEntries: 1 }), /namespace/);
    assert.throws(() => state.openSyncKeyedStore({ namespace: "r", retention: "retained" }), /openKeyedStore only/);
  });

  test("a blob store returns the bytes and metadata it kept, and refuses a blob over its byte limits", async () => {
    const state = new PluginState();
    const blobs = state.openBlobStore({
      namespace: "files",
      maxEntries: 4,
      maxBytesPerEntry: 8,
      maxBytesPerNamespace: 10,
    }) as Record<string, Fn>;
    await blobs.register?.("k", new Uint8Array([1, 2, 3]), { type: "png" });
    const got = (await blobs.lookup?.("k")) as { bytes: Uint8Array; metadata: unknown; sizeBytes: number };
    assert.deepEqual([...got.bytes], [1, 2, 3]);
    assert.deepEqual(got.metadata, { type: "png" });
    assert.equal(got.sizeBytes, 3);
    await assert.rejects(blobs.register?.("big", new Uint8Array(9), {}) as Promise<unknown>, /maxBytesPerEntry/);
    await assert.rejects(blobs.register?.("more", new Uint8Array(8), {}) as Promise<unknown>, /maxBytesPerNamespace/);
    assert.deepEqual(
      ((await blobs.entries?.()) as { key: string }[] | undefined)?.map((e) => e.key),
      ["k"],
    );
  });

  test("a plugin's stores survive across its runs; another plugin does not see them", async () => {
    const opened: Record<string, Record<string, Fn>> = {};
    const withStore = (id: string) =>
      openclaw(id, (api) => {
        const state = (api.runtime as { state: Record<string, Fn> }).state;
        opened[id] = state.openKeyedStore?.({ namespace: "seen", maxEntries: 10 }) as Record<string, Fn>;
        (api.on as Fn)("message_received", async (e: Obj) => {
          await opened[id]?.register?.("last", e.content);
        });
      });
    const { gatehouse } = testGatehouse(ok, { plugins: [withStore("one"), withStore("two")] });
    await gatehouse.run({ prompt: "first" });
    assert.equal(await opened.one?.lookup?.("last"), "first");
    const other = openclaw("three", (api) => {
      opened.three = (api.runtime as { state: Record<string, Fn> }).state.openKeyedStore?.({
        namespace: "seen",
        maxEntries: 10,
      }) as Record<string, Fn>;
    });
    const { gatehouse: second } = testGatehouse(ok, { plugins: [other] });
    await second.ready();
    assert.equal(await opened.three?.lookup?.("last"), undefined);
    await gatehouse.close();
    await second.close();
  });
});

describe("OpenClaw's facades", () => {
  test("a call at any depth of a facade (api.session.controls.register…) is a warning naming it, not a TypeError", async () => {
    const plugin = openclaw("deep", (api) => {
      const session = api.session as { controls: { registerControlUiDescriptor: Fn } };
      session.controls.registerControlUiDescriptor({ id: "board" });
    });
    const { gatehouse } = testGatehouse(ok, { plugins: [plugin] });
    await gatehouse.ready();
    assert.equal(gatehouse.plugins.list()[0]?.status, "loaded");
    assert.deepEqual(
      gatehouse.plugins.diagnostics.map((d) => d.message),
      ["api.session.controls.registerControlUiDescriptor has no meaning in Gatehouse; ignored"],
    );
    await gatehouse.close();
  });
});

describe("OpenClaw's internal hooks (api.registerHook)", () => {
  test("message:received runs at message_received with OpenClaw's event; unmapped and typed names are warnings by name", async () => {
    const events: Obj[] = [];
    const plugin = openclaw("internal", (api) => {
      const registerHook = api.registerHook as Fn;
      registerHook("message:received", (event: Obj) => {
        events.push(event);
        return { ignored: true };
      });
      registerHook(["agent:bootstrap", "before_tool_call"], () => {});
      registerHook("message", () => {
        throw new Error("observer broke");
      });
    });
    const { gatehouse, logLines } = testGatehouse(ok, { plugins: [plugin] });
    const result = await gatehouse.run({ prompt: "hello", sessionKey: "s1" });
    assert.equal(result.reply, "ok");
    assert.equal(events.length, 1);
    assert.equal(events[0]?.type, "message");
    assert.equal(events[0]?.action, "received");
    assert.equal(events[0]?.sessionKey, "s1");
    assert.equal((events[0]?.context as Obj | undefined)?.content, "hello");
    const warned = gatehouse.plugins.diagnostics.map((d) => d.message);
    assert.ok(
      warned.some((m) => /"agent:bootstrap" never runs.*bootstrap files/.test(m)),
      warned.join("\n"),
    );
    assert.ok(warned.some((m) => /"before_tool_call" never runs.*typed hook: register it with api\.on/.test(m)));
    assert.ok(logLines.some((l) => /message:received: internal hook failed \(Error/.test(l)));
    await gatehouse.close();
  });
});

describe("OpenClaw's optional tools", () => {
  const script = {
    runs: [
      { turns: [{ toolCalls: [{ name: "word_count", input: { text: "a b" } }] }, { text: "{{lastToolResult}}" }] },
    ],
  };
  const plugin = (how: "option" | "tool") =>
    openclaw("counter", (api) => {
      const register = api.registerTool as Fn;
      if (how === "option") register(wordCount(), { optional: true });
      else register(wordCount({ optional: true }));
    });

  test("an optional tool is not offered to the model without an allowlist entry", async () => {
    for (const how of ["option", "tool"] as const) {
      const { gatehouse, calls, logLines } = testGatehouse(script, { plugins: [plugin(how)] });
      const result = await gatehouse.run({ prompt: "count" });
      assert.ok(!calls[0]?.tools?.some((t) => t.name === "word_count"), how);
      assert.doesNotMatch(result.reply ?? "", /2 words/);
      assert.ok(logLines.some((l) => /"word_count" is optional and not offered/.test(l)));
      await gatehouse.close();
    }
  });

  test("named by tool, by plugin id or group:plugins, it is offered and runs (control)", async () => {
    for (const entry of ["word_count", "counter", "group:plugins"]) {
      const { gatehouse, calls } = testGatehouse(script, { plugins: [plugin("option")], optionalTools: [entry] });
      const result = await gatehouse.run({ prompt: "count" });
      assert.ok(
        calls[0]?.tools?.some((t) => t.name === "word_count"),
        entry,
      );
      assert.match(result.reply ?? "", /2 words/);
      await gatehouse.close();
    }
  });
});

describe("OpenClaw packages as OpenClaw loads them", () => {
  test("a command name with _ registers and answers, as OpenClaw allows", async () => {
    const plugin = openclaw("cmds", (api) => {
      (api.registerCommand as Fn)({
        name: "omoc_status",
        description: "status",
        handler: () => ({ text: "all good" }),
      });
    });
    const { gatehouse } = testGatehouse(ok, { plugins: [plugin] });
    await gatehouse.ready();
    assert.deepEqual(gatehouse.plugins.diagnostics, []);
    assert.equal((await gatehouse.run({ prompt: "/omoc_status" })).reply, "all good");
    await gatehouse.close();
  });

  test("the manifest's configSchema is enforced when the package's exports map hides package.json", async () => {
    const project = mkdtempSync(join(tmpdir(), "gatehouse-openclaw-exports-"));
    try {
      const root = join(project, "node_modules", "@acme", "hidden");
      mkdirSync(join(root, "dist"), { recursive: true });
      writeFileSync(
        join(root, "package.json"),
        JSON.stringify({ name: "@acme/hidden", type: "module", exports: { ".": "./dist/index.js" } }),
      );
      writeFileSync(join(root, "dist", "package.json"), JSON.stringify({ type: "module" }));
      writeFileSync(
        join(root, "openclaw.plugin.json"),
        JSON.stringify({
          id: "hidden",
          configSchema: { type: "object", properties: { limit: { type: "number" } }, required: ["limit"] },
        }),
      );
      writeFileSync(
        join(root, "dist", "index.js"),
        "export default function register(api) { api.registerCommand({ name: 'limit', handler: () => ({ text: String(api.pluginConfig.limit) }) }); }\n",
      );
      const load = (config: unknown) =>
        testGatehouse(ok, { config: { cwd: project }, pluginEntries: [{ package: "@acme/hidden", config }] });
      const bad = load({ limit: "many" });
      await bad.gatehouse.ready().catch(() => undefined);
      const problems = bad.gatehouse.plugins.diagnostics.map((d) => d.message);
      assert.ok(
        problems.some((m) => /config\.limit: .*expected number.*openclaw\.plugin\.json/.test(m)),
        problems.join("\n"),
      );
      await bad.gatehouse.close();
      const good = load({ limit: 3 });
      assert.equal((await good.gatehouse.run({ prompt: "/limit" })).reply, "3");
      assert.equal(good.gatehouse.plugins.list()[0]?.id, "hidden");
      await good.gatehouse.close();
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });
});
