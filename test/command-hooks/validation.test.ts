import assert from "node:assert/strict";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import type { Diagnostic } from "../../src/command-hooks/diagnostics.js";
import { formatDiagnostic } from "../../src/command-hooks/diagnostics.js";
import { type LoadCommandHookSourcesOptions, loadCommandHookSources } from "../../src/command-hooks/sources.js";
import { fixture, PROJECT_DIR_PLACEHOLDER, tempDir } from "./helpers.js";

/** Writes `hooks` as the project settings file and loads it. */
function check(hooks: unknown, extra: Partial<LoadCommandHookSourcesOptions> = {}) {
  const project = tempDir();
  const file = join(project, ".claude/settings.json");
  mkdirSync(join(project, ".claude"));
  writeFileSync(file, JSON.stringify({ hooks }));
  const r = loadCommandHookSources({
    projectDir: project,
    homeDir: join(project, "no-home"),
    pathVar: "/usr/bin:/bin",
    ...extra,
  });
  return { ...r, file, project };
}

function only(diags: Diagnostic[]): Diagnostic {
  assert.equal(diags.length, 1, `expected one diagnostic, got ${diags.map(formatDiagnostic).join("\n")}`);
  return diags[0] as Diagnostic;
}

const cmd = (extra: Record<string, unknown> = {}) => ({ type: "command", command: "true", ...extra });

