import type { FieldRule } from "./catalog.js";
import { deepFreeze } from "./freeze.js";

/** Accumulates handler results field by field, each by its catalog rule. */
export class Merger {
  readonly merged: Record<string, unknown> = {};
  /** Chain fields the last result rewrote (the next handler's event shows them), if any. */
  chained: Record<string, unknown> | undefined = undefined;

  constructor(private readonly rules: Readonly<Record<string, FieldRule>>) {}

  /** Merges one validated result; true when a latch field became true (the remaining handlers are not called). */
  apply(result: Readonly<Record<string, unknown>>): boolean {
    let latched = false;
    let chained: Record<string, unknown> | undefined;
    const { merged } = this;
    // Results are plain objects (zod's output or the shortcut's copy): for…in sees their own keys.
    for (const key in result) {
      const value = result[key];
      if (value === undefined) continue;
      const rule = this.rules[key];
      switch (rule?.rule) {
        case "chain":
          merged[key] = deepFreeze(value);
          chained ??= {};
          chained[key] = merged[key];
          break;
        case "first":
          if (merged[key] === undefined) merged[key] = value;
          break;
        case "concat":
          merged[key] = merged[key] === undefined ? value : `${merged[key] as string}\n\n${value as string}`;
          break;
        case "intersect": {
          const prior = merged[key] as readonly string[] | undefined;
          const next = value as readonly string[];
          merged[key] = prior === undefined ? [...new Set(next)] : prior.filter((v) => next.includes(v));
          break;
        }
        case "latch":
          if (value === true) {
            merged[key] = true;
            latched = true;
          }
          break;
        case "collect":
          merged[key] = [...((merged[key] as unknown[] | undefined) ?? []), value];
          break;
        case "rank": {
          const prior = merged[key] as string | undefined;
          if (prior === undefined || rule.order.indexOf(value as string) < rule.order.indexOf(prior))
            merged[key] = value;
          break;
        }
        default:
          // Unreachable for validated results: every result field of the catalog has a rule.
          throw new Error(`no merge rule for field "${key}"`);
      }
    }
    this.chained = chained;
    return latched;
  }
}
