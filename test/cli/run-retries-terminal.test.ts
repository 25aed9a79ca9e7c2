// `gatehouse run` on a real terminal (a pseudo-terminal, in tmux) while a failed model call waits
// to be tried again: the status line says so — "retrying (2/3) after 500" — instead of a bare
// spinner.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { type MockServer, startMockServer } from "../models/mock-server.js";
import { cliArgv, tempProjects } from "./helpers.js";

const TMUX = "/usr/bin/tmux";
const quote = (arg: string) => `'${arg.replace(/'/g, `'\\''`)}'`;

describe("gatehouse run on a terminal, retrying", { skip: !existsSync(TMUX) && "tmux is not installed" }, () => {
  const fresh = tempProjects();
  let server: MockServer;
  before(async () => {
    server = await startMockServer();
  });
  after(() => server.close());

  test("the status line shows 'retrying (2/3) after 500' while the retry waits", async () => {
    // The provider asks for a long wait: the line stays up until the test has read it.
    server.reply({
      status: 500,
      json: { error: { message: "boom", type: "error" } },
      headers: { "retry-after": "30" },
    });
    const cwd = await fresh({ "gatehouse.json": { model: "openai:gpt-test" } });
    const socket = `gatehouse-retry-${process.pid}-${Date.now()}`;
    const env = [`OPENAI_API_KEY=sk-test-retry`, `OPENAI_BASE_URL=${server.origin}/v1`].map(quote).join(" ");
    const run = `env ${env} ${cliArgv(["run", "-p", "hi"]).map(quote).join(" ")}`;
    const tmux = (...args: string[]) =>
      execFileSync(TMUX, ["-L", socket, "-f", "/dev/null", ...args], {
        cwd,
        env: { PATH: process.env.PATH ?? "", HOME: cwd, TERM: "xterm-256color" },
        encoding: "utf8",
      });
    tmux("new-session", "-d", "-s", "run", "-x", "120", "-y", "20", "-c", cwd, `${run}; cat`);
    try {
      const deadline = Date.now() + 60_000;
      let shown = "";
      while (!/retrying \(2\/3\) after 500/.test(shown)) {
        if (Date.now() >= deadline) assert.fail(`no retry on the status line:\n${shown}`);
        await delay(50);
        shown = tmux("capture-pane", "-p", "-t", "run");
      }
      assert.match(shown, /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] step 1 · retrying \(2\/3\) after 500 · \d+\.\ds/);
    } finally {
      tmux("kill-server");
    }
  });
});
