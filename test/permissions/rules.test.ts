import assert from "node:assert/strict";
import { homedir } from "node:os";
import { join } from "node:path";
import { before, describe, test } from "node:test";
import { loadShellParser, PermissionPolicy, splitCommands } from "../../src/permissions/index.js";
import { projectRules } from "./helpers.js";

before(() => loadShellParser());

// The rule language (docs/permissions.md), checked without a run.

const PROJECT = "/work/project";

function policy(rules: Record<"allow" | "ask" | "deny", string[]>, mode: PermissionPolicy["mode"] = "default") {
  return new PermissionPolicy({ mode, rules: projectRules(rules, PROJECT), cwd: PROJECT });
}
const none = { allow: [], ask: [], deny: [] };
const bash = (command: string) => ({ command });

describe("reading a shell line", () => {
  test("every command of a line: separators, subshells, substitutions (also inside double quotes), process substitution", () => {
    const texts = (line: string) => splitCommands(line)?.map((c) => c.text);
    assert.deepEqual(texts("a && b || c; d | e & f\ng"), ["a", "b", "c", "d", "e", "f", "g"]);
    assert.deepEqual(texts('echo "$(rm -rf x)"'), ["rm -rf x", "echo $(rm -rf x)"]);
    assert.deepEqual(texts("diff <(ls a) <(ls b)"), ["ls a", "ls b", "diff <(ls a) <(ls b)"]);
    assert.deepEqual(texts("(cd x && rm y)"), ["cd x", "rm y"]);
    assert.deepEqual(texts("while true; do rm x; done"), ["true", "rm x"]);
    assert.deepEqual(texts("npm test 2>&1 | tee log"), ["npm test", "tee log"], "redirections are not words");
    assert.equal(texts("echo 'unterminated"), undefined);
    assert.deepEqual(
      texts("echo $'a\\'b' ; rm -rf x"),
      ["echo a'b", "rm -rf x"],
      "ANSI-C quoting decoded, its escaped quote included",
    );
  });

  test("a redirection to a file is a write; 2>&1 and >/dev/null are not", () => {
    const writes = (line: string) => splitCommands(line)?.map((c) => c.writes);
    assert.deepEqual(writes("npm test > out.txt"), [true]);
    assert.deepEqual(writes("npm test >> ~/.bashrc"), [true]);
    assert.deepEqual(writes("npm test 2>&1"), [false]);
    assert.deepEqual(writes("npm test >/dev/null 2>/dev/null"), [false]);
    assert.deepEqual(writes("npm test &> log"), [true]);
  });
});

describe("Bash rules", () => {
  test("prefix rules have a word boundary; wildcards match spaces; a trailing ' *' matches the bare command", () => {
    const p = policy({ ...none, allow: ["Bash(npm run test:*)", "Bash(git * main)", "Bash(ls *)"] });
    const allowed = (c: string) => p.decide("Bash", bash(c), undefined).behavior === "allow";
    assert.ok(allowed("npm run test"));
    assert.ok(allowed("npm run test -- --watch"));
    assert.ok(!allowed("npm run testx"));
    assert.ok(allowed("git push origin main"));
    assert.ok(!allowed("git push origin main2"));
    assert.ok(allowed("ls"));
    assert.ok(allowed("ls -la"));
    assert.ok(allowed("npm   run  test"), "whitespace is collapsed");
  });

  test("an allow needs every command allowed; assignments and writes are not allowed by a plain rule", () => {
    const p = policy({ ...none, allow: ["Bash(npm test:*)", "Bash(echo:*)"] });
    const behavior = (c: string) => p.decide("Bash", bash(c), undefined).behavior;
    assert.equal(behavior("npm test && echo done"), "allow");
    assert.equal(behavior("npm test && rm -rf x"), "ask");
    assert.equal(behavior("npm test `rm -rf x`"), "ask");
    assert.equal(behavior("PATH=/tmp/evil npm test"), "ask");
    assert.equal(behavior("echo hi > ~/.bashrc"), "ask");
    assert.equal(behavior("echo $'a\\'b' ; npm test"), "allow");
    assert.equal(behavior("echo 'unbalanced"), "ask");
  });

  test("a deny rule finds its command anywhere in the line, past assignments; an unreadable line never runs unasked, even in bypassPermissions", () => {
    const p = policy({ ...none, deny: ["Bash(rm:*)"] }, "bypassPermissions");
    const behavior = (c: string) => p.decide("Bash", bash(c), undefined).behavior;
    for (const c of [
      "rm -rf x",
      "make && rm -rf x",
      "X=1 rm -rf x",
      "echo $(rm -rf x)",
      "(rm x)",
      "if true; then rm x; fi",
    ])
      assert.equal(behavior(c), "deny", c);
    assert.equal(behavior("make"), "allow");
    assert.equal(behavior("echo 'rm"), "ask", "cannot be read: a person decides");
  });

  test("precedence: deny beats ask beats allow, wherever each comes from; a hook's allow skips the ask, not a deny or plan", () => {
    const p = policy({ allow: ["Bash"], ask: ["Bash(git push:*)"], deny: ["Bash(git push --force:*)"] });
    assert.equal(p.decide("Bash", bash("git status"), undefined).behavior, "allow");
    assert.equal(p.decide("Bash", bash("git push"), undefined).behavior, "ask");
    assert.equal(p.decide("Bash", bash("git push --force"), undefined).behavior, "deny");
    assert.equal(p.decide("Bash", bash("git push"), "allow").behavior, "ask", "an ask rule still asks");
    assert.equal(p.decide("Bash", bash("git push --force"), "allow").behavior, "deny");
    const plan = policy(none, "plan");
    assert.equal(plan.decide("Bash", bash("npm test"), "allow").behavior, "deny");
    assert.equal(plan.decide("Read", { file_path: join(PROJECT, "a") }, undefined).behavior, "allow");
  });
});

