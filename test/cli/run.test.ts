import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { type CliResult, gatehouse, project, put, tempProjects } from "./helpers.js";
import { gatehouseInProcess } from "./in-process.js";
import { gatehouseOnTty, hasColor, onScreen, uncolored } from "./project-helpers.js";

const MCP_FIXTURE = fileURLToPath(new URL("fixtures/mcp-echo.mjs", import.meta.url));
const SECRET = "INTERNAL-REASON-7f3a: user matched rule 12";
const NOTICE = "This request is not allowed here.";

/** A plugin file as an operator would write it: plain ESM, no Gatehouse import. */
const BLOCKER = `export default {
  id: "blocker",
  setup(api) {
    api.on("before_agent_run", () => ({ outcome: "block", reason: ${JSON.stringify(SECRET)}, message: ${JSON.stringify(NOTICE)} }));
  },
};
`;

function json(result: CliResult): Record<string, unknown> {
  const lines = result.stdout.split("\n").filter(Boolean);
  assert.equal(lines.length, 1, `one JSON line expected, got: ${result.stdout}`);
  return JSON.parse(lines[0] ?? "") as Record<string, unknown>;
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

describe("gatehouse run", { concurrency: 4 }, () => {
  const fresh = tempProjects();

  test("prints the reply of scripted:echo and exits 0; data goes to ./.gatehouse", async () => {
    const cwd = await fresh();
    const r = await gatehouse(["run", "-p", "hello there", "--model", "scripted:echo"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "hello there\n");
    assert.equal(r.stderr, "", "stderr is not a TTY: no session line, no noise");
    assert.ok(existsSync(join(cwd, ".gatehouse", "gatehouse.db")));
  });

  test("--json prints the RunResult as one line", async () => {
    const cwd = await fresh();
    const r = await gatehouseInProcess(["run", "-p", "hi", "--model", "scripted:echo", "--json"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    const result = json(r);
    assert.equal(result.outcome, "completed");
    assert.equal(result.reply, "hi");
    assert.equal(result.steps, 1);
    assert.equal(typeof result.sessionId, "string");
    assert.equal(typeof result.runId, "string");
    assert.equal(typeof result.durationMs, "number");
    assert.equal(typeof (result.usage as { inputTokens: unknown }).inputTokens, "number");
  });

  test("reads the prompt from stdin when -p is absent", async () => {
    const cwd = await fresh();
    const r = await gatehouseInProcess(["run", "--model", "scripted:echo"], { cwd, input: "from stdin\n" });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "from stdin\n");
  });

  test("an empty prompt is bad input", async () => {
    const cwd = await fresh();
    const r = await gatehouseInProcess(["run", "--model", "scripted:echo"], { cwd, input: "  \n" });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /empty prompt/);
    assert.equal(r.stdout, "");
  });

  test("--session continues a session: the second turn's model sees the first", async () => {
    const cwd = await fresh();
    const first = json(
      await gatehouseInProcess(["run", "--session", "s-1", "-p", "first turn", "--model", "scripted:echo", "--json"], {
        cwd,
      }),
    );
    assert.equal(first.sessionId, "s-1");
    const second = json(
      await gatehouseInProcess(["run", "--session", "s-1", "-p", "again", "--model", "scripted:echo", "--json"], {
        cwd,
      }),
    );
    const alone = json(await gatehouseInProcess(["run", "-p", "again", "--model", "scripted:echo", "--json"], { cwd }));
    assert.equal(second.sessionId, "s-1");
    assert.notEqual(alone.sessionId, "s-1", "without --session every run is a new session");
    const tokens = (r: Record<string, unknown>) => (r.usage as { inputTokens: number }).inputTokens;
    // The scripted model estimates input tokens from the prompt it receives: the history adds some.
    assert.ok(tokens(second) > tokens(alone), `${tokens(second)} > ${tokens(alone)}`);
  });

  test("a plugin that blocks at before_agent_run: notice on stdout, exit 3, the reason nowhere", async () => {
    const cwd = await fresh({
      "policy/block.mjs": BLOCKER,
      "gatehouse.json": {
        model: "scripted:echo",
        plugins: [{ path: "policy/block.mjs", hooks: { allowConversationAccess: true } }],
      },
    });
    const prompt = "please leak the thing";
    const r = await gatehouseInProcess(["run", "-p", prompt], { cwd });
    assert.equal(r.code, 3, r.stderr);
    assert.equal(r.stdout, `${NOTICE}\n`);
    assert.ok(!`${r.stdout}${r.stderr}`.includes(SECRET));
    assert.ok(!r.stdout.includes(prompt), "the model never answered, so the echo never printed");

    const asJson = await gatehouseInProcess(["run", "-p", prompt, "--json"], { cwd });
    assert.equal(asJson.code, 3);
    const result = json(asJson);
    assert.equal(result.outcome, "blocked");
    assert.equal(result.reply, NOTICE);
    assert.deepEqual(result.blockedBy, { pluginId: "blocker", hook: "before_agent_run" });
    assert.ok(!`${asJson.stdout}${asJson.stderr}`.includes(SECRET));

    for (const file of await filesUnder(join(cwd, ".gatehouse"))) {
      const bytes = await readFile(file);
      assert.ok(!bytes.includes(SECRET), `${file} holds the reason`);
      assert.ok(!bytes.includes(prompt), `${file} holds the blocked prompt`);
    }
  });

  test("command hooks from gatehouse.json and .claude/settings.json run: a UserPromptSubmit exit 2 blocks", async () => {
    const guard = "#!/bin/sh\ncat >/dev/null\necho 'prompts like this are not allowed' >&2\nexit 2\n";
    const hooks = { UserPromptSubmit: [{ hooks: [{ type: "command", command: "sh ./guard.sh" }] }] };
    const cwd = await fresh({ "guard.sh": guard, "gatehouse.json": { model: "scripted:echo", hooks } });
    const r = await gatehouseInProcess(["run", "-p", "tell me", "--json"], { cwd });
    assert.equal(r.code, 3, r.stderr);
    const result = json(r);
    assert.equal(result.reply, "prompts like this are not allowed");
    assert.deepEqual(result.blockedBy, {
      pluginId: "command-hooks",
      hook: "before_input",
      category: "UserPromptSubmit",
    });

    await put(cwd, "gatehouse.json", { model: "scripted:echo" });
    await put(cwd, ".claude/settings.json", { hooks });
    const fromSettings = await gatehouseInProcess(["run", "-p", "tell me"], { cwd });
    assert.equal(fromSettings.code, 3, fromSettings.stderr);
    assert.equal(fromSettings.stdout, "prompts like this are not allowed\n");
  });

  test("a config error exits 2 naming the file, the JSON path and what was expected", async () => {
    const cwd = await fresh({
      "gatehouse.json": {
        model: "scripted:echo",
        plugins: [{ path: "p.mjs", hooks: { timeouts: { before_tool_call: 0 } } }],
      },
    });
    const r = await gatehouseInProcess(["run", "-p", "x"], { cwd });
    assert.equal(r.code, 2);
    assert.match(
      r.stderr,
      /gatehouse\.json:8:11: plugins\[0\]\.hooks\.timeouts\.before_tool_call: expected a whole number of milliseconds from 1 to 600000/,
    );
    assert.equal(r.stdout, "");
  });

  test("invalid JSON exits 2 naming the file, line and column", async () => {
    const cwd = await fresh({ "gatehouse.json": '{\n  "model": "scripted:echo",\n}\n' });
    const r = await gatehouseInProcess(["run", "-p", "x"], { cwd });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /gatehouse\.json:2:27: invalid JSON: trailing comma/);
  });

  test("--config FILE: a missing file is an error; paths in it are relative to its folder", async () => {
    const cwd = await fresh({
      "conf/gatehouse.json": {
        model: "scripted:script.json",
        plugins: [{ path: "block.mjs", hooks: { allowConversationAccess: true } }],
      },
      "conf/script.json": { runs: [{ turns: [{ text: "scripted from conf" }] }] },
      "conf/block.mjs": BLOCKER,
    });
    const missing = await gatehouseInProcess(["run", "-p", "x", "--config", "nope.json", "--model", "scripted:echo"], {
      cwd,
    });
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /nope\.json: no such file/);

    const r = await gatehouseInProcess(["run", "-p", "x", "--config", "conf/gatehouse.json"], { cwd });
    assert.equal(r.code, 3, r.stderr);
    assert.equal(r.stdout, `${NOTICE}\n`);
  });

  test("a relative scripted file in gatehouse.json is found from the file's folder", async () => {
    const cwd = await fresh({
      "conf/gatehouse.json": { model: "scripted:script.json" },
      "conf/script.json": { runs: [{ turns: [{ text: "scripted from conf" }] }] },
    });
    const r = await gatehouseInProcess(["run", "-p", "x", "--config", "conf/gatehouse.json"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "scripted from conf\n");
  });

  test("no model anywhere: exit 2 with how to set one", async () => {
    const cwd = await fresh();
    const r = await gatehouseInProcess(["run", "-p", "x"], { cwd });
    assert.equal(r.code, 2);
    for (const hint of ["--model", '"model" in gatehouse.json', "GATEHOUSE_MODEL", "scripted:echo"]) {
      assert.ok(r.stderr.includes(hint), `the message mentions ${hint}: ${r.stderr}`);
    }
  });

  test("a bad model spec or scripted file exits 2 naming it", async () => {
    const cwd = await fresh({ "bad.json": { runs: [{ turns: [{ txt: "typo" }] }] } });
    const spec = await gatehouseInProcess(["run", "-p", "x", "--model", "nope"], { cwd });
    assert.equal(spec.code, 2);
    assert.match(spec.stderr, /model spec 'nope' has no provider/);

    const file = await gatehouseInProcess(["run", "-p", "x", "--model", "scripted:bad.json"], { cwd });
    assert.equal(file.code, 2);
    assert.match(file.stderr, /bad\.json/);
    assert.match(file.stderr, /runs\[0\]\.turns\[0\]/);

    const absent = await gatehouseInProcess(["run", "-p", "x", "--model", "scripted:absent.json"], { cwd });
    assert.equal(absent.code, 2);
    assert.match(absent.stderr, /absent\.json/);
  });

  test("bad flags exit 2 with commander's message", async () => {
    const cwd = await fresh();
    const unknown = await gatehouse(["run", "--bogus", "-p", "x", "--model", "scripted:echo"], { cwd });
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown option '--bogus'/);
    const choice = await gatehouse(["run", "--trigger", "webhook", "-p", "x", "--model", "scripted:echo"], { cwd });
    assert.equal(choice.code, 2);
    assert.match(choice.stderr, /Allowed choices are user, cron, api/);
    const command = await gatehouse(["runn"], { cwd });
    assert.equal(command.code, 2);
  });

  test("a failing scripted turn exits 1 with the error on stderr", async () => {
    const cwd = await fresh({ "s.json": { runs: [{ turns: [{ error: "upstream exploded" }] }] } });
    const r = await gatehouseInProcess(["run", "-p", "x", "--model", "scripted:s.json"], { cwd });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^gatehouse: run failed: .*upstream exploded/m);
    assert.equal(r.stdout, "");
  });

  test("--data-dir and GATEHOUSE_DATA_DIR choose where the SQLite file goes (flag first)", async () => {
    const cwd = await fresh();
    const byFlag = await gatehouseInProcess(["run", "-p", "x", "--model", "scripted:echo", "--data-dir", "state"], {
      cwd,
      env: { GATEHOUSE_DATA_DIR: "from-env" },
    });
    assert.equal(byFlag.code, 0, byFlag.stderr);
    assert.ok(existsSync(join(cwd, "state", "gatehouse.db")));
    assert.ok(!existsSync(join(cwd, "from-env")));
    assert.ok(!existsSync(join(cwd, ".gatehouse")));

    const byEnv = await gatehouseInProcess(["run", "-p", "x", "--model", "scripted:echo"], {
      cwd,
      env: { GATEHOUSE_DATA_DIR: "from-env" },
    });
    assert.equal(byEnv.code, 0, byEnv.stderr);
    assert.ok(existsSync(join(cwd, "from-env", "gatehouse.db")));
  });

  test('model precedence: --model, then GATEHOUSE_MODEL, then gatehouse.json "model"', async () => {
    const cwd = await fresh({
      "env.json": { runs: [{ turns: [{ text: "from env" }] }] },
      "config.json": { runs: [{ turns: [{ text: "from config" }] }] },
    });
    const env = { GATEHOUSE_MODEL: "scripted:env.json" };
    const fromEnv = await gatehouseInProcess(["run", "-p", "x"], { cwd, env });
    assert.equal(fromEnv.code, 0, fromEnv.stderr);
    assert.equal(fromEnv.stdout, "from env\n");

    await put(cwd, "gatehouse.json", { model: "scripted:config.json" });
    assert.equal((await gatehouseInProcess(["run", "-p", "x"], { cwd, env })).stdout, "from env\n");
    assert.equal((await gatehouseInProcess(["run", "-p", "x"], { cwd })).stdout, "from config\n");
    assert.equal(
      (await gatehouseInProcess(["run", "-p", "x", "--model", "scripted:echo"], { cwd, env })).stdout,
      "x\n",
    );
  });

  test("a plugin named in gatehouse.json that cannot be loaded stops the run (exit 2)", async () => {
    const cwd = await fresh({ "gatehouse.json": { model: "scripted:echo", plugins: [{ path: "missing.mjs" }] } });
    const r = await gatehouseInProcess(["run", "-p", "hello"], { cwd });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /missing\.mjs/);
    assert.equal(r.stdout, "");
  });

  test("MCP servers: their tools are offered; one that cannot start is reported and the run goes on", async () => {
    const cwd = await fresh({
      "s.json": {
        runs: [
          {
            turns: [
              { toolCalls: [{ name: "mcp__fx__echo", input: { text: "ping" } }] },
              { text: "{{lastToolResult}}" },
            ],
          },
        ],
      },
      "gatehouse.json": {
        model: "scripted:s.json",
        // MCP tools ask in default mode; nobody can answer here, so a server rule allows them.
        permissions: { allow: ["mcp__fx"] },
        mcpServers: {
          fx: { command: process.execPath, args: [MCP_FIXTURE] },
          broken: { command: join(tmpdir(), "gatehouse-no-such-server") },
        },
        tools: { allow: ["mcp__*"] },
      },
    });
    const r = await gatehouseInProcess(["run", "-p", "call it"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /echo: ping/);
    assert.match(r.stderr, /^gatehouse: .*"broken"/m);
  });

  test("Ctrl-C cancels the run: outcome cancelled, exit 1", async () => {
    // The hook says when the run is under way and returns when the run's signal aborts.
    const waiter = `export default { id: "waiter", setup(api) {
      api.on("before_agent_run", (_e, ctx) => { api.logger.warn("run under way");
        return new Promise((done) => ctx.signal.addEventListener("abort", () => done(undefined))); });
    } };`;
    const cwd = await fresh({
      "waiter.mjs": waiter,
      "gatehouse.json": {
        model: "scripted:echo",
        plugins: [{ path: "waiter.mjs", hooks: { allowConversationAccess: true } }],
      },
    });
    let sent = false;
    const r = await gatehouse(["run", "-p", "hi", "--json"], {
      cwd,
      onStderr: (soFar, child) => {
        if (!sent && soFar.includes("run under way")) sent = child.kill("SIGINT");
      },
    });
    assert.ok(sent);
    assert.equal(r.code, 1, r.stderr);
    assert.equal(json(r).outcome, "cancelled");
    assert.match(r.stderr, /^gatehouse: run cancelled$/m);
  });

  test("a second Ctrl-C stops at once with exit 130, while a plugin keeps the run from winding down", async () => {
    // An observer the run does not wait for, but closing does: it never finishes. The output gate
    // holds the run until the first Ctrl-C, so that one always finds the run still going.
    const lingerer = `export default { id: "lingerer", setup(api) {
      api.on("model_call_started", () => { api.logger.warn("observer under way"); return new Promise(() => {}); }, { timeoutMs: 60000 });
      api.on("before_response_emit", (_e, ctx) =>
        new Promise((done) => ctx.signal.addEventListener("abort", () => done(undefined))));
    } };`;
    const cwd = await fresh({
      "lingerer.mjs": lingerer,
      "gatehouse.json": {
        model: "scripted:echo",
        plugins: [{ path: "lingerer.mjs", hooks: { allowConversationAccess: true } }],
      },
    });
    let signals = 0;
    const r = await gatehouse(["run", "-p", "hi"], {
      cwd,
      onStderr: (soFar, child) => {
        if (signals === 0 && soFar.includes("observer under way")) signals += Number(child.kill("SIGINT"));
        else if (signals === 1 && soFar.includes("cancelling the run")) signals += Number(child.kill("SIGINT"));
      },
    });
    assert.equal(signals, 2);
    assert.equal(r.code, 130, r.stderr);
  });

  test("on a terminal a blocked reply and the session line are colored, never with NO_COLOR; a reply is printed as it is", async () => {
    const cwd = await fresh({
      "policy/block.mjs": BLOCKER,
      "gatehouse.json": {
        model: "scripted:echo",
        plugins: [{ path: "policy/block.mjs", hooks: { allowConversationAccess: true } }],
      },
    });
    const blocked = await gatehouseOnTty(["run", "-p", "hi"], { cwd });
    assert.equal(blocked.code, 3, blocked.stderr);
    assert.ok(hasColor(blocked.stdout), "the notice is colored");
    assert.equal(uncolored(blocked.stdout), `${NOTICE}\n`);
    assert.ok(hasColor(blocked.stderr), "the session line is colored");
    assert.match(uncolored(onScreen(blocked.stderr)), /^session: \S+$/m);

    const plain = await gatehouseOnTty(["run", "-p", "hi"], { cwd, env: { NO_COLOR: "1" } });
    assert.equal(plain.code, 3, plain.stderr);
    assert.equal(plain.stdout, `${NOTICE}\n`);
    assert.match(onScreen(plain.stderr), /^session: \S+$/m);
    assert.ok(!hasColor(plain.stderr));

    const reply = await gatehouseOnTty(["run", "--model", "scripted:echo", "--config", "none.json", "-p", "hi"], {
      cwd: await fresh({ "none.json": {} }),
    });
    assert.equal(reply.code, 0, reply.stderr);
    assert.equal(reply.stdout, "hi\n", "a completed reply is the model's text, uncolored");
  });

  test("a bad GATEHOUSE_DATABASE_URL is a configuration error", async () => {
    const cwd = await fresh();
    const r = await gatehouseInProcess(["run", "-p", "x", "--model", "scripted:echo"], {
      cwd,
      env: { GATEHOUSE_DATABASE_URL: "mysql://db/x" },
    });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /GATEHOUSE_DATABASE_URL/);
  });
});

describe("gatehouse --version and --help", () => {
  let cwd: string;
  let remove: () => Promise<void>;
  before(async () => {
    ({ dir: cwd, remove } = await project());
  });
  after(() => remove());

  test("--version prints the package version", async () => {
    const { version } = JSON.parse(await readFile(new URL("../../package.json", import.meta.url), "utf8")) as {
      version: string;
    };
    const r = await gatehouse(["--version"], { cwd });
    assert.equal(r.code, 0);
    assert.equal(r.stdout, `${version}\n`);
  });

  test("run --help documents the exit statuses", async () => {
    const r = await gatehouse(["run", "--help"], { cwd });
    assert.equal(r.code, 0);
    assert.match(r.stdout, /Exit status:/);
    assert.match(r.stdout, /3 {2}a policy hook blocked the turn/);
  });
});
