// Workspace trust (docs/trust.md): what a cloned repository's own settings may loosen. Each case
// runs the project untrusted (GATEHOUSE_TRUST_WORKSPACE cleared, a home folder apart from the
// project) and, as its control, trusted: the same settings then take effect.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { type CliResult, gatehouse, put, TRUST_ENV, tempProjects } from "./helpers.js";

/** One Bash call that leaves `ran` behind when it runs. */
const TOUCH = {
  runs: [{ turns: [{ toolCalls: [{ name: "Bash", input: { command: "touch ran" } }] }, { text: "done" }] }],
};

/** A plugin that leaves `plugin-loaded` behind when Gatehouse loads it. */
const PLUGIN = `import { writeFileSync } from "node:fs";
export default { id: "marker", setup() { writeFileSync("plugin-loaded", "yes"); } };
`;

describe("workspace trust", { concurrency: 3 }, () => {
  const fresh = tempProjects();
  /** A cloned repository: its own settings, a home folder of its own, untrusted unless `env` says so. */
  const clone = async (files: Record<string, unknown>) => {
    const cwd = await fresh({ "s.json": TOUCH, ...files });
    const home = join(cwd, "home");
    const cli = (args: string[], env: Record<string, string> = {}) =>
      gatehouse(args, { cwd, env: { HOME: home, [TRUST_ENV]: "", ...env } });
    return { cwd, home, cli, ran: () => existsSync(join(cwd, "ran")) };
  };
  const notice = (r: CliResult) =>
    r.stderr.split("\n").filter((l) => /not trusted|changed since it was trusted/.test(l));

  test("a cloned repository's allow rules are ignored until `gatehouse trust --yes`; a change to its files ignores them again", async () => {
    const p = await clone({
      "gatehouse.json": { model: "scripted:s.json" },
      ".claude/settings.json": { permissions: { allow: ["Bash"] } },
    });
    const untrusted = await p.cli(["run", "-p", "go"]);
    assert.equal(untrusted.code, 0, untrusted.stderr);
    assert.equal(p.ran(), false, "the project's allow rule must not let Bash run before trust");
    assert.match(untrusted.stderr, /permission denied: Bash/);
    const lines = notice(untrusted);
    assert.equal(lines.length, 1, untrusted.stderr);
    assert.match(lines[0] ?? "", /ignoring \.claude\/settings\.json permissions\.allow; `gatehouse trust`/);
    assert.match(lines[0] ?? "", /GATEHOUSE_TRUST_WORKSPACE=1/);

    const trusted = await p.cli(["trust", "--yes"]);
    assert.equal(trusted.code, 0, trusted.stderr);
    assert.match(trusted.stdout, /permissions\.allow: Bash/);
    assert.match(trusted.stdout, /trusted: recorded in .*trusted-projects\.json/);
    const store = JSON.parse(await readFile(join(p.home, ".config/gatehouse/trusted-projects.json"), "utf8"));
    assert.deepEqual(
      Object.values(store.projects).map((e) => (e as { files: string[] }).files),
      [[".claude/settings.json"]],
    );
    const after = await p.cli(["run", "-p", "go"]);
    assert.equal(after.code, 0, after.stderr);
    assert.equal(p.ran(), true, "trusted, the allow rule applies");
    assert.deepEqual(notice(after), []);

    // Editing what only tightens keeps the trust.
    await put(p.cwd, ".claude/settings.json", { permissions: { allow: ["Bash"], deny: ["Bash(rm:*)"] } });
    execFileSync("rm", [join(p.cwd, "ran")]);
    await p.cli(["run", "-p", "go"]);
    assert.equal(p.ran(), true, "a new deny rule does not ask again");

    // The repository changes what its settings loosen after the user trusted them: asked again.
    await put(p.cwd, ".claude/settings.json", { permissions: { allow: ["Bash", "Edit"] } });
    execFileSync("rm", [join(p.cwd, "ran")]);
    const changed = await p.cli(["run", "-p", "go"]);
    assert.equal(p.ran(), false, "changed files are not trusted");
    assert.match(notice(changed)[0] ?? "", /settings changed since it was trusted/);
    const status = await p.cli(["trust"]);
    assert.equal(status.code, 2, "no terminal and no --yes: nothing is recorded");
    assert.match(status.stdout, /not trusted: its settings changed/);
    assert.match(status.stdout, /permissions\.allow: Bash, Edit/);
  });

  test("deny and ask rules of an untrusted project apply at once, whatever else allows the call", async () => {
    for (const rule of [{ deny: ["Bash(touch:*)"] }, { ask: ["Bash"] }]) {
      const p = await clone({
        "gatehouse.json": { model: "scripted:s.json" },
        ".claude/settings.json": { permissions: { ...rule, allow: ["Bash"] } },
      });
      // The operator's own allow (a flag) would run it: the project's tightening rule still wins.
      const r = await p.cli(["run", "--allowedTools", "Bash", "-p", "go"]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(p.ran(), false, `${JSON.stringify(rule)} applies untrusted`);
      assert.match(r.stderr, /permission denied: Bash/);
      // Control: without the project's rule the flag lets it run.
      await put(p.cwd, ".claude/settings.json", {});
      await p.cli(["run", "--allowedTools", "Bash", "-p", "go"]);
      assert.equal(p.ran(), true, "the flag alone runs Bash");
    }
  });

  test("gatehouse.json plugins, MCP servers, passEnv and a loosening mode wait for trust; GATEHOUSE_TRUST_WORKSPACE=1 trusts one process", async () => {
    const p = await clone({
      "plugin.mjs": PLUGIN,
      "s.json": {
        runs: [
          {
            turns: [
              {
                toolCalls: [
                  { name: "Bash", input: { command: 'test -n "$OPENAI_API_KEY" && touch had-key; touch ran' } },
                ],
              },
              { text: "done" },
            ],
          },
        ],
      },
      "gatehouse.json": {
        model: "scripted:s.json",
        plugins: [{ path: "./plugin.mjs" }],
        mcpServers: { m: { command: "sh", args: ["-c", "touch mcp-started"] } },
        tools: { bash: { passEnv: ["OPENAI_API_KEY"] } },
        permissions: { defaultMode: "bypassPermissions" },
      },
    });
    const marker = (name: string) => existsSync(join(p.cwd, name));
    const untrusted = await p.cli(["run", "--allow-bypass-permissions", "--allowedTools", "Bash", "-p", "go"], {
      OPENAI_API_KEY: "sk-canary",
    });
    assert.equal(untrusted.code, 0, untrusted.stderr);
    assert.equal(p.ran(), true, "the operator's flag ran Bash");
    assert.equal(marker("plugin-loaded"), false, "no plugin code ran");
    assert.equal(marker("mcp-started"), false, "no MCP server started");
    assert.equal(marker("had-key"), false, "passEnv did not hand the key to Bash");
    assert.match(
      notice(untrusted)[0] ?? "",
      /gatehouse\.json permissions\.defaultMode, gatehouse\.json plugins, gatehouse\.json mcpServers, gatehouse\.json tools\.bash\.passEnv/,
    );
    const mode = await p.cli(["permissions", "--allow-bypass-permissions"]);
    assert.match(mode.stdout, /^mode: default/, "bypassPermissions from the project waits for trust");

    // Control: the same project trusted for one process, and nothing recorded.
    const trusted = await p.cli(["run", "--allow-bypass-permissions", "--allowedTools", "Bash", "-p", "go"], {
      OPENAI_API_KEY: "sk-canary",
      [TRUST_ENV]: "1",
    });
    assert.deepEqual(notice(trusted), [], trusted.stderr);
    assert.equal(marker("plugin-loaded"), true, "trusted, the plugin loads");
    assert.equal(marker("mcp-started"), true, "trusted, the MCP server starts");
    assert.equal(marker("had-key"), true, "trusted, passEnv applies");
    assert.equal(
      existsSync(join(p.home, ".config/gatehouse/trusted-projects.json")),
      false,
      "the variable records nothing",
    );
  });

  test("settings.local.json is the user's own unless git tracks it, as in Claude Code", async () => {
    const p = await clone({
      "gatehouse.json": { model: "scripted:s.json" },
      ".claude/settings.local.json": { permissions: { allow: ["Bash"] } },
    });
    execFileSync("git", ["init", "-q"], { cwd: p.cwd });
    const untracked = await p.cli(["run", "-p", "go"]);
    assert.equal(p.ran(), true, untracked.stderr);
    execFileSync("rm", [join(p.cwd, "ran")]);
    execFileSync("git", ["add", ".claude/settings.local.json"], { cwd: p.cwd });
    const tracked = await p.cli(["run", "-p", "go"]);
    assert.equal(p.ran(), false, "a tracked local file comes from the repository: it waits for trust");
    assert.match(notice(tracked)[0] ?? "", /\.claude\/settings\.local\.json permissions\.allow/);
  });

  test("a project whose settings loosen nothing needs no trust and prints nothing about it", async () => {
    const p = await clone({
      "gatehouse.json": { model: "scripted:s.json", permissions: { deny: ["Read(./.env)"] } },
    });
    const r = await p.cli(["run", "--allowedTools", "Bash", "-p", "go"]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(notice(r), []);
    const status = await p.cli(["trust"]);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /nothing to trust/);
  });

  test("gatehouse init trusts the files it writes: the example plugin loads in a fresh project", async () => {
    const p = await clone({});
    const init = await p.cli(["init", "agent"]);
    assert.equal(init.code, 0, init.stderr);
    assert.match(init.stdout, /trusted: recorded in /);
    const run = await gatehouse(["run", "-p", "hello, I am ada@example.com"], {
      cwd: join(p.cwd, "agent"),
      env: { HOME: p.home, [TRUST_ENV]: "" },
    });
    assert.equal(run.stdout, "hello, I am [email]\n", run.stderr);
    assert.deepEqual(notice(run), []);
  });

  test("a trust file that cannot be read is not overwritten", async () => {
    const p = await clone({
      "gatehouse.json": { model: "scripted:s.json" },
      ".claude/settings.json": { permissions: { allow: ["Bash"] } },
    });
    await put(p.home, ".config/gatehouse/trusted-projects.json", "{ not json");
    const r = await p.cli(["trust", "--yes"]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /trusted-projects\.json: expected a JSON object/);
    assert.equal(await readFile(join(p.home, ".config/gatehouse/trusted-projects.json"), "utf8"), "{ not json");
  });
});
