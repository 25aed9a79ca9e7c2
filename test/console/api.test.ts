import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { LIVE_STREAMS_PER_PRINCIPAL } from "../../src/server/console/index.js";
import { openStore } from "../../src/store/index.js";
import { echoTool, testGatehouse } from "../runtime/helpers.js";
import { api, startTestServer, type TestServer } from "../server/helpers.js";
import { builtConsole, consoleLogin, liveUntil, until } from "./helpers.js";
import { asker, firewall, NOTICE, REASON, SCRIPT, TOOL_NOTICE, toolGuard, verifier } from "./world.js";

/** A request naming a Host of its choosing (fetch does not let one set it). */
function withHost(url: string, method: string, path: string, host: string, body?: string): Promise<{ status: number }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${path}`,
      { method, headers: { host, ...(body === undefined ? {} : { "content-type": "application/json" }) } },
      (res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode ?? 0 }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

interface Step {
  kind: string;
  name: string;
  pluginId: string | null;
  outcome: string | null;
  category: string | null;
  durationMs: number | null;
  offsetMs: number;
}

describe("the console's API: who sees what, figures, timelines, audit, login", () => {
  let dir: string;
  let server: TestServer;
  let admin: string;
  let alice: string;
  let bob: string;
  let aliceSession: string;
  let bobSession: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "gatehouse-console-api-"));
    server = await startTestServer(SCRIPT, {
      store: { kind: "sqlite", path: join(dir, "gatehouse.db") },
      tools: [echoTool],
      plugins: [firewall, toolGuard, verifier],
      console: { assetsDir: await builtConsole() },
    });
    admin = await server.key("ops", { admin: true });
    alice = await server.key("alice");
    bob = await server.key("bob");
    aliceSession = (await api(server, "POST", "/v1/sessions", { key: alice, body: { title: "Refund for order 42" } }))
      .body.id;
    for (const prompt of ["hello", "forbidden: show the secrets", "delete everything", "tool please"])
      await api(server, "POST", `/v1/sessions/${aliceSession}/runs`, { key: alice, body: { prompt } });
    bobSession = (await api(server, "POST", "/v1/sessions", { key: bob, body: { key: "bob-chat" } })).body.id;
    await api(server, "POST", `/v1/sessions/${bobSession}/runs`, { key: bob, body: { prompt: "hello" } });
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("an admin key sees every session and reads any; a principal's key sees its own only (scope=all is 403, another's session 404)", async () => {
    const all = await api(server, "GET", "/v1/sessions?scope=all", { key: admin });
    assert.equal(all.status, 200);
    assert.deepEqual(new Set(all.body.data.map((s: { id: string }) => s.id)), new Set([aliceSession, bobSession]));
    assert.equal((await api(server, "GET", `/v1/sessions/${bobSession}`, { key: admin })).body.principal, "bob");
    assert.equal((await api(server, "GET", `/v1/sessions/${bobSession}/timeline`, { key: admin })).status, 200);

    assert.equal((await api(server, "GET", "/v1/sessions?scope=all", { key: alice })).status, 403);
    const mine = await api(server, "GET", "/v1/sessions", { key: alice });
    assert.deepEqual(
      mine.body.data.map((s: { id: string }) => s.id),
      [aliceSession],
    );
    for (const path of [`/v1/sessions/${bobSession}`, `/v1/sessions/${bobSession}/timeline`])
      assert.equal((await api(server, "GET", path, { key: alice })).status, 404, path);
    assert.equal((await api(server, "GET", `/v1/audit?sessionId=${bobSession}`, { key: alice })).status, 404);
    assert.equal((await api(server, "GET", "/v1/config", { key: alice })).status, 403);
  });

  test("the listing's figures: principal, runs, blocks, size, last activity; search by title, id or key; filters by principal and blocks", async () => {
    const all = (await api(server, "GET", "/v1/sessions?scope=all", { key: admin })).body.data;
    const a = all.find((s: { id: string }) => s.id === aliceSession);
    assert.equal(a.title, "Refund for order 42");
    assert.equal(a.principal, "alice");
    assert.equal(a.runs, 4);
    assert.equal(a.blocks, 2, "the firewall's block and the tool guard's");
    assert.ok(a.messages >= 6, `size ${a.messages}`);
    assert.equal(a.lastActivityAt, a.updatedAt);
    assert.ok(Date.parse(a.lastActivityAt) >= Date.parse(a.createdAt));

    const ids = async (q: string) =>
      (await api(server, "GET", `/v1/sessions?scope=all&${q}`, { key: admin })).body.data.map(
        (s: { id: string }) => s.id,
      );
    assert.deepEqual(await ids("q=REFUND"), [aliceSession], "title, any case");
    assert.deepEqual(await ids("q=bob-ch"), [bobSession], "key");
    assert.deepEqual(await ids(`q=${bobSession.slice(0, 8)}`), [bobSession], "id");
    assert.deepEqual(await ids("principal=bob"), [bobSession]);
    assert.deepEqual(await ids("blocked=true"), [aliceSession]);
    assert.deepEqual(await ids("blocked=false"), [bobSession]);
    assert.deepEqual(await ids("q=nothing-like-this"), []);
    const paged = await api(server, "GET", "/v1/sessions?scope=all&limit=1", { key: admin });
    assert.equal(paged.body.data.length, 1);
    assert.equal(paged.body.more, true);
  });

  test("a blocked run's timeline shows the gate's verdict (hook, plugin, outcome, category); a blocked tool call its own; each step timed, in lifecycle order; no reason anywhere", async () => {
    const timeline = (await api(server, "GET", `/v1/sessions/${aliceSession}/timeline`, { key: alice })).body;
    const [plain, blocked, guarded] = timeline.runs as { status: string; recorded: boolean; steps: Step[] }[];
    assert.ok(plain && blocked && guarded);
    assert.equal(blocked.status, "blocked");
    assert.ok(blocked.recorded);
    const kinds = blocked.steps.map((s) => s.kind);
    assert.equal(kinds[0], "run-start");
    assert.equal(kinds.at(-1), "run-end");
    assert.ok(!kinds.includes("model-call"), "a blocked prompt never reaches the model");
    const verdict = blocked.steps.find((s) => s.kind === "hook" && s.name === "before_agent_run");
    assert.deepEqual(
      { plugin: verdict?.pluginId, outcome: verdict?.outcome, category: verdict?.category },
      { plugin: "firewall", outcome: "block", category: "secrets" },
    );
    assert.equal(typeof verdict?.durationMs, "number");
    assert.equal(blocked.steps.at(-1)?.outcome, "blocked");

    const model = plain.steps.find((s) => s.kind === "model-call");
    assert.equal(model?.name, "scripted:<inline>");
    assert.equal(model?.outcome, "ok");
    assert.ok((model?.durationMs ?? -1) >= 0);
    const tool = guarded.steps.find((s) => s.kind === "tool-call");
    assert.deepEqual(
      { name: tool?.name, outcome: tool?.outcome, plugin: tool?.pluginId },
      { name: "Echo", outcome: "blocked", plugin: "tool-guard" },
    );
    const order = guarded.steps.map((s) => s.kind).filter((k) => k !== "hook");
    assert.deepEqual(order, ["run-start", "model-call", "tool-call", "model-call", "run-end"]);

    const detail = (await api(server, "GET", `/v1/sessions/${aliceSession}`, { key: alice })).body;
    const notice = detail.messages.find((m: { notice?: unknown }) => m.notice);
    assert.deepEqual(notice.notice, { blockedBy: "firewall", hook: "before_agent_run", category: "secrets" });
    assert.equal(notice.parts[0].text, NOTICE);
    assert.ok(JSON.stringify(detail).includes(TOOL_NOTICE), "a tool's block notice is what the model saw, stored");
    for (const path of [
      `/v1/sessions/${aliceSession}`,
      `/v1/sessions/${aliceSession}/timeline`,
      `/v1/audit?sessionId=${aliceSession}`,
      "/v1/audit",
      "/v1/audit/summary",
      "/v1/audit/export?format=jsonl",
      "/v1/sessions?scope=all",
      "/v1/live",
      "/v1/config",
    ]) {
      const body = JSON.stringify((await api(server, "GET", path, { key: admin })).body);
      assert.ok(!body.includes(REASON), `a reason in ${path}`);
      assert.ok(!body.includes("forbidden: show the secrets"), `the blocked prompt in ${path}`);
    }
  });

  test("a retry: a verifier's request for another pass is a step between the two model calls", async () => {
    const session = (await api(server, "POST", "/v1/sessions", { key: alice, body: {} })).body.id;
    const result = await api(server, "POST", `/v1/sessions/${session}/runs`, {
      key: alice,
      body: { prompt: "verify this" },
    });
    assert.equal(result.body.reply, "A checked answer.");
    const [run] = (await api(server, "GET", `/v1/sessions/${session}/timeline`, { key: alice })).body.runs as {
      steps: Step[];
    }[];
    const shown = (run?.steps ?? [])
      .filter((s) => s.kind !== "hook" || s.name === "before_agent_finalize")
      .map((s) => [s.kind, s.kind === "hook" || s.kind === "retry" ? s.outcome : s.name]);
    assert.deepEqual(shown, [
      ["run-start", "api"],
      ["model-call", "scripted:<inline>"],
      ["hook", "modify"],
      ["retry", "revise"],
      ["model-call", "scripted:<inline>"],
      ["hook", "pass"],
      ["run-end", "api"],
    ]);
  });

  test("a run made outside serve (the library, on the same store) is listed without a principal and its timeline rebuilt from the store: audit decisions and stored tool calls", async () => {
    const store = await openStore({ kind: "sqlite", path: join(dir, "gatehouse.db") });
    const outside = testGatehouse(SCRIPT, { store, plugins: [toolGuard] });
    let sessionId = "";
    try {
      const first = await outside.gatehouse.run({ prompt: "tool please" });
      sessionId = first.sessionId;
      await outside.gatehouse.run({ prompt: "delete everything", sessionId });
    } finally {
      await outside.gatehouse.close();
    }
    const listed = (await api(server, "GET", "/v1/sessions?scope=all", { key: admin })).body.data;
    assert.equal(listed.find((s: { id: string }) => s.id === sessionId)?.principal, null);
    assert.equal((await api(server, "GET", `/v1/sessions/${sessionId}`, { key: alice })).status, 404);
    const runs = (await api(server, "GET", `/v1/sessions/${sessionId}/timeline`, { key: admin })).body.runs as {
      recorded: boolean;
      steps: Step[];
    }[];
    assert.deepEqual(
      runs.map((r) => r.recorded),
      [false, false],
    );
    assert.deepEqual(
      runs[0]?.steps.map((s) => [s.kind, s.name, s.outcome]),
      [
        ["run-start", "api", null],
        ["tool-call", "Echo", "ok"],
        ["run-end", "api", "completed"],
      ],
    );
    const guard = runs[1]?.steps.find((s) => s.kind === "hook");
    assert.deepEqual([guard?.name, guard?.pluginId, guard?.outcome], ["before_tool_call", "tool-guard", "block"]);
    assert.equal(runs[1]?.steps.find((s) => s.kind === "tool-call")?.outcome, "error");
  });

  test("audit: filtered by hook, plugin, outcome, category, principal and time; blocks per plugin per hour and day; exported as CSV and JSON Lines; a principal sees only its own", async () => {
    const data = async (q: string, key = admin) =>
      (await api(server, "GET", `/v1/audit?${q}`, { key })).body.data as { pluginId: string; principal: string }[];
    assert.deepEqual(
      (await data("pluginId=firewall")).map((r) => r.pluginId),
      ["firewall"],
    );
    assert.deepEqual(
      (await data("hook=before_tool_call&principal=alice")).map((r) => r.pluginId),
      ["tool-guard"],
    );
    assert.equal((await data("category=secrets")).length, 1);
    assert.equal((await data("outcome=claim")).length, 0);
    assert.equal((await data(`since=${new Date(Date.now() + 60_000).toISOString()}`)).length, 0);
    assert.ok((await data(`until=${new Date(Date.now() + 60_000).toISOString()}`)).length >= 2);
    assert.equal((await data("principal=bob")).length, 0);
    assert.equal((await api(server, "GET", "/v1/audit?principal=alice", { key: bob })).status, 403);
    assert.equal((await data("", bob)).length, 0, "bob's session had no decisions");
    assert.ok((await data("", alice)).every((r) => r.principal === "alice"));

    const byHour = (await api(server, "GET", "/v1/audit/summary?principal=alice", { key: admin })).body;
    assert.equal(byHour.bucket, "hour");
    assert.equal(byHour.outcome, "block");
    assert.equal(byHour.buckets.length, 1);
    assert.equal(new Date(byHour.buckets[0]).getUTCMinutes(), 0);
    const totals = Object.fromEntries(
      byHour.series.map((s: { pluginId: string; counts: number[] }) => [s.pluginId, s.counts.reduce((a, b) => a + b)]),
    );
    assert.equal(totals.firewall, 1);
    assert.equal(totals["tool-guard"], 1);
    const byDay = (await api(server, "GET", "/v1/audit/summary?bucket=day", { key: admin })).body;
    assert.equal(new Date(byDay.buckets[0]).getUTCHours(), 0);

    const csv = await fetch(`${server.url}/v1/audit/export?format=csv&pluginId=firewall`, {
      headers: { authorization: `Bearer ${admin}` },
    });
    assert.match(csv.headers.get("content-type") ?? "", /^text\/csv/);
    assert.match(csv.headers.get("content-disposition") ?? "", /^attachment; filename="gatehouse-audit-.*\.csv"$/);
    const lines = (await csv.text()).trimEnd().split("\r\n");
    assert.equal(lines[0], "at,hook,pluginId,outcome,category,principal,sessionId,runId,id");
    assert.equal(lines.length, 2);
    assert.match(lines[1] ?? "", /,before_agent_run,firewall,block,secrets,alice,/);
    const jsonl = await fetch(`${server.url}/v1/audit/export?format=jsonl`, {
      headers: { authorization: `Bearer ${alice}` },
    });
    const records = (await jsonl.text())
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.equal(records.length, 2);

    // A principal is any name: one a spreadsheet would run as a formula is exported defused.
    const formula = await server.key("=HYPERLINK(1)");
    const session = (await api(server, "POST", "/v1/sessions", { key: formula, body: {} })).body.id;
    await api(server, "POST", `/v1/sessions/${session}/runs`, { key: formula, body: { prompt: "forbidden" } });
    const defused = await fetch(`${server.url}/v1/audit/export?format=csv&sessionId=${session}`, {
      headers: { authorization: `Bearer ${admin}` },
    });
    const row = (await defused.text()).split("\r\n")[1] ?? "";
    assert.ok(row.includes(",'=HYPERLINK(1),"), row);
  });
});

describe("console logins and pages", () => {
  test("a key becomes an httpOnly SameSite=Strict cookie and a CSRF token; the cookie reads the API; a change without the token or from another origin is 403; logout and revoking the key end it", async () => {
    const server = await startTestServer(SCRIPT, { console: { assetsDir: await builtConsole() } });
    try {
      const keyText = await server.key("carol");
      assert.equal((await consoleLogin(server.url, "ghk_0000000000000000_wrong")).status, 401);
      assert.equal((await consoleLogin(server.url)).status, 401, "keys exist: a login needs one");
      const login = await consoleLogin(server.url, keyText);
      assert.equal(login.status, 200);
      assert.match(login.setCookie, /^gatehouse_console=[A-Za-z0-9_-]{43};/);
      assert.match(login.setCookie, /HttpOnly/i);
      assert.match(login.setCookie, /SameSite=Strict/i);
      assert.match(login.setCookie, /Path=\//);
      assert.ok(!login.setCookie.includes(keyText));
      const cookie = { cookie: login.cookie };
      const me = await api(server, "GET", "/console/me", { headers: cookie });
      assert.deepEqual(me.body, { authenticated: true, principal: "carol", admin: false, csrf: login.csrf });

      const created = await api(server, "POST", "/v1/sessions", {
        headers: { ...cookie, "x-gatehouse-csrf": login.csrf },
        body: { title: "from the console" },
      });
      assert.equal(created.status, 201);
      assert.equal((await api(server, "GET", "/v1/sessions", { headers: cookie })).body.data.length, 1);
      const noToken = await api(server, "POST", "/v1/sessions", { headers: cookie, body: {} });
      assert.equal(noToken.status, 403);
      assert.equal(noToken.body.error.code, "csrf_failed");
      const wrongToken = await api(server, "POST", "/v1/sessions", {
        headers: { ...cookie, "x-gatehouse-csrf": `${login.csrf.slice(0, -1)}x` },
        body: {},
      });
      assert.equal(wrongToken.status, 403);
      const otherOrigin = await api(server, "POST", "/v1/sessions", {
        headers: { ...cookie, "x-gatehouse-csrf": login.csrf, origin: "https://evil.example" },
        body: {},
      });
      assert.equal(otherOrigin.status, 403);
      assert.equal((await api(server, "GET", "/v1/sessions", { headers: cookie })).body.data.length, 1);

      const logout = await api(server, "POST", "/console/logout", {
        headers: { ...cookie, "x-gatehouse-csrf": login.csrf },
      });
      assert.equal(logout.status, 204);
      assert.equal((await api(server, "GET", "/v1/sessions", { headers: cookie })).status, 401);

      const again = await consoleLogin(server.url, keyText);
      assert.equal((await api(server, "GET", "/v1/sessions", { headers: { cookie: again.cookie } })).status, 200);
      const [id] = (await server.service.records.listApiKeys()).map((k) => k.id);
      await server.service.records.revokeApiKey(id as string, new Date().toISOString());
      assert.equal((await api(server, "GET", "/v1/sessions", { headers: { cookie: again.cookie } })).status, 401);
      assert.equal(
        (await api(server, "GET", "/console/me", { headers: { cookie: again.cookie } })).body.authenticated,
        false,
      );
    } finally {
      await server.close();
    }
  });

  test("the open loopback: the console logs in as local (an admin) without a key until a first key exists; a request naming another host is refused", async () => {
    const server = await startTestServer(SCRIPT, { console: { assetsDir: await builtConsole() } });
    try {
      assert.deepEqual((await api(server, "GET", "/console/me")).body, { authenticated: false, keyRequired: false });
      const local = await consoleLogin(server.url);
      assert.equal(local.status, 200);
      const me = await api(server, "GET", "/console/me", { headers: { cookie: local.cookie } });
      assert.equal(me.body.principal, "local");
      assert.equal(me.body.admin, true);
      // A page on another name that resolves here (DNS rebinding) sends its own Host.
      assert.equal((await withHost(server.url, "GET", "/v1/sessions", "attacker.example:8787")).status, 401);
      assert.equal((await withHost(server.url, "POST", "/console/login", "attacker.example", "{}")).status, 401);
      assert.equal((await withHost(server.url, "GET", "/v1/sessions", "localhost:8787")).status, 200);
      await server.key("dave");
      // The key cache of the open loopback lasts a second.
      await until("the local login to end once a key exists", async () => {
        const answer = await api(server, "GET", "/v1/sessions", { headers: { cookie: local.cookie } });
        return answer.status === 401;
      });
    } finally {
      await server.close();
    }
  });

  test("pages: the console under a strict CSP with Trusted Types, no framing, nosniff; API answers under a CSP that allows nothing; only built files are served", async () => {
    const server = await startTestServer(SCRIPT, { console: { assetsDir: await builtConsole() } });
    const unbuilt = await startTestServer(SCRIPT, { console: { assetsDir: join(tmpdir(), "no-such-console") } });
    try {
      const root = await fetch(`${server.url}/`, { redirect: "manual" });
      assert.equal(root.status, 302);
      assert.equal(root.headers.get("location"), "/console/");
      const page = await fetch(`${server.url}/console/`);
      assert.equal(page.status, 200);
      const csp = page.headers.get("content-security-policy") ?? "";
      for (const directive of [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "frame-ancestors 'none'",
        "require-trusted-types-for 'script'",
      ])
        assert.ok(csp.includes(directive), directive);
      assert.ok(!/unsafe|https?:|\*/.test(csp), csp);
      assert.equal(page.headers.get("x-content-type-options"), "nosniff");
      assert.equal(page.headers.get("x-frame-options"), "DENY");
      const html = await page.text();
      assert.ok(!/<script>|<style|\sstyle=|\son[a-z]+=/i.test(html), "no inline script, style or handler");
      assert.ok(!/https?:\/\//.test(html), "nothing from another origin");
      const script = await fetch(`${server.url}/console/assets/app.js`);
      assert.match(script.headers.get("content-type") ?? "", /^text\/javascript/);
      assert.equal(
        (
          await fetch(`${server.url}/console/assets/app.js`, {
            headers: { "if-none-match": script.headers.get("etag") ?? "" },
          })
        ).status,
        304,
      );
      const api = await fetch(`${server.url}/v1/sessions`);
      assert.equal(api.headers.get("content-security-policy"), "default-src 'none'; frame-ancestors 'none'");
      for (const path of [
        "/console/assets/../../package.json",
        "/console/assets/%2e%2e/%2e%2e/package.json",
        "/console/assets/nope.js",
      ])
        assert.equal((await fetch(`${server.url}${path}`)).status, 404, path);
      const missing = await fetch(`${unbuilt.url}/console/`);
      assert.equal(missing.status, 404);
      assert.match(((await missing.json()) as { error: { message: string } }).error.message, /not built/);
    } finally {
      await server.close();
      await unbuilt.close();
    }
  });

  test("configuration: for admin keys; a service opened from code shows its Gatehouse's plugins and registrations, and no permission rules", async () => {
    const server = await startTestServer(SCRIPT, { plugins: [firewall] });
    try {
      const config = (await api(server, "GET", "/v1/config")).body;
      const plugin = config.plugins.find((p: { id: string }) => p.id === "firewall");
      assert.deepEqual(
        plugin.registrations.map((r: { hook: string }) => r.hook),
        ["before_agent_run"],
      );
      assert.deepEqual(config.permissions, { rules: [], note: "none configured" });
      assert.equal(config.settings, null);
    } finally {
      await server.close();
    }
  });
});

describe("live view and approval asks", () => {
  test("a principal may hold a few live streams open at once; one more is 429 until one closes", async () => {
    const server = await startTestServer(SCRIPT);
    const open: AbortController[] = [];
    try {
      const stream = async () => {
        const controller = new AbortController();
        const res = await fetch(`${server.url}/v1/live/events`, { signal: controller.signal });
        if (res.status === 200) open.push(controller);
        else await res.body?.cancel();
        return res.status;
      };
      for (let i = 0; i < LIVE_STREAMS_PER_PRINCIPAL; i++) assert.equal(await stream(), 200);
      assert.equal(await stream(), 429);
      open.shift()?.abort();
      await until("a stream slot to free up", async () => (await stream()) === 200);
    } finally {
      for (const c of open) c.abort();
      await server.close();
    }
  });

  test("a run in progress is listed with its steps; its approval ask waits (mode console) and an answer sent like any client's lets it continue; the audit trail says the console answered", async () => {
    const server = await startTestServer(SCRIPT, {
      tools: [echoTool],
      plugins: [asker],
      config: { approvals: { mode: "console" } },
    });
    try {
      const ops = await server.key("ops", { admin: true });
      const erin = await server.key("erin");
      const session = (await api(server, "POST", "/v1/sessions", { key: erin, body: { title: "asks" } })).body.id;
      // Not streaming: in console mode the ask still waits, for the console.
      const running = api(server, "POST", `/v1/sessions/${session}/runs`, { key: erin, body: { prompt: "ask now" } });
      const login = await consoleLogin(server.url, ops);
      const cookie = { cookie: login.cookie };
      const ask = await liveUntil(server.url, cookie, (live) => live.approvals[0]);
      assert.equal(ask.toolName, "Echo");
      assert.match(ask.title, /^Echo something\?/);
      assert.equal(ask.sessionId, session);
      const seen = await liveUntil(server.url, { authorization: `Bearer ${erin}` }, (live) => live.runs[0]);
      assert.equal(seen.principal, "erin");
      assert.ok(seen.steps.some((s) => s.kind === "approval" && s.outcome === "asked"));
      assert.deepEqual(
        (await api(server, "GET", "/v1/live", { key: await server.key("frank") })).body,
        { runs: [], approvals: [] },
        "another principal sees nothing of it",
      );

      const path = `/v1/runs/${ask.runId}/approvals/${ask.toolCallId}`;
      assert.equal(
        (await api(server, "POST", path, { headers: cookie, body: { decision: "allow-once" } })).status,
        403,
      );
      const answered = await api(server, "POST", path, {
        headers: { ...cookie, "x-gatehouse-csrf": login.csrf },
        body: { decision: "allow-once" },
      });
      assert.equal(answered.status, 202);
      const result = await running;
      assert.equal(result.body.outcome, "completed");
      assert.equal(result.body.reply, "After the ask.");
      assert.deepEqual((await api(server, "GET", "/v1/live", { key: ops })).body, { runs: [], approvals: [] });
      const audit = (await api(server, "GET", `/v1/audit?sessionId=${session}`, { key: erin })).body.data;
      assert.ok(
        audit.some(
          (r: { hook: string; pluginId: string; outcome: string }) =>
            r.hook === "approval" && r.pluginId === "console" && r.outcome === "approve",
        ),
      );
      const steps = (await api(server, "GET", `/v1/sessions/${session}/timeline`, { key: erin })).body.runs[0]
        .steps as Step[];
      const approval = steps.find((s) => s.kind === "approval");
      assert.deepEqual([approval?.outcome, approval?.pluginId], ["approve", "console"]);
      assert.ok((approval?.durationMs ?? -1) >= 0);
      assert.equal(steps.find((s) => s.kind === "tool-call")?.outcome, "ok");
    } finally {
      await server.close();
    }
  });
});
