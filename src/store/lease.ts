import { createHash, randomBytes } from "node:crypto";
import { readFileSync, readlinkSync } from "node:fs";
import { hostname } from "node:os";
import { procStat } from "../core/process-groups.js";
import type { Awaitable } from "./backend.js";
import { StoreError } from "./errors.js";
import { abortError, delay } from "./serial.js";

/**
 * The cross-process run lock, the same for SQLite and PostgreSQL: a lease row per session in the
 * database (`run_leases`), held by an owner (one open store: a process, or a `serve` instance), with an
 * expiry the owner's heartbeat keeps pushing forward. Processes waiting for a session take a ticket
 * (`run_lease_waiters`) and are served in ticket order, so a busy process cannot starve another by
 * taking the lease again the moment it lets it go.
 *
 * A lease whose owner is gone is taken over: on the same host, "gone" is read from the process table
 * at once (a SIGKILLed holder frees its sessions as soon as the kernel has reaped it); an owner on
 * another host is gone once its expiry has passed without a heartbeat. Whoever takes a lease learns
 * how many runs of the session were left "running"; they are the new holder's to recover.
 */

/** Longest pause between two attempts of a process waiting for a session another process holds. */
const MAX_POLL_MS = 25;
export const DEFAULT_LEASE_TTL_MS = 30_000;

export interface LeaseHolder {
  readonly owner: string;
  /** Milliseconds since 1970 on the database's clock. */
  readonly expiresAt: number;
}

export interface LeaseWaiter extends LeaseHolder {
  readonly ticket: number;
}

export interface LeaseState {
  /** The database's clock, in milliseconds since 1970. */
  readonly now: number;
  readonly holder: LeaseHolder | undefined;
  /** Waiters ahead of the given ticket (all of them without one), oldest first. */
  readonly waiters: readonly LeaseWaiter[];
}

export interface LeaseRow extends LeaseHolder {
  readonly sessionId: string;
}

/**
 * The lease statements a SQL backend provides. Each write is one statement (atomic by itself); times
 * are the database's clock, so owners on hosts with different clocks agree on what has expired.
 */
export interface LeaseStatements {
  /**
   * Takes a free lease unless someone is queued (ahead of `ticket`, when given); a lease the owner itself
   * still holds in the database (its release failed) counts as free. Returns the number of the session's
   * runs still "running" when taken, or undefined when not taken.
   */
  takeLease(sessionId: string, owner: string, ttlMs: number, ticket: number | null): Awaitable<number | undefined>;
  /** Takes the lease over from `from` if it still holds it; returns as `takeLease`. */
  takeOverLease(sessionId: string, from: string, owner: string, ttlMs: number): Awaitable<number | undefined>;
  leaseState(sessionId: string, ticket: number | null): Awaitable<LeaseState>;
  /** False when the lease was no longer this owner's. */
  releaseLease(sessionId: string, owner: string): Awaitable<boolean>;
  queueForLease(sessionId: string, owner: string, ttlMs: number): Awaitable<number>;
  leaveLeaseQueue(ticket: number): Awaitable<void>;
  /** Pushes the expiry of the owner's leases and tickets forward; returns the sessions it still holds. */
  renewLeases(owner: string, ttlMs: number): Awaitable<string[]>;
  /** Removes the owner's leases and tickets. */
  dropLeaseOwner(owner: string): Awaitable<void>;
  leasesNotOwnedBy(owner: string): Awaitable<{ readonly now: number; readonly leases: readonly LeaseRow[] }>;
}

/** A lease this store holds. */
export interface HeldLease {
  readonly owner: string;
  readonly interruptedRuns: number;
  /** Aborts if the lease is found to be someone else's while still held (see `RunLock.lost`). */
  readonly lost: AbortSignal;
  release(): Promise<void>;
}

/** How the leases reach the database: writes commit before they resolve; reads see one snapshot. */
export interface LeaseDatabase {
  write<T>(fn: (s: LeaseStatements) => Awaitable<T>): Promise<T>;
  read<T>(fn: (s: LeaseStatements) => Awaitable<T>): Promise<T>;
}

