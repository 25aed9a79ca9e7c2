import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { chmod, mkdir, readFile, symlink } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { type CliResult, gatehouse, tempProjects } from "./helpers.js";
import { gatehouseInProcess } from "./in-process.js";

// Issue 13 through the CLI (docs/permissions.md): rules, modes and PermissionRequest hooks decide
// which Bash, Write and Edit calls run in `gatehouse run`; what would ask is denied visibly.

/** The model runs each command of `commands` with Bash, then answers with the last result. */
const bashScript = (...commands: string[]) => ({
  runs: [
    {
      turns: [
        ...commands.map((command) => ({ toolCalls: [{ name: "Bash", input: { command } }] })),
        { text: "said: {{lastToolResult}}" },
      ],
    },
  ],
});

/** A stand-in `npm` on PATH: `npm test` leaves a mark instead of running anything. */
const FAKE_NPM = '#!/bin/sh\necho "$*" >> npm-ran\n';

interface Denial {
  toolName: string;
  reason: string;
  rule?: string;
  source?: string;
  mode: string;
  suggestions?: string[];
}

function jsonOf(r: CliResult): { reply: string; outcome: string; permissionDenials: Denial[] } {
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

describe("permissions in gatehouse run", { concurrency: 4 }, () => {
  const fresh = tempProjects();
  const project = async (files: Record<string, unknown>) => {
    const cwd = await fresh({ "victim/keep": "important", ...files });
    await mkdir(join(cwd, "bin"), { recursive: true });
    await import("node:fs/promises").then((fs) => fs.writeFile(join(cwd, "bin/npm"), FAKE_NPM));
    await chmod(join(cwd, "bin/npm"), 0o755);
    const run = (args: string[]) =>
      gatehouse(["run", "-p", "go", "--json", ...args], {
        cwd,
        env: { PATH: `${join(cwd, "bin")}:${process.env.PATH ?? ""}` },
      });
    return { cwd, run };
  };

  test("a deny rule stops rm in every mode, bypassPermissions included", async () => {
    const { cwd, run } = await project({
      "s.json": bashScript("rm -rf victim"),
      "gatehouse.json": { model: "scripted:s.json", permissions: { deny: ["Bash(rm:*)"], allow: ["Bash"] } },
    });
    for (const mode of [
      [],
      ["--permission-mode", "acceptEdits"],
      ["--permission-mode", "plan"],
      ["--permission-mode", "dontAsk"],
      ["--dangerously-skip-permissions"],
    ]) {
      const r = jsonOf(await run(mode));
      assert.deepEqual(
        r.permissionDenials.map((d) => [d.reason, d.rule, d.source]),
        [["rule", "Bash(rm:*)", "config"]],
        mode.join(" "),
      );
      assert.ok(existsSync(join(cwd, "victim/keep")), `victim survives ${mode.join(" ")}`);
    }
  });

  test("Bash(npm test:*) allows npm test, not npm test && rm -rf victim; with JSON output the denial is in the output, with its suggestion, and stderr stays quiet as claude -p's", async () => {
    const { cwd, run } = await project({
      "s.json": bashScript("npm test", "npm test && rm -rf victim"),
      ".claude/settings.json": { permissions: { allow: ["Bash(npm test:*)"] } },
      "gatehouse.json": { model: "scripted:s.json" },
    });
    const r = await run([]);
    const result = jsonOf(r);
    assert.equal(await readFile(join(cwd, "npm-ran"), "utf8"), "test\n", "npm test ran once, the compound line never");
    assert.ok(existsSync(join(cwd, "victim/keep")));
    assert.deepEqual(
      result.permissionDenials.map((d) => [d.toolName, d.reason, d.mode]),
      [["Bash", "nobody", "default"]],
    );
    assert.deepEqual(
      result.permissionDenials.map((d) => d.suggestions),
      [["Bash(rm:*)"]],
    );
    assert.doesNotMatch(r.stderr, /permission denied/);
    assert.match(result.reply, /^said: Permission to use Bash was denied/);
  });

  test("default mode denies Write visibly in run; --allowedTools and acceptEdits let it run; plan runs no Write, Edit or Bash", async () => {
    const script = {
      runs: [
        {
          turns: [
            { toolCalls: [{ name: "Write", input: { file_path: "made.txt", content: "x" } }] },
            {
              toolCalls: [
                { name: "Edit", input: { file_path: "victim/keep", old_string: "important", new_string: "gone" } },
              ],
            },
            { toolCalls: [{ name: "Bash", input: { command: "npm test" } }] },
            { text: "done" },
          ],
        },
      ],
    };
    const { cwd, run } = await project({ "s.json": script, "gatehouse.json": { model: "scripted:s.json" } });
    const denied = await run([]);
    assert.deepEqual(
      jsonOf(denied).permissionDenials.map((d) => d.toolName),
      ["Write", "Edit", "Bash"],
    );
    // The JSON output lists them; stderr stays quiet, as claude -p's.
    assert.doesNotMatch(denied.stderr, /permission denied/);
    assert.equal(existsSync(join(cwd, "made.txt")), false);

    const plan = jsonOf(await run(["--permission-mode", "plan", "--allowedTools", "Write,Edit", "Bash"]));
    assert.deepEqual(
      plan.permissionDenials.map((d) => [d.toolName, d.reason, d.mode]),
      [
        ["Write", "mode", "plan"],
        ["Edit", "mode", "plan"],
        ["Bash", "mode", "plan"],
      ],
    );
    assert.equal(existsSync(join(cwd, "made.txt")), false);
    assert.equal(await readFile(join(cwd, "victim/keep"), "utf8"), "important");

    const edits = jsonOf(await run(["--permission-mode", "acceptEdits"]));
    assert.deepEqual(
      edits.permissionDenials.map((d) => d.toolName),
      ["Bash"],
      "edits in the project run, Bash still asks",
    );
    assert.equal(await readFile(join(cwd, "victim/keep"), "utf8"), "gone");
    assert.ok(existsSync(join(cwd, "made.txt")));
  });

  test("bypassPermissions only when the operator enables it", async () => {
    const { cwd, run } = await project({
      "s.json": bashScript("npm test"),
      "gatehouse.json": { model: "scripted:s.json", permissions: { defaultMode: "bypassPermissions" } },
    });
    const refused = await run([]);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /gatehouse\.json: permissions\.defaultMode: bypassPermissions .* must enable it/);
    assert.equal(existsSync(join(cwd, "npm-ran")), false);
    const flag = await run(["--permission-mode", "bypassPermissions", "--config", "/dev/null"]);
    assert.equal(flag.code, 2, "--permission-mode alone does not enable it");
    assert.equal(jsonOf(await run(["--allow-bypass-permissions"])).permissionDenials.length, 0);
    assert.equal(await readFile(join(cwd, "npm-ran"), "utf8"), "test\n");
  });

  test("a PermissionRequest hook decides the ask: allow runs, deny refuses, interrupt ends the run", async () => {
    const hook = (decision: object) => ({
      hooks: {
        PermissionRequest: [
          {
            matcher: "Bash",
            hooks: [
              {
                type: "command",
                command: `echo '${JSON.stringify({ hookSpecificOutput: { hookEventName: "PermissionRequest", decision } })}'`,
              },
            ],
          },
        ],
      },
    });
    const { cwd, run } = await project({
      "s.json": bashScript("npm test", "npm test again"),
      "gatehouse.json": { model: "scripted:s.json" },
    });
    const allowed = jsonOf(await run(["--settings", JSON.stringify(hook({ behavior: "allow" }))]));
    assert.equal(allowed.permissionDenials.length, 0);
    assert.equal(await readFile(join(cwd, "npm-ran"), "utf8"), "test\ntest again\n");

    const denied = jsonOf(await run(["--settings", JSON.stringify(hook({ behavior: "deny", message: "not today" }))]));
    assert.deepEqual(
      denied.permissionDenials.map((d) => [d.reason, d.toolName]),
      [
        ["hook", "Bash"],
        ["hook", "Bash"],
      ],
    );
    assert.equal(denied.reply, "said: not today", "the model read the hook's message");
    assert.equal(denied.outcome, "completed");

    const interrupt = hook({ behavior: "deny", message: "stop", interrupt: true });
    const ended = await run(["--settings", JSON.stringify(interrupt)]);
    assert.equal(ended.code, 3, "a blocked run's exit status");
    const stopped = JSON.parse(ended.stdout);
    assert.equal(stopped.outcome, "blocked");
    assert.equal(stopped.permissionDenials.length, 1, "the run ended at the first call");
    assert.match(stopped.reply, /The run was stopped: permission to use Bash was denied by a policy \(command-hooks\)/);
    assert.equal(await readFile(join(cwd, "npm-ran"), "utf8"), "test\ntest again\n", "nothing more ran");
  });

  test("a PreToolUse ask with no one to ask is refused with the hook's reason; PermissionRequest and PermissionDenied never hear of it", async () => {
    const command = (line: string) => [{ hooks: [{ type: "command", command: line }] }];
    const ask = { hookEventName: "PreToolUse", permissionDecision: "ask", permissionDecisionReason: "ASK-REASON" };
    const settings = {
      permissions: { allow: ["Bash"] },
      hooks: {
        PreToolUse: command(`echo '${JSON.stringify({ hookSpecificOutput: ask })}'`),
        PermissionRequest: command("echo request >> fired.log"),
        PermissionDenied: command("echo denied >> fired.log"),
      },
    };
    const { cwd, run } = await project({
      "s.json": bashScript("npm test"),
      "gatehouse.json": { model: "scripted:s.json" },
    });
    const r = jsonOf(await run(["--settings", JSON.stringify(settings)]));
    assert.equal(r.reply, "said: ASK-REASON", "the model read the hook's reason, as in Claude Code");
    assert.deepEqual(
      r.permissionDenials.map((d) => [d.reason, d.toolName]),
      [["nobody", "Bash"]],
    );
    assert.equal(existsSync(join(cwd, "npm-ran")), false, "the call did not run");
    assert.equal(existsSync(join(cwd, "fired.log")), false, "no PermissionRequest, no PermissionDenied");
  });

  test("a Read deny rule also keeps Grep and Glob of the folder, and a symbolic link, from the denied file", async () => {
    const answer = (match: string, name: string, input: object) => ({
      match,
      turns: [{ toolCalls: [{ name, input }] }, { text: "said: {{lastToolResult}}" }],
    });
    const { cwd } = await project({
      "secret.txt": "password hunter2\n",
      "notes.txt": "hunter2 is not here, only its name\n",
      "s.json": {
        runs: [
          answer("^grep", "Grep", { pattern: "hunter2", path: ".", output_mode: "content" }),
          answer("^glob", "Glob", { pattern: "*.txt" }),
          answer("^read", "Read", { file_path: "link.txt" }),
        ],
      },
      "gatehouse.json": { model: "scripted:s.json", permissions: { deny: ["Read(./secret.txt)"] } },
    });
    await symlink(join(cwd, "secret.txt"), join(cwd, "link.txt"));
    const ask = async (prompt: string) => jsonOf(await gatehouse(["run", "-p", prompt, "--json"], { cwd }));
    const grep = await ask("grep");
    assert.match(grep.reply, /notes\.txt/, "the search ran");
    assert.doesNotMatch(grep.reply, /secret\.txt|password/);
    const glob = await ask("glob");
    assert.match(glob.reply, /notes\.txt/);
    assert.doesNotMatch(glob.reply, /secret\.txt/);
    const read = await ask("read");
    assert.doesNotMatch(read.reply, /password/);
    // The model reads Claude Code's words; the rule is the person's to read (the JSON names it).
    assert.equal(
      read.reply,
      "said: <tool_use_error>File is in a directory that is denied by your permission settings.</tool_use_error>",
    );
    assert.equal(read.permissionDenials[0]?.rule, "Read(./secret.txt)");
  });

  test("hook payloads carry the real permission mode", async () => {
    const { cwd, run } = await project({
      "s.json": bashScript("npm test"),
      "gatehouse.json": {
        model: "scripted:s.json",
        hooks: { PreToolUse: [{ hooks: [{ type: "command", command: "cat > payload.json" }] }] },
      },
    });
    await run(["--permission-mode", "dontAsk"]);
    assert.equal(JSON.parse(await readFile(join(cwd, "payload.json"), "utf8")).permission_mode, "dontAsk");
  });
});

