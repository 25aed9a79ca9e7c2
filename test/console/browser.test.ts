import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import { echoTool } from "../runtime/helpers.js";
import { api, startTestServer, type TestServer } from "../server/helpers.js";
import { builtConsole, launchBrowser, logIn, openPage, type PageProblems, screenshot } from "./helpers.js";
import { asker, firewall, NOTICE, REASON, SCRIPT, toolGuard, XSS_TITLE } from "./world.js";

/**
 * The console in headless Chromium (Debian's package, driven by playwright-core): log in, the
 * sessions, a session with a blocked run, the audit filtered and exported, an approval answered
 * while the run waits, the configuration — and text that tries to become markup stays text.
 * One browser for the file; each view's screenshot is kept in test-artifacts/console/.
 */
describe("the web console in a browser", () => {
  let dir: string;
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let problems: PageProblems;
  let admin: string;
  let alice: string;
  let refund: string;
  let xss: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "gatehouse-console-browser-"));
    const [assetsDir, launched] = await Promise.all([builtConsole(), launchBrowser()]);
    browser = launched;
    server = await startTestServer(SCRIPT, {
      store: { kind: "sqlite", path: join(dir, "gatehouse.db") },
      tools: [echoTool],
      plugins: [firewall, toolGuard, asker],
      config: { approvals: { mode: "console" } },
      console: { assetsDir },
    });
    admin = await server.key("ops", { admin: true });
    alice = await server.key("alice");
    const bob = await server.key("bob");
    refund = (await api(server, "POST", "/v1/sessions", { key: alice, body: { title: "Refund for order 42" } })).body
      .id;
    for (const prompt of ["hello", "forbidden: the secrets", "delete everything", "tool please"])
      await api(server, "POST", `/v1/sessions/${refund}/runs`, { key: alice, body: { prompt } });
    xss = (await api(server, "POST", "/v1/sessions", { key: alice, body: { title: XSS_TITLE } })).body.id;
    await api(server, "POST", `/v1/sessions/${xss}/runs`, { key: alice, body: { prompt: "xss please" } });
    const other = (await api(server, "POST", "/v1/sessions", { key: bob, body: { title: "Bob's question" } })).body.id;
    await api(server, "POST", `/v1/sessions/${other}/runs`, { key: bob, body: { prompt: "hello" } });
    ({ page, problems } = await openPage(browser));
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const main = () => page.locator("main");
  const noProblems = () => {
    assert.deepEqual(problems.violations, [], "no Content-Security-Policy or Trusted Types violation");
    assert.deepEqual(problems.errors, [], "no script error");
  };

  test("log in with a key: the sessions view lists every session with its figures; the key stays out of the page; search narrows the list", async () => {
    await page.goto(`${server.url}/console/`);
    await page.getByLabel("API key").waitFor();
    await screenshot(page, "login");
    await logIn(page, server.url, admin);
    const rows = page.getByTestId("sessions").locator("tbody tr");
    await rows.nth(2).waitFor();
    assert.equal(await rows.count(), 3);
    const row = rows.filter({ hasText: "Refund for order 42" });
    const cells = (await row.locator("td").allTextContents()).map((t) => t.trim());
    assert.deepEqual([cells[1], cells[3], cells[4]], ["alice", "4", "2"], "principal, runs, blocks");
    assert.match(cells[2] ?? "", /ago$/, "last activity");
    assert.match(cells[5] ?? "", /^\d+ msg$/, "size");
    assert.equal(await page.evaluate("document.cookie"), "", "the login cookie is httpOnly");
    assert.equal(await page.evaluate("JSON.stringify(localStorage) + JSON.stringify(sessionStorage)"), "{}{}");
    assert.ok(!(await page.content()).includes(admin), "the key is not kept in the page");
    await screenshot(page, "sessions");

    await page.getByRole("searchbox").fill("ORDER 42");
    await page.getByRole("button", { name: "Search" }).click();
    await rows.filter({ hasText: "Bob's question" }).waitFor({ state: "detached" });
    assert.equal(await rows.count(), 1);
    await page.getByLabel("Blocks").selectOption("false");
    await page.getByText("No sessions.").waitFor();
    noProblems();
  });

  test("a session with a blocked run: the block notice among the messages as stored, the verdict on the run's timeline", async () => {
    await page.goto(`${server.url}/console/#/sessions/${refund}`);
    const notice = page.getByTestId("notice");
    await notice.waitFor();
    assert.equal((await notice.textContent())?.trim(), "block notice · firewall · before_agent_run · secrets");
    const noticeMessage = page.locator(".message.notice");
    assert.ok((await noticeMessage.textContent())?.includes(NOTICE));
    const blocked = page.getByTestId("run-2");
    assert.equal(await blocked.getAttribute("data-status"), "blocked");
    const verdict = blocked.locator('.step[data-kind="hook"][data-outcome="block"]');
    assert.equal(await verdict.count(), 1);
    assert.deepEqual(
      await Promise.all(
        [".name", ".plugin", ".outcome .pill", ".pill.category"].map((c) => verdict.locator(c).first().textContent()),
      ),
      ["before_agent_run", "firewall", "block", "secrets"],
    );
    const toolVerdict = page.getByTestId("run-3").locator('.step[data-kind="tool-call"][data-outcome="blocked"]');
    assert.deepEqual(
      await Promise.all([".name", ".plugin", ".outcome .pill"].map((c) => toolVerdict.locator(c).textContent())),
      ["Echo", "tool-guard", "blocked"],
    );
    const text = (await main().textContent()) ?? "";
    assert.ok(!text.includes(REASON), "never a reason");
    assert.ok(!text.includes("forbidden: the secrets"), "never what the gate removed");
    await screenshot(page, "session");
    noProblems();
  });

  test("the audit: filtering by plugin narrows the records and the chart; the CSV export downloads what is shown", async () => {
    await page.goto(`${server.url}/console/#/audit`);
    const rows = page.getByTestId("audit").locator("tbody tr");
    await rows.nth(1).waitFor();
    assert.equal(await rows.count(), 2);
    assert.equal(await page.getByTestId("chart").locator("canvas").count(), 1);
    await screenshot(page, "audit");

    await page.getByLabel("Plugin", { exact: true }).fill("tool-guard");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(/pluginId=tool-guard/);
    await rows.nth(1).waitFor({ state: "detached" });
    assert.equal(await rows.count(), 1);
    assert.deepEqual((await rows.first().locator("td").allTextContents()).slice(1, 4), [
      "before_tool_call",
      "tool-guard",
      "block",
    ]);
    assert.deepEqual(await page.getByTestId("chart-totals").locator("td").allTextContents(), ["tool-guard", "1"]);

    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("link", { name: "CSV" }).click(),
    ]);
    assert.match(download.suggestedFilename(), /^gatehouse-audit-.*\.csv$/);
    const csv = readFileSync(await download.path(), "utf8")
      .trimEnd()
      .split("\r\n");
    assert.equal(csv.length, 2);
    assert.match(csv[1] ?? "", /before_tool_call,tool-guard,block,,alice,/);
    noProblems();
  });

  test("live: an approval ask waits in the console, shown inert; Allow once lets the run continue to its answer", async () => {
    const session = (await api(server, "POST", "/v1/sessions", { key: alice, body: { title: "Needs a human" } })).body
      .id;
    await page.goto(`${server.url}/console/#/live`);
    await page.getByText("No run in progress.").waitFor();
    const running = api(server, "POST", `/v1/sessions/${session}/runs`, { key: alice, body: { prompt: "ask first" } });
    const ask = page.getByTestId("ask");
    await ask.waitFor();
    assert.equal(await ask.locator(".title").textContent(), "Echo something? <b>bold</b> ⟨U+202E⟩txt.exe");
    assert.equal(await ask.locator("b").count(), 0, "the title's markup is text");
    const run = page.getByTestId("live-run");
    await run.locator('.step[data-kind="approval"]').waitFor();
    assert.match((await run.textContent()) ?? "", /Needs a human/);
    await screenshot(page, "live");

    await ask.getByRole("button", { name: "Allow once" }).click();
    const result = await running;
    assert.equal(result.body.outcome, "completed");
    assert.equal(result.body.reply, "After the ask.");
    await page.getByText("No run in progress.").waitFor();
    assert.equal(await page.getByTestId("ask").count(), 0);
    noProblems();
  });

  test("configuration: each plugin with its registrations and the permission rules (none configured)", async () => {
    await page.goto(`${server.url}/console/#/config`);
    const plugins = page.getByTestId("plugins");
    await plugins.waitFor();
    const firewallRow = plugins.locator("tbody tr").filter({ hasText: "firewall" });
    assert.deepEqual(
      (await firewallRow.locator("td").allTextContents()).map((t) => t.trim()),
      ["firewall", "loaded", "code", "", "before_agent_run · priority 0 · fails closed"],
    );
    assert.equal((await page.getByTestId("permissions").textContent())?.trim(), "none configured");
    await screenshot(page, "config");
    noProblems();
  });

  test("text that tries to become markup stays text: <script>, <img onerror>, javascript: links and a bidi override in a reply and a title are shown, inert", async () => {
    await page.goto(`${server.url}/console/#/sessions/${xss}`);
    await page.getByTestId("messages").waitFor();
    const text = (await main().textContent()) ?? "";
    for (const shown of [
      `<script>window.__pwned = "script"</script>`,
      `<img src=x onerror="window.__pwned='img'">`,
      `[click me](javascript:window.__pwned='md')`,
      `<a href="javascript:window.__pwned='a'">open</a>`,
      "invoice⟨U+202E⟩fdp.exe",
      `<img src=x onerror="window.__pwned='title'"> Refund ⟨U+202E⟩exe.txt`,
    ])
      assert.ok(text.includes(shown), `shown as text: ${shown}`);
    assert.ok(!text.includes("\u202E"), "the override itself is never applied");
    const inert = await page.evaluate(`({
      pwned: window.__pwned,
      images: document.querySelectorAll("main img").length,
      scripts: [...document.scripts].map((s) => s.src.replace(location.origin, "")),
      links: [...document.querySelectorAll("a")].map((a) => a.getAttribute("href")).filter((h) => !h.startsWith("#")),
    })`);
    assert.deepEqual(inert, { pwned: undefined, images: 0, scripts: ["/console/assets/app.js"], links: [] });
    await page.goto(`${server.url}/console/#/sessions`);
    await page.getByTestId("sessions").waitFor();
    assert.equal(await page.evaluate("window.__pwned"), undefined);
    await screenshot(page, "xss");
    noProblems();
  });

  test("a principal's login sees its own sessions only, and not the configuration", async () => {
    const own = await openPage(browser);
    try {
      await logIn(own.page, server.url, alice);
      const rows = own.page.getByTestId("sessions").locator("tbody tr");
      await rows.first().waitFor();
      const titles = await rows.locator("td:first-child a").allInnerTexts();
      assert.ok(titles.includes("Refund for order 42"));
      assert.ok(!titles.some((t) => t.includes("Bob")), titles.join(", "));
      await own.page.goto(`${server.url}/console/#/config`);
      await own.page.getByText("Only an admin key may see the configuration.").waitFor();
      assert.deepEqual(own.problems.violations, []);
    } finally {
      await own.context.close();
    }
  });
});
