// Loaded by main.ts at start-up: commander and the list of modes only.
import { type Command, Option } from "commander";
import { PERMISSION_MODES } from "../permissions/policy.js";

/** The permission flags of `run`, `chat` and `permissions`, as commander parses them. */
export interface PermissionCliFlags {
  readonly permissionMode?: string;
  readonly allowedTools?: readonly string[];
  readonly disallowedTools?: readonly string[];
  readonly allowBypassPermissions?: boolean;
  readonly dangerouslySkipPermissions?: boolean;
}

/** Adds Claude Code's permission flags (docs/permissions.md) to a command. */
export function addPermissionOptions(command: Command): Command {
  return command
    .addOption(
      new Option(
        "--permission-mode <mode>",
        "permission mode for this session (overrides permissions.defaultMode)",
      ).choices(PERMISSION_MODES),
    )
    .option(
      "--allowedTools <rules...>",
      'permission rules to allow for this session, e.g. "Bash(npm test:*)" Read (space or comma separated)',
    )
    .option("--disallowedTools <rules...>", 'permission rules to deny for this session, e.g. "Bash(rm:*)"')
    .option("--allow-bypass-permissions", "let bypassPermissions be chosen (by --permission-mode or a defaultMode)")
    .option(
      "--dangerously-skip-permissions",
      "bypassPermissions: every tool call runs without asking (deny rules still apply)",
    );
}

/** The flags as the assembly takes them: rule lists split on commas outside parentheses. */
export function permissionFlagsOf(flags: PermissionCliFlags): {
  mode?: string;
  allowedTools?: string[];
  disallowedTools?: string[];
  allowBypass?: boolean;
} {
  const mode = flags.dangerouslySkipPermissions ? "bypassPermissions" : flags.permissionMode;
  return {
    ...(mode === undefined ? {} : { mode }),
    ...(flags.allowedTools ? { allowedTools: flags.allowedTools.flatMap(splitRules) } : {}),
    ...(flags.disallowedTools ? { disallowedTools: flags.disallowedTools.flatMap(splitRules) } : {}),
    ...(flags.allowBypassPermissions || flags.dangerouslySkipPermissions ? { allowBypass: true } : {}),
  };
}

/** `Bash(git log:*),Read` → two rules; a comma inside parentheses stays in its rule. */
export function splitRules(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let current = "";
  for (const ch of text) {
    if (ch === "(") depth++;
    if (ch === ")") depth = Math.max(0, depth - 1);
    if (ch === "," && depth === 0) {
      out.push(current);
      current = "";
    } else current += ch;
  }
  out.push(current);
  return out.map((r) => r.trim()).filter((r) => r !== "");
}