export interface RunLeaseOptions {
  /** How long a lease outlives its owner's last heartbeat (default 30 s); heartbeats come every third of it. */
  readonly ttlMs?: number;
}

/** The owners open in this process: a lease of this pid whose owner is not among them was left by a closed store. */
const openOwners = new Set<string>();

export class RunLeases {
  readonly owner = ownerToken();
  private readonly ttlMs: number;
  private readonly held = new Map<string, Holding>();
  /** Leases whose release failed: still ours in the database until the heartbeat manages it. */
  private readonly unreleased = new Set<string>();
  private waiting = 0;
  private heartbeat: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly db: LeaseDatabase,
    options: RunLeaseOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? DEFAULT_LEASE_TTL_MS;
    openOwners.add(this.owner);
  }

  async acquire(sessionId: string, signal: AbortSignal | undefined, onWait?: () => void): Promise<HeldLease> {
    let ticket: number | null = null;
    this.waiting++;
    this.startHeartbeat();
    try {
      for (let attempt = 0; ; attempt++) {
        if (signal?.aborted) throw abortError(signal);
        this.assertOpen();
        const taken = ticket;
        let running = await this.db.write((s) => s.takeLease(sessionId, this.owner, this.ttlMs, taken));
        if (running === undefined) {
          const next = await this.clearDeparted(sessionId, ticket);
          if (next === "retry") continue;
          running = next;
        }
        if (running !== undefined) {
          if (taken !== null) await this.db.write((s) => s.leaveLeaseQueue(taken));
          return this.holding(sessionId, running);
        }
        if (ticket === null) {
          ticket = await this.db.write((s) => s.queueForLease(sessionId, this.owner, this.ttlMs));
          onWait?.();
        }
        await delay(Math.min(2 ** attempt, MAX_POLL_MS), signal);
      }
    } catch (error) {
      const taken = ticket;
      // A closed store has dropped all of its tickets (and its connections may be gone).
      if (this.closed) throw new StoreError("closed", "the store was closed while waiting for a run lock");
      if (taken !== null) await this.db.write((s) => s.leaveLeaseQueue(taken)).catch(() => undefined);
      throw error;
    } finally {
      this.waiting--;
    }
  }

  /** Sessions whose lease is held by an owner that is gone: their interrupted runs wait for a recovery. */
  async abandoned(): Promise<string[]> {
    this.assertOpen();
    const { now, leases } = await this.db.read((s) => s.leasesNotOwnedBy(this.owner));
    return leases.filter((l) => !ownerAlive(l, now)).map((l) => l.sessionId);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    openOwners.delete(this.owner);
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    this.held.clear();
    await this.db.write((s) => s.dropLeaseOwner(this.owner));
  }

  /**
   * Removes the tickets of departed waiters ahead of ours, and takes over the lease of a departed holder
   * when no live waiter is ahead of us. Returns the running-run count when it took the lease, "retry"
   * when something changed (try to take it again at once), undefined when a live owner is in the way.
   */
  private async clearDeparted(sessionId: string, ticket: number | null): Promise<number | "retry" | undefined> {
    const state = await this.db.read((s) => s.leaseState(sessionId, ticket));
    let cleared = false;
    let liveAhead = false;
    for (const waiter of state.waiters) {
      if (ownerAlive(waiter, state.now)) liveAhead = true;
      else {
        await this.db.write((s) => s.leaveLeaseQueue(waiter.ticket));
        cleared = true;
      }
    }
    // The first live waiter goes first, whether the lease is free or its holder departed.
    if (liveAhead) return undefined;
    const holder = state.holder;
    if (holder && !ownerAlive(holder, state.now)) {
      const running = await this.db.write((s) => s.takeOverLease(sessionId, holder.owner, this.owner, this.ttlMs));
      return running ?? "retry";
    }
    return holder === undefined || cleared ? "retry" : undefined;
  }

  private holding(sessionId: string, interruptedRuns: number): HeldLease {
    const holding = new Holding();
    this.held.set(sessionId, holding);
    this.unreleased.delete(sessionId);
    return {
      owner: this.owner,
      interruptedRuns,
      get lost() {
        return holding.signal;
      },
      release: async () => {
        if (this.held.get(sessionId) !== holding) return;
        this.held.delete(sessionId);
        try {
          if (!this.closed) await this.db.write((s) => s.releaseLease(sessionId, this.owner));
        } catch (error) {
          // Still ours in the database: the heartbeat lets it go later (and taking it again reuses it).
          this.unreleased.add(sessionId);
          throw error;
        }
      },
    };
  }

  /** Runs while this store holds or waits for a lease; the first beat that finds it idle stops it. */
  private startHeartbeat(): void {
    if (this.heartbeat || this.closed) return;
    this.heartbeat = setInterval(() => void this.renew().catch(() => undefined), Math.max(1, this.ttlMs / 3));
    this.heartbeat.unref();
  }

  /**
   * Pushes our expiry forward. A lease of ours that is gone was taken over (our heartbeats stopped for
   * longer than the expiry, on a host where that is all others can see): its holder is told.
   */
  private async renew(): Promise<void> {
    for (const sessionId of [...this.unreleased]) {
      if (this.held.has(sessionId)) continue;
      await this.db.write((s) => s.releaseLease(sessionId, this.owner));
      this.unreleased.delete(sessionId);
    }
    if (this.held.size === 0 && this.waiting === 0 && this.unreleased.size === 0) {
      clearInterval(this.heartbeat);
      this.heartbeat = undefined;
      return;
    }
    const before = [...this.held];
    const still = new Set(await this.db.write((s) => s.renewLeases(this.owner, this.ttlMs)));
    for (const [sessionId, holding] of before) {
      if (still.has(sessionId) || this.held.get(sessionId) !== holding) continue;
      this.held.delete(sessionId);
      holding.lose(new StoreError("conflict", `the run lock of session ${sessionId} was taken over`));
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new StoreError("closed", "the store was closed while waiting for a run lock");
  }
}

