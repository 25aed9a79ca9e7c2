import type { OutStream } from "./output.js";

/** Said while an output gate holds the answer back, in `chat` and `run`. */
export const HELD = "(the reply is held until the output policy passes)";

/** Said once when a run waits for another run of its session (another process, or another turn). */
export const LOCK_WAIT = "waiting for another run of this session to finish…";

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const INTERVAL_MS = 100;

/**
 * A live line on a terminal: a spinner, what is happening and the time since `start`, redrawn
 * in place every 100 ms while shown. Writes nothing unless shown; `hide` erases it (so other output
 * can take the line) and `show` brings it back.
 */
export class StatusLine {
  #text = "";
  #shown = false;
  #frame = 0;
  #timer: NodeJS.Timeout | undefined;
  #startedAt = performance.now();

  constructor(
    private readonly out: OutStream,
    private readonly paint: (text: string) => string = (t) => t,
  ) {}

  /** Restarts the clock (a new turn). */
  start(text: string): void {
    this.#startedAt = performance.now();
    this.show(text);
  }

  /** Shows the line (with new text, if given) and keeps it animating. */
  show(text?: string): void {
    const changed = text !== undefined && text !== this.#text;
    if (text !== undefined) this.#text = text;
    if (!this.#shown || changed) {
      this.#shown = true;
      this.draw();
    }
    this.#timer ??= setInterval(() => this.draw(), INTERVAL_MS).unref();
  }

  /** New text; drawn at once when the line is shown. */
  set(text: string): void {
    this.#text = text;
    if (this.#shown) this.draw();
  }

  get shown(): boolean {
    return this.#shown;
  }

  /** Erases the line and stops animating. */
  hide(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    if (!this.#shown) return;
    this.#shown = false;
    this.out.write("\r\x1b[2K");
  }

  /** Seconds since `start`, one decimal. */
  elapsed(): string {
    return `${((performance.now() - this.#startedAt) / 1000).toFixed(1)}s`;
  }

  private draw(): void {
    if (!this.#shown) return;
    this.#frame = (this.#frame + 1) % FRAMES.length;
    this.out.write(`\r\x1b[2K${this.paint(`${FRAMES[this.#frame]} ${this.#text} · ${this.elapsed()}`)}`);
  }
}
