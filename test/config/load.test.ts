import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { ConfigError, loadConfig, parseConfig, parseConfigText } from "../../src/config/index.js";
import { HOOK_NAMES } from "../../src/hooks/catalog.js";

/** The problems a config value has, as the lines users read. */
function problems(value: unknown): string[] {
  try {
    parseConfig(value, "/project/gatehouse.json", "gatehouse.json");
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    assert.equal(error.file, "/project/gatehouse.json");
    return error.message.split("\n");
  }
  assert.fail("expected a ConfigError");
}

describe("parseConfig: every problem names the file, the JSON path and what was expected", () => {
  test("a full valid config passes unchanged", () => {
    const config = {
      $schema: "./node_modules/gatehouse-runtime/schema/gatehouse.schema.json",
      model: "openai-compatible:http://localhost:11434/v1#llama3.2",
      plugins: [
        { path: "./policy.ts", hooks: { allowConversationAccess: true, timeouts: { before_tool_call: 2000 } } },
        { package: "gatehouse-plugin-x", enabled: false, config: { any: ["thing"] } },
      ],
      hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "./guard.sh" }] }] },
      hookTimeouts: { timeoutMs: 5000, timeouts: { before_agent_run: 10_000 } },
      commandHooks: { codePuppy: true, dialects: { project: "claude-2025" }, onFailure: "block", passEnv: ["X"] },
      mcpServers: { files: { command: "npx", args: ["-y", "server"] }, remote: { url: "https://example.com/mcp" } },
      tools: { allow: ["Read", "mcp__files"], deny: ["Bash"] },
      store: "postgres://localhost/gatehouse",
      maxSteps: 40,
      systemPrompt: "Be brief.",
      compaction: { contextTokens: 50_000, keepRecent: 4 },
    };
    assert.deepEqual(parseConfig(config, "/p/gatehouse.json"), config);
    assert.deepEqual(parseConfig({}, "/p/gatehouse.json"), {});
  });

  test("milliseconds out of range, or not whole", () => {
    assert.deepEqual(problems({ plugins: [{ path: "p.ts", hooks: { timeouts: { before_tool_call: 0 } } }] }), [
      "gatehouse.json: plugins[0].hooks.timeouts.before_tool_call: expected a whole number of milliseconds from 1 to 600000, got 0",
    ]);
    assert.deepEqual(problems({ hookTimeouts: { timeoutMs: 1.5 } }), [
      "gatehouse.json: hookTimeouts.timeoutMs: expected a whole number of milliseconds from 1 to 600000, got 1.5",
    ]);
    assert.deepEqual(problems({ hookTimeouts: { timeouts: { agent_end: 600_001 } } }), [
      "gatehouse.json: hookTimeouts.timeouts.agent_end: expected a whole number of milliseconds from 1 to 600000, got 600001",
    ]);
  });

  test("unknown keys, with a suggestion when one is close", () => {
    assert.deepEqual(problems({ modle: "scripted:echo" }), [
      'gatehouse.json: modle: unknown key; did you mean "model"?',
    ]);
    assert.deepEqual(problems({ tools: { dney: ["Bash"] } }), [
      'gatehouse.json: tools.dney: unknown key; did you mean "deny"?',
    ]);
    assert.deepEqual(problems({ hookTimeouts: { timeouts: { before_tool: 5 } } }), [
      'gatehouse.json: hookTimeouts.timeouts.before_tool: unknown key; did you mean "before_tool_call"?',
    ]);
    assert.deepEqual(problems({ compaction: { zzz: 1 } }), [
      "gatehouse.json: compaction.zzz: unknown key; expected one of contextTokens, keepRecent",
    ]);
  });

  test("wrong types and values", () => {
    assert.deepEqual(problems({ maxSteps: 0, systemPrompt: 3 }), [
      "gatehouse.json: maxSteps: expected a whole number from 1 to 1000, got 0",
      "gatehouse.json: systemPrompt: expected a string, got 3",
    ]);
    assert.deepEqual(problems({ compaction: { keepRecent: -1 } }), [
      "gatehouse.json: compaction.keepRecent: expected a whole number of at least 0, got -1",
    ]);
    assert.deepEqual(problems({ commandHooks: { onFailure: "ignore" } }), [
      'gatehouse.json: commandHooks.onFailure: expected one of "continue", "block", got "ignore"',
    ]);
    assert.deepEqual(problems({ disableAllHooks: "yes" }), [
      "gatehouse.json: disableAllHooks: expected true or false, got a string",
    ]);
    assert.deepEqual(problems({ plugins: {} }), ["gatehouse.json: plugins: expected an array, got an object"]);
    assert.deepEqual(problems([]), ["gatehouse.json: (top level): expected an object, got an array"]);
  });

  test("a union reports the branch the value was meant for", () => {
    assert.deepEqual(problems({ plugins: [{ path: "p.ts", hooks: { failOpen: ["befor_tool_call"] } }] }), [
      `gatehouse.json: plugins[0].hooks.failOpen[0]: expected one of "session_start", "session_end", "before_reset", … (${HOOK_NAMES.length} names), got "befor_tool_call"; did you mean "before_tool_call"?`,
    ]);
    assert.deepEqual(problems({ plugins: [{ path: "p.ts", hooks: { failOpen: "yes" } }] }), [
      "gatehouse.json: plugins[0].hooks.failOpen: expected true or false, or an array, got a string",
    ]);
  });

  test("refinements keep their own words", () => {
    assert.deepEqual(problems({ plugins: [{ id: "x" }] }), [
      "gatehouse.json: plugins[0]: give exactly one of path or package",
    ]);
    assert.deepEqual(problems({ store: "mysql://db/x" }), [
      'gatehouse.json: store: expected a postgres:// URL, "memory" or a SQLite file path',
    ]);
    const [model] = problems({ model: "gpt-4o" });
    assert.match(model ?? "", /^gatehouse\.json: model: model spec 'gpt-4o' has no provider/);
    assert.deepEqual(problems({ mcpServers: { "my.server": { command: "x", url: "http://x" } } }), [
      'gatehouse.json: mcpServers["my.server"]: an MCP server needs exactly one of "command" (stdio) or "url" (HTTP)',
    ]);
  });

  test("a string value is never echoed back for a type error (it may be a secret)", () => {
    const [line] = problems({ mcpServers: { s: { url: "https://x", headers: { Authorization: ["Bearer sk-123"] } } } });
    assert.equal(line, "gatehouse.json: mcpServers.s.headers.Authorization: expected a string, got an array");
    const [other] = problems({ maxSteps: "sk-secret-value" });
    assert.equal(other, "gatehouse.json: maxSteps: expected a whole number from 1 to 1000, got a string");
  });

  test("the hooks block: matcher groups are checked here, handlers by the command-hooks loader", () => {
    assert.deepEqual(problems({ hooks: { PreToolUse: [{ matcher: 1, hooks: [] }] } }), [
      "gatehouse.json: hooks.PreToolUse[0].matcher: expected a string, got 1",
    ]);
    assert.deepEqual(problems({ hooks: { PreToolUse: {} } }), [
      "gatehouse.json: hooks.PreToolUse: expected an array, got an object",
    ]);
  });

  test("invalid JSON names the file, line and column", () => {
    assert.throws(
      () => parseConfigText('{\n  "model": "scripted:echo",\n}', "/p/gatehouse.json", "gatehouse.json"),
      (e: unknown) =>
        e instanceof ConfigError &&
        e.message === "gatehouse.json:2:27: invalid JSON: trailing comma in an object" &&
        e.file === "/p/gatehouse.json",
    );
    assert.deepEqual(parseConfigText('\uFEFF{"maxSteps": 3}', "/p/gatehouse.json"), { maxSteps: 3 });
  });

  test("from text, each problem also names the line and column of what it is about", () => {
    const text = [
      "{",
      '  "plugins": [',
      '    { "path": "p.ts", "hooks": { "timeouts": { "before_tool_call": 0 } } },',
      '    { "id": "x" }',
      "  ],",
      '  "modle": "scripted:echo"',
      "}",
    ].join("\n");
    assert.throws(
      () => parseConfigText(text, "/p/gatehouse.json", "gatehouse.json"),
      (e: unknown) => {
        assert.ok(e instanceof ConfigError);
        assert.deepEqual(e.message.split("\n"), [
          "gatehouse.json:3:48: plugins[0].hooks.timeouts.before_tool_call: expected a whole number of milliseconds from 1 to 600000, got 0",
          "gatehouse.json:4:5: plugins[1]: give exactly one of path or package",
          'gatehouse.json:6:3: modle: unknown key; did you mean "model"?',
        ]);
        return true;
      },
    );
  });
});

