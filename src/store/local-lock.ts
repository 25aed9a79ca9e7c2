import { abortError } from "./serial.js";

interface Waiter {
  readonly grant: () => void;
  readonly reject: (error: unknown) => void;
  granted: boolean;
}

/** First come, first served: one holder per session inside this process, the rest wait in arrival order. */
export class SessionLockQueues {
  private readonly queues = new Map<string, Waiter[]>();

  /** `onWait` is called when another holder has the lock and this call queues behind it. */
  acquire(sessionId: string, signal?: AbortSignal, onWait?: () => void): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(abortError(signal));
    return new Promise((resolve, reject) => {
      const queue = this.queues.get(sessionId) ?? [];
      this.queues.set(sessionId, queue);
      const onAbort = () => {
        const i = queue.indexOf(waiter);
        if (i < 0 || waiter.granted) return;
        queue.splice(i, 1);
        reject(abortError(signal));
      };
      const waiter: Waiter = {
        granted: false,
        reject,
        grant: () => {
          waiter.granted = true;
          signal?.removeEventListener("abort", onAbort);
          let released = false;
          resolve(() => {
            if (released) return;
            released = true;
            this.releaseHead(sessionId, waiter);
          });
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      queue.push(waiter);
      if (queue.length === 1) waiter.grant();
      else onWait?.();
    });
  }

  /** Rejects every waiter that has not been granted the lock yet (the store is closing). */
  rejectWaiting(error: Error): void {
    for (const queue of this.queues.values()) {
      for (const waiter of queue.splice(1)) waiter.reject(error);
    }
  }

  private releaseHead(sessionId: string, holder: Waiter): void {
    const queue = this.queues.get(sessionId);
    if (!queue || queue[0] !== holder) return;
    queue.shift();
    const next = queue[0];
    if (next) next.grant();
    else this.queues.delete(sessionId);
  }
}
