import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import Database from "better-sqlite3";
import { openServiceRecords } from "../../src/server/index.js";
import { api, startTestServer, type TestServer } from "../server/helpers.js";
import { consoleLogin, liveUntil } from "./helpers.js";
import { bash, write } from "./world.js";

const SECRET = "sk-abcdefghijklmnopqrstuvwxyz012345";
const SCRIPT = {
  runs: [
    {
      match: "^test",
      turns: [{ toolCalls: [{ name: "Bash", input: { command: `npm test -- --token ${SECRET}` } }] }, { text: "Ok." }],
    },
    {
      match: "^note",
      turns: [
        { toolCalls: [{ name: "Write", input: { file_path: "notes/todo.md", content: `one\ntwo\nkey ${SECRET}` } }] },
        { text: "Written." },
      ],
    },
    {
      match: "^wipe",
      turns: [{ toolCalls: [{ name: "Bash", input: { command: "rm -rf build" } }] }, { text: "Not allowed." }],
    },
    { match: "^fail", turns: [{ error: { message: "upstream exploded", statusCode: 500 } }] },
  ],
};

interface Step {
  kind: string;
  name: string;
  outcome: string | null;
  category: string | null;
  at: string;
}
interface TimelineRun {
  status: string;
  error: Record<string, unknown> | null;
  steps: Step[];
}

/** Steps begin in order: the start first, the end last, the rest by when each began. */
function assertInOrder(steps: readonly Step[]): void {
  assert.equal(steps[0]?.kind, "run-start");
  assert.equal(steps.at(-1)?.kind, "run-end");
  const times = steps.slice(1, -1).map((s) => Date.parse(s.at));
  assert.deepEqual(
    times,
    [...times].sort((a, b) => a - b),
    `steps out of order: ${steps.map((s) => s.kind).join(", ")}`,
  );
}

describe("the console's approval asks and timelines", () => {
  let dir: string;
  let server: TestServer;
  let ops: string;
  let alice: string;
  let cookie: Record<string, string>;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "gatehouse-console-asks-"));
    server = await startTestServer(SCRIPT, {
      store: { kind: "sqlite", path: join(dir, "gatehouse.db") },
      tools: [bash, write],
      permissions: { deny: ["Bash(rm:*)"] },
      config: { approvals: { mode: "console" } },
    });
    ops = await server.key("ops", { admin: true });
    alice = await server.key("alice");
    cookie = { cookie: (await consoleLogin(server.url, ops)).cookie };
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const session = async () => (await api(server, "POST", "/v1/sessions", { key: alice, body: {} })).body.id as string;
  const timeline = async (id: string, key = ops) =>
    (await api(server, "GET", `/v1/sessions/${id}/timeline`, { key })).body.runs as TimelineRun[];
  /** The session's first run's tool call, after checking its steps are in order. */
  const toolCall = async (id: string) => {
    const [run] = await timeline(id);
    assertInOrder(run?.steps ?? []);
    const call = run?.steps.find((s) => s.kind === "tool-call");
    return [call?.name, call?.outcome, call?.category];
  };
  const answer = (ask: { runId: string; toolCallId: string }, decision: string) =>
    api(server, "POST", `/v1/runs/${ask.runId}/approvals/${ask.toolCallId}`, { key: ops, body: { decision } });

  test("a Bash ask shows the command as the terminal does, its secret masked, and the exact rule Allow always adds; denied, the call is on the timeline, in order", async () => {
    const id = await session();
    const running = api(server, "POST", `/v1/sessions/${id}/runs`, { key: alice, body: { prompt: "test it" } });
    const ask = await liveUntil(server.url, cookie, (live) => live.approvals[0]);
    const shown = ask as unknown as { input: unknown; always: unknown; rule: unknown; title: string };
    assert.deepEqual(shown.input, [{ name: "command", text: "npm test -- --token ****" }]);
    assert.deepEqual(shown.always, ["Bash(npm test:*)"]);
    assert.equal(shown.title, "Allow Bash?");
    assert.ok(!JSON.stringify(ask).includes(SECRET), "the secret is masked");
    assert.equal((await answer(ask, "deny")).status, 202);
    assert.equal((await running).body.outcome, "completed");

    assert.deepEqual(await toolCall(id), ["Bash", "denied", "user"]);
  });

  test("a Write ask shows the path and the content as written (line breaks, not escaped JSON), secrets masked", async () => {
    const id = await session();
    const running = api(server, "POST", `/v1/sessions/${id}/runs`, { key: alice, body: { prompt: "note it" } });
    const ask = await liveUntil(server.url, cookie, (live) => live.approvals[0]);
    assert.deepEqual((ask as unknown as { input: unknown }).input, [
      { name: "file_path", text: "notes/todo.md" },
      { name: "content", text: "one\ntwo\nkey ****" },
    ]);
    assert.deepEqual((ask as unknown as { always: unknown }).always, ["Edit(./notes/**)"]);
    await answer(ask, "allow-once");
    assert.equal((await running).body.reply, "Written.");
    assert.deepEqual(await toolCall(id), ["Write", "ok", null]);
  });

  test("a call a deny rule refuses is on the timeline as denied by the rule", async () => {
    const id = await session();
    await api(server, "POST", `/v1/sessions/${id}/runs`, { key: alice, body: { prompt: "wipe it" } });
    assert.deepEqual(await toolCall(id), ["Bash", "denied", "rule"]);
  });

  test("a failed run's timeline gives its cause as the run's result has it (kind, provider, status); the message for admin keys only", async () => {
    const id = await session();
    await api(server, "POST", `/v1/sessions/${id}/runs`, { key: alice, body: { prompt: "fail now" } });
    const [run] = await timeline(id);
    assert.equal(run?.status, "failed");
    assert.equal(run?.error?.kind, "server");
    assert.equal(run?.error?.status, 500);
    assert.equal(run?.error?.provider, "scripted");
    assert.match(String(run?.error?.message), /upstream exploded/);
    const [own] = await timeline(id, alice);
    assert.equal(own?.error?.kind, "server");
    assert.equal(own?.error?.message, undefined, "a client's key gets no error text");
  });
});