describe("settings validation names the file and JSON path", () => {
  test("an unknown event is an error; a Claude Code event Gatehouse does not fire is a warning", () => {
    const r = check({ PreToolUSe: [{ hooks: [cmd()] }], TeammateIdle: [{ hooks: [cmd()] }] });
    const [a, b] = r.diagnostics;
    assert.deepEqual(
      { ...a, message: undefined },
      { level: "error", file: r.file, path: "hooks.PreToolUSe", line: 1, column: 11, message: undefined },
    );
    assert.match(a?.message ?? "", /unknown event "PreToolUSe" \(did you mean "PreToolUse"\?\)/);
    assert.equal(b?.level, "warning");
    assert.equal(b?.path, "hooks.TeammateIdle");
    assert.equal(r.handlers.length, 0);
  });

  test("an unknown handler field is a warning at its own path (Claude Code ignores it); the handler runs", () => {
    const r = check({ PreToolUse: [{ matcher: "Bash", hooks: [cmd(), cmd({ command: "ls", timeout_ms: 5000 })] }] });
    const d = only(r.diagnostics);
    assert.equal(d.level, "warning");
    assert.equal(d.file, r.file);
    assert.equal(d.path, "hooks.PreToolUse[0].hooks[1].timeout_ms");
    assert.match(d.message, /unknown field "timeout_ms".*use "timeout", in seconds/);
    assert.equal(r.handlers.length, 2);
  });

  test("an unknown field on a matcher group is a warning and its hooks still run", () => {
    const r = check({ Stop: [{ hooks: [cmd()], matchers: "x" }] });
    const d = only(r.diagnostics);
    assert.equal(d.path, "hooks.Stop[0].matchers");
    assert.equal(d.level, "warning");
    assert.equal(r.handlers.length, 1);
  });

  test("a matcher on an event that has none is a warning and is ignored", () => {
    const r = check({ UserPromptSubmit: [{ matcher: "Bash", hooks: [cmd()] }] });
    const d = only(r.diagnostics);
    assert.equal(d.level, "warning");
    assert.equal(d.path, "hooks.UserPromptSubmit[0].matcher");
    assert.equal(r.handlers[0]?.matcher, undefined);
  });

  test("an invalid regex matcher is an error and its group is dropped", () => {
    const r = check({ PreToolUse: [{ matcher: "Bash(", hooks: [cmd()] }] });
    const d = only(r.diagnostics);
    assert.equal(d.level, "error");
    assert.equal(d.path, "hooks.PreToolUse[0].matcher");
    assert.match(d.message, /invalid regex "Bash\("/);
    assert.equal(r.handlers.length, 0);
  });

  test("a timeout of 1000 or more in a seconds dialect looks like milliseconds", () => {
    const d = only(check({ PreToolUse: [{ hooks: [cmd({ timeout: 5000 })] }] }).diagnostics);
    assert.equal(d.level, "warning");
    assert.equal(d.path, "hooks.PreToolUse[0].hooks[0].timeout");
    assert.match(d.message, /in seconds .*looks like milliseconds/);
    assert.deepEqual(check({ PreToolUse: [{ hooks: [cmd({ timeout: 999 })] }] }).diagnostics, []);
  });

  test("a timeout under 100 in a milliseconds dialect looks like seconds", () => {
    const r = check({ PreToolUse: [{ hooks: [cmd({ timeout: 30 })] }] }, { dialects: { project: "code-puppy" } });
    const d = only(r.diagnostics);
    assert.equal(d.path, "hooks.PreToolUse[0].hooks[0].timeout");
    assert.match(d.message, /in milliseconds .*looks like seconds/);
  });

  test("a shell-form command whose program is not on PATH is a warning saying what its failure will do", () => {
    const r = check({ PreToolUse: [{ hooks: [cmd({ command: "no-such-guard --strict" })] }] });
    const d = only(r.diagnostics);
    assert.equal(d.level, "warning");
    assert.equal(d.path, "hooks.PreToolUse[0].hooks[0].command");
    assert.match(
      d.message,
      /"no-such-guard" was not found on PATH: it fails each time it runs and the action goes ahead/,
    );
    assert.equal(r.handlers.length, 1, "the handler is kept: its failure is decided at run time");
    const closed = check({ PreToolUse: [{ hooks: [cmd({ command: "no-such-guard", onFailure: "block" })] }] });
    assert.match(only(closed.diagnostics).message, /each PreToolUse it runs for is blocked \(onFailure "block"\)/);
    const byDefault = check({ PreToolUse: [{ hooks: [cmd({ command: "no-such-guard" })] }] }, { onFailure: "block" });
    assert.match(only(byDefault.diagnostics).message, /is blocked/);
  });

  test("a script under $CLAUDE_PROJECT_DIR that is missing or not executable is a warning", () => {
    const project = tempDir();
    mkdirSync(join(project, "hooks"));
    writeFileSync(join(project, "hooks/noexec.sh"), "#!/bin/sh\n");
    chmodSync(join(project, "hooks/noexec.sh"), 0o644);
    const hooks = {
      PreToolUse: [
        {
          hooks: [
            cmd({ command: '"$CLAUDE_PROJECT_DIR"/hooks/noexec.sh' }),
            cmd({ command: `${PROJECT_DIR_PLACEHOLDER}/hooks/missing.sh`, args: [] }),
            cmd({ command: "./hooks/missing2.sh arg" }),
          ],
        },
      ],
    };
    mkdirSync(join(project, ".claude"));
    writeFileSync(join(project, ".claude/settings.json"), JSON.stringify({ hooks }));
    const r = loadCommandHookSources({ projectDir: project, homeDir: join(project, "h"), pathVar: "/bin" });
    assert.deepEqual(
      r.diagnostics.map((d) => [d.level, d.path, d.message.replace(/: it fails each time.*$/, "")]),
      [
        [
          "warning",
          "hooks.PreToolUse[0].hooks[0].command",
          'program "$CLAUDE_PROJECT_DIR/hooks/noexec.sh" is not executable'.replace("$CLAUDE_PROJECT_DIR", project),
        ],
        ["warning", "hooks.PreToolUse[0].hooks[1].command", `program "${project}/hooks/missing.sh" was not found`],
        ["warning", "hooks.PreToolUse[0].hooks[2].command", 'program "./hooks/missing2.sh" was not found'],
      ],
    );
    assert.equal(r.handlers.length, 3, "kept: at run time they give no decision, or block with onFailure");
  });

  test("programs that exist, shell builtins and dynamic commands pass the check", () => {
    const r = check({
      PreToolUse: [
        {
          hooks: [
            cmd({ command: "sh -c 'exit 0'" }),
            cmd({ command: `${fixture("emit.sh")} 0` }),
            cmd({ command: "echo hi" }),
            cmd({ command: "FOO=1 true" }),
            cmd({ command: "$HOOK_BIN --x" }),
          ],
        },
      ],
    });
    assert.deepEqual(r.diagnostics, []);
  });

  test("`if` on a non-tool event is a warning and the handler never runs", () => {
    const r = check({ Stop: [{ hooks: [cmd({ if: "Bash(git *)" })] }] });
    const d = only(r.diagnostics);
    assert.equal(d.level, "warning");
    assert.equal(d.path, "hooks.Stop[0].hooks[0].if");
    assert.equal(r.handlers.length, 0);
  });

  test("a malformed `if` rule is an error", () => {
    const d = only(check({ PreToolUse: [{ hooks: [cmd({ if: "Bash(git *" })] }] }).diagnostics);
    assert.equal(d.level, "error");
    assert.equal(d.path, "hooks.PreToolUse[0].hooks[0].if");
  });

  test("a wrongly typed field is an error at its path and the handler is dropped", () => {
    const r = check({ PreToolUse: [{ hooks: [cmd({ timeout: "30" })] }] });
    const d = only(r.diagnostics);
    assert.equal(d.path, "hooks.PreToolUse[0].hooks[0].timeout");
    assert.equal(d.level, "error");
    assert.equal(r.handlers.length, 0);
  });

  test("an http handler with a bad URL or a missing type is an error", () => {
    const r = check({ PreToolUse: [{ hooks: [{ type: "http", url: "ftp://x" }, { command: "true" }] }] });
    assert.deepEqual(
      r.diagnostics.map((d) => [d.level, d.path]),
      [
        ["error", "hooks.PreToolUse[0].hooks[0].url"],
        ["error", "hooks.PreToolUse[0].hooks[1].type"],
      ],
    );
  });

  test("prompt, agent and mcp_tool handlers load, with Claude Code's default timeouts", () => {
    const prompt = check({ Stop: [{ hooks: [{ type: "prompt", prompt: "ok?", model: "scripted:echo" }] }] });
    assert.deepEqual(prompt.diagnostics, []);
    assert.equal(prompt.handlers[0]?.timeoutMs, 30_000, "Claude Code's default for prompt hooks");
    assert.equal(only(check({ Stop: [{ hooks: [{ type: "prompt" }] }] }).diagnostics).level, "error");
    const mcp = check({ Stop: [{ hooks: [{ type: "mcp_tool", server: "policy", tool: "check", input: { a: 1 } }] }] });
    assert.deepEqual(mcp.diagnostics, []);
    assert.equal(mcp.handlers.length, 1);
    const agent = check({ Stop: [{ hooks: [{ type: "agent", prompt: "ok?", model: "scripted:echo" }] }] });
    assert.deepEqual(agent.diagnostics, []);
    assert.equal(agent.handlers[0]?.timeoutMs, 60_000, "Claude Code's default for agent hooks");
    assert.equal(only(check({ Stop: [{ hooks: [{ type: "agent" }] }] }).diagnostics).level, "error");
    // An agent always continues on block (Claude Code): the prompt handler's switch is not one of its fields.
    const d = only(
      check({ Stop: [{ hooks: [{ type: "agent", prompt: "ok?", continueOnBlock: false }] }] }).diagnostics,
    );
    assert.deepEqual([d.level, d.path], ["warning", "hooks.Stop[0].hooks[0].continueOnBlock"]);
  });

  test("invalid JSON names the file, line and column", () => {
    const project = tempDir();
    mkdirSync(join(project, ".claude"));
    const file = join(project, ".claude/settings.local.json");
    writeFileSync(file, "{\n  hooks: ");
    const d = only(loadCommandHookSources({ projectDir: project, homeDir: project }).diagnostics);
    assert.equal(d.file, file);
    assert.equal(d.level, "error");
    assert.equal(
      formatDiagnostic(d),
      `error: ${file}:2:3: (root): invalid JSON: property names must be in double quotes`,
    );
  });

  test("invalid inline --settings JSON is located too", () => {
    const project = tempDir();
    const loaded = loadCommandHookSources({ projectDir: project, homeDir: project, cliSettings: '{"hooks": {},}' });
    const d = only(loaded.diagnostics);
    assert.deepEqual(
      { file: d.file, line: d.line, column: d.column, message: d.message },
      { file: "--settings", line: 1, column: 13, message: "invalid JSON: trailing comma in an object" },
    );
  });

  test("Code Puppy fields outside a code-puppy source are unknown fields with a hint", () => {
    const d = only(check({ PreToolUse: [{ hooks: [cmd({ enabled: false })] }] }).diagnostics);
    assert.equal(d.path, "hooks.PreToolUse[0].hooks[0].enabled");
    assert.match(d.message, /dialect to "code-puppy"/);
  });

  test("formatDiagnostic puts level, file and path first", () => {
    assert.equal(
      formatDiagnostic({ level: "error", file: "/p/.claude/settings.json", path: "hooks.Stop", message: "m" }),
      "error: /p/.claude/settings.json: hooks.Stop: m",
    );
    assert.equal(
      formatDiagnostic({ level: "error", file: "--settings", line: 1, column: 9, path: "", message: "m" }),
      "error: --settings:1:9: (root): m",
    );
  });
});
