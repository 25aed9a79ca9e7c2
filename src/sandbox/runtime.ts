import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import type { SandboxRuntimeConfig } from "@anthropic-ai/sandbox-runtime";
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
  const which = (name: string) => spawnSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" }).stdout.trim();
  const bwrap = paths.bwrapPath ?? which("bwrap");
  if (bwrap === "") return { available: false, reason: "bubblewrap (bwrap) is not installed" };
  if ((paths.socatPath ?? which("socat")) === "") return { available: false, reason: "socat is not installed" };
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

/** Asks whoever may be asked (the permission flow) whether a sandboxed command may reach a host. */
export type NetworkAsk = (host: string, port: number | undefined) => Promise<boolean>;

interface ActiveCommand {
  readonly policy: SandboxPolicy;
  readonly ask?: NetworkAsk;
  readonly refused?: (kind: SandboxRefusalKind) => void;
}
const active = new Map<string, ActiveCommand>();
let initialized: Promise<void> | undefined;
let initializedWith: string | undefined;

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

async function ensureInitialized(policy: SandboxPolicy, paths: { bwrapPath?: string; socatPath?: string }) {
  const network = policy.network;
  // The process-wide part of the configuration: the first command's socket and binding settings.
  const key = JSON.stringify([network.allowUnixSockets, network.allowAllUnixSockets, network.allowLocalBinding, paths]);
  if (initialized && initializedWith !== key) {
    await initialized.catch(() => {});
    if (active.size === 0) {
      const { SandboxManager } = await runtime();
      await SandboxManager.reset();
      initialized = undefined;
    }
  }
  if (!initialized) {
    initializedWith = key;
    initialized = runtime().then(({ SandboxManager }) =>
      SandboxManager.initialize(
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
      ),
    );
    initialized.catch(() => {
      initialized = undefined;
    });
  }
  await initialized;
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
  await ensureInitialized(options.policy, options);
  const { SandboxManager } = await runtime();
  // The runtime points $TMPDIR at its own temp folder (writable in every sandbox) but leaves it to us to create.
  if (process.platform === "linux") mkdirSync(SANDBOX_TMPDIR, { recursive: true });
  const id = randomBytes(16).toString("base64url");
  active.set(id, {
    policy: options.policy,
    ...(options.ask ? { ask: options.ask } : {}),
    ...(options.refused ? { refused: options.refused } : {}),
  });
  try {
    const fs = options.policy.filesystem;
    const { argv } = await SandboxManager.wrapWithSandboxArgv(
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
      },
    };
  } catch (error) {
    active.delete(id);
    throw error;
  }
}

/** Whether this process has started the runtime: its proxies and bridges then live until resetSandbox. */
export function sandboxStarted(): boolean {
  return initialized !== undefined;
}

/** Stops the runtime's proxies (tests, and a process that is done with the sandbox). */
export async function resetSandbox(): Promise<void> {
  if (!initialized) return;
  await initialized.catch(() => {});
  initialized = undefined;
  const { SandboxManager } = await runtime();
  await SandboxManager.reset();
}
