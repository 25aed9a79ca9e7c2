import { createHash } from "node:crypto";
import {
  chmodSync,
  closeSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { HookAnswer } from "./answer.js";
import type { Agent } from "./hosts.js";

/**
 * The warm path: one background process per project keeps the project's plugins loaded and
 * answers hook calls over a Unix socket, so a call costs a connection instead of a Node start
 * and a plugin load. The hook command is its client; it falls back to answering in-process (the
 * cold path) whenever the daemon is not there or does not answer.
 */

/** What a daemon serves: a guard for the project, rebuilt when its files change. */
export interface WarmGuard {
  readonly watched: readonly string[];
  answer(agent: Agent, payload: unknown): Promise<HookAnswer>;
  close(): Promise<void>;
}

export interface WarmRequest {
  readonly agent: Agent;
  readonly payload: unknown;
}

/** Unix socket paths are limited to about 104 bytes: a deep project gets a private folder in the system temp folder. */
const MAX_SOCKET_PATH = 100;

/** Where the project's daemon listens: `.gatehouse/hook.sock`, in a folder only the user can open. */
export function socketPathFor(projectDir: string, dataDir = join(projectDir, ".gatehouse")): string {
  const inProject = join(dataDir, "hook.sock");
  if (Buffer.byteLength(inProject) <= MAX_SOCKET_PATH) return inProject;
  const uid = process.getuid?.() ?? 0;
  const digest = createHash("sha256").update(projectDir).digest("hex").slice(0, 24);
  return join(tmpdir(), `gatehouse-hooks-${uid}`, `${digest}.sock`);
}

/** The file holding the daemon's process id, beside its socket. */
export const pidFileOf = (socketPath: string) => `${socketPath}.pid`;

/** Creates the socket's folder private (0700), and refuses one another user owns or others can open. */
export function privateFolder(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = lstatSync(dir);
  const uid = process.getuid?.();
  if (!st.isDirectory() || (uid !== undefined && st.uid !== uid))
    throw new Error(`${dir}: not a folder of this user; the hook socket is not created there`);
  if ((st.mode & 0o077) !== 0) chmodSync(dir, 0o700);
}

/** A hash of the watched files' contents (a missing file counts too): a different one means a reload. */
export function contentHash(files: readonly string[]): string {
  const hash = createHash("sha256");
  for (const file of files) {
    hash.update(file).update("\0");
    try {
      hash.update(readFileSync(file));
    } catch {
      hash.update("\0missing\0");
    }
    hash.update("\0");
  }
  return hash.digest("hex");
}

/**
 * Asks the daemon. Undefined when there is none (no socket, a stale one), when it closes
 * without a whole answer (it crashed), or after `timeoutMs`: the caller then answers itself.
 */
export function askDaemon(
  socketPath: string,
  request: WarmRequest,
  timeoutMs: number,
): Promise<HookAnswer | undefined> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (value: HookAnswer | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(value);
    };
    const socket = createConnection(socketPath);
    const timer = setTimeout(() => done(undefined), timeoutMs);
    const chunks: Buffer[] = [];
    socket.on("connect", () => socket.end(`${JSON.stringify(request)}\n`));
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", () => done(undefined));
    socket.on("close", () => done(parseAnswer(Buffer.concat(chunks).toString("utf8"))));
  });
}

function parseAnswer(text: string): HookAnswer | undefined {
  try {
    const a = JSON.parse(text) as Partial<HookAnswer>;
    if (typeof a.exitCode === "number" && typeof a.stdout === "string" && typeof a.stderr === "string")
      return { exitCode: a.exitCode, stdout: a.stdout, stderr: a.stderr };
  } catch {}
  return undefined;
}

/** Whether a live daemon listens on the socket (a stale socket file refuses the connection). */
function listening(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection(socketPath);
    socket.on("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.on("error", () => resolve(false));
  });
}

/**
 * Claims the right to start the project's daemon for a few seconds, so that concurrent first
 * calls start one daemon, not one each. False when another caller holds it.
 */
export function claimStart(socketPath: string, now = Date.now()): boolean {
  const lock = `${socketPath}.starting`;
  try {
    if (now - statSync(lock).mtimeMs < 10_000) return false;
    unlinkSync(lock);
  } catch {}
  try {
    closeSync(openSync(lock, "wx", 0o600));
    return true;
  } catch {
    return false;
  }
}

