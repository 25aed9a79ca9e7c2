/**
 * A small seeded PRNG (mulberry32) and the few draws the generators need. Every scenario is
 * built from `forScenario(seed, index)`, so any one of them can be replayed alone.
 */
export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error("pick from an empty list");
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** `n` lowercase hex digits. */
  hex(n: number): string {
    let out = "";
    while (out.length < n)
      out += Math.floor(this.next() * 0x10000)
        .toString(16)
        .padStart(4, "0");
    return out.slice(0, n);
  }
}

/** The generator of scenario `index` under `seed`: independent of every other index. */
export function forScenario(seed: number, index: number): Random {
  // Mix the two so that neighbouring seeds and indexes give unrelated streams.
  let h = Math.imul((seed >>> 0) ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul((index >>> 0) + 0x632be5ab, 0xc2b2ae35);
  h ^= h >>> 16;
  return new Random(h >>> 0);
}
