// The published hook packages the real-hooks tests run, and how their docs wire them.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Hook packages too heavy to be devDependencies (a contributor's `npm install` would download
 * them for a few tests) are installed on first use: scripts/on-demand.ts.
 */
export {
  installOnDemand as onDemandHome,
  ON_DEMAND,
  onDemandBin,
  onDemandPackage,
} from "../../scripts/on-demand.js";

/** This repository's node_modules, where the light hook packages are installed as devDependencies. */
export const MODULES = fileURLToPath(new URL("../../node_modules/", import.meta.url));

/** One tool call, then a reply that repeats what the model read back from it. */
export const oneCall = (name: string, input: Record<string, unknown>) => ({
  runs: [{ turns: [{ toolCalls: [{ name, input }] }, { text: "model read: {{lastToolResult}}" }] }],
});

/**
 * A Claude Code settings file with one tool-event group, and the permission rules a Claude Code
 * user would have for the tools the scripted model calls (nobody can approve a call in these
 * runs; a Gatehouse without permission rules ignores them).
 */
export const settings = (event: string, matcher: string, command: string, allow: string[] = []) => ({
  ...(allow.length > 0 ? { permissions: { allow } } : {}),
  hooks: { [event]: [{ matcher, hooks: [{ type: "command", command }] }] },
});

/**
 * claude-qol's auto-approve hook laid out as its installer does (hooks/ into .claude/scripts/;
 * the installer itself is denied in allowScripts), wired as its README says.
 */
export const claudeQol = (command: string) => {
  const installed = (file: string) => readFileSync(join(MODULES, "@torka/claude-qol/hooks", file), "utf8");
  return {
    "s.json": oneCall("Bash", { command }),
    "gatehouse.json": { model: "scripted:s.json" },
    "deploy.sh": "touch deployed\n",
    ".claude/scripts/auto_approve_safe.py": installed("auto_approve_safe.py"),
    ".claude/scripts/auto_approve_safe.rules.json": installed("auto_approve_safe.rules.json"),
    ".claude/settings.local.json": settings(
      "PreToolUse",
      "Bash|Read|Grep|Glob|Write|Edit|MultiEdit",
      'python3 "$CLAUDE_PROJECT_DIR"/.claude/scripts/auto_approve_safe.py',
    ),
  };
};

/** What claude-qol's hook decided, from the log it keeps in the project's .claude/ (on by default). */
export const qolDecisions = (cwd: string) =>
  readFileSync(join(cwd, ".claude/auto_approve_safe.decisions.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { decision: string }).decision);
