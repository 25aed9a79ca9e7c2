import assert from "node:assert/strict";
import { type PermissionBehavior, type PermissionRule, parseRule } from "../../src/permissions/index.js";

/** A project settings rule as the loader makes it: parsed for its use, with its positional id. */
export function projectRule(behavior: PermissionBehavior, text: string, baseDir: string, n = 0): PermissionRule {
  const parsed = parseRule(text, behavior);
  assert.ok(typeof parsed !== "string", `${text}: ${parsed}`);
  return { behavior, rule: text, parsed, id: `project.${behavior}.${n}`, source: "project", baseDir };
}

/** Every rule of a `{ allow, ask, deny }` block, as project rules. */
export function projectRules(
  rules: Partial<Record<PermissionBehavior, readonly string[]>>,
  baseDir: string,
): PermissionRule[] {
  return (["allow", "ask", "deny"] as const).flatMap((behavior) =>
    (rules[behavior] ?? []).map((text, n) => projectRule(behavior, text, baseDir, n)),
  );
}
