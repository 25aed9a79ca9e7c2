// Managed settings' `permissions` (docs/permissions.md): their rules apply with source `managed`
// and no user, project or flag rule overrides a managed deny; `allowManagedPermissionRulesOnly`
// ignores every other source's rules; a managed `defaultMode` wins over --permission-mode; and
// `disableBypassPermissionsMode: "disable"` refuses bypassPermissions even when the operator allows it.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { gatehouse, tempProjects } from "./helpers.js";

const SCRIPT = {
  runs: [{ turns: [{ toolCalls: [{ name: "Bash", input: { command: "touch ran" } }] }, { text: "done" }] }],
};

interface RunJson {
  permissionDenials: { reason: string; rule?: string; source?: string }[];
}

describe("managed settings' permissions", { concurrency: 4 }, () => {
  const fresh = tempProjects();
  const project = (managed: object, projectSettings: object = {}) =>
    fresh({
      "s.json": SCRIPT,
      "gatehouse.json": { model: "scripted:s.json" },
      "managed/managed-settings.json": managed,
      ".claude/settings.json": projectSettings,
    });
  const cli = (cwd: string, args: string[]) =>
    gatehouse(args, {
      cwd,
      env: { HOME: join(cwd, "home"), GATEHOUSE_MANAGED_SETTINGS: join(cwd, "managed/managed-settings.json") },
    });
  const run = async (cwd: string, args: string[] = []) => {
    const r = await cli(cwd, ["run", "-p", "go", "--json", ...args]);
    assert.equal(r.code, 0, r.stderr);
    return { ...(JSON.parse(r.stdout) as RunJson), stderr: r.stderr };
  };

  test("a managed deny wins over a project allow and --allowedTools; gatehouse permissions lists it as managed", async () => {
    const cwd = await project({ permissions: { deny: ["Bash(touch:*)"] } }, { permissions: { allow: ["Bash"] } });
    const r = await run(cwd, ["--allowedTools", "Bash(touch:*)"]);
    assert.deepEqual(
      r.permissionDenials.map((d) => [d.reason, d.rule, d.source]),
      [["rule", "Bash(touch:*)", "managed"]],
    );
    assert.equal(existsSync(join(cwd, "ran")), false);
    // With JSON output the denial is in the output only, as `claude -p` prints it.
    assert.doesNotMatch(r.stderr, /permission denied/);
    const listed = await cli(cwd, ["permissions", "--json"]);
    assert.equal(listed.code, 0, listed.stderr);
    const rules = (JSON.parse(listed.stdout) as { rules: { behavior: string; rule: string; source: string }[] }).rules;
    assert.ok(
      rules.some((x) => x.behavior === "deny" && x.rule === "Bash(touch:*)" && x.source === "managed"),
      listed.stdout,
    );
  });

  test("a managed allow lets the call run where nobody could be asked", async () => {
    const cwd = await project({ permissions: { allow: ["Bash(touch:*)"] } });
    const r = await run(cwd);
    assert.deepEqual(r.permissionDenials, []);
    assert.equal(existsSync(join(cwd, "ran")), true);
  });

  test("allowManagedPermissionRulesOnly: the project's and the flags' allow rules are ignored, with a warning", async () => {
    const cwd = await project(
      { allowManagedPermissionRulesOnly: true, permissions: { allow: ["Read"] } },
      { permissions: { allow: ["Bash"] } },
    );
    const r = await run(cwd, ["--allowedTools", "Bash"]);
    assert.deepEqual(
      r.permissionDenials.map((d) => d.reason),
      ["nobody"],
    );
    assert.equal(existsSync(join(cwd, "ran")), false);
    assert.match(r.stderr, /ignored: managed settings set allowManagedPermissionRulesOnly/);
  });

  test("a managed defaultMode wins over --permission-mode; disableBypassPermissionsMode refuses bypass", async () => {
    const planned = await project({ permissions: { defaultMode: "plan" } }, { permissions: { allow: ["Bash"] } });
    const r = await run(planned, ["--permission-mode", "acceptEdits"]);
    assert.deepEqual(
      r.permissionDenials.map((d) => d.reason),
      ["mode"],
    );
    const noBypass = await project({ permissions: { disableBypassPermissionsMode: "disable" } });
    const refused = await cli(noBypass, ["run", "-p", "go", "--dangerously-skip-permissions"]);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /bypassPermissions is disabled by \S*managed-settings\.json/);
    assert.equal(existsSync(join(noBypass, "ran")), false);
  });
});
