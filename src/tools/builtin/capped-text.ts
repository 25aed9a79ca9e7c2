/**
 * Collects a stream's text within a character budget, keeping its head and its tail: the start of
 * a command's output says what ran, the end usually says how it failed.
 */
export class CappedText {
  private head = "";
  private tail = "";
  private dropped = 0;
  private readonly headMax: number;
  private readonly tailMax: number;

  constructor(maxChars: number) {
    this.headMax = Math.ceil(maxChars / 2);
    this.tailMax = maxChars - this.headMax;
  }

  push(chunk: string): void {
    let rest = chunk;
    if (this.head.length < this.headMax) {
      const room = this.headMax - this.head.length;
      this.head += rest.slice(0, room);
      rest = rest.slice(room);
    }
    if (rest === "") return;
    const tail = this.tail + rest;
    if (tail.length > this.tailMax) {
      this.dropped += tail.length - this.tailMax;
      this.tail = this.tailMax > 0 ? tail.slice(-this.tailMax) : "";
    } else {
      this.tail = tail;
    }
  }

  get truncated(): boolean {
    return this.dropped > 0;
  }

  toString(): string {
    if (this.dropped === 0) return this.head + this.tail;
    return `${this.head}\n… [${this.dropped} characters truncated] …\n${this.tail}`;
  }
}
