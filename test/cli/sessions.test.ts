import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { before, describe, test } from "node:test";
import { gatehouse, tempProjects } from "./helpers.js";
import { gatehouseInProcess } from "./in-process.js";
import { ESC, gatehouseOnTty, parseJson, uncolored } from "./project-helpers.js";

const REASON = "INTERNAL-7f3a: matched rule 12";
const BLOCKED_PROMPT = "forbidden: the launch codes";

/** Blocks prompts with "forbidden"; records session_end events in ended.jsonl. */
const POLICY = `import { appendFileSync } from "node:fs";
export default {
  id: "policy",
  setup(api) {
    api.on("before_agent_run", (e) =>
      e.prompt.includes("forbidden")
        ? { outcome: "block", reason: ${JSON.stringify(REASON)}, message: "Not here.", category: "launch" }
        : { outcome: "pass" });
    api.on("session_end", (e, ctx) => {
      appendFileSync("ended.jsonl", JSON.stringify({ sessionId: e.sessionId, reason: e.reason, ctxSession: ctx.sessionId }) + "\\n");
    });
  },
};
`;

const SCRIPT = {
  runs: [
    {
      match: "tool",
      turns: [
        { toolCalls: [{ name: "Bash", input: { command: "echo tool-output-123" } }] },
        { text: "The tool said: {{lastToolResult}}" },
      ],
    },
    { turns: [{ text: "You said: {{prompt}}" }] },
  ],
};

const CONFIG = {
  model: "scripted:s.json",
  plugins: [{ path: "policy.mjs", hooks: { allowConversationAccess: true } }],
  // The tool traffic is what the listings show: a rule lets the Bash call run (default mode would ask).
  permissions: { allow: ["Bash(echo:*)"] },
};

