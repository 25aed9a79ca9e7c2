// The effective permission rules as a person reads them: `gatehouse permissions`, `/permissions`
// in chat and the console's settings view all list them from here.
import { shownPath } from "../core/shown-path.js";
import type { PermissionPolicy } from "./policy.js";
import { ACCEPT_EDITS_COMMANDS, READ_ONLY_COMMANDS } from "./read-only.js";

/** One rule as the listing (and the console) shows it. */
export type ListedRule = {
  readonly behavior: string;
  readonly rule: string;
  readonly source: string;
  readonly file?: string;
};

export interface PermissionListing {
  readonly mode: string;
  readonly modeFrom: string;
  readonly rules: ListedRule[];
  /** What runs without a rule: the read-only Bash commands, and in acceptEdits its filesystem commands. */
  readonly builtIn: ListedRule[];
  readonly additionalDirectories: string[];
}

/** Deny rules first, then ask, then allow: the order they are checked in. */
const ORDER = { deny: 0, ask: 1, allow: 2 } as Record<string, number>;

/**
 * The listing of a policy, paths relative to `cwd` as the other listings show them. With a
 * session, the rules its "always" answers added are listed too (source `session`).
 */
export function permissionListing(policy: PermissionPolicy, cwd: string, sessionId?: string): PermissionListing {
  const shown = (file: string) => shownPath(cwd, file);
  const rules = [...policy.rulesFor(sessionId)]
    .sort((a, b) => (ORDER[a.behavior] ?? 3) - (ORDER[b.behavior] ?? 3))
    .map((r) => ({
      behavior: r.behavior,
      rule: r.rule,
      source: r.source,
      ...(r.file === undefined ? {} : { file: r.file.startsWith("--") ? r.file : shown(r.file) }),
    }));
  const from = policy.modeFrom;
  const builtIn: ListedRule[] = [
    {
      behavior: "allow",
      rule: `Bash read-only: ${READ_ONLY_COMMANDS.join(", ")} (git: read-only forms)`,
      source: "built-in",
    },
  ];
  if (policy.mode === "acceptEdits")
    builtIn.push({
      behavior: "allow",
      rule: `Bash in the working directories: ${ACCEPT_EDITS_COMMANDS.join(", ")}`,
      source: "acceptEdits",
    });
  return {
    mode: policy.mode,
    modeFrom: from === "default" || from.startsWith("--") ? from : shown(from),
    rules,
    builtIn,
    additionalDirectories: policy.additionalDirectories.map(shown),
  };
}

/** The listing as lines of text: the mode, then one rule a line in columns, then the extra folders. */
export function listingLines(listing: PermissionListing): string[] {
  const lines = [
    `mode: ${listing.mode} (${listing.modeFrom === "default" ? "the default" : `from ${listing.modeFrom}`})`,
  ];
  if (listing.rules.length === 0)
    lines.push(
      "no rules: reads and read-only Bash commands run; other Bash, edits, MCP tools and Agent ask (default mode)",
    );
  const width = Math.max(0, ...listing.rules.map((r) => r.rule.length));
  for (const r of [...listing.rules, ...listing.builtIn])
    lines.push(`${r.behavior.padEnd(5)}  ${r.rule.padEnd(width)}  ${r.source}${r.file ? ` (${r.file})` : ""}`);
  for (const d of listing.additionalDirectories) lines.push(`additional directory: ${d}`);
  return lines;
}
