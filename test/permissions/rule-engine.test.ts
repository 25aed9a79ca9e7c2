import assert from "node:assert/strict";
import { homedir } from "node:os";
import { join } from "node:path";
import { before, describe, test } from "node:test";
import { ifRuleMatches, parseIfRule } from "../../src/command-hooks/if-rule.js";
import {
  loadShellParser,
  type PermissionBehavior,
  PermissionPolicy,
  type PermissionRule,
  parseRule,
  type RuleUse,
} from "../../src/permissions/index.js";

before(() => loadShellParser());

// One rule engine (docs/permissions.md): the same (rule, tool, input) means the same thing as a
// permission rule and as a command hook's `if` rule. Only a call the rule cannot read differs:
// a permission rule does not match it, an `if` rule runs its hook.

const PROJECT = "/work/project";
const at = (p: string) => join(PROJECT, p);

/** true / false: the rule matches or not; "unreadable": the call does not say (no command, no URL). */
type Expected = boolean | "unreadable";
const TABLE: readonly (readonly [rule: string, tool: string, input: unknown, expected: Expected])[] = [
  // Edit rules cover every tool that edits files (an `if` guard used to miss MultiEdit and Write).
  ["Edit(src/**)", "Edit", { file_path: at("src/a.ts") }, true],
  ["Edit(src/**)", "MultiEdit", { file_path: at("src/a.ts"), edits: [] }, true],
  ["Edit(src/**)", "Write", { file_path: at("src/deep/b.md") }, true],
  ["Edit(src/**)", "NotebookEdit", { notebook_path: at("src/n.ipynb") }, true],
  ["Edit(src/**)", "Write", { file_path: at("docs/b.md") }, false],
  ["Edit(src/**)", "Read", { file_path: at("src/a.ts") }, false],
  ["Edit(src/**)", "Write", {}, "unreadable"],
  // A bare name is gitignore-style: that folder or file at any depth under the rule's folder.
  ["Edit(src)", "Edit", { file_path: at("src/a.ts") }, true],
  ["Edit(src)", "Write", { file_path: at("lib/src/a.ts") }, true],
  ["Edit(src)", "Edit", { file_path: at("srcx/a.ts") }, false],
  ["Edit(*.ts)", "MultiEdit", { file_path: at("deep/er/a.ts") }, true],
  ["Edit(//etc/**)", "Write", { file_path: "/etc/passwd" }, true],
  ["Read(~/.ssh/**)", "Read", { file_path: join(homedir(), ".ssh", "id_rsa") }, true],
  ["Read(.env)", "Grep", { pattern: "x", path: at("a/.env") }, true],
  ["Read(src/**)", "Glob", { pattern: "*.ts" }, "unreadable"],
  // MCP: a server rule, a server glob, a tool glob, and a server name Claude Code normalises.
  ["mcp__github", "mcp__github__create_issue", {}, true],
  ["mcp__github__*", "mcp__github__create_issue", {}, true],
  ["mcp__github__*", "mcp__githubx__create_issue", {}, false],
  ["mcp__github", "mcp__githubx__create_issue", {}, false],
  ["mcp__github__get_*", "mcp__github__get_issue", {}, true],
  ["mcp__github__get_*", "mcp__github__delete_repo", {}, false],
  ["mcp__github__create_issue", "mcp__github__create_issue", {}, true],
  ["mcp__*", "mcp__files__read", {}, true],
  ["mcp__*", "Bash", { command: "ls" }, false],
  ["mcp__my.server__do.it", "mcp__my_server__do_it", {}, true],
  ["mcp__my.server", "mcp__my_server__do_it", {}, true],
  ["*", "Bash", { command: "ls" }, true],
  // Bash: every simple command, with and without leading assignments, and the line as a whole.
  ["Bash(rm:*)", "Bash", { command: "echo hi && rm -rf x" }, true],
  ["Bash(rm:*)", "Bash", { command: "echo $(rm -rf x)" }, true],
  ["Bash(rm:*)", "Bash", { command: "FOO=1 rm x" }, true],
  ["Bash(rm:*)", "Bash", { command: "echo 'rm x'" }, false],
  ["Bash(rm:*)", "Bash", { command: "rmdir x" }, false],
  ["Bash(rm:*)", "Bash", { command: "echo 'unterminated" }, "unreadable"],
  ["Bash(rm:*)", "Bash", {}, "unreadable"],
  ["Bash(git * main)", "Bash", { command: "git push origin main" }, true],
  ["Bash", "Bash", { command: "anything" }, true],
  ["Bash", "Read", { file_path: at("a") }, false],
  // Parameter rules: one top-level field, exact or with `*`; an omitted field never matches.
  ["Agent(model:opus)", "Agent", { prompt: "x", model: "opus" }, true],
  ["Agent(model: opus)", "Agent", { prompt: "x", model: "opus" }, true],
  ["Agent(model:opus)", "Agent", { prompt: "x", model: "claude-opus-4" }, false],
  ["Agent(model:opus)", "Agent", { prompt: "x" }, false],
  ["Agent(isolation:*)", "Agent", { prompt: "x", isolation: "worktree" }, true],
  ["Agent(isolation:*)", "Agent", { prompt: "x" }, false],
  ["Bash(run_in_background:true)", "Bash", { command: "sleep 9", run_in_background: true }, true],
  ["Bash(run_in_background:true)", "Bash", { command: "sleep 9", run_in_background: false }, false],
  ["Bash(timeout:*)", "Bash", { command: "timeout 5 ls", timeout: 1000 }, true],
  ["Bash(timeout:*)", "Bash", { command: "timeout 5 ls" }, false],
  ["mcp__github__create_issue(repo:secret-*)", "mcp__github__create_issue", { repo: "secret-x" }, true],
  ["mcp__github__create_issue(repo:secret-*)", "mcp__github__create_issue", { repo: "public" }, false],
  // Agent types, and WebFetch domains through the one host-name comparison.
  ["Agent(Explore)", "Agent", { prompt: "x", subagent_type: "Explore" }, true],
  ["Agent(Explore)", "Agent", { prompt: "x" }, false],
  ["WebFetch(domain:example.com)", "WebFetch", { url: "https://API.Example.COM./x" }, true],
  ["WebFetch(domain:example.com)", "WebFetch", { url: "https://example.org/" }, false],
  ["WebFetch(domain:*.example.com)", "WebFetch", { url: "https://a.b.example.com/" }, true],
  ["WebFetch(domain:*.example.com)", "WebFetch", { url: "https://example.com/" }, false],
  ["WebFetch(domain:*)", "WebFetch", { url: "https://anything.test/" }, true],
  ["WebFetch(domain:example.com)", "WebFetch", { url: "not a url" }, "unreadable"],
  ["WebFetch(domain:example.com)", "WebFetch", {}, "unreadable"],
];

