// The public API of Gatehouse.

export {
  createGatehouse,
  type Gatehouse,
  type GatehouseOptions,
  type PermissionOptions,
  type PluginSpec,
  type RunStream,
} from "./assembly/gatehouse.js";
export {
  ConfigError,
  type ConfigProblem,
  type GatehouseConfig,
  GatehouseConfigSchema,
  type LoadConfigOptions,
  type LoadedConfig,
  loadConfig,
  type ResolvedSettings,
  resolveSettings,
} from "./config/index.js";
export { recordTrust, TRUST_ENV, type WorkspaceTrust, workspaceTrust } from "./config/trust.js";
export {
  createEnvPolicy,
  DEFAULT_ENV_POLICY,
  type EnvConsumer,
  type EnvPolicy,
  type EnvPolicyOptions,
} from "./core/env-policy.js";
export * from "./core/message.js";
export { maskSecrets } from "./core/secrets.js";
export { type HeldSetting, untrustedGatehouseConfig, untrustedProjectSettings } from "./core/workspace-trust.js";
export * from "./hooks/index.js";
export {
  createEchoModel,
  createScriptedModel,
  loadScriptedModel,
  type ModelSpec,
  ModelSpecError,
  resolveModel,
  type Script,
  type ScriptInput,
} from "./models/index.js";
export {
  loadShellParser,
  PERMISSION_MODES,
  type PermissionBehavior,
  type PermissionMode,
  PermissionPolicy,
  type PermissionRule,
} from "./permissions/index.js";
export * from "./plugins/index.js";
export type {
  ApprovalAnswer,
  ApprovalDecision,
  ApprovalRequest,
  Approver,
  BlockedBy,
  ChildRunSummary,
  PermissionDenial,
  RunError,
  RunErrorKind,
  RunEvent,
  RunInput,
  RunOutcome,
  RunResult,
} from "./runtime/types.js";
export {
  openMemoryStore,
  openStore,
  resolveStoreOptions,
  type SessionStore,
  type StoreOptions,
} from "./store/index.js";
export { builtinTools, connectMcpServers, selectTools } from "./tools/index.js";
export type { Tool, ToolContext } from "./tools/types.js";
export { ToolError } from "./tools/types.js";
export { VERSION } from "./version.js";
