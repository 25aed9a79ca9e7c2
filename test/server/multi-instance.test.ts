import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import pg from "pg";
import { postgresRows, sinkHas } from "../../harness/sinks.js";
import { definePlugin } from "../../src/plugins/index.js";
import type { RunEvent } from "../../src/runtime/types.js";
import { MAIN, tempProjects } from "../cli/helpers.js";
import { echoTool, waitingTool } from "../runtime/helpers.js";
import { api, sse, startTestServer, type TestServer } from "./helpers.js";

const BASE_URL = process.env.GATEHOUSE_TEST_DATABASE_URL;
const skip = BASE_URL ? false : "set GATEHOUSE_TEST_DATABASE_URL to run the PostgreSQL tests";

const SCRIPT = {
  runs: [
    { match: "^wait", turns: [{ toolCalls: [{ name: "Wait", input: { note: "n" } }] }, { text: "never" }] },
    {
      match: "^ask",
      turns: [{ toolCalls: [{ name: "Echo", input: { text: "asked" } }] }, { text: "asked and answered" }],
    },
    { match: ".", turns: [{ text: "answer to {{lastUserMessage}}", chunks: 2 }] },
  ],
};

/** A database of its own (the CLI uses the public schema of the database its URL names). */
async function freshDatabase(base: string, name: string): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

describe("several instances on one PostgreSQL", { skip }, () => {
  let db: { url: string; drop(): Promise<void> };
  let a: TestServer;
  let b: TestServer;
  const waitA = waitingTool();
  const asker = definePlugin({
    id: "asker",
    setup(api) {
      api.on("before_tool_call", (e) =>
        (e.params as { text?: string }).text === "asked" ? { requireApproval: { title: "Echo?" } } : undefined,
      );
    },
  });
  before(async () => {
    db = await freshDatabase(BASE_URL as string, `gh_mi_${process.pid}`);
    const store = { kind: "postgres" as const, url: db.url };
    const config = { approvals: { mode: "client" as const }, limits: { runsPerPrincipal: 16 } };
    a = await startTestServer(SCRIPT, { store, tools: [waitA.tool, echoTool], plugins: [asker], config });
    b = await startTestServer(SCRIPT, { store, tools: [waitingTool().tool, echoTool], plugins: [asker], config });
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await db?.drop();
  });

  test("one service: a session made on A runs on B; concurrent same-session runs over both never interleave, none lost or doubled", async () => {
    const session = await api(a, "POST", "/v1/sessions", { body: { title: "shared" } });
    const turns = Array.from({ length: 12 }, (_, i) => `turn ${i}`);
    const results = await Promise.all(
      turns.map((prompt, i) =>
        api(i % 2 === 0 ? a : b, "POST", `/v1/sessions/${session.body.id}/runs`, { body: { prompt } }),
      ),
    );
    for (const r of results) assert.equal(r.body.outcome, "completed", JSON.stringify(r.body));
    const detail = await api(b, "GET", `/v1/sessions/${session.body.id}`);
    const messages = detail.body.messages as { runId: string; role: string; parts: { text: string }[] }[];
    assert.equal(messages.length, 24, "every turn stored once: a prompt and its answer");
    for (let i = 0; i < messages.length; i += 2) {
      const [user, answer] = [messages[i], messages[i + 1]];
      assert.equal(user?.role, "user");
      assert.equal(answer?.runId, user?.runId, "a run's messages are contiguous");
      assert.equal(answer?.parts[0]?.text, `answer to ${user?.parts[0]?.text}`);
    }
    assert.deepEqual(
      messages
        .filter((m) => m.role === "user")
        .map((m) => m.parts[0]?.text)
        .sort(),
      [...turns].sort(),
    );
  });

  test("a cancel sent to instance B stops the run running on instance A", async () => {
    const session = await api(a, "POST", "/v1/sessions", { body: {} });
    const running = api(a, "POST", `/v1/sessions/${session.body.id}/runs`, { body: { prompt: "wait on A" } });
    await waitA.started;
    const [run] = (await api(b, "GET", `/v1/sessions/${session.body.id}`)).body.runs;
    const cancel = await api(b, "POST", `/v1/runs/${run.id}/cancel`);
    assert.equal(cancel.status, 202);
    assert.equal((await running).body.outcome, "cancelled");
  });

  test("an approval answered on instance B reaches the run streaming from instance A", async () => {
    const session = await api(a, "POST", "/v1/sessions", { body: {} });
    let runId = "";
    const answers: Promise<{ status: number }>[] = [];
    const streamed = await sse(
      a,
      `/v1/sessions/${session.body.id}/runs`,
      { prompt: "ask please" },
      {
        onEvent: (e) => {
          const event = JSON.parse(e.data) as RunEvent;
          if (event.type === "run-start") runId = event.runId;
          if (event.type === "approval-requested")
            answers.push(
              api(b, "POST", `/v1/runs/${runId}/approvals/${event.toolCallId}`, { body: { decision: "allow-once" } }),
            );
        },
      },
    );
    assert.equal((await answers[0])?.status, 202);
    const end = JSON.parse(streamed.events.at(-1)?.data ?? "{}") as Extract<RunEvent, { type: "run-end" }>;
    assert.equal(end.result.reply, "asked and answered");
  });
});