test("a records file made before asks and run ends kept their detail gains the column and keeps it", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-console-upgrade-"));
  const path = join(dir, "gatehouse.db");
  try {
    const old = new Database(path);
    old.exec(`CREATE TABLE server_pending_approvals (run_id TEXT NOT NULL, tool_call_id TEXT NOT NULL,
      session_id TEXT NOT NULL, tool_name TEXT NOT NULL, title TEXT NOT NULL, asked_at BIGINT NOT NULL,
      instance TEXT NOT NULL, PRIMARY KEY (run_id, tool_call_id));
      CREATE TABLE server_run_steps (run_id TEXT NOT NULL, session_id TEXT NOT NULL, at BIGINT NOT NULL,
      kind TEXT NOT NULL, name TEXT NOT NULL, plugin_id TEXT, outcome TEXT, category TEXT, duration_ms REAL,
      tool_call_id TEXT, step INTEGER, ord BIGINT NOT NULL);`);
    old.close();
    const records = await openServiceRecords({ kind: "sqlite", path });
    try {
      const ask = { runId: "r", toolCallId: "t", sessionId: "s", toolName: "Bash", title: "Allow Bash?" };
      await records.console.addPendingApproval({ ...ask, askedAt: 1, instance: "i", detail: '{"always":[]}' });
      assert.equal((await records.console.pendingApprovals())[0]?.detail, '{"always":[]}');
      const end = { runId: "r", sessionId: "s", at: 2, kind: "run-end", name: "api", pluginId: null } as const;
      const row = { ...end, outcome: "failed", category: null, durationMs: 1, toolCallId: null, step: null };
      await records.console.recordSteps({ steps: [{ ...row, detail: '{"kind":"server"}' }], started: [], ended: [] });
      assert.equal((await records.console.stepsOf(["r"]))[0]?.detail, '{"kind":"server"}');
    } finally {
      await records.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
