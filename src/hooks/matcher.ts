/**
 * Claude Code's matcher rule, the one implementation for typed plugins and for settings.json
 * hooks, so a matcher reads the same in both:
 *
 * - `*`, `""` or no matcher match every value;
 * - a matcher made only of letters, digits, `_`, `-`, `,`, `|` and spaces is a list of exact
 *   names, split on `|` or `,`, each trimmed (so `code-reviewer` does not match
 *   `senior-code-reviewer`); one with no name in it (`|`, `,`) names nothing and matches nothing;
 * - anything else is an unanchored, case-sensitive JavaScript regular expression (so `Edit.*`
 *   matches `NotebookEdit`, and ` * ` is a regex too, which no tool name matches).
 *
 * `hooks check` warns about the two surprising cases (`matcherSurprise`).
 */

export type CompiledMatcher =
  | { readonly kind: "all" }
  | { readonly kind: "exact"; readonly names: ReadonlySet<string> }
  | { readonly kind: "regex"; readonly regex: RegExp };

export type ToolMatcher = (toolName: string) => boolean;

const EXACT_LIST = /^[A-Za-z0-9_\-, |]*$/;
const MATCH_ALL: CompiledMatcher = Object.freeze({ kind: "all" });

export class MatcherError extends Error {
  override readonly name = "MatcherError";
}

/**
 * Throws a SyntaxError for an invalid regex (the command-hook loader reports it with its file
 * and path). In `regex` mode (Gemini CLI) every matcher is an unanchored regex, and one that does
 * not compile is compared exactly, as Gemini CLI does.
 */
export function compileMatcher(matcher: string | undefined, mode: "claude" | "regex" = "claude"): CompiledMatcher {
  if (matcher === undefined || matcher === "" || matcher === "*") return MATCH_ALL;
  if (mode === "regex") {
    try {
      return { kind: "regex", regex: new RegExp(matcher) };
    } catch {
      return { kind: "exact", names: new Set([matcher]) };
    }
  }
  if (EXACT_LIST.test(matcher)) {
    const names = matcher
      .split(/[|,]/)
      .map((n) => n.trim())
      .filter((n) => n !== "");
    return { kind: "exact", names: new Set(names) };
  }
  return { kind: "regex", regex: new RegExp(matcher) };
}

/** `undefined` (no value to test, e.g. an event fired without it) matches only match-all. */
export function matches(m: CompiledMatcher, value: string | undefined): boolean {
  switch (m.kind) {
    case "all":
      return true;
    case "exact":
      return value !== undefined && m.names.has(value);
    case "regex":
      return value !== undefined && m.regex.test(value);
  }
}

/** Convenience for one-off checks (`hooks test`, docs examples). */
export function matcherMatches(matcher: string | undefined, value: string | undefined): boolean {
  return matches(compileMatcher(matcher), value);
}

/** Why a matcher probably does not do what its author meant, or undefined. */
export function matcherSurprise(matcher: string | undefined): string | undefined {
  if (matcher === undefined || matcher === "" || matcher === "*") return undefined;
  if (matcher.trim() === "*") return `"${matcher}" is a regular expression, not "*": it matches no tool name`;
  // Separators and spaces only: an exact list with no name in it (an invalid regex is reported elsewhere).
  if (EXACT_LIST.test(matcher) && matcher.replace(/[|, ]/g, "") === "")
    return `"${matcher}" names nothing: it matches nothing`;
  return undefined;
}

/**
 * A typed plugin's `matcher` option: a string by the rule above, or an array of exact names.
 * Returns undefined when it matches everything; throws MatcherError on a bad pattern.
 */
export function compileToolMatcher(matcher: string | readonly string[] | undefined): ToolMatcher | undefined {
  if (matcher !== undefined && typeof matcher !== "string") {
    if (matcher.length === 0 || matcher.some((m) => typeof m !== "string" || m.trim() === ""))
      throw new MatcherError("a matcher list must hold at least one non-empty tool name");
    const names = new Set(matcher);
    return (name) => names.has(name);
  }
  let compiled: CompiledMatcher;
  try {
    compiled = compileMatcher(matcher);
  } catch (error) {
    throw new MatcherError(
      `invalid matcher regular expression ${JSON.stringify(matcher)}: ${(error as Error).message}`,
    );
  }
  return compiled.kind === "all" ? undefined : (name) => matches(compiled, name);
}
