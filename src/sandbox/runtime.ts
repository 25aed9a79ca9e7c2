import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { accessSync, constants, mkdirSync, statSync } from "node:fs";
import { isAbsolute } from "node:path";
import type { SandboxRuntimeConfig } from "@anthropic-ai/sandbox-runtime";
import { type LinkedSignal, linkedSignal } from "../core/abort.js";
import { decideHost, type SandboxPolicy } from "./policy.js";
import { type SandboxRefusalKind, writeRefused } from "./refusals.js";

/**
 * Claude Code's sandbox runtime (`@anthropic-ai/sandbox-runtime`: bubblewrap, a network proxy
 * and a seccomp filter on Linux, Seatbelt on macOS) around one command. The runtime keeps one
 * configuration per process; each command brings its own filesystem policy, and its network
 * requests are decided here, per command, by `decideHost` and the command's `ask`.
 */
type Srt = typeof import("@anthropic-ai/sandbox-runtime");
let srt: Promise<Srt> | undefined;
// Loaded on first use: `--version`, `hooks check` and unsandboxed runs never pay for it.
const runtime = () => {
  srt ??= import("@anthropic-ai/sandbox-runtime");
  return srt;
};

export type SandboxAvailability = { readonly available: true } | { readonly available: false; readonly reason: string };

const availabilityCache = new Map<string, SandboxAvailability>();

/**
 * Whether this machine can sandbox: a supported platform (Linux, macOS), the runtime's
 * dependencies (bubblewrap and socat on Linux), and — on Linux — user namespaces bubblewrap may
 * create (a container without them, or Ubuntu's AppArmor restriction, refuses). Asked once per
 * process for each pair of paths.
 */
export function sandboxAvailability(paths: { bwrapPath?: string; socatPath?: string } = {}): SandboxAvailability {
  const key = `${paths.bwrapPath ?? ""}\0${paths.socatPath ?? ""}`;
  const cached = availabilityCache.get(key);
  if (cached) return cached;
  const found = probe(paths);
  availabilityCache.set(key, found);
  return found;
}

function probe(paths: { bwrapPath?: string; socatPath?: string }): SandboxAvailability {
  if (process.platform === "win32")
    return { available: false, reason: "Windows has no sandbox (run Gatehouse in WSL2)" };
  if (process.platform !== "linux" && process.platform !== "darwin")
    return { available: false, reason: `${process.platform} is not a platform the sandbox supports` };
  if (process.platform === "darwin") return { available: true };
  const bwrap = paths.bwrapPath ?? located("bwrap");
  if (bwrap === "") return { available: false, reason: "bubblewrap (bwrap) is not installed" };
  if ((paths.socatPath ?? located("socat")) === "") return { available: false, reason: "socat is not installed" };
  const tried = spawnSync(
    bwrap,
    ["--unshare-user", "--unshare-pid", "--unshare-net", "--ro-bind", "/", "/", "--proc", "/proc", "--", "true"],
    { encoding: "utf8", timeout: 10_000 },
  );
  if (tried.status !== 0) {
    const why = (tried.stderr || tried.error?.message || `exit ${tried.status}`).trim().split("\n")[0];
    return { available: false, reason: `bubblewrap cannot create namespaces here (${why})` };
  }
  return { available: true };
}

const locations = new Map<string, string>();

/**
 * Where `name` is on $PATH ("" when it is not), looked up once per process with no time limit.
 * The runtime is always handed the paths found here: left to itself, it looks bubblewrap up for
 * every command with a one-second `which`, and on a loaded machine a lookup that ran out of time
 * would quietly drop `--disable-userns` from the command's sandbox.
 */
function located(name: "bwrap" | "socat"): string {
  let found = locations.get(name);
  if (found === undefined) {
    found = spawnSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" }).stdout.trim();
    locations.set(name, found);
  }
  return found;
}

/** The bubblewrap and socat the runtime runs: those the settings name, else those on $PATH (Linux). */
function toolPaths(options: { bwrapPath?: string; socatPath?: string }): { bwrapPath?: string; socatPath?: string } {
  const onLinux = process.platform === "linux";
  const bwrapPath = options.bwrapPath ?? (onLinux ? located("bwrap") : "");
  const socatPath = options.socatPath ?? (onLinux ? located("socat") : "");
  return { ...(bwrapPath ? { bwrapPath } : {}), ...(socatPath ? { socatPath } : {}) };
}

const usernsProbesSettled = new Set<string>();

