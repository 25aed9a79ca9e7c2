// Secrets stay masked wherever a value is echoed: canaries go in through every configuration
// source (gatehouse.json, the environment, --model, --settings, .claude/settings.json) and every
// error path (bad model specs, a provider refusing a URL with credentials, an unreachable store
// or MCP server, an MCP server's last words), and no command's output may hold one.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type CliResult, gatehouse, tempProjects } from "./helpers.js";

let n = 0;
const canaries: string[] = [];
/** A fresh secret value that no output holds by accident. */
function canary(label: string): string {
  const value = `Cn${label}${++n}x7Q9z`;
  canaries.push(value);
  return value;
}

const SPEC_FILE = canary("specfile");
const STORE_FILE = canary("storefile");
const PLUGIN_PW = canary("pluginpw");
const PLUGIN_PASS = canary("pluginpass");
const PLUGIN_PWD = canary("pluginpwd");
const PLUGIN_DB = canary("plugindb");
const HOOK_URL = canary("hookurl");
const HOOK_BEARER = canary("hookbearer");
const HOOK_ARG = canary("hookarg");
const MCP_TOKEN = canary("mcptoken");
const MCP_API_KEY = canary("mcpapikey");
const MCP_ENV = canary("mcpenv");
const MCP_URL = canary("mcpurl");
const MCP_HEADER = canary("mcpheader");
const SETTINGS_URL = canary("settingsurl");
const CLAUDE_BEARER = canary("claudebearer");
const ENV_MODEL = canary("envmodel");
const ENV_DB = canary("envdb");
const OPENAI_KEY = `sk-${canary("openaikey")}abcdefghij`;
const ANTHROPIC_KEY = canary("anthropickey");
const BASE_URL = canary("baseurl");
const FLAG_MODEL = canary("flagmodel");

const PLUGIN = `export default { id: "p", setup() {} };`;

/** Everything that can hold a secret, in one project. */
const projectFiles = () => ({
  "p.mjs": PLUGIN,
  "gatehouse.json": {
    model: `openai-compatible:http://bob:${SPEC_FILE}@127.0.0.1:9/v1#m`,
    store: `postgres://gh:${STORE_FILE}@127.0.0.1:1/db`,
    plugins: [
      {
        path: "p.mjs",
        config: {
          credentials: { pw: PLUGIN_PW },
          pass: PLUGIN_PASS,
          pwd: PLUGIN_PWD,
          db: `postgres://u:${PLUGIN_DB}@h/d`,
        },
      },
    ],
    hooks: {
      PreToolUse: [
        {
          hooks: [
            {
              type: "http",
              url: `http://hook:${HOOK_URL}@127.0.0.1:1/hook`,
              headers: { Authorization: `Bearer ${HOOK_BEARER}` },
            },
            { type: "command", command: "true", args: ["--token", HOOK_ARG] },
          ],
        },
      ],
    },
    mcpServers: {
      local: {
        command: process.execPath,
        // Prints its arguments to stderr and exits: its last words are quoted in the diagnostic.
        args: [
          "-e",
          "console.error(process.argv.slice(1).join(' ')); process.exit(3)",
          "--",
          "--token",
          MCP_TOKEN,
          `--api-key=${MCP_API_KEY}`,
        ],
        env: { SOME_KEY: MCP_ENV },
      },
      remote: { url: `http://u:${MCP_URL}@127.0.0.1:1/mcp`, headers: { Authorization: `Bearer ${MCP_HEADER}` } },
    },
  },
  ".claude/settings.json": {
    hooks: {
      Stop: [
        {
          hooks: [
            { type: "http", url: "http://127.0.0.1:1/stop", headers: { Authorization: `Bearer ${CLAUDE_BEARER}` } },
          ],
        },
      ],
    },
  },
});

const SETTINGS = JSON.stringify({
  hooks: { PostToolUse: [{ hooks: [{ type: "http", url: `https://s:${SETTINGS_URL}@127.0.0.1:1/x` }] }] },
});

const ENV = {
  OPENAI_API_KEY: OPENAI_KEY,
  ANTHROPIC_API_KEY: ANTHROPIC_KEY,
  GATEHOUSE_LOG_LEVEL: "debug",
};

function leaks(results: readonly CliResult[]): string[] {
  const all = results.map((r) => r.stdout + r.stderr).join("\n");
  return canaries.filter((c) => all.includes(c));
}

