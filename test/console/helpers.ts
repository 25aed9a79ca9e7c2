import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { buildConsole } from "../../scripts/build-console.js";
import { importOnDemand } from "../../scripts/on-demand.js";

const { chromium } = await importOnDemand<typeof import("playwright-core")>("playwright-core");

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

/** The whole page as `NAME.png`, and what fits the window as `NAME-top.png` (the docs' pictures come from these). */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}-top.png`) });
  return path;
}

/** Polls `check` until it returns something (not undefined/false), or fails after `timeoutMs`. */
export async function until<T>(
  what: string,
  check: () => Promise<T | undefined | false>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A console login made through the API, as the page makes it: the cookie to send, and the CSRF token. */
export async function consoleLogin(
  url: string,
  key?: string,
): Promise<{ status: number; cookie: string; setCookie: string; csrf: string }> {
  const res = await fetch(`${url}/console/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(key === undefined ? {} : { key }),
  });
  const setCookie = res.headers.getSetCookie()[0] ?? "";
  const body = (await res.json()) as { csrf?: string };
  return { status: res.status, cookie: setCookie.split(";")[0] ?? "", setCookie, csrf: body.csrf ?? "" };
}

/**
 * Reads the live view's event stream (GET /v1/live/events) until a snapshot satisfies `wanted`;
 * answers that snapshot and closes the stream.
 */
export async function liveUntil<T>(
  url: string,
  headers: Record<string, string>,
  wanted: (live: LiveSnapshot) => T | undefined,
  timeoutMs = 30_000,
): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error("timed out waiting for the live view")), timeoutMs);
  try {
    const res = await fetch(`${url}/v1/live/events`, { headers, signal: controller.signal });
    if (!res.body) throw new Error(`live view: HTTP ${res.status}`);
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const chunk of res.body) {
      buffer += decoder.decode(chunk as Uint8Array, { stream: true });
      for (let at = buffer.indexOf("\n\n"); at >= 0; at = buffer.indexOf("\n\n")) {
        const frame = buffer.slice(0, at);
        buffer = buffer.slice(at + 2);
        const data = /^data: (.*)$/m.exec(frame)?.[1];
        if (data === undefined) continue;
        const found = wanted(JSON.parse(data) as LiveSnapshot);
        if (found !== undefined) return found;
      }
    }
    throw new Error("the live view's stream ended");
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
}

export interface LiveSnapshot {
  readonly runs: {
    runId: string;
    sessionId: string;
    principal: string | null;
    instance: string;
    steps: { kind: string; name: string; outcome: string | null; pluginId: string | null }[];
  }[];
  readonly approvals: { runId: string; toolCallId: string; toolName: string; title: string; sessionId: string }[];
}
