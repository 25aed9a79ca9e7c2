/**
 * Per-handler timeouts without a timer per handler. Handlers of one hook share a duration,
 * so deadlines arrive in order: one FIFO and one timer per duration suffice. Adding is a push;
 * settling is a flag. The timer keeps the process alive only while some handler is pending.
 */
export interface Deadline {
  settled: boolean;
  readonly at: number;
  /** Dropped once settled, so a settled entry waiting in the FIFO holds nothing of its handler. */
  expire: (() => void) | undefined;
}

export class DeadlineQueue {
  private readonly entries: Deadline[] = [];
  private head = 0;
  private pending = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly ms: number) {}

  add(expire: () => void): Deadline {
    const entry: Deadline = { settled: false, at: performance.now() + this.ms, expire };
    this.entries.push(entry);
    if (this.pending++ === 0) {
      if (this.timer === undefined) this.arm(this.ms);
      else this.timer.ref();
    }
    return entry;
  }

  /** Returns false when the deadline already expired (the late result must be dropped). */
  settle(entry: Deadline): boolean {
    if (entry.settled) return false;
    entry.settled = true;
    entry.expire = undefined;
    if (--this.pending === 0) {
      // Everything queued is settled: forget it now rather than when the timer next fires
      // (up to a whole timeout later), or a busy hook retains every deadline of that window.
      this.entries.length = 0;
      this.head = 0;
      this.timer?.unref();
    }
    return true;
  }

  private arm(delay: number): NodeJS.Timeout {
    this.timer = setTimeout(() => this.fire(), Math.max(1, Math.ceil(delay)));
    return this.timer;
  }

  private fire(): void {
    this.timer = undefined;
    const now = performance.now();
    const { entries } = this;
    while (this.head < entries.length) {
      const entry = entries[this.head] as Deadline;
      if (!entry.settled && entry.at > now) break;
      this.head++;
      if (!entry.settled) {
        const expire = entry.expire as () => void;
        entry.settled = true;
        entry.expire = undefined;
        this.pending--;
        expire();
      }
    }
    if (this.head === entries.length) {
      entries.length = 0;
      this.head = 0;
    } else {
      if (this.head > 1024) {
        entries.splice(0, this.head);
        this.head = 0;
      }
      const timer = this.arm((entries[this.head] as Deadline).at - now);
      if (this.pending === 0) timer.unref();
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