describe("loadConfig", () => {
  let cwd: string;
  before(async () => {
    cwd = await mkdtemp(join(tmpdir(), "gatehouse-config-"));
    await mkdir(join(cwd, "conf"));
    await mkdir(join(cwd, "a-dir.json"));
    await writeFile(join(cwd, "conf", "other.json"), '{"maxSteps": 7}');
  });
  after(() => rm(cwd, { recursive: true, force: true }));

  test("no gatehouse.json is an empty config", async () => {
    assert.deepEqual(await loadConfig({ cwd, env: {} }), { config: {} });
  });

  test("reads <cwd>/gatehouse.json and returns its absolute path", async () => {
    const sub = join(cwd, "with-file");
    await mkdir(sub);
    await writeFile(join(sub, "gatehouse.json"), '{"model": "scripted:echo"}');
    assert.deepEqual(await loadConfig({ cwd: sub }), {
      config: { model: "scripted:echo" },
      file: join(sub, "gatehouse.json"),
    });
  });

  test("--config FILE is resolved from cwd and must exist", async () => {
    assert.deepEqual(await loadConfig({ cwd, file: "conf/other.json" }), {
      config: { maxSteps: 7 },
      file: join(cwd, "conf", "other.json"),
    });
    await assert.rejects(
      loadConfig({ cwd, file: "conf/missing.json" }),
      (e: unknown) =>
        e instanceof ConfigError &&
        e.message === "conf/missing.json: no such file" &&
        e.file === join(cwd, "conf", "missing.json"),
    );
    await assert.rejects(loadConfig({ cwd, file: "a-dir.json" }), /a-dir\.json: is a directory, not a file/);
  });

  test("GATEHOUSE_CONFIG names the file when --config does not", async () => {
    const env = { GATEHOUSE_CONFIG: "conf/other.json" };
    assert.deepEqual((await loadConfig({ cwd, env })).config, { maxSteps: 7 });
    await assert.rejects(
      loadConfig({ cwd, env: { GATEHOUSE_CONFIG: "nope.json" } }),
      /nope\.json \(from GATEHOUSE_CONFIG\): no such file/,
    );
  });

  test("a file outside cwd is named by its absolute path", async () => {
    const elsewhere = await mkdtemp(join(tmpdir(), "gatehouse-config-out-"));
    try {
      const file = join(elsewhere, "g.json");
      await writeFile(file, '{"maxSteps": 0}');
      await assert.rejects(loadConfig({ cwd, file }), (e: unknown) => {
        assert.ok(e instanceof ConfigError);
        assert.equal(e.message, `${file}:1:2: maxSteps: expected a whole number from 1 to 1000, got 0`);
        assert.deepEqual(e.problems, [
          { path: "maxSteps", message: "expected a whole number from 1 to 1000, got 0", line: 1, column: 2 },
        ]);
        return true;
      });
    } finally {
      await rm(elsewhere, { recursive: true, force: true });
    }
  });
});
