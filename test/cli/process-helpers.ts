// Helpers for tests about the processes gatehouse starts: FIFOs to learn when a command started
// (without sleeping), the pids it wrote, and whether any of them is still alive.
import { execFileSync } from "node:child_process";
import { createReadStream, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { isDead } from "../../src/core/process-groups.js";
import { openSqliteStore } from "../../src/store/index.js";

/**
 * A Bash command that starts a tree — a background sleep, a child that ignores SIGTERM — writes
 * every pid to `pids`, says it started through `started.fifo`, and waits.
 */
export const TREE = [
  "echo $$ >> pids",
  "sleep 1000 & echo $! >> pids",
  "(trap '' TERM; while :; do sleep 1; done) & echo $! >> pids",
  "echo started > started.fifo",
  "wait",
].join("; ");

/** A project whose one turn runs TREE in the Bash tool. */
export const treeProject = (fresh: (files?: Record<string, unknown>) => Promise<string>, extra: object = {}) =>
  fresh({
    "s.json": { runs: [{ turns: [{ toolCalls: [{ name: "Bash", input: { command: TREE } }] }, { text: "done" }] }] },
    // The Bash call is what these tests watch: a rule lets it run (default mode would ask).
    "gatehouse.json": { model: "scripted:s.json", permissions: { allow: ["Bash"] }, ...extra },
    // These tests follow host pids of what the Bash call starts: the process-group path, which
    // runs when the sandbox is off (in the sandbox, the pids are its namespace's; test/sandbox/).
    ".claude/settings.json": { sandbox: { enabled: false } },
  });

/** Resolves with the first line a writer puts into the FIFO (the writer blocks until it is read). */
export function fifoLine(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    const stream = createReadStream(path, { encoding: "utf8" });
    stream.on("data", (chunk) => {
      text += chunk;
      if (text.includes("\n")) {
        stream.destroy();
        resolve(text.split("\n")[0] ?? "");
      }
    });
    stream.on("error", reject);
  });
}

export function makeFifo(dir: string, name = "started.fifo"): string {
  const path = join(dir, name);
  execFileSync("mkfifo", [path]);
  return path;
}

/** The pids a script wrote, one a line. */
export function pidsIn(file: string): number[] {
  return existsSync(file) ? readFileSync(file, "utf8").split(/\s+/).filter(Boolean).map(Number) : [];
}

/** The parent pid of a process, from /proc. */
export function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
}

/** Waits (polling /proc) until every pid is gone or a zombie; the ones still alive after `withinMs`. */
export async function survivors(pids: readonly number[], withinMs = 3000): Promise<number[]> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const alive = pids.filter((pid) => !isDead(pid));
    if (alive.length === 0 || Date.now() >= deadline) return alive;
    await delay(20);
  }
}

/** Kills what a failed test left behind, so that it does not linger on the machine. */
export function reap(pids: readonly number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
}

/** The statuses of a session's runs in the project's SQLite store. */
export async function runStatuses(cwd: string, sessionId: string): Promise<string[]> {
  const store = openSqliteStore({ path: join(cwd, ".gatehouse", "gatehouse.db") });
  try {
    return (await store.listRuns(sessionId)).map((r) => r.status);
  } finally {
    await store.close();
  }
}
