// Claude Code's session events through the CLI: SessionStart with the source Claude Code gives
// (new session, resumed one, after /compact and /reset) and the run's model; PreCompact with the
// real /compact instructions and its exit-2 stderr shown; SessionEnd on /reset and when the `run`
// process ends (Claude Code's "other").
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { gatehouse, tempProjects } from "./helpers.js";

// Tools ask in default mode and nobody can answer here (docs/permissions.md): a rule lets them run.
const ALLOW_ALL = { allow: ["Bash", "Write", "Edit", "MultiEdit", "NotebookEdit", "WebFetch", "Agent"] };

const record = { type: "command", command: 'cat >> "$CLAUDE_PROJECT_DIR/events.jsonl"' };

const SCRIPT = { runs: [{ match: "^Summarize", turns: [{ text: "SUMMARY" }] }, { turns: [{ text: "ok" }] }] };

type Payload = Record<string, unknown> & { hook_event_name: string };

function events(cwd: string): Payload[] {
  return readFileSync(join(cwd, "events.jsonl"), "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Payload);
}

describe("session events as Claude Code fires them", { concurrency: 2 }, () => {
  const fresh = tempProjects();

  test("SessionStart: startup, resume (--session), compact, clear (/reset); PreCompact gets /compact's instructions; SessionEnd: other as each run process ends, clear on /reset", async () => {
    const hooks = Object.fromEntries(
      ["SessionStart", "SessionEnd", "PreCompact"].map((e) => [e, [{ hooks: [record] }]]),
    );
    const cwd = await fresh({
      "s.json": SCRIPT,
      "gatehouse.json": { model: "scripted:s.json", compaction: { keepRecent: 1 }, hooks, permissions: ALLOW_ALL },
    });
    const first = await gatehouse(["run", "--json", "-p", "hello"], { cwd });
    assert.equal(first.code, 0, first.stderr);
    const { sessionId } = JSON.parse(first.stdout) as { sessionId: string };
    for (const prompt of ["again", "/compact keep names", "/reset"]) {
      const r = await gatehouse(["run", "--session", sessionId, "-p", prompt], { cwd });
      assert.equal(r.code, 0, r.stderr);
    }
    const seen = events(cwd).map((p) => [p.hook_event_name, p.source ?? p.custom_instructions ?? p.reason]);
    assert.deepEqual(seen, [
      ["SessionStart", "startup"],
      ["SessionEnd", "other"],
      ["SessionStart", "resume"],
      ["SessionEnd", "other"],
      ["SessionStart", "resume"],
      ["PreCompact", "keep names"],
      ["SessionStart", "compact"],
      ["SessionEnd", "other"],
      ["SessionStart", "resume"],
      ["SessionEnd", "clear"],
      ["SessionStart", "clear"],
      ["SessionEnd", "other"],
    ]);
    for (const p of events(cwd).filter((e) => e.hook_event_name === "SessionStart"))
      assert.match(String(p.model), /^scripted:.*s\.json$/, "the run's model, as provider:model");
  });

  test("PreCompact exit 2: compaction is blocked and its stderr is what /compact replies", async () => {
    const block = { type: "command", command: "echo 'compaction is off during the audit' >&2; exit 2" };
    const cwd = await fresh({
      "s.json": SCRIPT,
      "gatehouse.json": {
        model: "scripted:s.json",
        permissions: ALLOW_ALL,
        compaction: { keepRecent: 1 },
        hooks: { PreCompact: [{ hooks: [block] }] },
      },
    });
    const first = await gatehouse(["run", "--json", "-p", "hello"], { cwd });
    const { sessionId } = JSON.parse(first.stdout) as { sessionId: string };
    const r = await gatehouse(["run", "--session", sessionId, "-p", "/compact"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "Compaction was blocked by a policy (command-hooks): compaction is off during the audit\n");
  });
});

describe("CLAUDE_ENV_FILE: what SessionStart hooks export reaches later Bash calls", { concurrency: 2 }, () => {
  const fresh = tempProjects();
  const exporter = {
    type: "command",
    command:
      'test -n "$CLAUDE_ENV_FILE" && printf "export GREETING=hello-from-hook\\nexport OPENAI_API_KEY=sk-injected\\n" >> "$CLAUDE_ENV_FILE"',
  };
  const script = {
    runs: [
      {
        turns: [
          { toolCalls: [{ name: "Bash", input: { command: 'printf \'%s:%s\' "$GREETING" "$OPENAI_API_KEY"' } }] },
          { text: "{{lastToolResult}}" },
        ],
      },
    ],
  };
  const project = (extra: object) =>
    fresh({
      "s.json": script,
      "gatehouse.json": {
        model: "scripted:s.json",
        permissions: ALLOW_ALL,
        hooks: { SessionStart: [{ hooks: [exporter] }] },
        ...extra,
      },
    });

  test("a variable reaches Bash; a provider key a hook exports does not, unless tools.bash.passEnv allows it", async () => {
    const denied = await gatehouse(["run", "-p", "go"], { cwd: await project({}) });
    assert.equal(denied.code, 0, denied.stderr);
    assert.equal(denied.stdout, "hello-from-hook:\n");
    const allowed = await gatehouse(["run", "-p", "go"], {
      cwd: await project({ tools: { bash: { passEnv: ["OPENAI_API_KEY"] } } }),
    });
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.equal(allowed.stdout, "hello-from-hook:sk-injected\n");
  });
});

describe("SessionEnd when a chat ends", () => {
  const fresh = tempProjects();

  test("leaving chat at end of input is prompt_input_exit; a chat with no turn fires none", async () => {
    const hooks = { SessionEnd: [{ hooks: [record] }] };
    const cwd = await fresh({ "gatehouse.json": { model: "scripted:echo", hooks } });
    const empty = await gatehouse(["chat"], { cwd, input: "" });
    assert.equal(empty.code, 0, empty.stderr);
    const r = await gatehouse(["chat"], { cwd, input: "hello\n" });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(
      events(cwd).map((p) => [p.hook_event_name, p.reason]),
      [["SessionEnd", "prompt_input_exit"]],
    );
  });
});