/** A held lease's `lost` signal, made only when someone asks for it (an AbortController is not free). */
class Holding {
  private controller: AbortController | undefined;
  private reason: Error | undefined;

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.reason) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  lose(reason: Error): void {
    this.reason = reason;
    this.controller?.abort(reason);
  }
}

// Owners

/**
 * The host part of an owner token: processes with the same one can see each other in the process table.
 * On Linux that is the boot and the PID namespace (containers sharing a data volume differ); elsewhere
 * the host name.
 */
function hostId(): string {
  let host: string;
  try {
    host = `${readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim()}/${readlinkSync("/proc/self/ns/pid")}`;
  } catch {
    host = hostname();
  }
  return createHash("sha256").update(host).digest("hex").slice(0, 16);
}

let thisHost: string | undefined;

/** `host:pid:starttime:random`; the start time tells a live owner from a later process that reused its pid. */
function ownerToken(): string {
  thisHost ??= hostId();
  return `${thisHost}:${process.pid}:${processStartTime(process.pid) ?? "?"}:${randomBytes(4).toString("hex")}`;
}

/** Whether a lease's or ticket's owner may still be working: see the comment at the top. */
export function ownerAlive(row: LeaseHolder, now: number): boolean {
  thisHost ??= hostId();
  const [host, pidText, startTime] = row.owner.split(":");
  const pid = Number(pidText);
  if (host !== thisHost || !Number.isInteger(pid) || pid <= 0) return row.expiresAt > now;
  if (pid === process.pid) return openOwners.has(row.owner);
  const current = processStartTime(pid);
  if (current === null) return false;
  if (current !== undefined && startTime !== "?") return current === startTime;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** A process's start time from /proc; null when it is gone (or a zombie), undefined when /proc cannot say. */
function processStartTime(pid: number): string | undefined | null {
  const stat = procStat(pid);
  if (stat) return stat.state === "Z" || stat.state === "X" ? null : stat.startTime;
  return readableProc() ? null : undefined;
}

let procAvailable: boolean | undefined;
function readableProc(): boolean {
  if (procAvailable === undefined) procAvailable = procStat(process.pid) !== undefined;
  return procAvailable;
}
