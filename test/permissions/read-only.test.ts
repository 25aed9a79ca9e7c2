import assert from "node:assert/strict";
import { before, describe, test } from "node:test";
import { loadShellParser, type PermissionMode, PermissionPolicy } from "../../src/permissions/index.js";
import { projectRules } from "./helpers.js";

// Claude Code's read-only Bash commands run without asking in every mode; acceptEdits approves
// its filesystem commands inside the working directories (docs/permissions.md).

before(() => loadShellParser());

const PROJECT = "/work/project";

function policy(mode: PermissionMode, rules: Partial<Record<"allow" | "ask" | "deny", string[]>> = {}) {
  const all = projectRules(rules, PROJECT);
  return new PermissionPolicy({ mode, rules: all, cwd: PROJECT, additionalDirectories: ["/work/shared"] });
}
const behavior = (p: PermissionPolicy, command: string) => p.decide("Bash", { command }, undefined).behavior;

const READ_ONLY = [
  "ls",
  "ls -la src",
  "cat README.md",
  "head -n 5 src/a.ts && tail -n 5 src/a.ts",
  "echo hi",
  "pwd",
  "grep -rn 'TODO' src",
  "find . -name '*.ts'",
  "wc -l src/*.py",
  "ls *.ts",
  "which node",
  "diff a.txt b.txt",
  "stat package.json",
  "du -sh .",
  "cd packages/api && ls",
  "git status",
  "git log --oneline -5",
  "git diff HEAD~1 -- src",
  "git --no-pager show HEAD",
  "git branch -a",
  "ls /work/shared/notes",
  "LANG=C ls",
  "timeout 5 cat README.md",
  "ls | grep x | wc -l",
  "grep x src/a.ts 2>/dev/null",
  "cat ../project/src/a.ts",
];

const NOT_READ_ONLY = [
  "npm test",
  "cat /etc/passwd",
  "ls ~",
  "cat ../other/secret",
  "ls > listing.txt",
  "find . -delete",
  "find . -exec rm {} \\;",
  "find *.ts",
  "git push",
  "git branch new-feature",
  "git -c core.pager=evil log",
  "git diff --output=patch.txt",
  "git log *",
  "cd /tmp && ls",
  "cd sub && git status",
  "ls $(rm -rf x)",
  "ls $DIR",
  "cat 'unterminated",
  "PAGER=evil git log",
  "echo hi; touch x",
  "rm x",
  "echo /etc/passwd | xargs cat",
  "find . -name x -exec cat {} \\;",
];

describe("read-only commands", () => {
  test("run without asking in every mode, a compound line only when every command qualifies", () => {
    for (const mode of ["default", "acceptEdits", "plan", "dontAsk"] as const) {
      const p = policy(mode);
      for (const c of READ_ONLY) assert.equal(behavior(p, c), "allow", `${mode}: ${c}`);
      const decision = p.decide("Bash", { command: "ls" }, undefined);
      assert.equal(decision.readOnly, true);
    }
  });

  test("anything else asks (denied where nobody can be asked, or in plan mode)", () => {
    const expected = { default: "ask", plan: "deny", dontAsk: "deny" } as const;
    for (const mode of ["default", "plan", "dontAsk"] as const) {
      const p = policy(mode);
      for (const c of NOT_READ_ONLY) assert.equal(behavior(p, c), expected[mode], `${mode}: ${c}`);
    }
  });

  test("deny and ask rules still win over the read-only set", () => {
    const p = policy("default", { deny: ["Bash(cat:*)"], ask: ["Bash(git log:*)"] });
    assert.equal(behavior(p, "cat README.md"), "deny");
    assert.equal(behavior(p, "git log"), "ask");
    assert.equal(behavior(p, "git status"), "allow", "control: the rules name other commands");
    assert.equal(policy("default", { ask: ["Bash"] }).decide("Bash", { command: "ls" }, undefined).behavior, "ask");
  });
});

describe("acceptEdits filesystem commands", () => {
  const accepting = policy("acceptEdits");
  const EDITS = [
    "mkdir -p build/out",
    "touch src/new.ts",
    "rm -f build/old.js",
    "rm -rf build",
    "rmdir build/empty",
    "mv a.txt b.txt",
    "cp -r src lib",
    "sed -i 's/foo/bar/g' src/a.ts",
    "mkdir out && ls out",
    "nohup touch x",
    "NO_COLOR=1 mkdir y",
    "echo hi > notes.txt",
    "touch /work/shared/x",
  ];
  const STILL_ASK = [
    "rm -rf /tmp/x",
    "rm -rf .",
    "rm -rf ~",
    "mv a.txt ../elsewhere/",
    "touch .git/hooks/pre-commit",
    "cp x .claude/settings.json",
    "touch .bashrc",
    "echo hi > .npmrc",
    "rm *.js",
    "sed -i 's/a/b/e' src/a.ts",
    "sed -i '1w /etc/x' src/a.ts",
    "sed -n '/x/p' src/a.ts > /tmp/out",
    "mkdir $DIR",
    "FOO=1 touch x",
    "chmod +x script.sh",
    "mkdir x && npm test",
    "cd sub && touch x",
  ];

  test("approves them on paths inside the working directories", () => {
    for (const c of EDITS) assert.equal(behavior(accepting, c), "allow", c);
    assert.equal(accepting.decide("Bash", { command: "touch x" }, undefined).by, "mode");
  });

  test("asks for paths outside, protected paths, globs, unsafe sed scripts and any other command", () => {
    for (const c of STILL_ASK) assert.equal(behavior(accepting, c), "ask", c);
  });

  test("only in acceptEdits: the default mode asks for the same commands", () => {
    const p = policy("default");
    for (const c of EDITS) assert.equal(behavior(p, c), "ask", c);
  });

  test("a deny rule still refuses them", () => {
    assert.equal(behavior(policy("acceptEdits", { deny: ["Bash(rm:*)"] }), "rm -f build/old.js"), "deny");
  });
});
