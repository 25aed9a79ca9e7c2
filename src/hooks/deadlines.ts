/**
 * Per-handler timeouts without a timer, or even a clock read, per handler. No timer can fire
 * before the event-loop turn a handler started in has ended, and most handlers answer within
 * it: so a handler's deadline is set only if it is still pending when its turn ends, counted
 * from then (one clock read per turn). A handler gets its whole timeout, plus at most what was
 * left of its starting turn — never less.
 *
 * Handlers of one hook share a duration, so deadlines arrive in order: one FIFO and one timer
 * per duration suffice. The timer keeps the process alive only while some handler is pending.
 */
import { outsideAnyRun } from "./run-context.js";

/**
 * One pending handler's deadline. An interface rather than a base class: a derived class's
 * construction costs about twice a plain one's, and there is one per pending handler.
 */
export interface Deadline {
  /** Initially false; set here, when the deadline is settled or expired. */
  settled: boolean;
  /** Set here. */
  at: number;
  /** Set here. */
  ms: number;
  /** Set here: where the deadline waits once its turn ended; undefined while in the turn's batch. */
  queue: DeadlineQueue | undefined;
  /** Called at most once, when the deadline passes before `settle`. */
  expire(): void;
  /** Called once settled or expired: drop whatever the entry holds while it waits. */
  release(): void;
  /** Called at most once, instead of `expire`, when the entry's run is cancelled first. */
  cancel(): void;
  belongsTo(runId: string): boolean;
}

/**
 * One engine's deadlines: the batch started in the current turn (not timed yet) and a queue per
 * duration. Owned by the engine, so that two engines (two Gatehouses in one process) neither share
 * timers nor see each other's runs.
 */
export class Deadlines {
  /** The deadlines started in the current turn, not timed yet. */
  private readonly fresh: Deadline[] = [];
  private freshTail = 0;
  private freshPending = 0;
  private stampScheduled = false;
  private readonly queues = new Map<number, DeadlineQueue>();
  private readonly stamp = () => this.stampFresh();

  /** Starts an entry's timeout of `ms` milliseconds; `settle` it when the handler answers. */
  start(entry: Deadline, ms: number): void {
    entry.ms = ms;
    this.fresh[this.freshTail++] = entry;
    this.freshPending++;
    if (!this.stampScheduled) {
      this.stampScheduled = true;
      setImmediate(this.stamp);
    }
  }

  /** Returns false when the deadline already expired (the late result must be dropped). */
  settle(entry: Deadline): boolean {
    if (entry.settled) return false;
    entry.settled = true;
    entry.release();
    if (entry.queue !== undefined) entry.queue.settled();
    // Every entry of the batch is settled: its slots are reused (they hold nothing, released).
    else if (--this.freshPending === 0) this.freshTail = 0;
    return true;
  }

  /** A cancelled run stops waiting for its pending hook handlers at once. */
  cancelRun(runId: string): void {
    const cancelled: Deadline[] = [];
    for (let i = 0; i < this.freshTail; i++) {
      const entry = this.fresh[i] as Deadline;
      if (!entry.settled && entry.belongsTo(runId)) cancelled.push(entry);
    }
    for (const queue of this.queues.values()) queue.pendingOf(runId, cancelled);
    for (const entry of cancelled) {
      // Settling releases the entry, so cancel first, then settle (a re-entrant start is fine).
      entry.cancel();
      this.settle(entry);
    }
  }

  /** The turn is over: what is still pending starts waiting for its deadline. */
  private stampFresh(): void {
    this.stampScheduled = false;
    const count = this.freshTail;
    const pending = this.freshPending;
    this.freshTail = 0;
    this.freshPending = 0;
    if (pending > 0) {
      const now = performance.now();
      for (let i = 0; i < count; i++) {
        const entry = this.fresh[i] as Deadline;
        if (!entry.settled) this.queueFor(entry.ms).add(entry, now);
      }
    }
    if (count > 1024) this.fresh.length = 0;
  }

  private queueFor(ms: number): DeadlineQueue {
    let queue = this.queues.get(ms);
    if (queue === undefined) {
      queue = new DeadlineQueue(ms);
      this.queues.set(ms, queue);
    }
    return queue;
  }
}

export class DeadlineQueue {
  private readonly entries: Deadline[] = [];
  private head = 0;
  private tail = 0;
  private pending = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly ms: number) {}

  add(entry: Deadline, now: number): void {
    entry.at = now + this.ms;
    entry.queue = this;
    this.entries[this.tail++] = entry;
    if (this.pending++ === 0) {
      if (this.timer === undefined) this.arm(this.ms);
      else this.timer.ref();
    }
  }

  /** One of this queue's entries was settled. */
  settled(): void {
    if (--this.pending === 0) {
      // Everything queued is settled: forget it now rather than when the timer next fires
      // (up to a whole timeout later), or a busy hook retains every deadline of that window.
      // The slots are reused; what they still point at holds nothing (released).
      this.head = 0;
      this.tail = 0;
      this.timer?.unref();
    }
  }

  pendingOf(runId: string, into: Deadline[]): void {
    for (let i = this.head; i < this.tail; i++) {
      const entry = this.entries[i] as Deadline;
      if (!entry.settled && entry.belongsTo(runId)) into.push(entry);
    }
  }

  private arm(delay: number): NodeJS.Timeout {
    // Shared by every run's deadlines: armed outside them, so it keeps none of them alive.
    this.timer = outsideAnyRun(() => setTimeout(() => this.fire(), Math.max(1, Math.ceil(delay))));
    return this.timer;
  }

  private fire(): void {
    this.timer = undefined;
    const now = performance.now();
    const { entries } = this;
    const expired: Deadline[] = [];
    while (this.head < this.tail) {
      const entry = entries[this.head] as Deadline;
      if (!entry.settled && entry.at > now) break;
      this.head++;
      if (!entry.settled) {
        entry.settled = true;
        this.pending--;
        expired.push(entry);
      }
    }
    if (this.head === this.tail) {
      this.head = 0;
      this.tail = 0;
    } else {
      if (this.head > 1024) {
        entries.copyWithin(0, this.head, this.tail);
        this.tail -= this.head;
        this.head = 0;
      }
      this.arm((entries[this.head] as Deadline).at - now);
    }
    // Expire once the queue is consistent again: an expiry may start the next handler, which
    // starts a deadline of its own.
    for (const entry of expired) {
      entry.expire();
      entry.release();
    }
  }
}
