import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { chmod } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser } from "playwright-core";
import { builtConsole, launchBrowser, logIn, openPage, screenshot } from "../console/helpers.js";
import { cliArgv, gatehouse, tempProjects } from "./helpers.js";

/** `gatehouse console` in a project: resolves with the URL it prints on stdout. */
function startConsole(
  dir: string,
  assets: string,
): { child: ChildProcess; url: Promise<string>; exit: Promise<number | null> } {
  const [node, ...args] = cliArgv(["console", "--port", "0"]);
  const child = spawn(node as string, args, {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "", HOME: dir, GATEHOUSE_CONSOLE_ASSETS: assets },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  const url = new Promise<string>((resolve, reject) => {
    child.stdout?.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
      const m = /^(http:\/\/127\.0\.0\.1:\d+\/console\/)$/m.exec(stdout);
      if (m) resolve(m[1] as string);
    });
    child.on("close", () => reject(new Error(`console exited: ${stderr}`)));
  });
  url.catch(() => undefined);
  const exit = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return { child, url, exit };
}

/** JSON over HTTP (the open loopback: no key needed). */
async function getJson(url: string): Promise<unknown> {
  return (await fetch(url)).json();
}

describe("gatehouse console", () => {
  const projects = tempProjects();
  let browser: Browser;
  before(async () => {
    browser = await launchBrowser();
  });
  after(() => browser?.close());

  test("in a project from gatehouse init, it shows the project's sessions after a few runs — without a key while none exists, with an admin key after", async () => {
    const dir = await projects();
    const assets = await builtConsole();
    assert.equal((await gatehouse(["init"], { cwd: dir })).code, 0);
    for (const prompt of ["hello there", "what is the admin password?", "thanks, bye"])
      await gatehouse(["run", "-p", prompt], { cwd: dir });

    const open = startConsole(dir, assets);
    const url = await open.url;
    const { page, problems, context } = await openPage(browser);
    await page.goto(url);
    await page.getByRole("button", { name: "Continue as local" }).click();
    const rows = page.getByTestId("sessions").locator("tbody tr");
    await rows.nth(2).waitFor();
    assert.equal(await rows.count(), 3);
    const blocks = (await rows.locator("td:nth-child(5)").allTextContents()).map(Number).sort();
    assert.deepEqual(blocks, [0, 0, 1], "the example plugin's block on the password question");
    await screenshot(page, "cli-console");
    await rows
      .filter({ has: page.locator("td.bad") })
      .locator("a")
      .click();
    await page.getByTestId("notice").waitFor();
    assert.match((await page.getByTestId("notice").textContent()) ?? "", /example · before_agent_run · credentials/);
    assert.ok(!((await page.locator("main").textContent()) ?? "").includes("admin password"));
    assert.deepEqual(problems.violations, []);
    await context.close();
    open.child.kill("SIGTERM");
    assert.equal(await open.exit, 0);

    const created = await gatehouse(["keys", "create", "--principal", "ops", "--admin", "--json"], { cwd: dir });
    const key = JSON.parse(created.stdout) as { key: string; admin: boolean };
    assert.equal(key.admin, true);
    const listed = JSON.parse((await gatehouse(["keys", "list", "--json"], { cwd: dir })).stdout) as {
      admin: boolean;
    }[];
    assert.deepEqual(
      listed.map((k) => k.admin),
      [true],
    );
    const closed = startConsole(dir, assets);
    const second = await openPage(browser);
    try {
      const closedUrl = await closed.url;
      await second.page.goto(closedUrl);
      await second.page.getByLabel("API key").waitFor();
      assert.equal(await second.page.getByRole("button", { name: "Continue as local" }).count(), 0);
      await logIn(second.page, closedUrl.replace(/\/console\/$/, ""), key.key);
      await second.page.getByTestId("sessions").locator("tbody tr").nth(2).waitFor();
    } finally {
      await second.context.close();
      closed.child.kill("SIGTERM");
      assert.equal(await closed.exit, 0);
    }
  });

  test("its configuration view is what plugins inspect, hooks list, permissions and config print, secrets masked the same way", async () => {
    const dir = await projects({
      "gatehouse.json": {
        model: "scripted:echo",
        hooks: {
          PreToolUse: [
            { matcher: "Bash", hooks: [{ type: "command", command: "./check.sh --token s3cr3t-token-value" }] },
          ],
        },
        mcpServers: { files: { command: "files-server", env: { API_KEY: "s3cr3t-env-value" } } },
        permissions: { deny: ["Bash(rm:*)"], allow: ["Bash(npm test:*)"] },
      },
      ".claude/settings.json": { permissions: { ask: ["Bash(git push:*)"] } },
      "check.sh": "#!/bin/sh\nexit 0\n",
    });
    await chmod(join(dir, "check.sh"), 0o755);
    const open = startConsole(dir, await builtConsole());
    try {
      const url = new URL(await open.url);
      const config = (await getJson(new URL("/v1/config", url).toString())) as Record<string, unknown>;
      const text = JSON.stringify(config);
      assert.ok(!text.includes("s3cr3t"), "no secret");
      assert.ok(text.includes("****"), "masked where they were");
      const [hooks, settings, inspect, permissions] = await Promise.all(
        [
          ["hooks", "list", "--json"],
          ["config", "--json"],
          ["plugins", "inspect", "--json"],
          ["permissions", "--json"],
        ].map(async (args) => JSON.parse((await gatehouse(args, { cwd: dir })).stdout)),
      );
      assert.deepEqual(config.commandHooks, hooks);
      assert.deepEqual(config.settings, settings);
      assert.deepEqual(config.plugins, inspect.plugins);
      const shown = config.permissions as { rules: unknown[]; note: string };
      assert.deepEqual(shown.rules, permissions.rules);
      assert.ok(shown.rules.length > 0, "the project's rules are listed");
      assert.match(shown.note, new RegExp(`mode ${permissions.mode}`));
    } finally {
      open.child.kill("SIGTERM");
      assert.equal(await open.exit, 0);
    }
  });

  test("with no model configured it starts and browses what is stored, titled by first prompt; a run asked of it fails saying no model is configured", async () => {
    const dir = await projects();
    assert.equal((await gatehouse(["run", "--model", "scripted:echo", "-p", "plan the garden"], { cwd: dir })).code, 0);
    const open = startConsole(dir, await builtConsole());
    try {
      const url = new URL(await open.url);
      const listed = (await getJson(new URL("/v1/sessions?scope=all", url).toString())) as {
        data: { id: string; title: string | null }[];
      };
      assert.deepEqual(
        listed.data.map((s) => s.title),
        ["plan the garden"],
      );
      const created = await fetch(new URL("/v1/sessions", url), {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      const session = ((await created.json()) as { id: string }).id;
      const run = await fetch(new URL(`/v1/sessions/${session}/runs`, url), {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ prompt: "again" }),
      });
      assert.equal(run.status, 500);
      const timeline = (await getJson(new URL(`/v1/sessions/${session}/timeline`, url).toString())) as {
        runs: { status: string; error: { message?: string } | null }[];
      };
      assert.equal(timeline.runs[0]?.status, "failed");
      assert.match(timeline.runs[0]?.error?.message ?? "", /no model configured/, "the cause, for the local admin");
    } finally {
      open.child.kill("SIGTERM");
      assert.equal(await open.exit, 0);
    }
  });
});
