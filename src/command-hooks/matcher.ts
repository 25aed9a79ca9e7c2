/**
 * Claude Code's matcher rule. A matcher made only of letters, digits, `_`, `-`, `,`, `|` and
 * spaces is a list of exact names (so `code-reviewer` does not match `senior-code-reviewer`);
 * anything else is an unanchored, case-sensitive JavaScript regex (so `Edit.*` matches
 * `NotebookEdit`). `*`, `""` and an absent matcher match everything.
 */

export type CompiledMatcher =
  | { readonly kind: "all" }
  | { readonly kind: "exact"; readonly names: ReadonlySet<string> }
  | { readonly kind: "regex"; readonly regex: RegExp };

const EXACT_LIST = /^[A-Za-z0-9_\-, |]*$/;
const MATCH_ALL: CompiledMatcher = { kind: "all" };

/**
 * Throws a SyntaxError for an invalid regex; the loader turns it into a diagnostic. In `regex`
 * mode (Gemini CLI) every matcher is an unanchored regex, and one that does not compile is
 * compared exactly, as Gemini CLI does.
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
    // A matcher of only separators and spaces names nothing; treat it like "" rather than never firing.
    return names.length === 0 ? MATCH_ALL : { kind: "exact", names: new Set(names) };
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
