export {
  type FailurePolicy,
  type FieldRule,
  type GateResult,
  GateResultSchema,
  HOOK_NAMES,
  HOOKS,
  type HookAccess,
  type HookKind,
  type HookName,
  type HookSpec,
  hookSpec,
  isHookName,
} from "./catalog.js";
export { HookEngine, type HookEngineOptions, type RegistrationInfo } from "./engine.js";
export { deepFreeze } from "./freeze.js";
export type { HookInterceptor, Interception } from "./intercept.js";
export type { HookLogger } from "./kinds/shared.js";
export { compileToolMatcher, MatcherError, type ToolMatcher } from "./matcher.js";
export type {
  Diagnostic,
  OperatorOptions,
  RegisterOptions,
  RegistrationRequest,
  TimeoutOverrides,
} from "./registry.js";
export {
  type Channel,
  childRunContext,
  currentRunContext,
  NO_RUN,
  newTraceparent,
  type RunContext,
  runWithContext,
  type Trigger,
} from "./run-context.js";
export { describeError, sanitizeLogLine } from "./sanitize.js";
export type * from "./types.js";
