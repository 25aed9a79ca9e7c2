import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { loadCommandHookSources } from "../../src/command-hooks/sources.js";
import { loadConfig, resolveSettings } from "../../src/config/index.js";
import { tempDir } from "./helpers.js";

function write(file: string, value: unknown) {
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, typeof value === "string" ? value : JSON.stringify(value));
}

const cmd = (command: string, extra: Record<string, unknown> = {}) => ({ type: "command", command, ...extra });
const settings = (event: string, ...commands: string[]) => ({
  hooks: { [event]: [{ matcher: "Bash", hooks: commands.map((c) => cmd(c)) }] },
});

function setup() {
  const root = tempDir();
  const home = join(root, "home");
  const project = join(root, "project");
  mkdirSync(home, { recursive: true });
  mkdirSync(project, { recursive: true });
  return { home, project, root };
}

const base = (d: { home: string; project: string }) => ({
  projectDir: d.project,
  homeDir: d.home,
  checkPrograms: false,
});

describe("command-hook sources", () => {
  test("SessionEnd handlers share Claude Code's budget: 1.5 s, raised by the largest timeout up to 60 s, or the env override", () => {
    const d = setup();
    const end = (...hooks: object[]) => ({ hooks: { SessionEnd: [{ hooks }] } });
    const budgets = (settings: unknown, env: Record<string, string> = {}) => {
      write(join(d.project, ".claude/settings.json"), settings);
      const r = loadCommandHookSources({ ...base(d), env });
      return { ms: r.handlers.map((h) => h.timeoutMs), diagnostics: r.diagnostics };
    };
    assert.deepEqual(budgets(end(cmd("a"), cmd("b"))).ms, [1500, 1500]);
    assert.deepEqual(budgets(end(cmd("a"), cmd("b", { timeout: 10 }))).ms, [10_000, 10_000]);
    assert.deepEqual(budgets(end(cmd("a", { timeout: 600 }))).ms, [60_000]);
    assert.deepEqual(budgets(end(cmd("a")), { CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS: "5000" }).ms, [5000]);
    const bad = budgets(end(cmd("a")), { CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS: "soon" });
    assert.deepEqual(bad.ms, [1500]);
    assert.equal(bad.diagnostics[0]?.level, "warning");
    // Other events keep their own timeouts, and other dialects their own SessionEnd default.
    const other = { hooks: { Stop: [{ hooks: [cmd("s")] }], SessionEnd: [{ hooks: [cmd("e")] }] } };
    write(join(d.project, ".claude/settings.json"), other);
    const puppy = loadCommandHookSources({ ...base(d), env: {}, dialects: { project: "code-puppy" } });
    assert.deepEqual(
      puppy.handlers.map((h) => h.timeoutMs),
      [5000, 5000],
    );
  });

  test("reads user, project, local, config and cli sources and concatenates them in that order", () => {
    const d = setup();
    write(join(d.home, ".claude/settings.json"), settings("PreToolUse", "echo user"));
    write(join(d.project, ".claude/settings.json"), settings("PreToolUse", "echo project"));
    write(join(d.project, ".claude/settings.local.json"), settings("PreToolUse", "echo local"));
    const r = loadCommandHookSources({
      ...base(d),
      configHooks: { file: join(d.project, "gatehouse.json"), hooks: settings("PreToolUse", "echo config").hooks },
      cliSettings: JSON.stringify(settings("PreToolUse", "echo cli")),
    });
    assert.deepEqual(r.diagnostics, []);
    assert.deepEqual(
      r.handlers.map((h) => [h.source, h.definition.type === "command" && h.definition.command]),
      [
        ["user", "echo user"],
        ["project", "echo project"],
        ["local", "echo local"],
        ["config", "echo config"],
        ["cli", "echo cli"],
      ],
    );
  });

  test("each handler knows its file, JSON path, event, matcher, dialect and timeout", () => {
    const d = setup();
    const file = join(d.project, ".claude/settings.json");
    write(file, {
      hooks: {
        UserPromptSubmit: [{ hooks: [cmd("echo a")] }],
        PreToolUse: [
          { matcher: "Read", hooks: [cmd("echo b")] },
          { matcher: "Bash", hooks: [cmd("echo c"), cmd("echo d", { timeout: 5 })] },
        ],
      },
    });
    const { handlers } = loadCommandHookSources(base(d));
    const h = handlers.find((x) => x.definition.type === "command" && x.definition.command === "echo d");
    assert.ok(h);
    assert.equal(h.file, file);
    assert.equal(h.path, "hooks.PreToolUse[1].hooks[1]");
    assert.equal(h.id, "project:hooks.PreToolUse[1].hooks[1]");
    assert.equal(h.event, "PreToolUse");
    assert.equal(h.matcher, "Bash");
    assert.equal(h.dialect, "claude");
    assert.equal(h.timeoutMs, 5000);
    const ups = handlers.find((x) => x.event === "UserPromptSubmit");
    assert.equal(ups?.timeoutMs, 30_000, "UserPromptSubmit defaults to 30 s");
    assert.equal(handlers.find((x) => x.path === "hooks.PreToolUse[0].hooks[0]")?.timeoutMs, 600_000);
  });

  test("--settings accepts a file path as well as inline JSON", () => {
    const d = setup();
    const file = join(d.root, "extra.json");
    write(file, settings("Stop", "echo from-file"));
    const r = loadCommandHookSources({ ...base(d), cliSettings: file });
    assert.equal(r.handlers[0]?.source, "cli");
    assert.equal(r.handlers[0]?.file, file);
    const missing = loadCommandHookSources({ ...base(d), cliSettings: "nope.json" });
    assert.equal(missing.diagnostics[0]?.message, "--settings file not found");
  });

  test("identical handlers from several files run once, the first source's copy kept", () => {
    const d = setup();
    write(join(d.home, ".claude/settings.json"), settings("PreToolUse", "guard.sh"));
    write(join(d.project, ".claude/settings.json"), settings("PreToolUse", "guard.sh", "other.sh"));
    write(join(d.project, ".claude/settings.local.json"), settings("PreToolUse", "guard.sh"));
    const { handlers } = loadCommandHookSources(base(d));
    assert.deepEqual(
      handlers.map((h) => `${h.source}:${h.definition.type === "command" && h.definition.command}`),
      ["user:guard.sh", "project:other.sh"],
    );
  });

  test("the same command with other args, or under another event, is a different handler", () => {
    const d = setup();
    write(join(d.project, ".claude/settings.json"), {
      hooks: {
        PreToolUse: [{ hooks: [cmd("x", { args: ["1"] }), cmd("x", { args: ["2"] }), cmd("x")] }],
        PostToolUse: [{ hooks: [cmd("x")] }],
      },
    });
    assert.equal(loadCommandHookSources(base(d)).handlers.length, 4);
  });

  test("disableAllHooks: true turns every source off; a higher-precedence false turns them back on", () => {
    const d = setup();
    write(join(d.home, ".claude/settings.json"), { ...settings("PreToolUse", "echo a"), disableAllHooks: true });
    write(join(d.project, ".claude/settings.json"), settings("PreToolUse", "echo b"));
    const off = loadCommandHookSources(base(d));
    assert.equal(off.disabled, true);
    assert.deepEqual(off.handlers, []);
    write(join(d.project, ".claude/settings.local.json"), { disableAllHooks: false });
    assert.equal(loadCommandHookSources(base(d)).handlers.length, 2);
    const cliOff = loadCommandHookSources({ ...base(d), cliSettings: '{"disableAllHooks":true}' });
    assert.equal(cliOff.handlers.length, 0);
  });

  test("gatehouse.json's disableAllHooks turns off the .claude/ files' hooks; --settings false turns them back on", async () => {
    const d = setup();
    write(join(d.home, ".claude/settings.json"), settings("PreToolUse", "echo user"));
    const file = join(d.project, "gatehouse.json");
    write(file, { disableAllHooks: true, hooks: settings("PreToolUse", "echo config").hooks });
    const { config } = await loadConfig({ cwd: d.project, env: {} });
    const load = (cliSettings?: string) =>
      loadCommandHookSources({
        ...base(d),
        ...resolveSettings({ config, file, cwd: d.project, env: {}, ...(cliSettings ? { settings: cliSettings } : {}) })
          .commandHooks.load,
      });
    const off = load();
    assert.deepEqual(off.diagnostics, []);
    assert.equal(off.disabled, true);
    assert.deepEqual(off.handlers, []);
    const on = load('{"disableAllHooks":false}');
    assert.deepEqual(
      on.handlers.map((h) => h.source),
      ["user", "config"],
    );
  });

  test("the code-puppy source is read only when enabled, bare or wrapped, and defaults to its dialect", () => {
    const d = setup();
    const file = join(d.home, ".code_puppy/hooks.json");
    write(file, {
      _comment: "ignored",
      PreToolUse: [{ matcher: "Bash", hooks: [cmd("cp-guard", { timeout: 2000, enabled: true, id: "g1" })] }],
      PostToolUse: [{ hooks: [cmd("cp-off", { enabled: false })] }],
    });
    assert.equal(loadCommandHookSources(base(d)).handlers.length, 0);
    const r = loadCommandHookSources({ ...base(d), codePuppy: true });
    assert.deepEqual(r.diagnostics, []);
    assert.equal(r.handlers.length, 1, "enabled: false is skipped");
    assert.equal(r.handlers[0]?.source, "code-puppy");
    assert.equal(r.handlers[0]?.dialect, "code-puppy");
    assert.equal(r.handlers[0]?.timeoutMs, 2000, "milliseconds");
    assert.equal(r.handlers[0]?.path, "PreToolUse[0].hooks[0]");
    write(file, { hooks: { Stop: [{ hooks: [cmd("cp-stop")] }] } });
    const wrapped = loadCommandHookSources({ ...base(d), codePuppy: true });
    assert.equal(wrapped.handlers[0]?.path, "hooks.Stop[0].hooks[0]");
    assert.equal(wrapped.handlers[0]?.timeoutMs, 5000, "Code Puppy's default");
  });

  test("dialects are set per source", () => {
    const d = setup();
    write(join(d.project, ".claude/settings.json"), settings("PreToolUse", "a"));
    write(join(d.project, ".claude/settings.local.json"), settings("PreToolUse", "b"));
    const r = loadCommandHookSources({ ...base(d), dialects: { project: "claude-2025", local: "code-puppy" } });
    assert.deepEqual(
      r.handlers.map((h) => [h.source, h.dialect, h.timeoutMs]),
      [
        ["project", "claude-2025", 60_000],
        ["local", "code-puppy", 5_000],
      ],
    );
  });

  test("commandHooks.onFailure is the default for handlers without their own", () => {
    const d = setup();
    write(join(d.project, ".claude/settings.json"), {
      hooks: { PreToolUse: [{ hooks: [cmd("a"), cmd("b", { onFailure: "continue" })] }] },
    });
    const r = loadCommandHookSources({ ...base(d), onFailure: "block" });
    assert.deepEqual(
      r.handlers.map((h) => h.onFailure),
      ["block", "continue"],
    );
  });

  test("a lowercase key in gatehouse.json's hooks block is an unknown event, not silently skipped", () => {
    const d = setup();
    const r = loadCommandHookSources({
      ...base(d),
      configHooks: {
        file: "gatehouse.json",
        hooks: { preToolUse: [{ hooks: [cmd("x")] }], Stop: [{ hooks: [cmd("y")] }] },
      },
    });
    assert.equal(r.handlers.length, 1);
    assert.equal(r.diagnostics.length, 1);
    assert.equal(r.diagnostics[0]?.level, "error");
    assert.match(r.diagnostics[0]?.message ?? "", /unknown event "preToolUse"/);
  });

  test("other settings keys of a Claude Code file are left alone", () => {
    const d = setup();
    write(join(d.project, ".claude/settings.json"), { permissions: { allow: ["Bash(ls)"] }, model: "x" });
    const r = loadCommandHookSources(base(d));
    assert.deepEqual(r, { handlers: [], diagnostics: [], disabled: false, managedOnly: false, plugins: [] });
  });
});
