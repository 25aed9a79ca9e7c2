export { type PluginEntry, PluginEntrySchema, type PluginHookOptions, PluginHookOptionsSchema } from "./config.js";
export {
  definePlugin,
  type PluginApi,
  type PluginCommand,
  type PluginDefinition,
  type PluginLogger,
} from "./define.js";
export { type AddOptions, type HostLogger, PluginHost, type PluginInfo } from "./host.js";
export { applyPermissions } from "./permissions.js";
