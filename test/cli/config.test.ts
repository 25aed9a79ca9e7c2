import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { gatehouse, tempProjects } from "./helpers.js";
import { gatehouseInProcess } from "./in-process.js";
import { ESC, gatehouseOnTty, parseJson, uncolored } from "./project-helpers.js";

const SECRETS = {
  providerKey: "sk-live-PROVIDER-0001",
  anthropicToken: "ant-token-0002",
  dbPassword: "pg-pass-0003",
  envDbPassword: "env-pass-0004",
  mcpEnv: "mcp-env-0005",
  mcpHeader: "Bearer mcp-header-0006",
  hookHeader: "hook-header-0007",
  pluginKey: "plugin-key-0008",
  queryToken: "query-token-0009",
  compatibleKey: "compat-0010",
};

/** How MCP server configs refer to an environment variable, expanded when the server starts. */
const REFERENCE = `\${MCP_TOKEN}`;

const CONFIG = {
  $schema: "./schema.json",
  model: "scripted:echo",
  store: `postgres://app:${SECRETS.dbPassword}@db.internal:5432/gatehouse`,
  plugins: [
    {
      path: "plugins/p.mjs",
      config: { apiKey: SECRETS.pluginKey, endpoint: `https://api.example.com/v1?token=${SECRETS.queryToken}&x=1` },
      hooks: { allowConversationAccess: true },
    },
  ],
  hooks: {
    PostToolUse: [
      {
        matcher: "Bash",
        hooks: [{ type: "http", url: "https://hooks.example.com/post", headers: { "X-Key": SECRETS.hookHeader } }],
      },
    ],
  },
  mcpServers: {
    local: { command: "node", args: ["server.js"], env: { SERVICE_SETTING: SECRETS.mcpEnv, TOKEN: REFERENCE } },
    remote: { url: "https://mcp.example.com/mcp", headers: { Authorization: SECRETS.mcpHeader } },
  },
  tools: { deny: ["Bash"] },
  maxSteps: 7,
};

const ENV = {
  OPENAI_API_KEY: SECRETS.providerKey,
  ANTHROPIC_AUTH_TOKEN: SECRETS.anthropicToken,
  OPENAI_COMPATIBLE_API_KEY: SECRETS.compatibleKey,
  OPENAI_BASE_URL: "https://proxy.example.com/v1",
};

interface Resolved {
  configFile: string | null;
  model: { value: string; from: string } | null;
  store: { kind: string; location: string; from: string };
  dataDir: { value: string; from: string };
  modelSettings: { value: Record<string, unknown>; from: string };
  maxSteps: { value: number; from: string };
  subagentDepth: { value: number; from: string };
  systemPrompt: { value: string; from: string };
  compaction: { value: { contextTokens: number; keepRecent: number }; from: string };
  tools: { allow: string[] | null; deny: string[] };
  plugins: { path: string; config: Record<string, unknown> }[];
  hooks: Record<string, unknown>;
  commandHooks: Record<string, unknown>;
  hookTimeouts: Record<string, unknown>;
  mcpServers: Record<string, Record<string, unknown>>;
  environment: Record<string, string>;
}

