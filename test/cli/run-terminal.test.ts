// `gatehouse run` on a real terminal (a pseudo-terminal, in tmux): the live status line on stderr
// while a tool runs, then the streamed reply, and no status line left behind.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { cliArgv, tempProjects } from "./helpers.js";

const TMUX = "/usr/bin/tmux";
const quote = (arg: string) => `'${arg.replace(/'/g, `'\\''`)}'`;

const SCRIPT = {
  runs: [
    {
      turns: [
        {
          toolCalls: [{ name: "Bash", input: { command: "while [ ! -f go ]; do sleep 0.05; done; echo released" } }],
          usage: { inputTokens: 11, outputTokens: 4 },
        },
        { text: "all done here", chunks: 3 },
      ],
    },
  ],
};

describe("gatehouse run on a terminal", () => {
  const fresh = tempProjects();

  test("a live status line (step, tool, elapsed) while a tool runs, then the reply, and the line erased", {
    skip: !existsSync(TMUX) && "tmux is not installed",
  }, async () => {
    const cwd = await fresh({
      "script.json": SCRIPT,
      "gatehouse.json": { model: "scripted:script.json", permissions: { allow: ["Bash"] } },
    });
    const socket = `gatehouse-run-${process.pid}-${Date.now()}`;
    const status = join(cwd, "status");
    const run = cliArgv(["run", "-p", "work"]).map(quote).join(" ");
    const tmux = (...args: string[]) =>
      execFileSync(TMUX, ["-L", socket, "-f", "/dev/null", ...args], {
        cwd,
        env: { PATH: process.env.PATH ?? "", HOME: cwd, TERM: "xterm-256color" },
        encoding: "utf8",
      });
    // The pane stays after the run (`cat` waits), so its last screen can be read.
    tmux("new-session", "-d", "-s", "run", "-x", "120", "-y", "20", "-c", cwd, `${run}; echo $? > status; cat`);
    const screen = () => tmux("capture-pane", "-p", "-t", "run");
    const until = async (pattern: RegExp, withinMs = 60_000) => {
      const deadline = Date.now() + withinMs;
      for (;;) {
        const shown = screen();
        if (pattern.test(shown)) return shown;
        if (Date.now() >= deadline) throw new Error(`not on screen within ${withinMs} ms: ${pattern}\n${shown}`);
        await delay(50);
      }
    };
    try {
      const during = await until(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] step 1 · Bash · \d+\.\ds/);
      assert.equal(during.match(/step 1 · Bash/g)?.length, 1, "redrawn in place, one line");
      // The elapsed time moves on while the tool runs.
      const first = /Bash · (\d+\.\d)s/.exec(during)?.[1];
      await until(new RegExp(`Bash · (?!${first?.replace(".", "\\.")}s)\\d+\\.\\ds`));
      await writeFile(join(cwd, "go"), "");
      const after = await until(/session: \S+/);
      assert.match(after, /^all done here$/m);
      assert.ok(!/step \d/.test(after), `no status line left: ${after}`);
      for (let i = 0; i < 100 && !existsSync(status); i++) await delay(50);
      assert.equal(readFileSync(status, "utf8").trim(), "0");
    } finally {
      tmux("kill-server");
    }
  });
});
