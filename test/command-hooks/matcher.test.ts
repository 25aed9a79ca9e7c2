import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { compileMatcher, compileToolMatcher, matcherMatches, matcherSurprise } from "../../src/hooks/matcher.js";

describe("matchers follow Claude Code", () => {
  test("absent, empty and * match every value", () => {
    for (const m of [undefined, "", "*"]) {
      assert.equal(matcherMatches(m, "Bash"), true);
      assert.equal(matcherMatches(m, "mcp__memory__create"), true);
    }
  });

  test("a plain name is an exact, case-sensitive match", () => {
    assert.equal(matcherMatches("Bash", "Bash"), true);
    assert.equal(matcherMatches("Bash", "bash"), false);
    assert.equal(matcherMatches("Edit", "NotebookEdit"), false);
    assert.equal(matcherMatches("Bash", "BashOutput"), false);
  });

  test("| and , separate an exact list, with surrounding spaces trimmed", () => {
    assert.equal(compileMatcher("Edit|Write").kind, "exact");
    assert.equal(matcherMatches("Edit|Write", "Write"), true);
    assert.equal(matcherMatches("Edit, Write", "Write"), true);
    assert.equal(matcherMatches(" Edit | Write ", "Edit"), true);
    assert.equal(matcherMatches("Edit|Write", "MultiEdit"), false);
  });

  test("hyphenated names are exact, so code-reviewer does not match senior-code-reviewer", () => {
    assert.equal(compileMatcher("code-reviewer").kind, "exact");
    assert.equal(matcherMatches("code-reviewer", "senior-code-reviewer"), false);
    assert.equal(matcherMatches("code-reviewer", "code-reviewer"), true);
  });

  test("any other character makes an unanchored regex", () => {
    assert.equal(compileMatcher("Edit.*").kind, "regex");
    assert.equal(matcherMatches("Edit.*", "NotebookEdit"), true);
    assert.equal(matcherMatches("^Edit$", "NotebookEdit"), false);
    assert.equal(matcherMatches("^Edit$", "Edit"), true);
    assert.equal(matcherMatches("^(Read|Grep)$", "Grep"), true);
  });

  test("regexes are case-sensitive", () => {
    assert.equal(matcherMatches("^bash$", "Bash"), false);
    assert.equal(matcherMatches("[Bb]ash", "Bash"), true);
  });

  test("a bare mcp__server name is exact and matches no tool; mcp__server__.* matches its tools", () => {
    assert.equal(matcherMatches("mcp__memory", "mcp__memory__create_entities"), false);
    assert.equal(matcherMatches("mcp__memory__.*", "mcp__memory__create_entities"), true);
    assert.equal(matcherMatches("mcp__memory__.*", "mcp__github__create_issue"), false);
    assert.equal(matcherMatches("mcp__.*__write.*", "mcp__fs__write_file"), true);
    assert.equal(matcherMatches("mcp__github__create_issue", "mcp__github__create_issue"), true);
  });

  test("Code Puppy's `A || B` form reads as an exact list", () => {
    assert.equal(matcherMatches("Bash || agent_run_shell_command", "Bash"), true);
    assert.equal(matcherMatches("Bash || agent_run_shell_command", "agent_run_shell_command"), true);
  });

  test("an invalid regex throws a SyntaxError", () => {
    assert.throws(() => compileMatcher("Bash("), SyntaxError);
  });

  test("a specific matcher does not match a missing value", () => {
    assert.equal(matcherMatches("Bash", undefined), false);
    assert.equal(matcherMatches("B.*", undefined), false);
  });

  test('one rule for typed plugins and command hooks: |, , and " * " read the same in both', () => {
    for (const [matcher, tool, expected] of [
      ["|", "Bash", false],
      [",", "Bash", false],
      [" * ", "Bash", false],
      ["*", "Bash", true],
      ["", "Bash", true],
      ["Edit, Write", "Write", true],
      [" Bash ", "Bash", true],
      ["Edit.*", "NotebookEdit", true],
    ] as const) {
      const typed = compileToolMatcher(matcher);
      assert.equal(typed === undefined ? true : typed(tool), expected, `typed plugin: ${JSON.stringify(matcher)}`);
      assert.equal(matcherMatches(matcher, tool), expected, `command hook: ${JSON.stringify(matcher)}`);
    }
  });

  test("the surprising matchers are named, so hooks check can warn", () => {
    assert.match(matcherSurprise(" * ") ?? "", /regular expression, not "\*"/);
    assert.match(matcherSurprise("|") ?? "", /names nothing/);
    for (const m of [undefined, "*", "", "Bash", "Edit|Write", "mcp__.*"]) assert.equal(matcherSurprise(m), undefined);
  });
});