describe("gatehouse config", { concurrency: 4 }, () => {
  const fresh = tempProjects();

  test("prints the resolved configuration with every secret masked, as text and as JSON", async () => {
    const cwd = await fresh({ "gatehouse.json": CONFIG });
    for (const args of [["config"], ["config", "--json"]]) {
      const r = await gatehouseInProcess(args, { cwd, env: ENV });
      assert.equal(r.code, 0, r.stderr);
      for (const [name, secret] of Object.entries(SECRETS))
        assert.ok(!`${r.stdout}${r.stderr}`.includes(secret), `${args.join(" ")} shows ${name}`);
      assert.ok(r.stdout.includes("****"));
    }
    const c = parseJson(await gatehouse(["config", "--json"], { cwd, env: ENV })) as Resolved;
    assert.deepEqual(c.store, {
      kind: "postgres",
      location: "postgres://app:****@db.internal:5432/gatehouse",
      from: "gatehouse.json",
    });
    assert.deepEqual(c.plugins[0]?.config, {
      apiKey: "****",
      endpoint: "https://api.example.com/v1?token=****&x=1",
    });
    assert.deepEqual(
      c.mcpServers.local?.env,
      { SERVICE_SETTING: "****", TOKEN: REFERENCE },
      "a reference to a variable names a secret without being one",
    );
    assert.deepEqual(c.mcpServers.remote?.headers, { Authorization: "****" });
    assert.deepEqual(c.mcpServers.local?.args, ["server.js"], "what is not secret stays readable");
    assert.deepEqual(c.environment, {
      OPENAI_API_KEY: "****",
      OPENAI_BASE_URL: "https://proxy.example.com/v1",
      ANTHROPIC_AUTH_TOKEN: "****",
      OPENAI_COMPATIBLE_API_KEY: "****",
    });
  });

  test("--json has one key per setting, each saying where it came from", async () => {
    const cwd = await fresh({ "gatehouse.json": CONFIG });
    const c = parseJson(await gatehouseInProcess(["config", "--json"], { cwd })) as Resolved;
    assert.deepEqual(Object.keys(c), [
      "configFile",
      "model",
      "store",
      "dataDir",
      "modelSettings",
      "maxSteps",
      "subagentDepth",
      "systemPrompt",
      "compaction",
      "tools",
      "plugins",
      "hooks",
      "commandHooks",
      "environmentPolicy",
      "hookTimeouts",
      "mcpServers",
      "environment",
    ]);
    assert.equal(c.configFile, "gatehouse.json");
    assert.deepEqual(c.model, { value: "scripted:echo", from: "gatehouse.json" });
    assert.deepEqual(c.maxSteps, { value: 7, from: "gatehouse.json" });
    assert.deepEqual(c.modelSettings, { value: { maxRetries: 2 }, from: "default" });
    assert.deepEqual(c.subagentDepth, { value: 1, from: "default" });
    assert.deepEqual(c.systemPrompt, { value: "You are a helpful assistant.", from: "default" });
    assert.deepEqual(c.compaction, { value: { contextTokens: 100000, keepRecent: 6 }, from: "default" });
    assert.deepEqual(c.tools, { allow: null, deny: ["Bash"] });
    assert.deepEqual(c.dataDir, { value: ".gatehouse", from: "default" });
    assert.equal(c.plugins[0]?.path, "plugins/p.mjs");
  });

  test("precedence: flags > environment > gatehouse.json > defaults", async () => {
    const cwd = await fresh({ "gatehouse.json": { model: "scripted:echo", store: "from-file.db" } });
    const get = async (args: string[], env: Record<string, string> = {}) =>
      parseJson(await gatehouseInProcess(["config", "--json", ...args], { cwd, env })) as Resolved;
    const env = {
      GATEHOUSE_MODEL: "openai:gpt-4o",
      GATEHOUSE_DATABASE_URL: `postgres://u:${SECRETS.envDbPassword}@h/db`,
      GATEHOUSE_DATA_DIR: "env-data",
    };
    const fromEnv = await get([], env);
    assert.deepEqual(fromEnv.model, { value: "openai:gpt-4o", from: "GATEHOUSE_MODEL" });
    assert.deepEqual(fromEnv.store, {
      kind: "postgres",
      location: "postgres://u:****@h/db",
      from: "GATEHOUSE_DATABASE_URL",
    });
    assert.deepEqual(fromEnv.dataDir, { value: "env-data", from: "GATEHOUSE_DATA_DIR" });
    assert.equal(fromEnv.environment.GATEHOUSE_DATABASE_URL, "postgres://u:****@h/db");
    const fromFlags = await get(["--model", "anthropic:claude-x", "--data-dir", "flag-data"], env);
    assert.deepEqual(fromFlags.model, { value: "anthropic:claude-x", from: "--model" });
    assert.deepEqual(fromFlags.dataDir, { value: "flag-data", from: "--data-dir" });
    const fromFile = await get([]);
    assert.deepEqual(fromFile.model, { value: "scripted:echo", from: "gatehouse.json" });
    assert.deepEqual(fromFile.store, { kind: "sqlite", location: "from-file.db", from: "gatehouse.json" });
    const defaults = parseJson(await gatehouseInProcess(["config", "--json"], { cwd: await fresh() })) as Resolved;
    assert.equal(defaults.configFile, null);
    assert.equal(defaults.model, null);
    assert.deepEqual(defaults.store, { kind: "sqlite", location: ".gatehouse/gatehouse.db", from: "default" });
  });

  test("the text form lists each setting with its source", async () => {
    const cwd = await fresh({ "gatehouse.json": CONFIG });
    const r = await gatehouseInProcess(["config"], { cwd, env: { GATEHOUSE_MODEL: "scripted:echo" } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^config file {3}gatehouse\.json$/m);
    assert.match(r.stdout, /^model {9}scripted:echo {2}\(GATEHOUSE_MODEL\)$/m);
    assert.match(
      r.stdout,
      /^store {9}postgres postgres:\/\/app:\*\*\*\*@db\.internal:5432\/gatehouse {2}\(gatehouse\.json\)$/m,
    );
    assert.match(r.stdout, /^max steps {5}7 {2}\(gatehouse\.json\)$/m);
    assert.match(r.stdout, /^tools {9}allow all; deny Bash$/m);
    assert.match(r.stdout, /^Precedence: flags > environment > gatehouse\.json > defaults\.$/m);
    assert.ok(!r.stdout.includes(ESC));
  });

  test("a bad gatehouse.json or GATEHOUSE_DATABASE_URL exits 2", async () => {
    const cwd = await fresh({ "gatehouse.json": { maxSteps: 0 } });
    const r = await gatehouseInProcess(["config"], { cwd });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /maxSteps: expected a whole number from 1 to 1000, got 0/);
    const url = await gatehouseInProcess(["config"], {
      cwd: await fresh(),
      env: { GATEHOUSE_DATABASE_URL: "mysql://h/db" },
    });
    assert.equal(url.code, 2);
    assert.match(url.stderr, /GATEHOUSE_DATABASE_URL/);
  });

  test("colored on a terminal, never with NO_COLOR; --help documents precedence and exit statuses", async () => {
    const cwd = await fresh({ "gatehouse.json": CONFIG });
    const colored = await gatehouseOnTty(["config"], { cwd });
    assert.ok(colored.stdout.includes(ESC));
    const plain = await gatehouseOnTty(["config"], { cwd, env: { NO_COLOR: "1" } });
    assert.ok(!plain.stdout.includes(ESC));
    assert.equal(plain.stdout, uncolored(colored.stdout));
    const help = await gatehouseInProcess(["config", "--help"], { cwd });
    assert.match(help.stdout, /Precedence: flags > environment > gatehouse\.json > defaults\./);
    assert.match(help.stdout, /Exit status:\n {2}0 {2}done\n {2}2 {2}bad input or configuration/);
  });
});