describe("gatehouse sessions", { concurrency: 4 }, () => {
  const fresh = tempProjects();

  /** A project with s-1 (two turns, one with a tool call) and s-2 (a blocked turn). */
  let cwd = "";
  before(async () => {
    cwd = await fresh({ "gatehouse.json": CONFIG, "s.json": SCRIPT, "policy.mjs": POLICY });
    for (const [session, prompt] of [
      ["s-1", "hello"],
      ["s-1", "use a tool"],
      ["s-2", BLOCKED_PROMPT],
    ] as const) {
      // Spawned: "use a tool" runs Bash in the sandbox, one per process.
      const r = await gatehouse(["run", "--session", session, "-p", prompt], { cwd });
      assert.ok(r.code === 0 || r.code === 3, r.stderr);
    }
  });

  test("list prints a table of sessions, newest first", async () => {
    const r = await gatehouse(["sessions", "list"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trimEnd().split("\n");
    assert.match(lines[0] ?? "", /^ID\s+UPDATED\s+RUNS\s+MESSAGES\s+KEY\s+TITLE$/);
    assert.match(
      lines[1] ?? "",
      /^s-2\s.*\s-$/,
      "the blocked session was updated last; its blocked prompt is no title",
    );
    assert.match(lines[2] ?? "", /^s-1\s+\S+ \S+\s+2\s+6\s+-\s+hello$/, "a title: the first prompt");
    assert.ok(!r.stdout.includes(ESC), "no colors when stdout is not a terminal");
  });

  test("list --json is an array of sessions with counts", async () => {
    const r = await gatehouseInProcess(["sessions", "list", "--json"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    const sessions = parseJson(r) as Record<string, unknown>[];
    assert.deepEqual(
      sessions.map((s) => s.id),
      ["s-2", "s-1"],
    );
    const s1 = sessions[1] as Record<string, unknown>;
    assert.deepEqual(Object.keys(s1).sort(), [
      "createdAt",
      "firstPrompt",
      "id",
      "key",
      "messageCount",
      "parentSessionId",
      "runCount",
      "title",
      "updatedAt",
    ]);
    assert.equal(s1.title, "hello");
    assert.equal((sessions[0] as Record<string, unknown>).title, null, "a blocked prompt never titles a session");
    assert.equal(s1.runCount, 2);
    assert.equal(s1.messageCount, 6);
    assert.equal(s1.parentSessionId, null);
    assert.equal(typeof s1.createdAt, "string");
    const limited = parseJson(
      await gatehouseInProcess(["sessions", "list", "--json", "--limit", "1"], { cwd }),
    ) as unknown[];
    assert.equal(limited.length, 1);
    const bad = await gatehouseInProcess(["sessions", "list", "--limit", "0"], { cwd });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--limit/);
  });

  test("in a project without a store, list says so and creates nothing", async () => {
    const empty = await fresh();
    const r = await gatehouseInProcess(["sessions", "list"], { cwd: empty });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "no sessions\n");
    assert.deepEqual(parseJson(await gatehouseInProcess(["sessions", "list", "--json"], { cwd: empty })), []);
    assert.ok(!existsSync(join(empty, ".gatehouse")), "looking must not create the store");
  });

  test("show prints runs (status, trigger, time) and messages, tool traffic summarized", async () => {
    const r = await gatehouseInProcess(["sessions", "show", "s-1"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^Session s-1$/m);
    assert.match(r.stdout, /^Runs \(2\)$/m);
    assert.match(
      r.stdout,
      /^\s+1\s+completed\s+user\s+scripted:\S+\s+\d+\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ\s+\S+\s+[0-9a-f-]{36}$/m,
    );
    assert.match(r.stdout, /^Messages \(6\)$/m);
    assert.match(r.stdout, /^\s+1\s+user\s+hello$/m);
    assert.match(r.stdout, /^\s+2\s+assistant\s+You said: hello$/m);
    assert.match(r.stdout, /^\s+4\s+assistant\s+→ Bash \{"command":"echo tool-output-123"\}$/m);
    assert.match(r.stdout, /^\s+5\s+tool\s+← Bash: \{"stdout":"tool-output-123\\n"/m);
    assert.match(r.stdout, /^\s+6\s+assistant\s+The tool said: tool-output-123$/m);
  });

  test("show of a blocked turn shows the notice and who blocked, never the prompt or the reason", async () => {
    const r = await gatehouseInProcess(["sessions", "show", "s-2"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^\s+1\s+blocked\s+user\s/m);
    assert.match(r.stdout, /Not here\./);
    assert.match(r.stdout, /\[blocked by policy at before_agent_run\]/);
    assert.ok(!r.stdout.includes(BLOCKED_PROMPT));
    assert.ok(!r.stdout.includes(REASON));
  });

  test("show --json gives the session, runs, messages, compactions and sub-agent sessions", async () => {
    const view = parseJson(await gatehouseInProcess(["sessions", "show", "s-1", "--json"], { cwd })) as Record<
      string,
      unknown
    >;
    assert.deepEqual(Object.keys(view).sort(), ["compactions", "messages", "runs", "session", "subagentSessions"]);
    assert.equal((view.session as { id: string }).id, "s-1");
    const runs = view.runs as { status: string; trigger: string; seq: number; startedAt: string }[];
    assert.deepEqual(
      runs.map((r) => [r.seq, r.status, r.trigger]),
      [
        [1, "completed", "user"],
        [2, "completed", "user"],
      ],
    );
    const messages = view.messages as { role: string; parts: { type: string }[] }[];
    assert.deepEqual(
      messages.map((m) => m.role),
      ["user", "assistant", "user", "assistant", "tool", "assistant"],
    );
    assert.equal(messages[3]?.parts[0]?.type, "tool_call");
    assert.deepEqual(view.compactions, []);
    assert.deepEqual(view.subagentSessions, []);
  });

  test("show, export and rm of an unknown session exit 1 with a clear message", async () => {
    for (const args of [["show"], ["export"], ["export", "--format", "md"], ["rm"]]) {
      const [command = "", ...rest] = args;
      const r = await gatehouseInProcess(["sessions", command, "no-such-session", ...rest], { cwd });
      assert.equal(r.code, 1, `${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, /^gatehouse: no session "no-such-session" in this project's store$/m);
      assert.equal(r.stdout, "");
    }
  });

  test("export prints every stored record as JSONL by default", async () => {
    const r = await gatehouseInProcess(["sessions", "export", "s-1"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.stdout.endsWith("\n"));
    const records = r.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string });
    assert.equal(records[0]?.type, "export");
    assert.equal(records[1]?.type, "session");
    assert.equal(records.filter((x) => x.type === "run").length, 2);
    assert.equal(records.filter((x) => x.type === "message").length, 6);
    const explicit = await gatehouseInProcess(["sessions", "export", "s-1", "--format", "jsonl"], { cwd });
    assert.equal(explicit.stdout.split("\n").length, r.stdout.split("\n").length);
  });

  test("export --format md renders a readable transcript", async () => {
    const r = await gatehouseInProcess(["sessions", "export", "s-1", "--format", "md"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^# Session `s-1`\n/);
    assert.match(r.stdout, /^## Run 1 · completed · user · /m);
    assert.match(r.stdout, /^## Run 2 · completed · user · /m);
    assert.match(r.stdout, /\*\*User:\*\*\n\nhello\n/);
    assert.match(r.stdout, /\*\*Assistant:\*\*\n\nYou said: hello\n/);
    assert.match(r.stdout, /Tool call `Bash`:\n\n```json\n\{\n {2}"command": "echo tool-output-123"\n\}\n```/);
    assert.match(r.stdout, /Result of `Bash`:\n\n```\n/);
    assert.ok(!r.stdout.includes(ESC));
  });

  test("export refuses an unknown format (exit 2)", async () => {
    const r = await gatehouseInProcess(["sessions", "export", "s-1", "--format", "xml"], { cwd });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /Allowed choices are jsonl, md/);
  });

  test("rm fires session_end for the session, deletes it, and a second rm exits 1 (each run's process end fired exit before)", async () => {
    // Spawned: "exit" is fired at each process's end, and the plugin writes ended.jsonl in its cwd.
    const dir = await fresh({ "gatehouse.json": CONFIG, "s.json": SCRIPT, "policy.mjs": POLICY });
    assert.equal((await gatehouse(["run", "--session", "gone", "-p", "hi"], { cwd: dir })).code, 0);
    assert.equal((await gatehouse(["run", "--session", "kept", "-p", "hi"], { cwd: dir })).code, 0);
    const r = await gatehouse(["sessions", "rm", "gone"], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "deleted session gone\n");
    const ended = (await readFile(join(dir, "ended.jsonl"), "utf8")).trim().split("\n");
    assert.deepEqual(
      ended.map((l) => JSON.parse(l)),
      [
        { sessionId: "gone", reason: "exit", ctxSession: "gone" },
        { sessionId: "kept", reason: "exit", ctxSession: "kept" },
        { sessionId: "gone", reason: "deleted", ctxSession: "gone" },
      ],
    );
    const left = parseJson(await gatehouse(["sessions", "list", "--json"], { cwd: dir })) as { id: string }[];
    assert.deepEqual(
      left.map((s) => s.id),
      ["kept"],
    );
    const again = await gatehouse(["sessions", "rm", "gone"], { cwd: dir });
    assert.equal(again.code, 1);
    assert.match(again.stderr, /no session "gone"/);
  });

  test("rm refuses (exit 2) when a configured plugin cannot be loaded, and deletes nothing", async () => {
    const dir = await fresh({ "broken.json": { plugins: [{ path: "missing.mjs" }] } });
    assert.equal(
      (await gatehouseInProcess(["run", "--session", "x", "-p", "hi", "--model", "scripted:echo"], { cwd: dir })).code,
      0,
    );
    const r = await gatehouseInProcess(["sessions", "rm", "x", "--config", "broken.json"], { cwd: dir });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /not deleting without the configured plugins/);
    assert.equal((await gatehouseInProcess(["sessions", "show", "x"], { cwd: dir })).code, 0);
  });

  test("--data-dir, GATEHOUSE_DATA_DIR and GATEHOUSE_DATABASE_URL choose the store, as for run", async () => {
    const dir = await fresh();
    const run = (args: string[], env: Record<string, string> = {}) =>
      gatehouseInProcess(["run", "-p", "x", "--model", "scripted:echo", ...args], { cwd: dir, env });
    assert.equal((await run(["--session", "in-flag-dir", "--data-dir", "flagged"])).code, 0);
    assert.equal((await run(["--session", "in-env-db"], { GATEHOUSE_DATABASE_URL: "other.db" })).code, 0);
    const ids = async (args: string[], env: Record<string, string> = {}) =>
      (
        parseJson(await gatehouseInProcess(["sessions", "list", "--json", ...args], { cwd: dir, env })) as {
          id: string;
        }[]
      ).map((s) => s.id);
    assert.deepEqual(await ids(["--data-dir", "flagged"]), ["in-flag-dir"]);
    assert.deepEqual(await ids([], { GATEHOUSE_DATA_DIR: "flagged" }), ["in-flag-dir"]);
    assert.deepEqual(await ids([], { GATEHOUSE_DATABASE_URL: "other.db" }), ["in-env-db"]);
    assert.deepEqual(await ids([]), []);
  });

  test("a bad gatehouse.json exits 2 naming the problem", async () => {
    const dir = await fresh({ "gatehouse.json": { stor: "x" } });
    const r = await gatehouseInProcess(["sessions", "list"], { cwd: dir });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /gatehouse\.json:\d+:\d+: stor: unknown key; did you mean "store"\?/);
  });

  test("on a terminal list and show are colored, and NO_COLOR turns colors off", async () => {
    for (const args of [
      ["sessions", "list"],
      ["sessions", "show", "s-1"],
    ]) {
      const colored = await gatehouseOnTty(args, { cwd });
      assert.equal(colored.code, 0, colored.stderr);
      assert.ok(colored.stdout.includes(ESC), `${args.join(" ")} is colored on a terminal`);
      const plain = await gatehouseOnTty(args, { cwd, env: { NO_COLOR: "1" } });
      assert.equal(plain.code, 0, plain.stderr);
      assert.ok(!plain.stdout.includes(ESC), `${args.join(" ")} has no colors with NO_COLOR`);
      assert.equal(plain.stdout, uncolored(colored.stdout));
    }
  });

  test("--help of each subcommand documents its exit statuses", async () => {
    for (const command of ["list", "show", "export", "rm"]) {
      const r = await gatehouseInProcess(["sessions", command, "--help"], { cwd });
      assert.equal(r.code, 0);
      assert.match(r.stdout, /Exit status:\n {2}0 {2}done\n/);
      assert.match(r.stdout, /\n {2}2 {2}bad input or configuration/);
    }
  });
});
