import assert from "node:assert/strict";
import { before, describe, test } from "node:test";
import { ifRuleMatches, parseIfRule } from "../../src/command-hooks/if-rule.js";
import {
  loadShellParser,
  PermissionPolicy,
  type PermissionRule,
  parseRule,
  readCommandLine,
  withoutAssignments,
} from "../../src/permissions/index.js";
import { CORPUS, type CorpusCase } from "./shell-corpus.js";

// The attack corpus (shell-corpus.ts) against the reader, a deny rule, a narrow allow rule and an
// `if` rule, each with a control that the same rule must not match.

before(() => loadShellParser());

const PROJECT = "/work/project";

function policy(behavior: "allow" | "deny", rules: readonly string[]): PermissionPolicy {
  const all: PermissionRule[] = rules.map((rule, i) => {
    const parsed = parseRule(rule, behavior);
    assert.ok(typeof parsed !== "string", rule);
    return { behavior, rule, parsed, id: `project.${behavior}.${i}`, source: "project", baseDir: PROJECT };
  });
  return new PermissionPolicy({ mode: "default", rules: all, cwd: PROJECT });
}

/** The program a rendered command runs, and the prefix an allow rule must name (assignments included). */
function programOf(run: string): { program: string; prefix: string } {
  const rest = withoutAssignments(run);
  const program = rest.split(" ")[0] as string;
  return { program, prefix: run.slice(0, run.length - rest.length) + program };
}

const decide = (p: PermissionPolicy, line: string) => p.decide("Bash", { command: line }, undefined).behavior;
const singleQuoted = (line: string) => `'${line.replaceAll("'", "'\\''")}'`;

function danger(c: CorpusCase): string {
  return c.danger ?? (programOf(c.runs.at(-1) ?? "").program || "rm");
}

describe("the shell attack corpus", () => {
  test("has at least 300 lines, none twice", () => {
    assert.ok(CORPUS.length >= 300, `${CORPUS.length} cases`);
    assert.equal(new Set(CORPUS.map((c) => c.line)).size, CORPUS.length);
  });

  test("each line is read as exactly the commands bash runs (in any order), and as unreadable exactly when it cannot be read", () => {
    for (const c of CORPUS) {
      const read = readCommandLine(c.line);
      assert.deepEqual(
        read.commands.map((x) => x.text).sort(),
        [...c.runs].sort(),
        `${JSON.stringify(c.line)}: ${read.unreadable ?? "readable"}`,
      );
      assert.equal(
        read.unreadable !== undefined,
        c.unreadable === true,
        `${JSON.stringify(c.line)}: ${read.unreadable}`,
      );
    }
  });

  test("a deny rule for a program refuses every line that runs it, and not the same line quoted as an argument", () => {
    for (const c of CORPUS) {
      const d = danger(c);
      const p = policy("deny", [`Bash(${d}:*)`]);
      const whole = c.line.trim().replace(/\s+/g, " ");
      const runs = c.runs.some((r) => programOf(r).program === d) || whole === d || whole.startsWith(`${d} `);
      assert.equal(decide(p, c.line) === "deny", runs, `deny ${d}: ${JSON.stringify(c.line)}`);
      if (d !== "echo") assert.notEqual(decide(p, `echo ${singleQuoted(c.line)}`), "deny", `control: ${c.line}`);
    }
  });

  test("narrow allow rules for the other commands never allow the dangerous one; with it allowed too, only a readable line runs", () => {
    for (const c of CORPUS) {
      const d = danger(c);
      const rulesFor = (runs: readonly string[]) =>
        [...new Set(runs.map((r) => programOf(r).prefix))].flatMap((prefix) => [
          `Bash(${prefix}:*)`,
          `Bash(${prefix} *>*)`,
        ]);
      const others = c.runs.filter((r) => programOf(r).program !== d);
      const runsDanger = others.length < c.runs.length;
      // A rule's own whitespace is collapsed (rules.ts), so a rule can never name a look-alike space.
      const nameable = !c.runs.some((r) => /[^\S ]/.test(programOf(r).prefix));
      const narrow = decide(policy("allow", rulesFor(others)), c.line);
      const allowed = !runsDanger && c.unreadable !== true && nameable;
      assert.equal(narrow === "allow", allowed, `narrow allow: ${JSON.stringify(c.line)}`);
      const every = decide(policy("allow", rulesFor(c.runs)), c.line);
      assert.equal(every === "allow", c.unreadable !== true && nameable, `control: ${JSON.stringify(c.line)}`);
    }
  });

  test("an if rule for the program starts its hook for every line that runs it or cannot be read, and only then", () => {
    for (const c of CORPUS) {
      const d = danger(c);
      const rule = parseIfRule(`Bash(${d}:*)`);
      assert.ok(rule);
      // A guard also reads the line as a whole, its spaces collapsed (as a deny rule does).
      const whole = c.line.trim().replace(/\s+/g, " ");
      const expected =
        c.unreadable === true ||
        c.runs.some((r) => programOf(r).program === d) ||
        whole === d ||
        whole.startsWith(`${d} `);
      assert.equal(
        ifRuleMatches(rule, "Bash", { command: c.line }, PROJECT),
        expected,
        `if ${d}: ${JSON.stringify(c.line)}`,
      );
    }
  });
});
