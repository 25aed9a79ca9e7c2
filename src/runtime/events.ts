import type { RunEvent } from "./types.js";

/**
 * A single-consumer queue of run events: the run pushes, the caller iterates. Nothing is
 * buffered when nobody streams (`run()` uses a sink that drops events).
 */
export class RunEventChannel implements AsyncIterable<RunEvent> {
  private readonly buffer: RunEvent[] = [];
  private waiting: ((r: IteratorResult<RunEvent>) => void) | undefined;
  private closed = false;

  push(event: RunEvent): void {
    if (this.closed) return;
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = undefined;
      resolve({ value: event, done: false });
    } else this.buffer.push(event);
  }

  close(): void {
    this.closed = true;
    this.waiting?.({ value: undefined, done: true });
    this.waiting = undefined;
  }

  [Symbol.asyncIterator](): AsyncIterator<RunEvent> {
    return {
      next: () => {
        const event = this.buffer.shift();
        if (event) return Promise.resolve({ value: event, done: false });
        if (this.closed) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => {
          this.waiting = resolve;
        });
      },
    };
  }
}

export type EventSink = (event: RunEvent) => void;
export const dropEvents: EventSink = () => {};