/**
 * Makes the runtime's answer to "can this bubblewrap refuse user namespaces?" agree with ours.
 * A command with no seccomp helper (`allowAllUnixSockets`) relies on `--disable-userns`, which the
 * runtime adds only when its own `bwrap --help` probe answered within five seconds; a probe that
 * ran out of time is not remembered, and the command it was for runs without the flag. Here the
 * question is asked once with no time limit, and when bubblewrap can refuse them the runtime is
 * asked until it has remembered so. If it never does, the sandbox does not start.
 */
async function settleUsernsProbe(bwrap: string): Promise<void> {
  if (usernsProbesSettled.has(bwrap)) return;
  const { bwrapCanDisableUserns } = await import("@anthropic-ai/sandbox-runtime/dist/sandbox/linux-sandbox-utils.js");
  if (canRefuseUserns(bwrap)) {
    let remembered = false;
    for (let tries = 0; tries < USERNS_PROBE_TRIES && !remembered; tries++) remembered = bwrapCanDisableUserns(bwrap);
    if (!remembered)
      throw new Error(
        `bubblewrap (${bwrap}) can refuse user namespaces, but did not answer the sandbox runtime's check in time; ` +
          "no command is started without that refusal",
      );
  }
  usernsProbesSettled.add(bwrap);
}

/** How many times the runtime is asked (each with its own five-second limit) before the sandbox refuses to start. */
const USERNS_PROBE_TRIES = 3;

/** Whether `bwrap` lists `--disable-userns` (0.8.0 and later) and is not setuid (which refuses the option). */
function canRefuseUserns(bwrap: string): boolean {
  try {
    if ((statSync(bwrap).mode & 0o4000) !== 0) return false;
  } catch {
    return false;
  }
  const help = spawnSync(bwrap, ["--help"], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  return `${help.stdout ?? ""}${help.stderr ?? ""}`.includes("--disable-userns");
}

/** Asks whoever may be asked (the permission flow) whether a sandboxed command may reach a host. */
export type NetworkAsk = (host: string, port: number | undefined) => Promise<boolean>;

interface ActiveCommand {
  readonly policy: SandboxPolicy;
  readonly ask?: NetworkAsk;
  readonly refused?: (kind: SandboxRefusalKind) => void;
}
const active = new Map<string, ActiveCommand>();

/**
 * The runtime's process-wide configuration (its proxies, the socat bridges, the socket and
 * binding settings). Every change to it is made in `configuration.change`, one at a time, and a
 * configuration is only replaced once no command runs under it: a reset while a command is being
 * wrapped or runs would leave that command talking to a proxy that has no policy (it refuses
 * everything, and no refusal reaches the audit) or to a socket that is gone.
 */
const configuration = {
  running: undefined as Promise<void> | undefined,
  key: undefined as string | undefined,
  /** Commands admitted under the running configuration and not yet released. */
  users: 0,
  whenIdle: new Set<() => void>(),
  queue: Promise.resolve() as Promise<unknown>,

  change<T>(step: () => Promise<T>): Promise<T> {
    const next = this.queue.then(step);
    this.queue = next.catch(() => {});
    return next;
  },
  /** Resolves once no command runs under the configuration; rejects with `signal`'s reason. */
  idle(signal?: AbortSignal): Promise<void> {
    if (this.users === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const done = () => {
        signal?.removeEventListener("abort", aborted);
        resolve();
      };
      const aborted = () => {
        this.whenIdle.delete(done);
        reject(signal?.reason);
      };
      if (signal?.aborted) return aborted();
      this.whenIdle.add(done);
      signal?.addEventListener("abort", aborted, { once: true });
    });
  },
  leave(): void {
    this.users--;
    if (this.users > 0) return;
    const waiting = [...this.whenIdle];
    this.whenIdle.clear();
    for (const resolve of waiting) resolve();
  },
  async stop(): Promise<void> {
    if (!this.running) return;
    await this.running.catch(() => {});
    this.running = undefined;
    this.key = undefined;
    const { SandboxManager } = await runtime();
    await SandboxManager.reset();
  },
};

const CLEANUP_SIGNALS = ["SIGINT", "SIGTERM"] as const;
type SignalListener = (signal: NodeJS.Signals) => void;

function signalListeners(): Map<NodeJS.Signals, SignalListener[]> {
  return new Map(CLEANUP_SIGNALS.map((signal) => [signal, process.listeners(signal) as SignalListener[]]));
}