describe("secrets through every configuration source and error path", { concurrency: 4 }, () => {
  const fresh = tempProjects();

  test("gatehouse config (text and --json) masks every canary, by key and by shape", async () => {
    const cwd = await fresh(projectFiles());
    const runs = await Promise.all([
      gatehouse(["config"], { cwd, env: ENV }),
      gatehouse(["config", "--json"], { cwd, env: ENV }),
      gatehouse(["config", "--json"], {
        cwd,
        env: {
          ...ENV,
          GATEHOUSE_MODEL: `openai-compatible:https://m:${ENV_MODEL}@h/v1#m`,
          GATEHOUSE_DATABASE_URL: `postgres://u:${ENV_DB}@127.0.0.1:1/db`,
          OPENAI_BASE_URL: `https://b:${BASE_URL}@h/v1`,
        },
      }),
      gatehouse(["config", "--model", `openai-compatible:https://f:${FLAG_MODEL}@h/v1#m`], { cwd, env: ENV }),
    ]);
    for (const r of runs) assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(leaks(runs), []);
    const json = JSON.parse(runs[1]?.stdout ?? "") as Record<string, unknown>;
    assert.deepEqual((json.mcpServers as { local: { args: string[] } }).local.args.slice(3), [
      "--token",
      "****",
      "--api-key=****",
    ]);
    assert.deepEqual((json.plugins as { config: unknown }[])[0]?.config, {
      credentials: { pw: "****" },
      pass: "****",
      pwd: "****",
      db: "postgres://u:****@h/d",
    });
  });

  test("hooks list and check (text and --json), --settings and .claude/settings.json included", async () => {
    const cwd = await fresh(projectFiles());
    const args = ["--settings", SETTINGS];
    const runs = await Promise.all([
      gatehouse(["hooks", "list", ...args], { cwd, env: ENV }),
      gatehouse(["hooks", "list", "--json", ...args], { cwd, env: ENV }),
      gatehouse(["hooks", "check", ...args], { cwd, env: ENV }),
      gatehouse(["hooks", "check", "--json", ...args], { cwd, env: ENV }),
    ]);
    for (const r of runs) assert.equal(r.code, 0, r.stderr);
    assert.match(runs[0]?.stdout ?? "", /http:\/\/hook:\*\*\*\*@127\.0\.0\.1:1\/hook/);
    assert.deepEqual(leaks(runs), []);
  });

  test("bad model specs with a password, from gatehouse.json, GATEHOUSE_MODEL and --model: exit 2, masked", async () => {
    const files = projectFiles();
    const badFile = await fresh({
      ...files,
      "gatehouse.json": { ...files["gatehouse.json"], model: `openai-compatible:http://bob:${SPEC_FILE}@h/v1` },
    });
    const cwd = await fresh({ "p.mjs": PLUGIN });
    const runs = await Promise.all([
      gatehouse(["run", "-p", "hi"], { cwd: badFile, env: ENV }),
      gatehouse(["config"], { cwd: badFile, env: ENV }),
      gatehouse(["run", "-p", "hi"], {
        cwd,
        env: { ...ENV, GATEHOUSE_MODEL: `openai-compatible:http://m:${ENV_MODEL}@h/v1` },
      }),
      gatehouse(["run", "-p", "hi", "--model", `nope:http://f:${FLAG_MODEL}@h/v1`], { cwd, env: ENV }),
      gatehouse(["run", "-p", "hi", "--model", `openai-compatible:ftp://f:${FLAG_MODEL}@h/v1#m`], { cwd, env: ENV }),
    ]);
    for (const r of runs) assert.equal(r.code, 2, r.stderr);
    assert.match(runs[2]?.stderr ?? "", /openai-compatible:http:\/\/m:\*\*\*\*@h\/v1/);
    assert.deepEqual(leaks(runs), []);
  });

  test("a provider refusing a URL with credentials, an unreachable store, MCP servers failing: run, run --json, chat", async () => {
    const files = projectFiles();
    const { store: _store, ...noStore } = files["gatehouse.json"];
    const cwd = await fresh({ ...files, "gatehouse.json": noStore });
    const runs = await Promise.all([
      gatehouse(["run", "-p", "hi", "--settings", SETTINGS], { cwd, env: ENV }),
      gatehouse(["run", "-p", "hi", "--json"], { cwd, env: ENV }),
      gatehouse(["run", "-p", "hi", "--model", "openai:gpt-4o"], {
        cwd,
        env: { ...ENV, OPENAI_BASE_URL: `http://b:${BASE_URL}@127.0.0.1:9/v1` },
      }),
      gatehouse(["chat"], { cwd, env: ENV, input: "hi\n" }),
      gatehouse(["run", "-p", "hi", "--model", "scripted:echo"], {
        cwd,
        env: { ...ENV, GATEHOUSE_DATABASE_URL: `postgres://u:${ENV_DB}@127.0.0.1:1/db` },
      }),
      gatehouse(["sessions", "list"], { cwd: await fresh(files), env: ENV }),
    ]);
    const [run, json, baseUrl, chat, store, sessions] = runs;
    assert.equal(run?.code, 1, run?.stderr);
    assert.match(
      run?.stderr ?? "",
      /credentials: http:\/\/bob:\*\*\*\*@127\.0\.0\.1:9/,
      "the provider's message, masked",
    );
    assert.match(run?.stderr ?? "", /MCP server "local".*--token \*\*\*\* --api-key=\*\*\*\*/);
    assert.match(run?.stderr ?? "", /MCP server "remote".*http:\/\/u:\*\*\*\*@127\.0\.0\.1:1\/mcp/);
    assert.match(
      (JSON.parse(json?.stdout ?? "{}") as { error?: { message: string } }).error?.message ?? "",
      /bob:\*\*\*\*@/,
    );
    assert.equal(baseUrl?.code, 1, baseUrl?.stderr);
    assert.match(chat?.stderr ?? "", /run failed/);
    assert.equal(store?.code, 1, store?.stderr);
    assert.equal(sessions?.code, 1, sessions?.stderr);
    assert.deepEqual(leaks(runs), []);
  });
});
