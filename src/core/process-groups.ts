import { readdirSync, readFileSync } from "node:fs";
import { setTimeout as delay } from "node:timers/promises";

/**
 * Process groups: every process Gatehouse starts on the model's or a hook's behalf (a Bash tool
 * call, a command hook, an MCP stdio server) is the leader of its own group, so that killing the
 * group kills whatever it started too. While a group runs it is tracked here, process-wide, so
 * that a shutdown can reach all of them at once: `killTrackedGroups` on a second Ctrl-C, and at
 * the latest on the process's `exit` event (a SIGKILL, synchronous, nothing left behind). A
 * member that calls `setsid` leaves the group and escapes this; the Bash tool's sandbox
 * (src/sandbox/) is what contains those: its PID namespace ends with the command.
 */
const tracked = new Set<number>();
let exitHookInstalled = false;

/** Tracks a group until the returned function is called (when its leader was reaped). */
export function trackGroup(pgid: number): () => void {
  tracked.add(pgid);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on("exit", () => killTrackedGroups("SIGKILL"));
  }
  return () => {
    tracked.delete(pgid);
  };
}

/** Signals every tracked group; returns how many there were. */
export function killTrackedGroups(signal: NodeJS.Signals): number {
  for (const pgid of tracked) killGroup(pgid, signal);
  return tracked.size;
}

/** The groups tracked right now (for tests and diagnostics). */
export function trackedGroups(): readonly number[] {
  return [...tracked];
}

/** Signals every process of a group; a group that is already gone is not an error. */
export function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: nothing left to signal.
  }
}

/** State letter, process group and start time (clock ticks since boot) of a pid from /proc, or undefined when it is gone. */
export function procStat(pid: number): { state: string; pgrp: number; startTime: string } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // The command name is in parentheses and may itself contain spaces or parentheses.
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return { state: fields[0] ?? "?", pgrp: Number(fields[2]), startTime: fields[19] ?? "?" };
}

/** Dead = gone or a zombie; where PID 1 does not reap orphans, zombies stay forever. */
export function isDead(pid: number): boolean {
  const s = procStat(pid);
  return s === undefined || s.state === "Z" || s.state === "X";
}

const hasProc = (() => {
  try {
    readdirSync("/proc/self");
    return true;
  } catch {
    return false;
  }
})();

/** True while any live (non-zombie) process is in the group. */
export function groupAlive(pgid: number): boolean {
  if (!hasProc) {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  }
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid <= 0) continue;
    const s = procStat(pid);
    if (s !== undefined && s.pgrp === pgid && s.state !== "Z" && s.state !== "X") return true;
  }
  return false;
}

/** Waits until the group has no live process, or the deadline passes; true when it is gone. */
export async function waitGroupGone(pgid: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    if (!groupAlive(pgid)) return true;
    if (Date.now() >= deadline) return false;
    await delay(10);
  }
}
