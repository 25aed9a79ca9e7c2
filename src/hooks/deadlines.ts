/**
 * Per-handler timeouts without a timer per handler. Handlers of one hook share a duration,
 * so deadlines arrive in order: one FIFO and one timer per duration suffice. Adding is a push;
 * settling is a flag. The timer keeps the process alive only while some handler is pending.
 */
export abstract class Deadline {
  settled = false;
  at = 0;
  /** Called at most once, when the deadline passes before `settle`. */
  abstract expire(): void;
  /** Called once settled or expired: drop whatever the entry holds while it waits in the FIFO. */
  abstract release(): void;
  /** Called at most once, instead of `expire`, when the entry's run is cancelled first. */
  cancel(): void {
    this.expire();
  }
  belongsTo(_runId: string): boolean {
    return false;
  }
}

export class DeadlineQueue {
  private readonly entries: Deadline[] = [];
  private head = 0;
  private tail = 0;
  private pending = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly ms: number) {}

  add(entry: Deadline): void {
    entry.at = performance.now() + this.ms;
    this.entries[this.tail++] = entry;
    if (this.pending++ === 0) {
      if (this.timer === undefined) this.arm(this.ms);
      else this.timer.ref();
    }
  }

  /** Returns false when the deadline already expired (the late result must be dropped). */
  settle(entry: Deadline): boolean {
    if (entry.settled) return false;
    entry.settled = true;
    entry.release();
    if (--this.pending === 0) {
      // Everything queued is settled: forget it now rather than when the timer next fires
      // (up to a whole timeout later), or a busy hook retains every deadline of that window.
      // The slots are reused; what they still point at holds nothing (released).
      this.head = 0;
      this.tail = 0;
      this.timer?.unref();
    }
    return true;
  }

  /** Settles and cancels every pending entry of a run. */
  cancelRun(runId: string): void {
    const cancelled: Deadline[] = [];
    for (let i = this.head; i < this.tail; i++) {
      const entry = this.entries[i] as Deadline;
      if (!entry.settled && entry.belongsTo(runId)) cancelled.push(entry);
    }
    for (const entry of cancelled) {
      // settle() releases the entry, so cancel first, then settle (a re-entrant add is fine).
      entry.cancel();
      this.settle(entry);
    }
  }

  private arm(delay: number): NodeJS.Timeout {
    this.timer = setTimeout(() => this.fire(), Math.max(1, Math.ceil(delay)));
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
    // adds a deadline to this very queue.
    for (const entry of expired) {
      entry.expire();
      entry.release();
    }
  }
}

const queues = new Map<number, DeadlineQueue>();

export function deadlineQueue(ms: number): DeadlineQueue {
  let queue = queues.get(ms);
  if (queue === undefined) {
    queue = new DeadlineQueue(ms);
    queues.set(ms, queue);
  }
  return queue;
}

/** A cancelled run stops waiting for its pending hook handlers at once. */
export function cancelPendingHandlers(runId: string): void {
  for (const queue of queues.values()) queue.cancelRun(runId);
}
