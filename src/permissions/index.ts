export { managedSettingsFiles } from "./managed.js";
export {
  asksByDefault,
  type HookPermission,
  isPermissionMode,
  PERMISSION_MODES,
  type PermissionDecision,
  type PermissionMode,
  PermissionPolicy,
  type PermissionPolicyOptions,
} from "./policy.js";
export { withRealPath } from "./real-path.js";
export {
  commandPattern,
  matchRule,
  type ParsedRule,
  PERMISSION_BEHAVIORS,
  type PermissionBehavior,
  type PermissionRule,
  parseRule,
  type RuleMatch,
  type RuleSpecifier,
  type RuleUse,
  ruleTextKept,
} from "./rules.js";
export {
  type CommandLine,
  readCommandLine,
  type ShellCommand,
  type SimpleCommand,
  splitCommands,
  withoutAssignments,
} from "./shell.js";
export { loadShellParser } from "./shell-parser.js";
export {
  type LoadedPermissions,
  type LoadPermissionsOptions,
  loadPermissions,
  type PermissionDiagnostic,
  writeLocalRule,
} from "./sources.js";
