// Managed settings (Claude Code's managed-settings.json, or GATEHOUSE_MANAGED_SETTINGS): their
// hooks run first and cannot be turned off by user or project settings; allowManagedHooksOnly
// ignores every other source; only a managed disableAllHooks turns managed hooks off.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { gatehouse, tempProjects } from "./helpers.js";

// Tools ask in default mode and nobody can answer here (docs/permissions.md): a rule lets them run.
const ALLOW_ALL = { allow: ["Bash", "Write", "Edit", "MultiEdit", "NotebookEdit", "WebFetch", "Agent"] };

const SCRIPT = {
  runs: [{ turns: [{ toolCalls: [{ name: "Bash", input: { command: "touch ran" } }] }, { text: "done" }] }],
};
const denyBash = {
  type: "command",
  command: "echo 'the organisation forbids Bash here' >&2; exit 2",
};
const recordProject = { type: "command", command: 'touch "$CLAUDE_PROJECT_DIR/project-hook-ran"' };

describe("managed settings", { concurrency: 3 }, () => {
  const fresh = tempProjects();
  const project = (managed: object, projectSettings: object) =>
    fresh({
      "s.json": SCRIPT,
      "gatehouse.json": { model: "scripted:s.json", permissions: ALLOW_ALL },
      "managed/managed-settings.json": managed,
      ".claude/settings.json": projectSettings,
    });
  const run = (cwd: string) =>
    gatehouse(["run", "-p", "go"], {
      cwd,
      env: { HOME: join(cwd, "home"), GATEHOUSE_MANAGED_SETTINGS: join(cwd, "managed/managed-settings.json") },
    });
  const managedGuard = { hooks: { PreToolUse: [{ matcher: "Bash", hooks: [denyBash] }] } };
  const projectHook = { hooks: { PreToolUse: [{ matcher: "Bash", hooks: [recordProject] }] } };

  test("a project's disableAllHooks cannot turn a managed guard off", async () => {
    const cwd = await project(managedGuard, { ...projectHook, disableAllHooks: true });
    const r = await run(cwd);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(existsSync(join(cwd, "ran")), false, "the managed guard denied the call");
    assert.equal(existsSync(join(cwd, "project-hook-ran")), false, "the project's own hooks are off");
  });

  test("allowManagedHooksOnly: the project's hooks are ignored, the managed ones run; hooks check says so", async () => {
    const cwd = await project({ ...managedGuard, allowManagedHooksOnly: true }, projectHook);
    const r = await run(cwd);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(existsSync(join(cwd, "ran")), false);
    assert.equal(existsSync(join(cwd, "project-hook-ran")), false);
    const check = await gatehouse(["hooks", "check"], {
      cwd,
      env: { HOME: join(cwd, "home"), GATEHOUSE_MANAGED_SETTINGS: join(cwd, "managed/managed-settings.json") },
    });
    assert.match(check.stdout, /1 handler.*\(managed hooks only: allowManagedHooksOnly\)/);
  });

  test("a managed disableAllHooks turns every hook off, the managed ones too", async () => {
    const cwd = await project({ ...managedGuard, disableAllHooks: true }, projectHook);
    const r = await run(cwd);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(existsSync(join(cwd, "ran")), true);
    assert.equal(existsSync(join(cwd, "project-hook-ran")), false);
  });
});
