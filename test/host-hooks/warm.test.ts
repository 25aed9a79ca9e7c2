// The warm path: the per-project daemon that keeps the plugins loaded, and its client.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import type { HookAnswer } from "../../src/host-hooks/answer.js";
import {
  askDaemon,
  claimStart,
  type Daemon,
  pidFileOf,
  privateFolder,
  socketPathFor,
  startDaemon,
  type WarmGuard,
} from "../../src/host-hooks/warm.js";

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "gh-warm-"));
  dirs.push(d);
  return d;
};

/** A guard that answers with what it was built from (the config file's text) and counts its closes. */
function fakeGuards(config: string) {
  const closed: string[] = [];
  let release: (() => void) | undefined;
  let entered: () => void = () => {};
  const slowEntered = new Promise<void>((r) => {
    entered = r;
  });
  const open = async (): Promise<WarmGuard> => {
    const { readFileSync } = await import("node:fs");
    const built = readFileSync(config, "utf8");
    return {
      watched: [config],
      async answer(_agent, payload): Promise<HookAnswer> {
        if ((payload as { slow?: boolean }).slow)
          await new Promise<void>((r) => {
            release = r;
            entered();
          });
        if ((payload as { crash?: boolean }).crash) throw new Error("guard bug");
        return { exitCode: 0, stdout: built, stderr: "" };
      },
      async close() {
        closed.push(built);
      },
    };
  };
  return { open, closed, slowEntered, release: () => release?.() };
}

/** A daemon for a new project folder, serving fake guards built from its gatehouse.json. */
async function fakeDaemon(idleMs = 60_000) {
  const dir = tempDir();
  const config = join(dir, "gatehouse.json");
  writeFileSync(config, "v1");
  const socketPath = socketPathFor(dir);
  const guards = fakeGuards(config);
  const daemon = (await startDaemon({ socketPath, idleMs, open: guards.open })) as Daemon;
  const ask = (payload: unknown = {}) => askDaemon(socketPath, { agent: "claude", payload }, 5_000);
  return { dir, config, socketPath, guards, daemon, ask };
}

describe("the hook daemon", () => {
  test("answers over a socket only its user can open, and ends when idle, removing its socket", async () => {
    const { dir, socketPath, daemon, ask } = await fakeDaemon(300);
    assert.equal(statSync(socketPath).mode & 0o777, 0o600);
    assert.equal(statSync(join(dir, ".gatehouse")).mode & 0o777, 0o700);
    assert.ok(existsSync(pidFileOf(socketPath)));
    assert.deepEqual(await ask(), { exitCode: 0, stdout: "v1", stderr: "" });
    await daemon.stopped;
    assert.equal(existsSync(socketPath), false);
    assert.equal(existsSync(pidFileOf(socketPath)), false);
  });

  test("after a watched file changed it hands calls back unanswered, answers the call under way, and stops", async () => {
    const { config, socketPath, guards, daemon, ask } = await fakeDaemon();
    const slow = ask({ slow: true });
    await guards.slowEntered;
    writeFileSync(config, "v2");
    // Unanswered: the client answers it in-process, with the new file.
    assert.equal(await ask(), undefined);
    assert.equal(existsSync(socketPath), false, "the socket is free for a new daemon at once");
    assert.deepEqual(guards.closed, [], "the guard stays open for the call still running on it");
    guards.release();
    assert.equal((await slow)?.stdout, "v1");
    await daemon.stopped;
    assert.deepEqual(guards.closed, ["v1"]);
  });

  test("answers concurrent calls, each with its own answer", async () => {
    const { daemon, ask } = await fakeDaemon();
    try {
      const answers = await Promise.all(Array.from({ length: 20 }, () => ask()));
      assert.ok(answers.every((a) => a?.stdout === "v1"));
    } finally {
      await daemon.stop();
    }
  });

  test("a guard that throws gives the client no answer, so it answers in-process", async () => {
    const { daemon, ask } = await fakeDaemon();
    try {
      assert.equal(await ask({ crash: true }), undefined);
    } finally {
      await daemon.stop();
    }
  });

  test("replaces a stale socket file, and leaves a live daemon alone", async () => {
    const dir = tempDir();
    const config = join(dir, "gatehouse.json");
    writeFileSync(config, "v1");
    const socketPath = socketPathFor(dir);
    // A socket file nobody listens on: what a daemon killed with SIGKILL leaves.
    privateFolder(join(dir, ".gatehouse"));
    const killed = spawnSync(process.execPath, [
      "-e",
      `require("node:net").createServer().listen(${JSON.stringify(socketPath)}, () => process.kill(process.pid, "SIGKILL"))`,
    ]);
    assert.equal(killed.signal, "SIGKILL");
    assert.ok(statSync(socketPath).isSocket());
    assert.equal(await askDaemon(socketPath, { agent: "claude", payload: {} }, 5_000), undefined);
    const daemon = (await startDaemon({ socketPath, idleMs: 60_000, open: fakeGuards(config).open })) as Daemon;
    try {
      assert.equal((await askDaemon(socketPath, { agent: "claude", payload: {} }, 5_000))?.stdout, "v1");
      const second = await startDaemon({ socketPath, idleMs: 60_000, open: fakeGuards(config).open });
      assert.equal(second, undefined, "a second daemon for the same project does not start");
      assert.equal((await askDaemon(socketPath, { agent: "claude", payload: {} }, 5_000))?.stdout, "v1");
    } finally {
      await daemon.stop();
    }
  });

  test("one caller at a time may start the daemon", () => {
    const dir = tempDir();
    const socketPath = join(dir, "hook.sock");
    assert.equal(claimStart(socketPath), true);
    assert.equal(claimStart(socketPath), false);
    assert.equal(claimStart(socketPath, Date.now() + 20_000), true, "a claim left by a caller that died expires");
  });

  test("a project folder too deep for a socket path gets a private folder of the user's elsewhere", () => {
    const deep = join("/tmp", "x".repeat(120));
    const path = socketPathFor(deep);
    assert.ok(Buffer.byteLength(path) <= 100, path);
    assert.notEqual(path, socketPathFor(`${deep}y`));
  });
});
