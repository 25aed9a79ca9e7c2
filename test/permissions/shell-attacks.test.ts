import assert from "node:assert/strict";
import { before, describe, test } from "node:test";
import { runCommandHooks } from "../../src/command-hooks/dispatch.js";
import { loadShellParser, PermissionPolicy, type PermissionRule, parseRule } from "../../src/permissions/index.js";
import { execHook, execOptions, inputFor, tempDir } from "../command-hooks/helpers.js";

// The four attacks of issue 26, each of which ran past the hand-written reader: against a deny
// rule, a narrow allow rule, and a PreToolUse hook whose `if` rule names the hidden command.

before(() => loadShellParser());

const ATTACKS = [
  { name: "a comment whose quote swallows the next lines", line: "echo hi #'\nrm -f victim\n#'" },
  { name: "a substitution in a redirection target", line: "echo hi > $(rm -f victim)" },
  { name: "a backtick substitution in a redirection target", line: "echo hi > `rm -f victim`" },
  { name: "a case arm", line: "case x in a) rm -rf /tmp/x;; esac" },
];

function policy(behavior: "allow" | "deny", rule: string): PermissionPolicy {
  const parsed = parseRule(rule, behavior);
  assert.ok(typeof parsed !== "string");
  const rules: PermissionRule[] = [
    { behavior, rule, parsed, id: `project.${behavior}.0`, source: "project", baseDir: "/work/project" },
  ];
  return new PermissionPolicy({ mode: "default", rules, cwd: "/work/project" });
}

describe("the attacks of issue 26", () => {
  for (const { name, line } of ATTACKS) {
    test(`${name}: a Bash(rm:*) deny rule refuses it`, () => {
      assert.equal(policy("deny", "Bash(rm:*)").decide("Bash", { command: line }, undefined).behavior, "deny");
    });

    test(`${name}: a Bash(echo:*) allow rule does not allow it`, () => {
      const decision = policy("allow", "Bash(echo:*)").decide("Bash", { command: line }, undefined);
      assert.equal(decision.behavior, "ask");
      // Control: the same rule allows the line without the hidden command.
      const plain = policy("allow", "Bash(echo:*)").decide("Bash", { command: "echo hi" }, undefined);
      assert.equal(plain.behavior, "allow");
    });

    test(`${name}: a PreToolUse hook with "if": "Bash(rm:*)" is started and blocks it`, async () => {
      const guard = execHook("emit.sh", ["2", "", "no rm"], { if: "Bash(rm:*)" });
      const opts = execOptions(tempDir());
      const merged = await runCommandHooks(
        "PreToolUse",
        "Bash",
        inputFor("PreToolUse", { tool_input: { command: line } }),
        [guard],
        opts,
      );
      assert.equal(merged.runs.length, 1, "the hook was started");
      assert.equal(merged.decision, "deny");
      // Control: a line without rm does not start it.
      const quiet = await runCommandHooks(
        "PreToolUse",
        "Bash",
        inputFor("PreToolUse", { tool_input: { command: "echo hi > out.txt" } }),
        [guard],
        opts,
      );
      assert.equal(quiet.runs.length, 0);
    });
  }

  test("the comment attack of the issue as written: touch PWNED is a command of its own", () => {
    const line = "echo hi #'\ntouch PWNED\n#'";
    assert.equal(policy("allow", "Bash(echo:*)").decide("Bash", { command: line }, undefined).behavior, "ask");
    assert.equal(policy("deny", "Bash(touch:*)").decide("Bash", { command: line }, undefined).behavior, "deny");
  });
});