export interface DaemonOptions {
  readonly socketPath: string;
  /** Ends the daemon after this long without a call. */
  readonly idleMs: number;
  readonly open: () => Promise<WarmGuard>;
  readonly log?: (line: string) => void;
}

export interface Daemon {
  /** Settles when the daemon has stopped (idle, or `stop()`). */
  readonly stopped: Promise<void>;
  stop(): Promise<void>;
}

/**
 * Serves hook calls on the socket until idle. Every call checks the guard's files: when one
 * changed (gatehouse.json, a settings file, a plugin file, the trust store) the daemon hands the
 * call back unanswered (the client answers it in-process, with the new files) and stops once the
 * calls under way are answered; the next call starts a new daemon. Calls run concurrently. A socket file left by a daemon that died is replaced; a live daemon on it is
 * left alone (this one exits).
 */
export async function startDaemon(options: DaemonOptions): Promise<Daemon | undefined> {
  const { socketPath } = options;
  privateFolder(join(socketPath, ".."));
  if (await listening(socketPath)) return undefined;
  try {
    unlinkSync(socketPath);
  } catch {}
  const guard = await options.open();
  const hash = contentHash(guard.watched);
  /** The guard, while its files are as they were; after a change this daemon is done. */
  const guardFor = () => {
    if (contentHash(guard.watched) === hash) return guard;
    // Modules are cached for the life of a process: a changed plugin loads only in a new one.
    void stop();
    throw new ConfigChanged();
  };

  let idle: NodeJS.Timeout | undefined;
  let inFlight = 0;
  let resolveStopped: () => void = () => {};
  const stopped = new Promise<void>((r) => {
    resolveStopped = r;
  });
  const server: Server = createServer({ allowHalfOpen: true }, (socket) => void serve(socket));
  const armIdle = () => {
    clearTimeout(idle);
    if (inFlight === 0) idle = setTimeout(() => void stop(), options.idleMs);
  };
  async function serve(socket: Socket) {
    inFlight++;
    clearTimeout(idle);
    const chunks: Buffer[] = [];
    socket.on("error", () => {});
    socket.on("data", (c: Buffer) => chunks.push(c));
    await new Promise<void>((r) => socket.once("end", r).once("close", r));
    try {
      const request = JSON.parse(Buffer.concat(chunks).toString("utf8")) as WarmRequest;
      const answer = await guardFor().answer(request.agent, request.payload);
      if (!socket.destroyed) socket.end(JSON.stringify(answer));
    } catch (error) {
      // No answer: the client answers in-process (and fails closed there if it must).
      if (!(error instanceof ConfigChanged))
        options.log?.(`gatehouse: hook daemon: ${error instanceof Error ? error.message : String(error)}\n`);
      socket.destroy();
    } finally {
      inFlight--;
      if (stopping === undefined) armIdle();
      else if (inFlight === 0) void finish();
    }
  }
  let stopping: Promise<void> | undefined;
  let finished: Promise<void> | undefined;
  /** Once the calls under way are answered: the guard closes and the daemon is done. */
  const finish = () => {
    finished ??= guard.close().then(resolveStopped, resolveStopped);
    return finished;
  };
  function stop(): Promise<void> {
    stopping ??= (async () => {
      clearTimeout(idle);
      // Closing the server removes its socket at once, so a new daemon can take the path while
      // this one answers the calls it has; the pid file goes with it.
      try {
        unlinkSync(pidFileOf(socketPath));
      } catch {}
      server.close();
      if (inFlight === 0) await finish();
      await stopped;
    })();
    return stopping;
  }
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => {
      server.off("error", reject);
      resolve();
    });
  });
  chmodSync(socketPath, 0o600);
  // Who serves the socket, for `kill` (and the tests that stop the daemons they started).
  writeFileSync(pidFileOf(socketPath), String(process.pid), { mode: 0o600 });
  try {
    unlinkSync(`${socketPath}.starting`);
  } catch {}
  armIdle();
  return { stopped, stop };
}

class ConfigChanged extends Error {
  constructor() {
    super("the project's configuration changed");
  }
}