describe("path, MCP and Agent rules", () => {
  test("gitignore-style paths relative to the settings file's project; // absolute; ~/ home; Edit covers Write", () => {
    const p = policy({
      ...none,
      deny: ["Read(./secrets/**)", "Read(.env)", "Edit(//etc/**)", "Read(~/.ssh/**)", "Edit(/config/*.json)"],
    });
    const read = (f: string) => p.decide("Read", { file_path: f }, undefined).behavior;
    const write = (f: string) => p.decide("Write", { file_path: f, content: "" }, undefined).behavior;
    assert.equal(read(join(PROJECT, "secrets/a/b.txt")), "deny");
    assert.equal(read(join(PROJECT, "deep/down/.env")), "deny", "a name without a slash matches at any depth");
    assert.equal(read(join(PROJECT, "src/env.ts")), "allow");
    assert.equal(read(join(homedir(), ".ssh/id_rsa")), "deny");
    assert.equal(write("/etc/passwd"), "deny");
    assert.equal(write(join(PROJECT, "config/app.json")), "deny");
    assert.equal(write(join(PROJECT, "config/app.ts")), "ask");
    assert.equal(read("/etc/passwd"), "allow", "Edit rules do not cover reads");
  });

  test("acceptEdits accepts edits inside the project only", () => {
    const p = policy(none, "acceptEdits");
    assert.equal(p.decide("Edit", { file_path: join(PROJECT, "src/a.ts") }, undefined).behavior, "allow");
    assert.equal(p.decide("Edit", { file_path: "/etc/hosts" }, undefined).behavior, "ask");
    assert.equal(p.decide("Bash", bash("npm test"), undefined).behavior, "ask");
  });

  test("mcp__server covers its tools, mcp__server__tool one; MCP tools and Agent ask by default", () => {
    const p = policy({ ...none, allow: ["mcp__files", "Agent(Explore)"], deny: ["mcp__github__delete_repo"] });
    assert.equal(p.decide("mcp__files__read", {}, undefined).behavior, "allow");
    assert.equal(p.decide("mcp__filesystem__read", {}, undefined).behavior, "ask", "not a prefix of another server");
    assert.equal(p.decide("mcp__github__delete_repo", {}, undefined).behavior, "deny");
    assert.equal(p.decide("mcp__github__list", {}, undefined).behavior, "ask");
    assert.equal(p.decide("Agent", { prompt: "x", subagent_type: "Explore" }, undefined).behavior, "allow");
    assert.equal(p.decide("Agent", { prompt: "x" }, undefined).behavior, "ask");
  });

  test("suggestions are the narrowest sensible rules, a command's prefix and never its arguments, values or targets", () => {
    const p = policy({ ...none, allow: ["Bash(git status)"] });
    assert.deepEqual(p.suggestRules("Bash", bash("npm test -- -t x")), ["Bash(npm test:*)"]);
    assert.deepEqual(p.suggestRules("Bash", bash("git status && rm -rf build")), ["Bash(rm:*)"]);
    assert.deepEqual(p.suggestRules("Bash", bash("echo hi > out.txt")), ["Bash(echo:*)"]);
    assert.deepEqual(p.suggestRules("Bash", bash("TOKEN=SECRET echo hi")), ["Bash(echo:*)"]);
    assert.deepEqual(p.suggestRules("Bash", bash("TOKEN=SECRET")), []);
    assert.deepEqual(p.suggestRules("Edit", { file_path: join(PROJECT, "src/a.ts") }), ["Edit(./src/**)"]);
    assert.deepEqual(p.suggestRules("mcp__files__read", {}), ["mcp__files__read"]);
    assert.deepEqual(p.suggestRules("Bash", bash("echo 'x")), []);
  });
});
