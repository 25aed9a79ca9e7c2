import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { buildConsole } from "../../scripts/build-console.js";

/** Debian's Chromium (`.ci/run` installs the chromium package): no browser is downloaded. */
export const CHROMIUM = process.env.GATEHOUSE_TEST_CHROMIUM ?? "/usr/bin/chromium";

/** Screenshots of each view, kept as test artifacts (gitignored). */
export const ARTIFACTS = fileURLToPath(new URL("../../test-artifacts/console/", import.meta.url));

let built: Promise<string> | undefined;

/** The console built from its sources, once per test process, into a folder of its own. */
export function builtConsole(): Promise<string> {
  built ??= (async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "gatehouse-console-")), "console");
    await buildConsole(dir);
    return dir;
  })();
  return built;
}

/**
 * One headless Chromium per test file, started as the machine notes say it works here: no
 * sandbox (root), no GPU, and none of Chromium's own network traffic.
 */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/** What went wrong in a page: script errors, and every Content-Security-Policy or Trusted Types violation. */
export interface PageProblems {
  readonly errors: string[];
  readonly violations: string[];
}

/** A fresh browser context and page (its own cookies), watched for problems. */
export async function openPage(
  browser: Browser,
): Promise<{ context: BrowserContext; page: Page; problems: PageProblems }> {
  const context = await browser.newContext({ viewport: { width: 1360, height: 900 }, acceptDownloads: true });
  const page = await context.newPage();
  const problems: PageProblems = { errors: [], violations: [] };
  page.on("pageerror", (error) => problems.errors.push(error.message));
  page.on("console", (message) => {
    const text = message.text();
    if (/Content Security Policy|Trusted Type|TrustedHTML|TrustedScript/i.test(text)) problems.violations.push(text);
    else if (message.type() === "error" && !/Failed to load resource/.test(text)) problems.errors.push(text);
  });
  // Injected by the browser's debugging protocol (not subject to the page's policy): reports each violation.
  await page.addInitScript({
    content: `document.addEventListener("securitypolicyviolation", (e) =>
      console.error("Content Security Policy violation: " + e.violatedDirective + " " + e.blockedURI));`,
  });
  return { context, page, problems };
}

/** Logs in on the console's page: with a key, or — on the open loopback — as local. */
export async function logIn(page: Page, url: string, key?: string): Promise<void> {
  await page.goto(`${url}/console/`);
  if (key === undefined) await page.getByRole("button", { name: "Continue as local" }).click();
  else {
    await page.getByLabel("API key").fill(key);
    await page.getByRole("button", { name: "Log in" }).click();
  }
  await page.getByTestId("principal").waitFor();
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
