// Real Claude Code plugins and hook packages from npm (issue 29), installed on first use into the
// test cache (real-hooks-helpers.ts, ON_DEMAND) and wired as their READMEs say: selfish-pipeline
// and ecc-universal are marketplaces at their package root, enabled through enabledPlugins;
// tdd-guard and gh-setup-hooks are commands in .claude/settings.json. Each is checked for what it
// promises, next to a control where it must stay out of the way.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { before, describe, test } from "node:test";
import { gatehouse, put, tempProjects } from "./helpers.js";
import { onDemandPackage, oneCall } from "./real-hooks-helpers.js";

/** A project whose settings enable `plugin` from the marketplace at `dir`, a package's root. */
const enabling = (market: string, plugin: string, dir: string, allow: string[]) => ({
  permissions: { allow },
  extraKnownMarketplaces: { [market]: { source: { source: "directory", path: dir } } },
  enabledPlugins: { [`${plugin}@${market}`]: true },
});

describe("selfish-pipeline@1.3.0 (a plugin, enabled through enabledPlugins)", { concurrency: 2 }, () => {
  const fresh = tempProjects();
  let dir = "";
  before(async () => {
    dir = await onDemandPackage("selfish-pipeline");
  });
  // Its Stop agent hook (model "haiku") is answered by the scripted model, which "haiku" inherits.
  const script = (command: string) => ({
    runs: [
      { match: "^Check if it is safe to stop", turns: [{ text: '{"ok": true}' }] },
      oneCall("Bash", { command }).runs[0],
    ],
  });
  const project = async (active: boolean) => {
    const cwd = await fresh({
      "s.json": script("echo clean -f > ran"),
      "gatehouse.json": { model: "scripted:s.json" },
      ".claude/settings.json": enabling("selfish-pipeline", "selfish", dir, ["Bash"]),
    });
    // The spec phase: its Stop gate asks for a passing CI only from the implement phase on.
    if (active) for (const flag of [".selfish-active", ".selfish-phase"]) await put(cwd, `.claude/${flag}`, "spec\n");
    return cwd;
  };

  test("its 15 hooks load from the plugin's hooks.json, with no error", async () => {
    const cwd = await project(false);
    const check = await gatehouse(["hooks", "list", "--json"], { cwd });
    assert.equal(check.code, 0, check.stderr);
    const handlers = JSON.parse(check.stdout) as { plugin?: string; command: string | null }[];
    assert.ok(handlers.length >= 12, `${handlers.length} handlers`);
    assert.ok(handlers.every((h) => h.plugin === "selfish@selfish-pipeline"));
    assert.ok(handlers.some((h) => h.command?.includes(`${dir}/scripts/selfish-bash-guard.sh`)));
  });

  test("while its pipeline is active, its Bash guard denies git clean -f and the command never runs", async () => {
    const cwd = await project(true);
    const r = await gatehouse(["run", "-p", "tidy"], { cwd });
    assert.match(r.stdout + r.stderr, /SELFISH GUARD: git clean -f is blocked during pipeline/);
    assert.equal(existsSync(join(cwd, "ran")), false);
  });

  test("from npm: a marketplace entry with an npm source is installed into Gatehouse's cache, and its guard runs", async () => {
    const cwd = await fresh({
      "s.json": script("echo clean -f > ran"),
      "gatehouse.json": { model: "scripted:s.json" },
      "market/.claude-plugin/marketplace.json": {
        name: "team",
        owner: { name: "Team" },
        plugins: [{ name: "selfish", source: { source: "npm", package: "selfish-pipeline", version: "1.3.0" } }],
      },
      ".claude/settings.json": enabling("team", "selfish", "./market", ["Bash"]),
      ".claude/.selfish-active": "spec\n",
      ".claude/.selfish-phase": "spec\n",
    });
    // npm reaches the registry as this machine does (a proxy's CA, when there is one).
    const ca = process.env.NODE_EXTRA_CA_CERTS;
    const env = { XDG_CACHE_HOME: join(cwd, "cache"), ...(ca ? { NODE_EXTRA_CA_CERTS: ca } : {}) };
    const r = await gatehouse(["run", "-p", "tidy"], { cwd, env });
    assert.match(r.stdout + r.stderr, /SELFISH GUARD: git clean -f is blocked during pipeline/);
    assert.equal(existsSync(join(cwd, "ran")), false);
    const root = join(cwd, "cache/gatehouse/claude-plugins/team/selfish/1.3.0/node_modules/selfish-pipeline");
    assert.equal(existsSync(join(root, "hooks/hooks.json")), true);
    const listed = await gatehouse(["plugins", "list", "--json"], { cwd, env });
    const row = (JSON.parse(listed.stdout) as { id: string; source: string; status: string }[]).find(
      (p) => p.id === "selfish@team",
    );
    assert.deepEqual([row?.status, row?.source], ["loaded", "npm selfish-pipeline@1.3.0"]);
  });

  test("control: with no pipeline active the guard allows it and the command runs", async () => {
    const cwd = await project(false);
    const r = await gatehouse(["run", "-p", "tidy"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(readFileSync(join(cwd, "ran"), "utf8"), "clean -f\n");
  });
});

describe("ecc-universal@2.0.0 (a plugin, enabled through enabledPlugins)", { concurrency: 2 }, () => {
  const fresh = tempProjects();
  let dir = "";
  before(async () => {
    dir = await onDemandPackage("ecc-universal");
  });
  // GateGuard (block the first edit of each file until investigated) is one of its switches; off here.
  const env = (cwd: string) => ({ ECC_GATEGUARD: "off", HOME: join(cwd, "home") });
  const project = (call: object) =>
    fresh({
      "s.json": call,
      "gatehouse.json": { model: "scripted:s.json" },
      ".claude/settings.json": enabling("ecc", "ecc", dir, ["Bash", "Write"]),
    });

  test("its hooks load through enabledPlugins, and a Bash call runs through all of them", async () => {
    const cwd = await project(oneCall("Bash", { command: "echo hello" }));
    const list = await gatehouse(["hooks", "list", "--json"], { cwd, env: env(cwd) });
    const handlers = JSON.parse(list.stdout) as { plugin?: string }[];
    assert.ok(handlers.length >= 25 && handlers.every((h) => h.plugin === "ecc@ecc"), list.stdout);
    const r = await gatehouse(["run", "--json", "-p", "greet"], { cwd, env: env(cwd) });
    assert.equal(r.code, 0, r.stderr);
    assert.match((JSON.parse(r.stdout) as { reply: string }).reply, /model read: .*hello/s);
  });

  test("its config protection refuses to weaken the ESLint config, which stays as it was", async () => {
    const cwd = await project(oneCall("Write", { file_path: ".eslintrc.json", content: "{}\n" }));
    await put(cwd, ".eslintrc.json", '{"rules":{"semi":"error"}}');
    const r = await gatehouse(["run", "-p", "relax the linter"], { cwd, env: env(cwd) });
    assert.equal(readFileSync(join(cwd, ".eslintrc.json"), "utf8"), '{"rules":{"semi":"error"}}', r.stderr);
    assert.match(r.stdout, /model read: .*BLOCKED: Modifying \.eslintrc\.json is not allowed/s);
  });

  test("control: a write to an ordinary file goes through", async () => {
    const cwd = await project(oneCall("Write", { file_path: "notes.txt", content: "hi\n" }));
    const r = await gatehouse(["run", "-p", "take notes"], { cwd, env: env(cwd) });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(readFileSync(join(cwd, "notes.txt"), "utf8"), "hi\n");
  });
});

describe("tdd-guard@1.7.0 (PreToolUse and UserPromptSubmit guard)", { concurrency: 2 }, () => {
  const fresh = tempProjects();
  let bin = "";
  before(async () => {
    bin = join(await onDemandPackage("tdd-guard"), "..", ".bin", "tdd-guard");
  });
  // Its README: the same command on PreToolUse (Write|Edit|MultiEdit|TodoWrite), UserPromptSubmit
  // and SessionStart. Its reviewer, with VALIDATION_CLIENT=cli (one of its documented clients), is
  // Claude Code's CLI at ~/.claude/local/claude: a stand-in here that says what a reviewer says of
  // code written before its test.
  const project = async (call: object) => {
    const cwd = await fresh({
      "s.json": call,
      "gatehouse.json": { model: "scripted:s.json" },
      ".claude/settings.json": {
        permissions: { allow: ["Write"] },
        hooks: {
          PreToolUse: [{ matcher: "Write|Edit|MultiEdit|TodoWrite", hooks: [{ type: "command", command: bin }] }],
          UserPromptSubmit: [{ hooks: [{ type: "command", command: bin }] }],
        },
      },
      "home/.claude/local/claude": `#!/bin/sh\ncat > /dev/null\ntouch "${"$"}HOME/reviewed"\nprintf '%s' '{"result":"{\\"decision\\":\\"block\\",\\"reason\\":\\"Premature implementation: write a failing test first\\"}"}'\n`,
    });
    await import("node:fs/promises").then((fs) => fs.chmod(join(cwd, "home/.claude/local/claude"), 0o755));
    return cwd;
  };
  const write = (file_path: string, content: string) => oneCall("Write", { file_path, content });
  const reviewer = (cwd: string) => ({ HOME: join(cwd, "home"), VALIDATION_CLIENT: "cli" });

  test("implementation written before its test is sent to the reviewer and refused; the file is not written", async () => {
    const cwd = await project(write("src/add.ts", "export const add = (a: number, b: number) => a + b;\n"));
    const r = await gatehouse(["run", "-p", "add"], { cwd, env: reviewer(cwd) });
    assert.match(r.stdout, /Premature implementation: write a failing test first/);
    assert.equal(existsSync(join(cwd, "src/add.ts")), false);
    assert.equal(existsSync(join(cwd, "home/reviewed")), true, "the reviewer was asked");
  });

  test("control: adding one test is allowed without the reviewer, and the file is written", async () => {
    const cwd = await project(write("src/add.test.ts", "test('adds', () => { expect(add(1, 2)).toBe(3); });\n"));
    const r = await gatehouse(["run", "-p", "add a test"], { cwd, env: reviewer(cwd) });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(existsSync(join(cwd, "src/add.test.ts")), true);
    assert.equal(existsSync(join(cwd, "home/reviewed")), false);
  });

  test('"tdd-guard off" stops the turn with its notice, and then implementation is written unreviewed', async () => {
    const cwd = await project(write("src/add.ts", "export const add = 1;\n"));
    const home = reviewer(cwd);
    const off = await gatehouse(["run", "-p", "tdd-guard off"], { cwd, env: home });
    assert.match(off.stdout + off.stderr, /TDD Guard disabled/);
    const r = await gatehouse(["run", "-p", "add"], { cwd, env: home });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(existsSync(join(cwd, "src/add.ts")), true);
  });
});

describe("gh-setup-hooks@2.1.0 (SessionStart setup through CLAUDE_ENV_FILE)", { concurrency: 2 }, () => {
  const fresh = tempProjects();
  let bin = "";
  before(async () => {
    bin = join(await onDemandPackage("gh-setup-hooks"), "..", ".bin", "gh-setup");
  });
  // Its README: SessionStart, `npx -y gh-setup-hooks` (the same bin). A gh already in ~/.local/bin
  // (no download here): the hook puts it on PATH, and GH_REPO from the origin remote, for later Bash calls.
  const project = async () => {
    const cwd = await fresh({
      "s.json": oneCall("Bash", { command: 'gh --version; echo "repo=$GH_REPO"' }),
      "gatehouse.json": { model: "scripted:s.json" },
      ".claude/settings.json": {
        permissions: { allow: ["Bash"] },
        hooks: { SessionStart: [{ hooks: [{ type: "command", command: bin, timeout: 120 }] }] },
      },
      "home/.local/bin/gh": "#!/bin/sh\necho 'gh version 9.9.9 (stand-in)'\n",
    });
    const { execFileSync } = await import("node:child_process");
    execFileSync("chmod", ["+x", join(cwd, "home/.local/bin/gh")]);
    execFileSync("git", ["init", "-q"], { cwd });
    execFileSync("git", ["remote", "add", "origin", "https://github.com/octo/hello.git"], { cwd });
    return cwd;
  };

  test("in a remote session it puts gh on PATH and sets GH_REPO for the session's Bash calls", async () => {
    const cwd = await project();
    const r = await gatehouse(["run", "-p", "which gh"], {
      cwd,
      env: { HOME: join(cwd, "home"), CLAUDE_CODE_REMOTE: "true" },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /gh version 9\.9\.9/);
    assert.match(r.stdout, /repo=octo\/hello/);
  });

  test("control: outside a remote session it does nothing", async () => {
    const cwd = await project();
    const r = await gatehouse(["run", "-p", "which gh"], { cwd, env: { HOME: join(cwd, "home") } });
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /gh version 9\.9\.9/);
    assert.match(r.stdout, /repo=\s/);
  });
});
