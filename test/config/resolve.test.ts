import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { resolveSettings } from "../../src/config/index.js";

const cwd = "/work/project";
const file = "/etc/gatehouse/gatehouse.json";

describe("resolveSettings", () => {
  test("model: --model, then GATEHOUSE_MODEL, then gatehouse.json; none is undefined", () => {
    const env = { GATEHOUSE_MODEL: "openai:from-env" };
    const config = { model: "anthropic:from-config" };
    assert.equal(resolveSettings({ config, cwd, env, model: "openai:flag" }).model, "openai:flag");
    assert.equal(resolveSettings({ config, cwd, env, model: "openai:flag" }).modelFrom, "--model");
    assert.equal(resolveSettings({ config, cwd, env }).model, "openai:from-env");
    assert.equal(resolveSettings({ config, cwd, env }).modelFrom, "GATEHOUSE_MODEL");
    assert.equal(resolveSettings({ config, cwd, env: {} }).model, "anthropic:from-config");
    assert.equal(resolveSettings({ config, cwd, env: {} }).modelFrom, "gatehouse.json");
    assert.equal(resolveSettings({ config, cwd, env: { GATEHOUSE_MODEL: " " } }).model, "anthropic:from-config");
    assert.equal(resolveSettings({ config: {}, cwd, env: { GATEHOUSE_MODEL: " " } }).model, undefined);
  });

  test("store: GATEHOUSE_DATABASE_URL, then gatehouse.json; a relative env path is from cwd", () => {
    const config = { store: "data/db.sqlite" };
    const url = "postgres://u:pw@h/db";
    const fromEnv = resolveSettings({ config, file, cwd, env: { GATEHOUSE_DATABASE_URL: url } });
    assert.equal(fromEnv.database, url);
    assert.equal(fromEnv.databaseFrom, "GATEHOUSE_DATABASE_URL");
    const fromFile = resolveSettings({ config, file, cwd, env: { GATEHOUSE_DATABASE_URL: "" } });
    assert.equal(fromFile.database, "/etc/gatehouse/data/db.sqlite");
    assert.equal(fromFile.databaseFrom, "gatehouse.json");
    const relative = resolveSettings({ config: {}, cwd, env: { GATEHOUSE_DATABASE_URL: "x.db" } });
    assert.equal(relative.database, "/work/project/x.db");
    assert.equal(resolveSettings({ config: {}, cwd, env: {} }).databaseFrom, undefined);
  });

  test("paths in gatehouse.json are relative to its folder; flags and env to cwd", () => {
    const s = resolveSettings({
      config: {
        model: "scripted:scripts/a.json",
        store: "data/db.sqlite",
        plugins: [{ path: "./p.ts" }, { path: "/abs/q.ts" }, { package: "pkg" }],
      },
      file,
      cwd,
      env: {},
    });
    assert.equal(s.model, "scripted:/etc/gatehouse/scripts/a.json");
    assert.equal(s.database, "/etc/gatehouse/data/db.sqlite");
    assert.deepEqual(s.pluginEntries, [{ path: "/etc/gatehouse/p.ts" }, { path: "/abs/q.ts" }, { package: "pkg" }]);
    assert.equal(resolveSettings({ config: {}, cwd, env: {}, model: "scripted:x.json" }).model, "scripted:x.json");
    assert.equal(resolveSettings({ config: { model: "scripted:echo" }, file, cwd, env: {} }).model, "scripted:echo");
  });

  test("store: URLs and memory as they are, sqlite: prefix dropped", () => {
    const store = (value: string) => resolveSettings({ config: { store: value }, file, cwd, env: {} }).database;
    assert.equal(store("postgres://u@h/db"), "postgres://u@h/db");
    assert.equal(store("memory"), "memory");
    assert.equal(store("sqlite:db.sqlite"), "/etc/gatehouse/db.sqlite");
    assert.equal(resolveSettings({ config: {}, cwd, env: {} }).database, undefined);
  });

  test("data dir: --data-dir, then GATEHOUSE_DATA_DIR, then <cwd>/.gatehouse", () => {
    const env = { GATEHOUSE_DATA_DIR: "env-dir" };
    assert.equal(resolveSettings({ config: {}, cwd, env, dataDir: "flag-dir" }).dataDir, "/work/project/flag-dir");
    assert.equal(resolveSettings({ config: {}, cwd, env }).dataDir, "/work/project/env-dir");
    assert.equal(resolveSettings({ config: {}, cwd, env: {} }).dataDir, "/work/project/.gatehouse");
  });

  test("runtime config: cwd, limits, prompt, compaction and hook timeouts", () => {
    const s = resolveSettings({
      config: {
        maxSteps: 3,
        systemPrompt: "p",
        compaction: { keepRecent: 2 },
        hookTimeouts: { timeoutMs: 100, timeouts: { before_tool_call: 50 } },
      },
      cwd,
      env: {},
    });
    assert.deepEqual(s.runtime, {
      cwd,
      maxSteps: 3,
      systemPrompt: "p",
      compaction: { keepRecent: 2 },
      hooks: { timeoutMs: 100, timeouts: { before_tool_call: 50 } },
    });
    assert.deepEqual(resolveSettings({ config: {}, cwd, env: {} }).runtime, { cwd });
  });

  test("command hooks: gatehouse.json hooks as the config source, commandHooks options passed on", () => {
    const hooks = { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "./g.sh" }] }] };
    const s = resolveSettings({
      config: {
        hooks,
        commandHooks: {
          codePuppy: true,
          dialects: { config: "claude-2025" },
          onFailure: "block",
          passEnv: ["OPENAI_API_KEY"],
        },
      },
      file,
      cwd,
      env: { HOME: "/home/u", PATH: "/bin" },
    });
    assert.deepEqual(s.commandHooks, {
      load: {
        configHooks: { file, hooks },
        codePuppy: true,
        dialects: { config: "claude-2025" },
        onFailure: "block",
        homeDir: "/home/u",
        pathVar: "/bin",
      },
    });
    // passEnv goes to the environment policy, for command hooks only.
    assert.equal(s.envPolicy.allows("OPENAI_API_KEY", "bash"), false);
    assert.equal(s.envPolicy.allows("OPENAI_API_KEY", "commandHooks"), true);
    // The settings files are read even without gatehouse.json.
    assert.deepEqual(resolveSettings({ config: {}, cwd, env: {} }).commandHooks, { load: {} });
  });

  test("the environment policy: environment.deny for every consumer, each passEnv for its own", () => {
    const s = resolveSettings({
      config: {
        environment: { deny: ["STRIPE_*"] },
        tools: { bash: { passEnv: ["OPENAI_API_KEY"] } },
        commandHooks: { passEnv: ["ANTHROPIC_API_KEY"] },
      },
      cwd,
      env: {},
    });
    const sees = (name: string) =>
      (["bash", "commandHooks", "httpHeaders", "mcp"] as const).filter((c) => s.envPolicy.allows(name, c));
    assert.deepEqual(sees("STRIPE_KEY"), []);
    assert.deepEqual(sees("OPENAI_API_KEY"), ["bash"]);
    assert.deepEqual(sees("ANTHROPIC_API_KEY"), ["commandHooks", "httpHeaders"]);
    assert.deepEqual(sees("APP"), ["bash", "commandHooks", "httpHeaders"]);
  });

  test("command hooks: gatehouse.json's disableAllHooks is passed to the config source, with or without hooks", () => {
    const off = resolveSettings({ config: { disableAllHooks: true }, file, cwd, env: {} });
    assert.deepEqual(off.commandHooks.load?.configHooks, { file, disableAllHooks: true });
    const hooks = { PreToolUse: [{ hooks: [{ type: "command" as const, command: "./g.sh" }] }] };
    const on = resolveSettings({ config: { hooks, disableAllHooks: false }, file, cwd, env: {} });
    assert.deepEqual(on.commandHooks.load?.configHooks, { file, hooks, disableAllHooks: false });
  });
});
