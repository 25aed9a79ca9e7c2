import { matchRule, type ParsedRule, parseRule } from "../permissions/rules.js";

/**
 * The `if` field: one permission rule (`Bash(git *)`, `Edit(*.ts)`, `WebFetch(domain:x.org)`)
 * narrowing a tool-event handler to matching calls, so a hook is not spawned for calls it
 * would wave through. It is read and matched by the permission rule engine, so a rule means the
 * same here as in `permissions`; only a call the rule cannot read differs: it runs the hook.
 */
export type IfRule = ParsedRule;

/** The rule, or a sentence saying what is wrong with it. */
export function readIfRule(text: string): IfRule | string {
  return parseRule(text, "if");
}

/** The rule, or undefined when it does not parse (the loader reported it and dropped the handler). */
export function parseIfRule(text: string): IfRule | undefined {
  const rule = readIfRule(text);
  return typeof rule === "string" ? undefined : rule;
}

export function ifRuleMatches(rule: IfRule, toolName: string, toolInput: unknown, projectDir: string): boolean {
  return matchRule(rule, "if", toolName, toolInput, projectDir) !== "no-match";
}
