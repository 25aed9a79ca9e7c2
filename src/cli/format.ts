// Text helpers for the listing commands: pure functions.
export { shownPath } from "../core/shown-path.js";

import { oneLine } from "../core/text.js";
import { terminalText } from "./terminal.js";

/** Left-aligned columns two spaces apart; the last column is not padded. `paint` colors a cell after padding. */
export function table(
  rows: readonly (readonly string[])[],
  paint?: (cell: string, row: number, column: number) => string,
): string {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  }
  return rows
    .map((row, r) => {
      const cells = row.map((cell, c) => {
        const padded = c === row.length - 1 ? cell : cell.padEnd(widths[c] ?? 0);
        return paint ? paint(padded, r, c) : padded;
      });
      return `${cells.join("  ").trimEnd()}\n`;
    })
    .join("");
}

/** `2026-01-31 12:00:05Z`: an ISO time, shorter and still unambiguous. */
export function shortTime(iso: string | null | undefined): string {
  if (!iso) return "-";
  return iso.replace("T", " ").replace(/\.\d+Z$/, "Z");
}

/** `850ms`, `2.4s`, `3m 05s`. */
export function duration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return "-";
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${Number((ms / 1000).toFixed(1))}s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes}m ${String(Math.round((ms % 60_000) / 1000)).padStart(2, "0")}s`;
}

/** One line of at most `max` characters (whitespace runs collapsed), with `…` when cut. */
export function clip(text: string, max: number): string {
  return oneLine(terminalText(text), max);
}

const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/**
 * `--since`: an ISO date or time (`2026-01-31`, `2026-01-31T12:00:00Z`) or a duration back from
 * `now` (`90s`, `30m`, `1h`, `7d`, `2w`). Undefined when it is neither.
 */
export function parseSince(value: string, now: Date): Date | undefined {
  const trimmed = value.trim();
  const ago = /^(\d+)\s*([smhdw])$/i.exec(trimmed);
  if (ago) return new Date(now.getTime() - Number(ago[1]) * (UNITS[(ago[2] ?? "").toLowerCase()] ?? 0));
  if (!/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/i.test(trimmed)) return undefined;
  const at = new Date(trimmed);
  return Number.isNaN(at.getTime()) ? undefined : at;
}