describe("gatehouse permissions and hooks check", () => {
  const fresh = tempProjects();

  test("lists the effective rules with their sources and the mode; a bad rule is exit 2 with file, line and path", async () => {
    const cwd = await fresh({
      ".claude/settings.json": { permissions: { deny: ["Read(./.env)"] } },
      "gatehouse.json": { model: "scripted:echo", permissions: { allow: ["Bash(npm test:*)"], defaultMode: "plan" } },
    });
    const r = await gatehouse(["permissions", "--json", "--disallowedTools", "Bash(curl:*)"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), {
      mode: "plan",
      modeFrom: "gatehouse.json",
      rules: [
        { behavior: "deny", rule: "Read(./.env)", source: "user", file: join(".claude", "settings.json") },
        { behavior: "deny", rule: "Read(./.env)", source: "project", file: join(".claude", "settings.json") },
        { behavior: "deny", rule: "Bash(curl:*)", source: "flag", file: "--disallowedTools" },
        { behavior: "allow", rule: "Bash(npm test:*)", source: "config", file: "gatehouse.json" },
      ],
      builtIn: [
        {
          behavior: "allow",
          rule: "Bash read-only: ls, cat, echo, pwd, head, tail, grep, find, wc, which, diff, stat, du, cd, git (git: read-only forms)",
          source: "built-in",
        },
      ],
      additionalDirectories: [],
    });
    const text = await gatehouseInProcess(["permissions"], { cwd });
    assert.match(text.stdout, /^mode: plan \(from gatehouse\.json\)$/m);
    assert.match(text.stdout, /^allow {2}Bash read-only: ls, cat, .* {2}built-in$/m);
    const accepting = await gatehouseInProcess(["permissions", "--permission-mode", "acceptEdits"], { cwd });
    assert.match(
      accepting.stdout,
      /^allow {2}Bash in the working directories: mkdir, touch, rm, rmdir, mv, cp, sed +acceptEdits$/m,
    );
    assert.match(text.stdout, /^allow {2}Bash\(npm test:\*\) {2}config \(gatehouse\.json\)$/m);

    const bad = await fresh({ ".claude/settings.local.json": '{\n  "permissions": { "ask": ["Bash(git"] }\n}\n' });
    const broken = await gatehouseInProcess(["permissions"], { cwd: bad });
    assert.equal(broken.code, 2);
    assert.match(
      broken.stderr,
      /settings\.local\.json:2:\d+: permissions\.ask\[0\]: "Bash\(git" is not a permission rule/,
    );
  });

  test("hooks check warns about a PermissionRequest hook the mode never lets fire", async () => {
    const hook = { type: "command", command: "true" };
    const cwd = await fresh({
      ".claude/settings.json": {
        permissions: { defaultMode: "dontAsk" },
        hooks: { PermissionRequest: [{ matcher: "Bash", hooks: [hook] }] },
      },
    });
    const r = await gatehouseInProcess(["hooks", "check"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /warning: .*PermissionRequest\[0\]\.hooks\[0\]: PermissionRequest hook never fires: in dontAsk mode nothing asks/,
    );
    const reads = await fresh({
      ".claude/settings.json": { hooks: { PermissionRequest: [{ matcher: "Read", hooks: [hook] }] } },
    });
    assert.match(
      (await gatehouseInProcess(["hooks", "check"], { cwd: reads })).stdout,
      /matcher "Read" matches no tool that asks in default mode/,
    );
  });
});