/**
 * A model file for the killed instance: a step with a canary and a quick tool call (stored once its
 * call is done: unchecked output in the store), then a tool call that never returns.
 */
const KILL_SCRIPT = {
  runs: [
    {
      turns: [
        { text: "UNCHECKED-CANARY-71a9 before the tool", toolCalls: [{ name: "Quick", input: {} }] },
        { text: "", toolCalls: [{ name: "Hang", input: {} }] },
        { text: "never" },
      ],
    },
  ],
};

/** A plugin with an output gate (so output counts only once checked), a quick tool, and one that hangs, telling the test it started. */
const KILL_PLUGIN = `
import { writeFileSync } from "node:fs";
export default {
  id: "hang",
  setup(api) {
    api.on("before_response_emit", () => undefined);
    api.registerTool({
      name: "Quick",
      description: "returns at once",
      inputSchema: { type: "object", properties: {} },
      async execute() {
        return "done";
      },
    });
    api.registerTool({
      name: "Hang",
      description: "never returns",
      inputSchema: { type: "object", properties: {} },
      async execute() {
        writeFileSync("started", "");
        await new Promise(() => {});
      },
    });
  },
};
`;

describe("an instance killed mid-run", { skip }, () => {
  const projectWith = tempProjects();

  test("SIGKILL: another instance recovers the killed instance's running run on its own (no next run needed), its unchecked output gone from every row", async () => {
    const db = await freshDatabase(BASE_URL as string, `gh_kill_${process.pid}`);
    try {
      const dir = await projectWith({
        "gatehouse.json": {
          model: "scripted:model.json",
          store: db.url,
          plugins: [{ path: "./hang.mjs" }],
        },
        "model.json": KILL_SCRIPT,
        "hang.mjs": KILL_PLUGIN,
      });
      const child = spawn(process.execPath, ["--import", import.meta.resolve("tsx"), MAIN, "serve", "--port", "0"], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? "", HOME: dir },
        stdio: ["ignore", "ignore", "pipe"],
      });
      let stderr = "";
      const url = await new Promise<string>((resolve, reject) => {
        child.stderr.setEncoding("utf8").on("data", (d: string) => {
          stderr += d;
          const m = /serving on (http:\/\/\S+)/.exec(stderr);
          if (m) resolve(m[1] as string);
        });
        child.on("close", () => reject(new Error(stderr)));
      });
      const killed = { url };
      const session = await api(killed, "POST", "/v1/sessions", { body: {} });
      void api(killed, "POST", `/v1/sessions/${session.body.id}/runs`, { body: { prompt: "go" } }).catch(
        () => undefined,
      );
      while (!existsSync(`${dir}/started`)) await new Promise((r) => setTimeout(r, 20));
      const before = await postgresRows(db.url, "public");
      assert.ok(
        before.some((s) => sinkHas(s, "UNCHECKED-CANARY-71a9")),
        "the unchecked answer was stored before the kill",
      );
      // The survivor is already serving: it finds the dead instance's lease in one of its sweeps.
      const other = await startTestServer(
        { runs: [{ turns: [{ text: "fresh answer" }] }] },
        { store: { kind: "postgres", url: db.url }, config: { recoverEveryMs: 50 } },
      );
      try {
        child.kill("SIGKILL");
        await new Promise((r) => child.once("close", r));
        const firstRun = async () => (await api(other, "GET", `/v1/sessions/${session.body.id}`)).body.runs[0];
        while ((await firstRun()).status === "running") await new Promise((r) => setTimeout(r, 50));
        // Recovered as interrupted (failed, detail interrupted): no policy decided it.
        assert.deepEqual(
          [(await firstRun()).status, (await firstRun()).detail],
          ["failed", "interrupted"],
          "the interrupted run is recovered, not left running",
        );
        const after = await postgresRows(db.url, "public");
        for (const sink of after)
          assert.ok(!sinkHas(sink, "UNCHECKED-CANARY-71a9"), `unchecked output left in ${sink.name}`);
        const next = await api(other, "POST", `/v1/sessions/${session.body.id}/runs`, { body: { prompt: "next" } });
        assert.equal(next.body.outcome, "completed");
      } finally {
        await other.close();
      }
    } finally {
      await db.drop();
    }
  });
});
