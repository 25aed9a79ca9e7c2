// `gatehouse chat` in a real terminal (tmux): default mode asks before Bash runs, shows the rule an
// "always" would add, and [p]roject keeps that rule — for the session and in
// .claude/settings.local.json — so the next matching call runs unasked while another is asked.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { cliArgv, tempProjects } from "./helpers.js";

const TMUX = "/usr/bin/tmux";
const quote = (arg: string) => `'${arg.replace(/'/g, `'\\''`)}'`;

describe("permission asks in gatehouse chat", () => {
  const fresh = tempProjects();

  test("default mode asks for Bash on a terminal; [p]roject keeps the rule shown, not the tool", {
    skip: !existsSync(TMUX) && "tmux is not installed",
  }, async () => {
    const cwd = await fresh({
      "s.json": {
        runs: [
          {
            match: "^clean",
            turns: [
              { toolCalls: [{ name: "Bash", input: { command: "rm -rf victim" } }] },
              { text: "cleaned: {{lastToolResult}}" },
            ],
          },
          {
            turns: [
              { toolCalls: [{ name: "Bash", input: { command: "npm test {{prompt}}" } }] },
              { text: "tested: {{lastToolResult}}" },
            ],
          },
        ],
      },
      "gatehouse.json": { model: "scripted:s.json" },
      "victim/keep": "important",
    });
    await writeFile(join(cwd, "npm"), '#!/bin/sh\necho "npm $*" >> npm-ran\necho ok\n');
    await chmod(join(cwd, "npm"), 0o755);
    const socket = `gatehouse-perm-${process.pid}-${Date.now()}`;
    const tmux = (...args: string[]) =>
      execFileSync(TMUX, ["-L", socket, "-f", "/dev/null", ...args], {
        cwd,
        env: { PATH: `${cwd}:${process.env.PATH ?? ""}`, HOME: cwd, TERM: "xterm-256color" },
        encoding: "utf8",
      });
    const screen = () => tmux("capture-pane", "-p", "-t", "chat", "-S", "-200");
    const until = async (pattern: RegExp, count = 1) => {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const text = screen();
        if ((text.match(new RegExp(pattern.source, "g")) ?? []).length >= count) return text;
        if (Date.now() > deadline) throw new Error(`not shown: ${pattern}\n${text}`);
        await delay(50);
      }
    };
    const command = cliArgv(["chat"]).map(quote).join(" ");
    tmux("new-session", "-d", "-s", "chat", "-x", "200", "-y", "50", "-c", cwd, command);
    try {
      tmux("send-keys", "-t", "chat", "first", "Enter");
      const asked = await until(/Allow Bash\?.*\[p\]roject.*\[n\]o, then Enter:/);
      assert.match(asked, /"always" adds: Bash\(npm test:\*\)/);
      tmux("send-keys", "-t", "chat", "p", "Enter");
      await until(/tested: ok/);
      const saved = JSON.parse(await readFile(join(cwd, ".claude/settings.local.json"), "utf8"));
      assert.deepEqual(saved, { permissions: { allow: ["Bash(npm test:*)"] } });

      tmux("send-keys", "-t", "chat", "second", "Enter");
      await until(/tested: ok/, 2);
      assert.equal((screen().match(/Allow Bash\?/g) ?? []).length, 1, "the remembered rule allowed npm test unasked");

      tmux("send-keys", "-t", "chat", "clean up", "Enter");
      await until(/Allow Bash\?/, 2);
      tmux("send-keys", "-t", "chat", "n", "Enter");
      await until(/cleaned: The Bash call was not approved\./);
      assert.ok(existsSync(join(cwd, "victim/keep")), "rm never ran");
      assert.equal(await readFile(join(cwd, "npm-ran"), "utf8"), "npm test first\nnpm test second\n");
      tmux("send-keys", "-t", "chat", "/exit", "Enter");
    } finally {
      spawnSync(TMUX, ["-L", socket, "kill-server"]);
    }
  });
});
