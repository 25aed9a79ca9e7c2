import assert from "node:assert/strict";
import { test } from "node:test";
import { ifRuleMatches, parseIfRule } from "../../src/command-hooks/if-rule.js";
import { loadShellParser, PermissionPolicy, readCommandLine } from "../../src/permissions/index.js";

// Before the shell parser has loaded (it loads asynchronously, once), no Bash line can be read:
// nothing is allowed on a reading that did not happen.

test("before the parser loads every line is unreadable: it asks even in bypassPermissions, and an if rule runs its hook", async () => {
  const policy = new PermissionPolicy({ mode: "bypassPermissions", rules: [], cwd: "/work/project" });
  assert.match(readCommandLine("ls").unreadable ?? "", /not loaded yet/);
  assert.equal(policy.decide("Bash", { command: "ls" }, undefined).behavior, "ask");
  const rule = parseIfRule("Bash(rm:*)");
  assert.ok(rule);
  assert.equal(ifRuleMatches(rule, "Bash", { command: "ls" }, "/work/project"), true);

  await loadShellParser();
  assert.equal(readCommandLine("ls").unreadable, undefined, "an answer given before loading is not remembered");
  assert.equal(policy.decide("Bash", { command: "ls" }, undefined).behavior, "allow");
  assert.equal(ifRuleMatches(rule, "Bash", { command: "ls" }, "/work/project"), false);
});
