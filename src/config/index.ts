export { type ConfigProblem, formatJsonPath } from "./issues.js";
export {
  CONFIG_ENV,
  CONFIG_FILE,
  ConfigError,
  type LoadConfigOptions,
  type LoadedConfig,
  loadConfig,
  parseConfig,
  parseConfigText,
} from "./load.js";
export {
  DATA_DIR_ENV,
  DATABASE_URL_ENV,
  MODEL_ENV,
  type ResolvedSettings,
  type ResolveSettingsInput,
  resolveSettings,
} from "./resolve.js";
export {
  CONFIG_SCHEMA_FILE,
  configJsonSchema,
  type GatehouseConfig,
  type GatehouseConfigInput,
  GatehouseConfigSchema,
  renderConfigJsonSchema,
} from "./schema.js";