/**
 * The runtime's cleanup listens once for SIGINT and SIGTERM, and a listener takes away a signal's
 * default action: a program with no handler of its own (one that embeds Gatehouse) would outlive
 * its first SIGTERM. Each such listener is replaced by one that cleans up the same way and then,
 * when nobody else listens, ends the process by the signal, as it would have ended without the
 * sandbox. (`gatehouse run`, `chat` and `serve` listen themselves, and decide.)
 */
function keepSignalsFatal(before: Map<NodeJS.Signals, SignalListener[]>): void {
  for (const signal of CLEANUP_SIGNALS) {
    const added = (process.listeners(signal) as SignalListener[]).filter((l) => !before.get(signal)?.includes(l));
    for (const cleanup of added) {
      process.removeListener(signal, cleanup);
      process.once(signal, () => {
        cleanup(signal);
        if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
      });
    }
  }
}

/** How long a command waits for commands running with other process-wide settings to end. */
export const SANDBOX_ADMIT_WAIT_MS = 30_000;

/**
 * Decides a connection no list of the runtime's decided. The runtime names no command here, so a
 * host is decided by every command running now: when they disagree, or more than one would have
 * to ask, it is refused (fail closed).
 */
async function decideConnection({ host, port }: { host: string; port: number | undefined }) {
  const commands = [...active.values()];
  if (commands.length === 0) return { allow: false as const, reason: "no sandboxed command is running" };
  const decisions = commands.map((c) => decideHost(c.policy.network, host));
  const refuse = (reason: string) => {
    for (const c of commands) c.refused?.("network");
    return { allow: false as const, reason };
  };
  if (decisions.every((d) => d.verdict === "allow")) return true;
  const denied = decisions.find((d) => d.verdict === "deny");
  if (denied) return refuse(denied.reason);
  const only = commands.length === 1 ? commands[0] : undefined;
  if (only?.ask === undefined)
    return refuse(only ? "no one can be asked about this host" : "several sandboxed commands run at once");
  const allowed = await only.ask(host, port).catch(() => false);
  return allowed ? true : refuse("the permission check refused this host");
}

/**
 * Admits one command: once this resolves, the runtime runs with `policy`'s process-wide settings
 * (its socket and binding settings, the bwrap and socat paths) and stays so until the command
 * calls `configuration.leave()`. A command whose settings differ from those of commands running
 * now waits for them to end, never borrows their settings; after `SANDBOX_ADMIT_WAIT_MS`, or when
 * its own signal aborts, it is not started.
 */
async function admit(
  policy: SandboxPolicy,
  paths: { bwrapPath?: string; socatPath?: string },
  signal: AbortSignal | undefined,
): Promise<void> {
  const network = policy.network;
  const key = JSON.stringify([
    network.allowUnixSockets,
    network.allowAllUnixSockets,
    network.allowLocalBinding,
    paths.bwrapPath ?? "",
    paths.socatPath ?? "",
  ]);
  // Only a command that has to wait builds its wait signal: most never wait, and each would hold a timer.
  let wait: LinkedSignal | undefined;
  try {
    while (!(await admitNow(key, network, paths))) {
      wait ??= linkedSignal([AbortSignal.timeout(SANDBOX_ADMIT_WAIT_MS), ...(signal ? [signal] : [])]);
      await configuration.idle(wait.signal).catch(() => {
        throw new Error(
          "the sandbox is running with other socket settings (sandbox.network.allowUnixSockets, " +
            "allowAllUnixSockets, allowLocalBinding, bwrapPath, socatPath) for commands of another project " +
            "that are still running; this command was not started",
        );
      });
    }
  } finally {
    wait?.release();
  }
}

/** Admits a command now if the runtime runs, or can be (re)started, with settings `key`; false when it must wait. */
function admitNow(
  key: string,
  network: SandboxPolicy["network"],
  paths: { bwrapPath?: string; socatPath?: string },
): Promise<boolean> {
  return configuration.change(async () => {
    if (configuration.running && configuration.key !== key) {
      if (configuration.users > 0) return false;
      await configuration.stop();
    }
    if (!configuration.running) {
      configuration.key = key;
      configuration.running = runtime().then(async ({ SandboxManager }) => {
        // Before initialize: a start that fails here leaves no runtime behind that the next start would reuse.
        if (process.platform === "linux" && paths.bwrapPath) await settleUsernsProbe(paths.bwrapPath);
        const before = signalListeners();
        await SandboxManager.initialize(
          {
            // Every host goes to `decideConnection`, which compares names with hostInDomain.
            network: {
              allowedDomains: [],
              deniedDomains: [],
              allowUnixSockets: [...network.allowUnixSockets],
              allowAllUnixSockets: network.allowAllUnixSockets,
              allowLocalBinding: network.allowLocalBinding,
            },
            filesystem: { denyRead: [], allowWrite: [], denyWrite: [] },
            ...(paths.bwrapPath ? { bwrapPath: paths.bwrapPath } : {}),
            ...(paths.socatPath ? { socatPath: paths.socatPath } : {}),
          } as SandboxRuntimeConfig,
          decideConnection,
          // The violation monitor: the writes the sandbox refused, for the audit trail (see release).
          true,
        );
        keepSignalsFatal(before);
      });
    }
    try {
      await configuration.running;
    } catch (error) {
      // A runtime that failed to start is started again by the next command.
      configuration.running = undefined;
      configuration.key = undefined;
      throw error;
    }
    configuration.users++;
    return true;
  });
}