function permissionRule(text: string, behavior: PermissionBehavior): PermissionRule {
  const parsed = parseRule(text, behavior);
  assert.ok(typeof parsed !== "string", `${text} parses as a ${behavior} rule: ${String(parsed)}`);
  return { behavior, rule: text, parsed, id: `project.${behavior}.0`, source: "project", baseDir: PROJECT };
}

describe("one rule engine for permission rules and if rules", () => {
  test("each (rule, tool, input) of the table means the same as a deny rule, an ask rule and an if rule", () => {
    for (const [rule, tool, input, expected] of TABLE) {
      const what = `${rule} on ${tool} ${JSON.stringify(input)}`;
      const deny = new PermissionPolicy({ mode: "default", rules: [permissionRule(rule, "deny")], cwd: PROJECT });
      assert.equal(deny.denyRule(tool, input) !== undefined, expected === true, `deny: ${what}`);
      const ask = new PermissionPolicy({ mode: "default", rules: [permissionRule(rule, "ask")], cwd: PROJECT });
      const asked = ask.decide(tool, input, undefined);
      assert.equal(asked.behavior === "ask" && asked.by === "rule", expected === true, `ask: ${what}`);
      const ifRule = parseIfRule(rule);
      assert.ok(ifRule, `${rule} parses as an if rule`);
      // The if rule's own policy: a call it cannot read runs the hook.
      assert.equal(ifRuleMatches(ifRule, tool, input, PROJECT), expected !== false, `if: ${what}`);
    }
  });

  test("allow rules read the same table wherever an allow rule may be written", () => {
    for (const [rule, tool, input, expected] of TABLE) {
      const asAllow = parseRule(rule, "allow");
      // Parameter rules and bare globs are refused (below); Bash(timeout:*) is a command there.
      if (typeof asAllow === "string" || asAllow.spec?.kind !== permissionRule(rule, "deny").parsed.spec?.kind)
        continue;
      // An allow rule must match every command of a line, as written (rules.test.ts): not the guards' reading.
      if (tool === "Bash" && typeof input === "object" && /&&|\$\(|=/.test(JSON.stringify(input))) continue;
      const allow = new PermissionPolicy({ mode: "default", rules: [permissionRule(rule, "allow")], cwd: PROJECT });
      const decided = allow.decide(tool, input, undefined);
      const allowedByRule = decided.behavior === "allow" && decided.by === "rule";
      assert.equal(allowedByRule, expected === true, `allow: ${rule} on ${tool} ${JSON.stringify(input)}`);
    }
  });
});

describe("rule forms the engine does not support are errors, never rules that match nothing", () => {
  const refused = (rule: string, uses: readonly RuleUse[], reason: RegExp) => {
    for (const use of uses) {
      const parsed = parseRule(rule, use);
      assert.equal(typeof parsed, "string", `${rule} is refused as ${use}`);
      assert.match(parsed as string, reason, `${rule} as ${use}`);
    }
  };
  const all: RuleUse[] = ["allow", "ask", "deny", "if"];

  test("a parameter the tool does not have, a primary field, two parameters, a specifier a tool has not", () => {
    refused("WebFetch(host:example.com)", all, /WebFetch has no parameter host/);
    refused("Bash(command:rm *)", all, /cannot name Bash's command/);
    refused("Read(file_path:/etc/passwd)", all, /cannot name Read's file_path/);
    refused("Agent(model:opus, isolation:worktree)", ["deny", "ask", "if"], /one parameter/);
    refused("TodoWrite(everything)", all, /TodoWrite has no specifier of its own/);
    refused("mcp__github(issues)", all, /MCP rule takes no specifier/);
    refused("WebFetch(https://example.com)", all, /WebFetch\(domain:host\)/);
    refused("WebFetch(domain:example.*)", all, /leading \*\. or a bare \*/);
    refused("Bash(git *", all, /not a permission rule/);
  });

  test("allow rules take neither parameter rules nor unanchored tool-name globs (Claude Code's limits)", () => {
    refused("Agent(model:opus)", ["allow"], /for deny, ask and if rules/);
    refused("*", ["allow"], /mcp__<server>__ prefix/);
    refused("mcp__*", ["allow"], /mcp__<server>__ prefix/);
    refused("mcp__git*__x", ["allow"], /mcp__<server>__ prefix/);
    assert.equal(typeof parseRule("mcp__github__get_*", "allow"), "object");
    // An allow rule keeps the tool's own syntax: Bash(timeout:*) allows the timeout command.
    const timeout = parseRule("Bash(timeout:*)", "allow");
    assert.ok(typeof timeout === "object" && timeout.spec?.kind === "command");
    const asDeny = parseRule("Bash(timeout:*)", "deny");
    assert.ok(typeof asDeny === "object" && asDeny.spec?.kind === "param");
  });
});
