import type { RunEvent } from "../runtime/types.js";
import { type OutStream, writeJson } from "./output.js";
import { retryText } from "./run-end.js";
import { HELD, LOCK_WAIT, StatusLine } from "./status-line.js";
import { TerminalSanitizer, terminalLine } from "./terminal.js";

/** `json` and `stream-json` are `claude -p`'s (src/cli/claude-output.ts); `gatehouse-events` is every run event. */
export type OutputFormat = "text" | "json" | "stream-json" | "gatehouse-events";

/**
 * What `gatehouse run` shows while a run goes: with `gatehouse-events`, every run event as one JSON
 * line on stdout; otherwise, on a terminal, a live status line on stderr (elapsed, step, current
 * tool, tokens) and, in text format on a terminal, the answer as it streams — or, when an output
 * gate holds it, a line saying so. Returns whether the reply was already shown.
 */
export class RunWatcher {
  readonly #status: StatusLine | undefined;
  readonly #sanitizer = new TerminalSanitizer();
  #step = 0;
  #tokens: number | undefined;
  #tool: string | undefined;
  #held = false;
  /** `retrying (2/3) after 500` while a failed model call waits to be tried again. */
  #retry: string | undefined;
  /** The stdout cursor is not at the start of a line. */
  #open = false;
  /** Text was written to stdout as it streamed. */
  streamed = false;
  #pending: Promise<void> = Promise.resolve();
  /** Questions on screen (approvals): the status line waits. */
  #asides = 0;

  constructor(
    private readonly format: OutputFormat,
    private readonly stdout: OutStream,
    private readonly stderr: OutStream,
    paint: (text: string) => string,
  ) {
    if (format !== "stream-json" && format !== "gatehouse-events" && stderr.isTTY)
      this.#status = new StatusLine(stderr, paint);
  }

  /** Where the live text goes: stdout, in text format, when it is a terminal. */
  private get live(): boolean {
    return this.format === "text" && this.stdout.isTTY === true;
  }

  start(): void {
    this.#status?.start(this.describe());
  }

  onEvent(event: RunEvent): void {
    // stream-json's lines are Claude Code's messages (ClaudeOutput): nothing else goes to stdout.
    if (this.format === "stream-json") return;
    if (this.format === "gatehouse-events") {
      // In order, and awaited at the end: nothing is lost when the process exits.
      this.#pending = this.#pending.then(() => writeJson(this.stdout, event));
      return;
    }
    switch (event.type) {
      case "run-start":
        this.#held = event.outputHeld;
        break;
      case "lock-wait":
        this.#status?.hide();
        this.stderr.write(`gatehouse: ${LOCK_WAIT}\n`);
        break;
      case "retry":
        this.#retry = retryText(event);
        break;
      case "step":
        this.#retry = undefined;
        this.#step = event.step;
        if (event.tokens !== undefined) this.#tokens = event.tokens;
        this.#tool = undefined;
        this.endText();
        break;
      case "tool-call":
        this.#tool = terminalLine(event.toolName);
        this.endText();
        break;
      case "tool-result":
      case "tool-blocked":
        this.#tool = undefined;
        break;
      case "text-delta":
        this.#retry = undefined;
        if (this.live) this.text(event.delta);
        return;
      default:
        break;
    }
    if (!this.#open && this.#asides === 0) this.#status?.show(this.describe());
  }

  /** Runs `fn` (an approval question on the terminal) with the status line erased and not redrawn. */
  async aside<T>(fn: () => Promise<T>): Promise<T> {
    this.#asides++;
    this.#status?.hide();
    this.endText();
    try {
      return await fn();
    } finally {
      this.#asides--;
    }
  }

  /**
   * Ctrl-C (or another stop signal) arrived: the status line goes and streamed text ends its line,
   * so what is said about the cancellation starts a line of its own.
   */
  interrupted(): void {
    this.#status?.hide();
    this.endText();
  }

  /** Stops the status line and ends streamed text with a newline; resolves once every write was handed over. */
  async finish(): Promise<void> {
    this.#status?.hide();
    const rest = this.#sanitizer.end();
    if (rest !== "") this.stdout.write(rest);
    if (this.#open || (rest !== "" && !rest.endsWith("\n"))) this.stdout.write("\n");
    this.#open = false;
    await this.#pending;
  }

  private text(delta: string): void {
    const shown = this.#sanitizer.push(delta);
    if (shown === "") return;
    // The status line shares the terminal: it steps aside while text streams.
    this.#status?.hide();
    this.stdout.write(shown);
    this.streamed = true;
    this.#open = !shown.endsWith("\n");
  }

  private endText(): void {
    if (!this.#open) return;
    const rest = this.#sanitizer.end();
    this.stdout.write(`${rest}\n`);
    this.#open = false;
  }

  private describe(): string {
    const parts = [this.#step === 0 ? "starting" : `step ${this.#step}`];
    if (this.#retry) parts.push(this.#retry);
    if (this.#tool) parts.push(this.#tool);
    if (this.#tokens !== undefined) parts.push(`${this.#tokens} tokens`);
    if (this.#held && this.format === "text") parts.push(HELD);
    return parts.join(" · ");
  }
}