/** The sandbox's $TMPDIR (the runtime's choice), writable by every sandboxed command. */
export const SANDBOX_TMPDIR = "/tmp/claude";

export interface WrapOptions {
  readonly shell: string;
  readonly cwd: string;
  readonly policy: SandboxPolicy;
  readonly signal?: AbortSignal;
  readonly ask?: NetworkAsk;
  readonly refused?: (kind: SandboxRefusalKind) => void;
  readonly bwrapPath?: string;
  readonly socatPath?: string;
}

export interface WrappedCommand {
  /** What to spawn (in its own process group, with the command's own environment). */
  readonly argv: readonly string[];
  /**
   * Call once the command ended: its network requests are no longer decided for it, and a write
   * the sandbox refused it is reported (`refused("filesystem")`, once).
   */
  release(): void;
}

/** `shell -c command` inside the sandbox, with `policy`. */
export async function wrapInSandbox(command: string, options: WrapOptions): Promise<WrappedCommand> {
  await admit(options.policy, toolPaths(options), options.signal);
  const id = randomBytes(16).toString("base64url");
  active.set(id, {
    policy: options.policy,
    ...(options.ask ? { ask: options.ask } : {}),
    ...(options.refused ? { refused: options.refused } : {}),
  });
  try {
    const { SandboxManager } = await runtime();
    // The runtime points $TMPDIR at its own temp folder (writable in every sandbox) but leaves it to us to create.
    if (process.platform === "linux") mkdirSync(SANDBOX_TMPDIR, { recursive: true });
    const fs = options.policy.filesystem;
    const { argv } = await withShellLookupRetried(options.shell, () =>
      SandboxManager.wrapWithSandboxArgv(
        command,
        options.shell,
        {
          filesystem: {
            allowWrite: [...fs.allowWrite],
            denyWrite: [...fs.denyWrite],
            denyRead: [...fs.denyRead],
            allowRead: [...fs.allowRead],
          },
        },
        options.signal,
        options.cwd,
        { commandId: id },
      ),
    );
    let released = false;
    return {
      argv,
      release() {
        if (released) return;
        released = true;
        active.delete(id);
        const violations = SandboxManager.getSandboxViolationStore().getViolationsForCommand(id);
        if (violations.some((v) => writeRefused(options.policy, v.line, SANDBOX_TMPDIR)))
          options.refused?.("filesystem");
        SandboxManager.cleanupAfterCommand();
        configuration.leave();
      },
    };
  } catch (error) {
    active.delete(id);
    configuration.leave();
    throw error;
  }
}

/** How many times a command is wrapped when the runtime's lookup of an existing shell fails. */
const SHELL_LOOKUP_TRIES = 3;

/**
 * The runtime looks the shell up for every command with a one-second `which`. On a loaded machine
 * that lookup can run out of time, and the wrap fails with "Shell '…' not found in PATH" although
 * the shell is there; such a wrap is tried again. A shell that is not an executable file fails at once.
 */
async function withShellLookupRetried<T>(shell: string, wrap: () => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await wrap();
    } catch (error) {
      const lookupFailed = error instanceof Error && error.message === `Shell '${shell}' not found in PATH`;
      if (!lookupFailed || tries === SHELL_LOOKUP_TRIES || !isExecutableFile(shell)) throw error;
    }
  }
}

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return isAbsolute(path) && statSync(path).isFile();
  } catch {
    return false;
  }
}

/** Whether this process has started the runtime: its proxies and bridges then live until resetSandbox. */
export function sandboxStarted(): boolean {
  return configuration.running !== undefined;
}

/** Stops the runtime's proxies (tests, and a process that is done with the sandbox), once no command runs. */
export function resetSandbox(): Promise<void> {
  return configuration.change(async () => {
    await configuration.idle();
    await configuration.stop();
  });
}
