/**
 * What Gatehouse answers for `openclaw/plugin-sdk/plugin-entry` (and `openclaw/plugin-sdk`,
 * `openclaw/plugin-sdk/core`) when a plugin imports it and the `openclaw` package is not
 * installed: the helpers a plugin entry uses, with OpenClaw's behaviour (they only shape the
 * definition; `register(api)` does the work).
 */

export interface PluginConfigSchema {
  readonly jsonSchema: Readonly<Record<string, unknown>>;
}

/** OpenClaw's schema for a plugin without configuration. */
export function emptyPluginConfigSchema(): PluginConfigSchema {
  return { jsonSchema: { type: "object", additionalProperties: false, properties: {} } };
}

export interface PluginEntryOptions {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly kind?: unknown;
  readonly configSchema?: PluginConfigSchema | (() => PluginConfigSchema);
  readonly reload?: unknown;
  readonly nodeHostCommands?: unknown;
  readonly securityAuditCollectors?: unknown;
  readonly register: (api: never) => void;
}

/** OpenClaw's `definePluginEntry`: the definition as OpenClaw loads it. */
export function definePluginEntry(options: PluginEntryOptions): Omit<PluginEntryOptions, "configSchema"> & {
  readonly configSchema: PluginConfigSchema;
} {
  const { configSchema = emptyPluginConfigSchema, kind, reload, nodeHostCommands, securityAuditCollectors } = options;
  let schema: PluginConfigSchema | undefined;
  return {
    id: options.id,
    name: options.name,
    description: options.description,
    ...(kind ? { kind } : {}),
    ...(reload ? { reload } : {}),
    ...(nodeHostCommands ? { nodeHostCommands } : {}),
    ...(securityAuditCollectors ? { securityAuditCollectors } : {}),
    get configSchema() {
      schema ??= typeof configSchema === "function" ? configSchema() : configSchema;
      return schema;
    },
    register: options.register,
  };
}
