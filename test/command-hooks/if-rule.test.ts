import assert from "node:assert/strict";
import { before, describe, test } from "node:test";
import { ifRuleMatches, parseIfRule } from "../../src/command-hooks/if-rule.js";
import { loadShellParser } from "../../src/permissions/index.js";

before(() => loadShellParser());

const matchesRule = (rule: string, tool: string, input: unknown) => {
  const r = parseIfRule(rule);
  assert.ok(r, `rule ${rule} parses`);
  return ifRuleMatches(r, tool, input, "/proj");
};

describe("`if` permission rules", () => {
  test("a bare tool name matches every call of that tool only", () => {
    assert.equal(matchesRule("Bash", "Bash", { command: "anything" }), true);
    assert.equal(matchesRule("Bash", "Read", { file_path: "/a" }), false);
  });

  test("Bash(git *) matches git commands, including inside compound commands and $()", () => {
    assert.equal(matchesRule("Bash(git *)", "Bash", { command: "git push origin main" }), true);
    assert.equal(matchesRule("Bash(git *)", "Bash", { command: "git" }), true);
    assert.equal(matchesRule("Bash(git *)", "Bash", { command: "gitk --all" }), false);
    assert.equal(matchesRule("Bash(git *)", "Bash", { command: "npm test && git commit -m x" }), true);
    assert.equal(matchesRule("Bash(git *)", "Bash", { command: "echo $(git rev-parse HEAD)" }), true);
    assert.equal(matchesRule("Bash(git *)", "Bash", { command: "FOO=1 git status" }), true);
    assert.equal(matchesRule("Bash(git *)", "Bash", { command: "echo 'git push'" }), false);
  });

  test("the legacy prefix form npm run test:* works", () => {
    assert.equal(matchesRule("Bash(npm run test:*)", "Bash", { command: "npm run test --watch" }), true);
    assert.equal(matchesRule("Bash(npm run test:*)", "Bash", { command: "npm run build" }), false);
  });

  test("a command that cannot be parsed lets the handler run", () => {
    assert.equal(matchesRule("Bash(git *)", "Bash", { command: "echo 'unterminated" }), true);
  });

  test("file rules: a bare glob matches the file name anywhere; a path glob is relative to the project", () => {
    assert.equal(matchesRule("Edit(*.ts)", "Edit", { file_path: "/proj/src/deep/a.ts" }), true);
    assert.equal(matchesRule("Edit(*.ts)", "Edit", { file_path: "/proj/src/a.tsx" }), false);
    assert.equal(matchesRule("Write(src/**)", "Write", { file_path: "/proj/src/x/y.md" }), true);
    assert.equal(matchesRule("Write(src/**)", "Write", { file_path: "/proj/docs/y.md" }), false);
    assert.equal(matchesRule("Read(//etc/**)", "Read", { file_path: "/etc/passwd" }), true);
    assert.equal(matchesRule("Read(.env)", "Read", { file_path: "/proj/.env" }), true);
  });

  test("WebFetch(domain:x) matches the host and its subdomains", () => {
    assert.equal(matchesRule("WebFetch(domain:example.com)", "WebFetch", { url: "https://api.example.com/x" }), true);
    assert.equal(matchesRule("WebFetch(domain:example.com)", "WebFetch", { url: "https://example.org" }), false);
  });

  test("malformed rules do not parse", () => {
    assert.equal(parseIfRule("Bash(git *"), undefined);
    assert.equal(parseIfRule(""), undefined);
    assert.deepEqual(parseIfRule("Bash(*)"), { tool: "Bash", specifier: undefined });
  });

  test("Bash rules look inside backticks, subshells, brace groups and if bodies", () => {
    for (const command of ["x `rm y` w", "(rm -rf x)", "{ rm y; }", "if true; then rm z; fi", "a; b\nrm c"])
      assert.equal(matchesRule("Bash(rm:*)", "Bash", { command }), true, command);
  });
});
