import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { openStore } from "../../src/store/index.js";
import { testGatehouse } from "../runtime/helpers.js";
import { api, startTestServer, type TestServer } from "../server/helpers.js";
import { builtConsole, launchBrowser, logIn, openPage, type PageProblems, screenshot } from "./helpers.js";
import { bash } from "./world.js";

/** The docs' pictures of the console, refreshed by this test on request. */
const IMAGES = fileURLToPath(new URL("../../docs/images/", import.meta.url));

const SCRIPT = {
  runs: [
    {
      match: "^run the tests",
      turns: [
        { toolCalls: [{ name: "Bash", input: { command: "npm test -- --token s3cr3t-value" } }] },
        { text: "Ok." },
      ],
    },
    { match: "^fail", turns: [{ error: { message: "upstream exploded", statusCode: 500 } }] },
    { match: ".", turns: [{ text: "Plain answer." }] },
  ],
};

/** Whether anything makes the page wider than the window (a horizontal scroll of the whole page). */
const overflows = (page: Page) =>
  page.evaluate("document.documentElement.scrollWidth > document.documentElement.clientWidth");

/**
 * The console at a desktop's 1280 px and a phone's 360 px in Chromium: sessions titled by their
 * first prompt and found by it, a run's timeline with a denied call and a failure's cause, a
 * live approval ask showing the command and the rule "always" adds — nothing wider than the
 * window. Screenshots go to test-artifacts/console/ (and, with GATEHOUSE_UPDATE_DOCS_IMAGES=1, to
 * docs/images/).
 */
describe("the console's layout at 1280 and 360 px", () => {
  let dir: string;
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let problems: PageProblems;
  let admin: string;
  let session: string;
  let outside: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "gatehouse-console-layout-"));
    const [assetsDir, launched] = await Promise.all([builtConsole(), launchBrowser()]);
    browser = launched;
    const path = join(dir, "gatehouse.db");
    server = await startTestServer(SCRIPT, {
      store: { kind: "sqlite", path },
      tools: [bash],
      config: { approvals: { mode: "console" } },
      console: { assetsDir },
    });
    admin = await server.key("ops", { admin: true });
    session = (await api(server, "POST", "/v1/sessions", { key: admin, body: {} })).body.id;
    await api(server, "POST", `/v1/sessions/${session}/runs`, {
      key: admin,
      body: { prompt: "summarise the quarterly report" },
    });
    await api(server, "POST", `/v1/sessions/${session}/runs`, { key: admin, body: { prompt: "fail please" } });
    const store = await openStore({ kind: "sqlite", path });
    const library = testGatehouse(SCRIPT, { store });
    try {
      outside = (await library.gatehouse.run({ prompt: "hello from the library" })).sessionId;
    } finally {
      await library.gatehouse.close();
    }
    ({ page, problems } = await openPage(browser));
    await logIn(page, server.url, admin);
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Kept in test-artifacts/console/; copied over the docs' pictures when GATEHOUSE_UPDATE_DOCS_IMAGES=1. */
  const picture = async (name: string) => {
    const taken = await screenshot(page, name);
    if (process.env.GATEHOUSE_UPDATE_DOCS_IMAGES === "1") copyFileSync(taken, join(IMAGES, `${name}.png`));
  };

  for (const width of [1280, 360]) {
    test(`at ${width} px: sessions titled by their first prompt and searchable by it; nothing wider than the window`, async () => {
      await page.setViewportSize({ width, height: 800 });
      await page.goto(`${server.url}/console/#/sessions`);
      const rows = page.getByTestId("sessions").locator("tbody tr");
      await rows.first().waitFor();
      assert.ok(
        (await rows.filter({ hasText: "summarise the quarterly report" }).count()) === 1,
        "titled by its first prompt",
      );
      assert.equal(await overflows(page), false);
      await picture(`console-sessions-${width}`);
      await page.getByRole("searchbox").fill("QUARTERLY");
      await page.getByRole("button", { name: "Search" }).click();
      await rows.filter({ hasText: "hello from the library" }).waitFor({ state: "detached" });
      assert.equal(await rows.count(), 1);
    });

    test(`at ${width} px: a session's timeline gives a failed run's cause; a rebuilt run does not claim to have no durations`, async () => {
      await page.setViewportSize({ width, height: 800 });
      await page.goto(`${server.url}/console/#/sessions/${session}`);
      const cause = page.getByTestId("run-2").getByTestId("cause");
      await cause.waitFor();
      assert.match((await cause.textContent()) ?? "", /scripted.*server.*HTTP 500.*upstream exploded/);
      assert.equal(await overflows(page), false);
      await picture(`console-session-${width}`);
      await page.goto(`${server.url}/console/#/sessions/${outside}`);
      const note = page.getByTestId("rebuilt");
      await note.waitFor();
      assert.doesNotMatch((await note.textContent()) ?? "", /no durations/);
    });

    test(`at ${width} px: a live ask shows the command, masked, and the rule Allow always adds`, async () => {
      await page.setViewportSize({ width, height: 800 });
      await page.goto(`${server.url}/console/#/live`);
      await page.getByText("No run in progress.").waitFor();
      // A session of its own: "always" in another one does not carry over.
      const fresh = (await api(server, "POST", "/v1/sessions", { key: admin, body: {} })).body.id;
      const running = api(server, "POST", `/v1/sessions/${fresh}/runs`, {
        key: admin,
        body: { prompt: "run the tests" },
      });
      const ask = page.getByTestId("ask");
      await ask.waitFor();
      assert.equal((await ask.locator('[data-field="command"] pre').textContent())?.trim(), "npm test -- --token ****");
      assert.match((await ask.getByTestId("ask-always").textContent()) ?? "", /Bash\(npm test:\*\)/);
      assert.equal(await overflows(page), false);
      await picture(`console-live-${width}`);
      await ask.getByRole("button", { name: "Allow always (this session)" }).click();
      assert.equal((await running).body.reply, "Ok.");
      assert.deepEqual(problems.violations, []);
      assert.deepEqual(problems.errors, []);
    });
  }
});
