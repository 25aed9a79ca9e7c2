import { maskValue } from "../core/secrets.js";

/** One field of a tool call's input, as a person reads it. */
export interface InputField {
  readonly name: string;
  readonly text: string;
}

/** How much of one field is shown. */
const MAX_FIELD_CHARS = 4000;

/**
 * A tool call's input as the person asked to approve it reads it: each field on its own, a
 * string as written (Bash's command, a Write's path and content with their line breaks), any
 * other value as JSON; secrets masked as `gatehouse config` masks them (by shape, and whatever
 * sits under a secret-looking key). A long field is cut, saying how much is left out.
 */
export function toolInputFields(params: unknown, max = MAX_FIELD_CHARS): InputField[] {
  const masked = maskValue(params);
  if (masked === undefined) return [];
  const entries =
    typeof masked === "object" && masked !== null && !Array.isArray(masked)
      ? Object.entries(masked)
      : [["input", masked] as const];
  return entries.map(([name, value]) => ({ name, text: cut(typeof value === "string" ? value : json(value), max) }));
}

function json(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more characters)`;
}
