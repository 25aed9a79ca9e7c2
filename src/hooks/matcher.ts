/**
 * Tool matchers with Claude Code's rules, so a matcher reads the same in a typed plugin and in
 * a settings.json hook: `*`, `""` or none match every tool; a string of only letters, digits,
 * `_ - , |` and spaces is an exact list of names; anything else is an unanchored,
 * case-sensitive regular expression. An array is a list of exact names.
 */
export type ToolMatcher = (toolName: string) => boolean;

const EXACT_LIST = /^[A-Za-z0-9_\-,| ]+$/;

export class MatcherError extends Error {
  override readonly name = "MatcherError";
}

/** Returns undefined when the matcher matches everything. Throws MatcherError on a bad pattern. */
export function compileToolMatcher(matcher: string | readonly string[] | undefined): ToolMatcher | undefined {
  if (matcher === undefined) return undefined;
  if (typeof matcher !== "string") {
    if (matcher.length === 0 || matcher.some((m) => typeof m !== "string" || m.trim() === ""))
      throw new MatcherError("a matcher list must hold at least one non-empty tool name");
    const names = new Set(matcher);
    return (name) => names.has(name);
  }
  const trimmed = matcher.trim();
  if (trimmed === "" || trimmed === "*") return undefined;
  if (EXACT_LIST.test(trimmed)) {
    const names = new Set(
      trimmed
        .split(/[|,]/)
        .map((n) => n.trim())
        .filter(Boolean),
    );
    return (name) => names.has(name);
  }
  let pattern: RegExp;
  try {
    pattern = new RegExp(matcher);
  } catch (error) {
    throw new MatcherError(
      `invalid matcher regular expression ${JSON.stringify(matcher)}: ${(error as Error).message}`,
    );
  }
  return (name) => pattern.test(name);
}
