import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, test } from "node:test";
import { gatehouse, tempProjects } from "./helpers.js";

// Claude Code's parameter rules and the rule forms Gatehouse refuses, through the CLI
// (docs/permissions.md): a parameter deny rule stops the call it names; a form the engine cannot
// read stops `gatehouse run` and fails `gatehouse hooks check`, naming file, line and column.

/** The model delegates to a subagent with `input`, then reports what the Agent tool returned. */
const agentScript = (input: Record<string, unknown>) => ({
  runs: [
    { match: "child", turns: [{ text: "CHILD-RAN" }] },
    {
      turns: [
        { toolCalls: [{ name: "Agent", input: { description: "sub", prompt: "child task", ...input } }] },
        { text: "parent got: {{lastToolResult}}" },
      ],
    },
  ],
});

describe("parameter rules and unsupported rule forms", { concurrency: 4 }, () => {
  const fresh = tempProjects();

  test('deny: ["Agent(model:opus)"] in a settings file denies an Agent call that asks for opus, not one that does not', async () => {
    for (const [model, denied] of [
      ["opus", true],
      ["sonnet", false],
    ] as const) {
      const cwd = await fresh({
        "s.json": agentScript({ model }),
        ".claude/settings.json": { permissions: { deny: ["Agent(model:opus)"], allow: ["Agent"] } },
        "gatehouse.json": { model: "scripted:s.json" },
      });
      const r = await gatehouse(["run", "-p", "go", "--json"], { cwd, env: { HOME: join(cwd, "home") } });
      assert.equal(r.code, 0, r.stderr);
      const result = JSON.parse(r.stdout) as {
        reply: string;
        permissionDenials: { reason: string; rule?: string; ruleId?: string; source?: string }[];
      };
      if (denied) {
        assert.deepEqual(
          result.permissionDenials.map((d) => [d.reason, d.rule, d.ruleId, d.source]),
          [["rule", "Agent(model:opus)", "project.deny.0", "project"]],
        );
        assert.doesNotMatch(result.reply, /CHILD-RAN/, "the subagent never ran");
      } else {
        assert.deepEqual(result.permissionDenials, [], model);
        assert.match(result.reply, /CHILD-RAN/, model);
      }
    }
  });

  test("the stderr hint after a denial suggests the rule prefix, never the command with its values", async () => {
    const canary = "CANARY-hint-5c1e";
    const cwd = await fresh({
      "s.json": {
        runs: [
          {
            turns: [
              { toolCalls: [{ name: "Bash", input: { command: `TOKEN=${canary} echo hi > out.txt` } }] },
              { text: "done" },
            ],
          },
        ],
      },
      "gatehouse.json": { model: "scripted:s.json" },
    });
    const r = await gatehouse(["run", "-p", "go"], { cwd, env: { HOME: join(cwd, "home") } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /permission denied: Bash: .*\(to allow it: --allowedTools "Bash\(echo:\*\)"\)/);
    assert.equal(r.stderr.includes(canary), false, r.stderr);
    assert.equal(r.stderr.includes("out.txt"), false, r.stderr);
  });

  // `WebFetch(host:…)` is no form Claude Code documents: WebFetch's rules are `domain:`.
  const settings =
    '{\n  "permissions": {\n    "deny": [\n      "Bash(rm:*)",\n      "WebFetch(host:example.com)"\n    ]\n  }\n}\n';
  const where = /\.claude\/settings\.json:5:7/;

  test("an unsupported permission rule stops gatehouse run with exit 2, naming file:line:column and the rule", async () => {
    const cwd = await fresh({
      "s.json": { runs: [{ turns: [{ text: "MODEL-RAN" }] }] },
      ".claude/settings.json": settings,
      "gatehouse.json": { model: "scripted:s.json" },
    });
    const r = await gatehouse(["run", "-p", "go"], { cwd, env: {} });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, where);
    assert.match(r.stderr, /WebFetch\(host:example\.com\)/);
    assert.doesNotMatch(r.stdout, /MODEL-RAN/, "no run started");
  });

  test("gatehouse hooks check fails with exit 2 on the same rule, and on an unsupported if rule", async () => {
    const cwd = await fresh({ ".claude/settings.json": settings, "gatehouse.json": {} });
    const r = await gatehouse(["hooks", "check"], { cwd, env: {} });
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.match(r.stdout + r.stderr, where);
    assert.match(r.stdout + r.stderr, /WebFetch\(host:example\.com\)/);

    const hooks = {
      hooks: {
        PreToolUse: [
          {
            matcher: "Agent",
            hooks: [{ type: "command", command: "true", if: "Agent(model:opus, isolation:worktree)" }],
          },
        ],
      },
    };
    const withIf = await fresh({ ".claude/settings.json": hooks, "gatehouse.json": {} });
    const h = await gatehouse(["hooks", "check"], { cwd: withIf, env: { HOME: join(withIf, "home") } });
    assert.equal(h.code, 2, h.stdout + h.stderr);
    assert.match(h.stdout + h.stderr, /\.claude\/settings\.json:10:13: hooks\.PreToolUse\[0\]\.hooks\[0\]\.if/);
    assert.match(h.stdout + h.stderr, /one parameter/);
  });
});
