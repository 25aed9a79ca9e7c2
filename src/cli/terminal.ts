// Text for a terminal (or a pipe that may end in one): the one place every printer of the CLI
// sends content it did not write itself — model replies and streamed deltas, tool labels and
// outputs, approval prompts, notices, hook and plugin messages, stored text. Pure functions and a
// small class; no imports, so any command may load it at start-up.

/** What a control character, an escape sequence or a bidi control is shown as. */
export const PLACEHOLDER = "\uFFFD";

const ESC = 0x1b;
const BEL = 0x07;
/** Past this, an escape sequence still open is not one: its introducer is replaced and the rest shown. */
const MAX_SEQUENCE = 512;

/**
 * Bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069): they reorder
 * what is displayed, so `exe.txt` can read as `txt.exe`, or an approval prompt as something else.
 */
function isBidiControl(code: number): boolean {
  return (code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069);
}

/** C0 and C1 controls and DEL, except newline and tab. */
function isControl(code: number): boolean {
  return (code < 0x20 && code !== 0x0a && code !== 0x09) || (code >= 0x7f && code <= 0x9f);
}

type Scan = { kind: "done"; end: number } | { kind: "open" } | { kind: "bad" };

/**
 * An ECMA-48 sequence starting with ESC at `start`: CSI (`ESC [` … final byte), a control string
 * (`ESC ]` OSC — OSC 52 writes the clipboard —, `ESC P` DCS, `ESC X`, `ESC ^`, `ESC _`, ended by
 * BEL or `ESC \`), or a short `ESC` + intermediates + final. `open` when the text ends inside it,
 * `bad` when it is not a well-formed sequence (then only the ESC is replaced).
 */
function scanEscape(text: string, start: number): Scan {
  const at = (i: number) => text.charCodeAt(i);
  let i = start + 1;
  if (i >= text.length) return { kind: "open" };
  const kind = at(i);
  if (kind === 0x5b) {
    // CSI: parameter bytes 0x30–0x3F, intermediate bytes 0x20–0x2F, one final byte 0x40–0x7E.
    for (i++; i < text.length; i++) {
      const c = at(i);
      if (c >= 0x40 && c <= 0x7e) return { kind: "done", end: i + 1 };
      if (c < 0x20 || c > 0x3f || i - start > MAX_SEQUENCE) return { kind: "bad" };
    }
    return { kind: "open" };
  }
  if (kind === 0x5d || kind === 0x50 || kind === 0x58 || kind === 0x5e || kind === 0x5f) {
    // A control string; real ones never span lines, so a newline ends a false one.
    for (i++; i < text.length; i++) {
      const c = at(i);
      if (c === BEL) return { kind: "done", end: i + 1 };
      if (c === ESC) {
        if (i + 1 >= text.length) return { kind: "open" };
        return at(i + 1) === 0x5c ? { kind: "done", end: i + 2 } : { kind: "bad" };
      }
      if (c === 0x0a || i - start > MAX_SEQUENCE) return { kind: "bad" };
    }
    return { kind: "open" };
  }
  // nF: intermediates 0x20–0x2F, then a final 0x30–0x7E; or a two-character sequence.
  for (; i < text.length; i++) {
    const c = at(i);
    if (c >= 0x30 && c <= 0x7e) return { kind: "done", end: i + 1 };
    if (c < 0x20 || c > 0x2f || i - start > MAX_SEQUENCE) return { kind: "bad" };
  }
  return { kind: "open" };
}

/**
 * Sanitizes a stream of text as it is printed: every escape sequence, control character (except
 * newline and tab; `\r\n` becomes `\n`) and bidi control becomes one `PLACEHOLDER`, so the text
 * can neither repaint, erase or recolor the screen, write the clipboard, ring the bell nor
 * reorder what the user reads. A sequence split across pushes is held back until it is complete
 * (at most a few hundred characters), so splitting it is no way around.
 */
export class TerminalSanitizer {
  private held = "";

  /** The printable part of `text` so far; what may still turn out to be a sequence is held back. */
  push(text: string): string {
    const input = this.held + text;
    this.held = "";
    return this.scan(input, false);
  }

  /** Whatever was held back, now that no more text follows. */
  end(): string {
    const input = this.held;
    this.held = "";
    return this.scan(input, true);
  }

  private scan(text: string, final: boolean): string {
    let out = "";
    let plain = 0;
    for (let i = 0; i < text.length; ) {
      const code = text.charCodeAt(i);
      if (!isControl(code) && !isBidiControl(code)) {
        i++;
        continue;
      }
      out += text.slice(plain, i);
      if (code === 0x0d) {
        if (i + 1 >= text.length && !final) {
          this.held = text.slice(i);
          return out;
        }
        // A CRLF line ending is a line ending; a lone carriage return would overwrite the line.
        out += text.charCodeAt(i + 1) === 0x0a ? "" : PLACEHOLDER;
        plain = i = i + 1;
        continue;
      }
      if (code === ESC) {
        const seq = scanEscape(text, i);
        if (seq.kind === "open" && !final) {
          this.held = text.slice(i);
          return out;
        }
        out += PLACEHOLDER;
        plain = i = seq.kind === "done" ? seq.end : i + 1;
        continue;
      }
      out += PLACEHOLDER;
      plain = i = i + 1;
    }
    return out + text.slice(plain);
  }
}

/** A whole text, sanitized as `TerminalSanitizer` does. */
export function terminalText(text: string): string {
  const s = new TerminalSanitizer();
  return s.push(text) + s.end();
}

/** One line: sanitized, then newlines, tabs and line separators as spaces (nothing can forge a second line). */
export function terminalLine(text: string): string {
  return terminalText(text)
    .replace(/[\n\t\u2028\u2029]+/g, " ")
    .trimEnd();
}

/**
 * JSON for a terminal or pipe (`--json`): JSON's own escaping, plus `\uXXXX` for what
 * `JSON.stringify` leaves raw but a terminal acts on — C1 controls, bidi controls and the line
 * separators. The value reads back exactly; nothing in it is sanitized away.
 */
export function terminalJson(value: unknown, indent?: number): string {
  return (JSON.stringify(value, null, indent) ?? "null").replace(
    /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
