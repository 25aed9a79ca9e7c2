import { z } from "zod";

/**
 * The one identifier spelling: what plugin config accepts as a plugin id, what the store's audit
 * schema keeps (plugin ids, hook names), and so what a plugin's decisions can be recorded under.
 * No spaces, so that a sentence (a reason, a prompt) cannot be smuggled through an identifier.
 */
export const IDENTIFIER_PATTERN = /^[A-Za-z0-9@][A-Za-z0-9@._:/-]{0,127}$/;
export const IDENTIFIER_RULE =
  "an identifier: a letter, digit or @, then letters, digits and @ . _ : / - (no spaces), at most 128 characters";
export const IdentifierSchema = z.string().regex(IDENTIFIER_PATTERN, `must be ${IDENTIFIER_RULE}`);

/** A block's category as the store keeps it: a short slug. */
export const CATEGORY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;
export const CategorySchema = z
  .string()
  .regex(CATEGORY_PATTERN, "must be a category: a letter or digit, then letters, digits and . _ : - (at most 64)");

/**
 * What a plugin wrote as a block's category, as the store keeps it: every other character becomes
 * "-" ("refund limit" → "refund-limit"), leading ones that cannot start a slug go, 64 characters at
 * most. Undefined when nothing is left: the block stands (its notice, its audit record) without one.
 */
export function categorySlug(category: string | undefined): string | undefined {
  const slug = category
    ?.replace(/[^A-Za-z0-9._:-]/g, "-")
    .replace(/^[^A-Za-z0-9]+/, "")
    .slice(0, 64);
  return slug || undefined;
}

/** Where a string literal with this value first appears in a source text (1-based), if it does. */
export function literalPosition(text: string, value: string): { line: number; column: number } | undefined {
  const at = [JSON.stringify(value), `'${value}'`, `\`${value}\``]
    .map((literal) => text.indexOf(literal))
    .filter((i) => i >= 0)
    .sort((a, b) => a - b)[0];
  if (at === undefined) return undefined;
  const before = text.slice(0, at).split("\n");
  return { line: before.length, column: (before.at(-1) as string).length + 1 };
}
