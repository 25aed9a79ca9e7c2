// `gatehouse chat` and the signals that end it mid-turn: SIGHUP when its terminal is closed (a real
// pseudo-terminal, in tmux) and SIGTERM. Each cancels the turn, kills the Bash call's process group,
// records the run, then ends the process by the same signal.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { cliArgv, gatehouse, tempProjects } from "./helpers.js";
import { fifoLine, makeFifo, parentOf, pidsIn, reap, runStatuses, survivors, treeProject } from "./process-helpers.js";

const SHELL_LIKE = fileURLToPath(new URL("fixtures/shell-like.mjs", import.meta.url));
const TMUX = "/usr/bin/tmux";

/** Polls until `file` exists (a process writes it as it exits); its text. */
async function fileWhenWritten(file: string, withinMs = 30_000): Promise<string> {
  const deadline = Date.now() + withinMs;
  while (!existsSync(file)) {
    if (Date.now() >= deadline) throw new Error(`${file} was not written within ${withinMs} ms`);
    await delay(20);
  }
  return readFileSync(file, "utf8");
}

const quote = (arg: string) => `'${arg.replace(/'/g, `'\\''`)}'`;

describe("gatehouse chat ended by a signal mid-turn", { concurrency: 2 }, () => {
  const fresh = tempProjects();

  test("closing its terminal (SIGHUP, in a real pty): the Bash call's group is killed, the run recorded, gatehouse ends by SIGHUP", {
    skip: !existsSync(TMUX) && "tmux is not installed",
  }, async () => {
    const cwd = await treeProject(fresh);
    const started = fifoLine(makeFifo(cwd));
    const socket = `gatehouse-test-${process.pid}-${Date.now()}`;
    const status = join(cwd, "status");
    const command = [process.execPath, SHELL_LIKE, status, ...cliArgv(["chat", "--session", "s-hup"])];
    const tmux = (...args: string[]) =>
      execFileSync(TMUX, ["-L", socket, "-f", "/dev/null", ...args], {
        cwd,
        env: { PATH: process.env.PATH ?? "", HOME: cwd, TERM: "xterm-256color" },
      });
    tmux("new-session", "-d", "-s", "chat", "-x", "120", "-y", "30", "-c", cwd, command.map(quote).join(" "));
    let pids: number[] = [];
    try {
      tmux("send-keys", "-t", "chat", "go", "Enter");
      await started;
      pids = pidsIn(join(cwd, "pids"));
      assert.equal(pids.length, 3);
      tmux("kill-server");
      assert.equal(await fileWhenWritten(status), "SIGHUP");
      assert.deepEqual(await survivors(pids), [], "no process of the Bash call is left");
      assert.deepEqual(await runStatuses(cwd, "s-hup"), ["cancelled"]);
    } finally {
      spawnSync(TMUX, ["-L", socket, "kill-server"]);
      reap(pids);
    }
  });

  test("SIGTERM: the turn is cancelled and recorded, lines typed ahead are not run, gatehouse ends by SIGTERM", async () => {
    const cwd = await treeProject(fresh);
    const started = fifoLine(makeFifo(cwd));
    let pids: number[] = [];
    const chat = gatehouse(["chat", "--session", "s-term"], {
      cwd,
      // A second line waits in the queue: SIGTERM must not run it.
      input: "go\nsecond prompt\n",
      keepStdinOpen: true,
    });
    try {
      await started;
      pids = pidsIn(join(cwd, "pids"));
      process.kill(parentOf(pids[0] as number), "SIGTERM");
      const r = await chat;
      assert.equal(r.signal, "SIGTERM", `exit ${r.code}: ${r.stderr}`);
      assert.deepEqual(await survivors(pids), []);
      assert.deepEqual(await runStatuses(cwd, "s-term"), ["cancelled"]);
    } finally {
      reap(pids);
    }
  });
});
