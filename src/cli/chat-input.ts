// What the chat reads beyond one line at a time: multi-line prompts (a bracketed paste, or a line
// ending in `\`) on top of node:readline, and the per-project input history file. Light imports
// only (node built-ins): chat.ts loads this at start-up.
import { appendFile, chmod, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** Terminal modes: a terminal that supports bracketed paste wraps pasted text in `ESC[200~ … ESC[201~`. */
export const BRACKETED_PASTE_ON = "\x1b[?2004h";
export const BRACKETED_PASTE_OFF = "\x1b[?2004l";

/**
 * Joins the lines readline hands out into prompts. readline ends a line at every newline, pasted
 * or typed; a line that arrives inside a bracketed paste (readline reports the markers as the keys
 * `paste-start` / `paste-end`), or a typed line ending in `\`, continues the prompt instead of
 * sending it. The next Enter outside a paste sends the whole text, lines joined with `\n`.
 */
export class MultilineComposer {
  private pending: string[] = [];
  private pasting = false;

  /** A key readline parsed (listen to the input's `keypress` events). */
  key(name: string | undefined): void {
    if (name === "paste-start") this.pasting = true;
    else if (name === "paste-end") this.pasting = false;
  }

  /** Whether lines are being collected: the prompt shows a continuation marker. */
  get continuing(): boolean {
    return this.pending.length > 0;
  }

  /** A line readline ended: the whole prompt when it completes one, otherwise undefined (it was kept). */
  line(line: string): string | undefined {
    if (this.pasting) {
      this.pending.push(line);
      return undefined;
    }
    if (line.endsWith("\\")) {
      this.pending.push(line.slice(0, -1));
      return undefined;
    }
    const whole = [...this.pending, line];
    this.pending = [];
    // A paste that ended with its own newline leaves an empty last line: not part of the prompt.
    if (whole.length > 1 && whole.at(-1) === "") whole.pop();
    return whole.join("\n");
  }

  /** Drops the lines collected so far (Ctrl-C at a continuation prompt). */
  clear(): void {
    this.pending = [];
    this.pasting = false;
  }
}

/**
 * The input history of `gatehouse chat`, one file per project data folder (`chat-history.jsonl`,
 * one JSON string a line, owner-only). History is a place text persists, so it holds only what
 * the store holds: after a turn, the prompt text the store kept for that run (after the input
 * gates, rewrites applied) — never a prompt they blocked, never the typed text a gate rewrote.
 * Slash commands, which are not stored as messages, are not kept across chats.
 */
export class InputHistory {
  private constructor(
    private readonly file: string,
    /** Newest first, as readline's `history` option wants them. */
    readonly entries: readonly string[],
    /** The file ends in a torn line (a crash mid-write): the next append starts a new line. */
    private torn: boolean,
  ) {}

  static readonly FILE = "chat-history.jsonl";
  static readonly SIZE = 500;

  /** Reads `<dataDir>/chat-history.jsonl` (missing or unreadable lines: skipped). */
  static async open(dataDir: string): Promise<InputHistory> {
    const file = join(dataDir, InputHistory.FILE);
    let text = "";
    try {
      text = await readFile(file, "utf8");
    } catch {
      // No history yet.
    }
    const entries: string[] = [];
    const lines = text.split("\n");
    for (const line of lines) {
      try {
        const value: unknown = JSON.parse(line);
        if (typeof value === "string" && value !== "" && entries[0] !== value) entries.unshift(value);
      } catch {
        // A torn last line (a crash mid-write) or an empty one.
      }
    }
    const kept = entries.slice(0, InputHistory.SIZE);
    // Appending forever would keep every prompt ever typed: past twice the size, the file is cut
    // back to what is read (written aside, then renamed over it, so a crash leaves one or the other).
    if (lines.length > 2 * InputHistory.SIZE) {
      const aside = `${file}.${process.pid}.tmp`;
      await writeFile(
        aside,
        [...kept]
          .reverse()
          .map((t) => `${JSON.stringify(t)}\n`)
          .join(""),
        { mode: 0o600 },
      );
      await rename(aside, file);
    }
    const torn = text !== "" && !text.endsWith("\n") && lines.length <= 2 * InputHistory.SIZE;
    return new InputHistory(file, kept, torn);
  }

  /** Appends prompts the store kept. */
  async record(texts: readonly string[]): Promise<void> {
    const kept = texts.filter((t) => t.trim() !== "");
    if (kept.length === 0) return;
    const dir = join(this.file, "..");
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const text = kept.map((t) => `${JSON.stringify(t)}\n`).join("");
    await appendFile(this.file, this.torn ? `\n${text}` : text, { mode: 0o600 });
    this.torn = false;
    await chmod(this.file, 0o600);
  }
}
