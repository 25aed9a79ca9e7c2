import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { echoTool } from "../runtime/helpers.js";
import { api, startTestServer, type TestServer } from "../server/helpers.js";
import { dropSchema, PG_URL, testSchema, whenPostgres } from "../store/pg.js";
import { consoleLogin, liveUntil } from "./helpers.js";
import { asker, firewall, SCRIPT } from "./world.js";

whenPostgres("the console across instances on one PostgreSQL", (url) => {
  describe("the console across two instances on one PostgreSQL", () => {
    const schema = testSchema();
    let a: TestServer;
    let b: TestServer;
    before(async () => {
      const options = {
        store: { kind: "postgres" as const, url, schema },
        tools: [echoTool],
        plugins: [asker, firewall],
        config: { approvals: { mode: "console" as const } },
      };
      a = await startTestServer(SCRIPT, options);
      b = await startTestServer(SCRIPT, options);
    });
    after(async () => {
      await a?.close();
      await b?.close();
      if (PG_URL) await dropSchema(PG_URL, schema);
    });

    test("a run waiting on instance A is in instance B's live view with its ask; answered from a console login on B, it continues on A; its timeline, recorded on A, reads the same on B; the login works on A too", async () => {
      const ops = await a.key("ops", { admin: true });
      const alice = await a.key("alice");
      const session = (await api(a, "POST", "/v1/sessions", { key: alice, body: { title: "across" } })).body.id;
      await api(a, "POST", `/v1/sessions/${session}/runs`, { key: alice, body: { prompt: "forbidden" } });
      const running = api(a, "POST", `/v1/sessions/${session}/runs`, { key: alice, body: { prompt: "ask now" } });

      const login = await consoleLogin(b.url, ops);
      assert.equal(login.status, 200);
      // The ask and the run's steps so far, recorded on A, stream into B's view.
      const seen = await liveUntil(b.url, { cookie: login.cookie }, (live) =>
        live.approvals.length > 0 && live.runs[0]?.steps.some((s) => s.kind === "model-call") ? live : undefined,
      );
      const [ask] = seen.approvals;
      assert.equal(ask?.sessionId, session);
      assert.equal(seen.runs[0]?.principal, "alice");

      const answered = await api(b, "POST", `/v1/runs/${ask?.runId}/approvals/${ask?.toolCallId}`, {
        headers: { cookie: login.cookie, "x-gatehouse-csrf": login.csrf },
        body: { decision: "allow-once" },
      });
      assert.equal(answered.status, 202);
      assert.equal((await running).body.reply, "After the ask.");

      const [onA, onB] = await Promise.all(
        [a, b].map(async (s) => (await api(s, "GET", `/v1/sessions/${session}/timeline`, { key: ops })).body),
      );
      assert.deepEqual(onA, onB);
      const [blocked, asked] = onB.runs;
      assert.equal(
        blocked.steps.find((s: { kind: string }) => s.kind === "hook").pluginId,
        "firewall",
        "the gate's verdict, recorded on A",
      );
      const approval = asked.steps.find((s: { kind: string }) => s.kind === "approval");
      assert.deepEqual([approval.outcome, approval.pluginId], ["approve", "console"]);
      assert.deepEqual((await api(b, "GET", "/v1/live", { key: ops })).body, { runs: [], approvals: [] });
      assert.equal((await api(a, "GET", "/v1/sessions?scope=all", { headers: { cookie: login.cookie } })).status, 200);
    });
  });
});
