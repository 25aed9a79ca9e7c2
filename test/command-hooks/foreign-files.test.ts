import assert from "node:assert/strict";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, describe, test } from "node:test";
import { runCommandHandler } from "../../src/command-hooks/executor.js";
import { loadCommandHookSources } from "../../src/command-hooks/sources.js";

/**
 * Other agents' hook files as those agents read them: Codex's SessionEnd and its `[hooks]` in
 * config.toml, Cursor's CURSOR_PROJECT_DIR and where its relative commands run, and unknown
 * events as warnings that name the file and line.
 */

const roots: string[] = [];
after(async () => {
  for (const r of roots) await rm(r, { recursive: true, force: true });
});

async function project(files: Record<string, string | object>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "gatehouse-foreign-files-"));
  roots.push(dir);
  for (const [name, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, name)), { recursive: true });
    await writeFile(join(dir, name), typeof content === "string" ? content : JSON.stringify(content, null, 2));
  }
  return dir;
}

const load = (dir: string, which: { codex?: boolean; cursor?: boolean; gemini?: boolean }) =>
  loadCommandHookSources({ projectDir: dir, homeDir: join(dir, "home"), checkPrograms: false, ...which });

const CODEX_TOML = `model = "gpt-5"

[features]
hooks = true

[[hooks.PreToolUse]]
matcher = "Bash"

[[hooks.PreToolUse.hooks]]
type = "command"
command = "echo pre"
timeout = 5

[[hooks.SessionEnd]]
[[hooks.SessionEnd.hooks]]
type = "command"
command = "echo bye"

[[hooks.TurnAborted]]
[[hooks.TurnAborted.hooks]]
type = "command"
command = "echo later"

[hooks.state]
"pre" = { trusted = true }
`;

describe("Codex's hook files", () => {
  test("hooks.json's SessionEnd runs at SessionEnd (its answer ignored, as Codex ignores it) instead of refusing the run", async () => {
    const dir = await project({
      ".codex/hooks.json": { hooks: { SessionEnd: [{ hooks: [{ type: "command", command: "echo bye" }] }] } },
    });
    const loaded = load(dir, { codex: true });
    assert.deepEqual(loaded.diagnostics, []);
    assert.deepEqual(
      loaded.handlers.map((h) => [h.nativeEvent, h.event, h.observe ?? false]),
      [["SessionEnd", "SessionEnd", true]],
    );
  });

  test("[hooks] tables in .codex/config.toml are read beside hooks.json; [hooks.state] is not an event; an unknown event is a warning with its line", async () => {
    const dir = await project({
      ".codex/config.toml": CODEX_TOML,
      ".codex/hooks.json": { hooks: { Stop: [{ hooks: [{ type: "command", command: "echo stop" }] }] } },
    });
    const loaded = load(dir, { codex: true });
    assert.deepEqual(
      loaded.handlers.map((h) => [h.source, h.nativeEvent, h.matcher ?? null, h.timeoutMs]),
      [
        ["codex", "Stop", null, 600_000],
        ["codex-toml", "PreToolUse", "Bash", 5000],
        ["codex-toml", "SessionEnd", null, 600_000],
      ],
    );
    assert.deepEqual(
      loaded.diagnostics.map((d) => [d.level, d.file.replace(dir, ""), d.line, d.message]),
      [["warning", "/.codex/config.toml", 19, 'unknown codex event "TurnAborted"; its hooks never run']],
    );
  });

  test("a config.toml that is not TOML is an error naming its line and column, and no hook of it runs (control: the same hooks in hooks.json load)", async () => {
    const dir = await project({ ".codex/config.toml": "[[hooks.Stop]]\nhooks = [\n" });
    const loaded = load(dir, { codex: true });
    assert.deepEqual(loaded.handlers, []);
    assert.equal(loaded.diagnostics.length, 1);
    assert.equal(loaded.diagnostics[0]?.level, "error");
    assert.equal(loaded.diagnostics[0]?.line, 3);
    assert.ok(loaded.diagnostics[0]?.column !== undefined);
    const control = await project({
      ".codex/hooks.json": { hooks: { Stop: [{ hooks: [{ type: "command", command: "true" }] }] } },
    });
    assert.equal(load(control, { codex: true }).handlers.length, 1);
  });
});

describe("Cursor's and Gemini CLI's hook files", () => {
  test("an unknown event is a warning with the file's line; one whose handler fails closed is an error (a guard we cannot honour)", async () => {
    const dir = await project({
      ".cursor/hooks.json": {
        version: 1,
        hooks: {
          beforeSubmitPrompt: [{ command: "true" }],
          afterTerminalOpen: [{ command: "true" }],
          beforeGitPush: [{ command: "true", failClosed: true }],
        },
      },
      ".gemini/settings.json": { hooks: { BeforePlanning: [{ hooks: [{ type: "command", command: "true" }] }] } },
    });
    const loaded = load(dir, { cursor: true, gemini: true });
    assert.deepEqual(
      loaded.handlers.map((h) => h.nativeEvent),
      ["beforeSubmitPrompt"],
    );
    assert.deepEqual(
      loaded.diagnostics.map((d) => [d.level, d.file.replace(dir, ""), d.line, d.path]),
      [
        ["warning", "/.gemini/settings.json", 3, "hooks.BeforePlanning"],
        ["warning", "/.cursor/hooks.json", 9, "hooks.afterTerminalOpen"],
        ["error", "/.cursor/hooks.json", 14, "hooks.beforeGitPush"],
      ],
    );
  });

  test("Cursor's hooks get CURSOR_PROJECT_DIR; a project hook's relative command runs from the project, a user hook's from ~/.cursor", async () => {
    const script = '#!/bin/sh\nprintf \'%s|%s\' "$PWD" "$CURSOR_PROJECT_DIR"\n';
    const dir = await project({
      ".cursor/hooks/where.sh": script,
      "home/.cursor/hooks/where.sh": script,
      ".cursor/hooks.json": { version: 1, hooks: { sessionStart: [{ command: ".cursor/hooks/where.sh" }] } },
      "home/.cursor/hooks.json": { version: 1, hooks: { stop: [{ command: "./hooks/where.sh" }] } },
    });
    await chmod(join(dir, ".cursor/hooks/where.sh"), 0o755);
    await chmod(join(dir, "home/.cursor/hooks/where.sh"), 0o755);
    const loaded = loadCommandHookSources({ projectDir: dir, homeDir: join(dir, "home"), cursor: true });
    assert.deepEqual(
      loaded.diagnostics.map((d) => d.message),
      [],
      "both programs are found where Cursor runs them",
    );
    const outputs: Record<string, string> = {};
    for (const handler of loaded.handlers) {
      const outcome = await runCommandHandler(
        handler,
        { session_id: "s", hook_event_name: handler.event, cwd: dir },
        {
          projectDir: dir,
          sessionId: "s",
        },
      );
      outputs[handler.source] = outcome.stdout;
    }
    assert.deepEqual(outputs, {
      "cursor-user": `${join(dir, "home/.cursor")}|${dir}`,
      cursor: `${dir}|${dir}`,
    });
  });

  test("run from the home folder, ~/.cursor/hooks.json is the project's file: read once, as the project's (its hooks run from the project)", async () => {
    const dir = await project({ ".cursor/hooks.json": { version: 1, hooks: { stop: [{ command: "true" }] } } });
    const loaded = loadCommandHookSources({ projectDir: dir, homeDir: dir, cursor: true, checkPrograms: false });
    assert.deepEqual(
      loaded.handlers.map((h) => [h.source, h.runDir ?? null]),
      [["cursor", null]],
    );
  });
});
