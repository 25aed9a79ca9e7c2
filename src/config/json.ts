/**
 * Where and why a JSON text is invalid. V8's `JSON.parse` messages give a position only
 * sometimes (and quote the input when they do not), so a failed parse is scanned again here
 * to name the line and column of the first error in words of our own.
 */
export interface JsonSyntaxError {
  readonly line: number;
  readonly column: number;
  readonly message: string;
}

/** Parses `text` (a leading BOM allowed); a syntax error is returned, never thrown. */
export function parseJson(text: string): { ok: true; value: unknown } | { ok: false; error: JsonSyntaxError } {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  try {
    return { ok: true, value: JSON.parse(body) };
  } catch {
    // Columns as an editor shows them: a BOM is not a character there.
    const found = new Scanner(body).firstError() ?? { offset: 0, message: "not valid JSON" };
    return { ok: false, error: { ...lineAndColumn(body, found.offset), message: found.message } };
  }
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text[i] === "\n") {
      line++;
      start = i + 1;
    }
  }
  return { line, column: offset - start + 1 };
}

class Failure {
  constructor(
    readonly offset: number,
    readonly message: string,
  ) {}
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** A recursive-descent JSON checker that stops at the first error. */
class Scanner {
  private i = 0;

  constructor(private readonly s: string) {}

  firstError(): { offset: number; message: string } | undefined {
    try {
      this.value();
      this.space();
      if (this.i < this.s.length) this.fail(`unexpected ${this.what()} after the end of the JSON value`);
      return undefined;
    } catch (error) {
      if (error instanceof Failure) return { offset: error.offset, message: error.message };
      throw error;
    }
  }

  private fail(message: string, at = this.i): never {
    throw new Failure(at, message);
  }

  private what(): string {
    if (this.i >= this.s.length) return "end of file";
    return `character ${JSON.stringify(this.s[this.i])}`;
  }

  private space(): void {
    while (this.i < this.s.length) {
      const c = this.s[this.i];
      if (c === " " || c === "\t" || c === "\n" || c === "\r") this.i++;
      else if (c === "/" && (this.s[this.i + 1] === "/" || this.s[this.i + 1] === "*"))
        this.fail("comments are not allowed in JSON");
      else return;
    }
  }

  private value(): void {
    this.space();
    const c = this.s[this.i];
    if (c === "{") this.object();
    else if (c === "[") this.array();
    else if (c === '"') this.string();
    else if (c === "'") this.fail("strings must be in double quotes");
    else if (c !== undefined && /[-0-9]/.test(c)) this.number();
    else if (!this.word("true") && !this.word("false") && !this.word("null"))
      this.fail(
        c === undefined ? "unexpected end of file; expected a value" : `unexpected ${this.what()}; expected a value`,
      );
  }

  private word(w: string): boolean {
    if (!this.s.startsWith(w, this.i)) return false;
    this.i += w.length;
    return true;
  }

  private number(): void {
    NUMBER.lastIndex = this.i;
    const m = NUMBER.exec(this.s);
    if (!m || m[0] === "-") this.fail("invalid number");
    this.i += m[0].length;
  }

  private string(): void {
    const start = this.i++;
    while (this.i < this.s.length) {
      const c = this.s.charCodeAt(this.i);
      if (c === 0x22) {
        this.i++;
        return;
      }
      if (c < 0x20)
        this.fail(
          c === 0x0a ? "unterminated string (write a line break as \\n)" : "control character in a string; escape it",
        );
      if (c === 0x5c) {
        const e = this.s[this.i + 1];
        if (e === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(this.s.slice(this.i + 2, this.i + 6))) this.fail("invalid \\u escape");
          this.i += 6;
          continue;
        }
        if (e === undefined || !'"\\/bfnrt'.includes(e)) this.fail("invalid escape in a string");
        this.i += 2;
        continue;
      }
      this.i++;
    }
    this.fail("unterminated string", start);
  }

  /** `[`/`{` … `]`/`}` with comma-separated members; `member` reads one. */
  private list(close: string, member: () => void, kind: string): void {
    this.i++;
    this.space();
    if (this.s[this.i] === close) {
      this.i++;
      return;
    }
    for (;;) {
      member();
      this.space();
      const c = this.s[this.i];
      if (c === close) {
        this.i++;
        return;
      }
      if (c !== ",") this.fail(`unexpected ${this.what()}; expected ',' or '${close}' in ${kind}`);
      const comma = this.i++;
      this.space();
      if (this.s[this.i] === close) this.fail(`trailing comma in ${kind}`, comma);
    }
  }

  private object(): void {
    this.list(
      "}",
      () => {
        this.space();
        const c = this.s[this.i];
        if (c === "'") this.fail("property names must be in double quotes");
        if (c !== '"') this.fail(`unexpected ${this.what()}; expected a property name in double quotes`);
        this.string();
        this.space();
        if (this.s[this.i] !== ":") this.fail(`unexpected ${this.what()}; expected ':' after the property name`);
        this.i++;
        this.value();
      },
      "an object",
    );
  }

  private array(): void {
    this.list("]", () => this.value(), "an array");
  }
}
