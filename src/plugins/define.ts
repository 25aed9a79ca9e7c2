import type { HookName } from "../hooks/catalog.js";
import type { RegisterOptions } from "../hooks/registry.js";
import type { HookHandler } from "../hooks/types.js";
import type { BuiltinToolName, ToolHookHandler, ToolParamsHook } from "./tool-params.js";

/** A logger for plugin code: one line per call, control characters removed, prefixed with the plugin id. */
export interface PluginLogger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** A slash command a plugin adds (`/name args`). It answers the turn without the model. */
export interface PluginCommand {
  readonly description: string;
  /** Returns the reply text, or nothing for a silent turn. */
  run(
    args: string,
    ctx: { readonly sessionId: string; readonly runId: string },
  ): string | undefined | Promise<string | undefined>;
}

/** What a plugin tool's `execute` receives besides its input. */
export interface PluginToolContext {
  /** Aborted when the run is cancelled or the tool's own timeout passes. */
  readonly signal: AbortSignal;
  /** The project directory. */
  readonly cwd: string;
  /** The model's id for this call. */
  readonly toolCallId: string;
}

/**
 * A tool a plugin adds. It is offered to the model like a built-in one and passes the same
 * hooks (`before_tool_call`, `after_tool_call`, command hooks' PreToolUse / PostToolUse).
 */
export interface PluginTool {
  readonly name: string;
  readonly description: string;
  /** The input's JSON Schema, as published to the model. Input is checked to be an object. */
  readonly inputSchema: Readonly<Record<string, unknown>>;
  /** True when calls may run concurrently with other calls of the same step. */
  readonly parallel?: boolean;
  /** Throw to report a failure: the model sees the message as the tool's error. */
  execute(input: Record<string, unknown>, ctx: PluginToolContext): Promise<unknown>;
  /** The text the model reads for a result (default: the result as JSON, or as is when a string). */
  toModelOutput?(output: unknown): string;
  /**
   * Offered only when `tools.allow` or `tools.alsoAllow` names it, its plugin or `group:plugins`
   * (OpenClaw's `registerTool(tool, { optional: true })`).
   */
  readonly optional?: boolean;
}

export interface PluginApi<Config = unknown> {
  /** The plugin's id as loaded (the configuration may rename it). */
  readonly id: string;
  /** The plugin's own block from gatehouse.json (`plugins[].config`), or undefined. */
  readonly config: Config;
  readonly logger: PluginLogger;
  /**
   * Registers a handler on a tool hook for one built-in tool (`matcher: "Bash"`): `event.params`
   * is that tool's input, typed.
   */
  on<K extends ToolParamsHook, T extends BuiltinToolName>(
    hook: K,
    handler: NoInfer<ToolHookHandler<K, T>>,
    options: RegisterOptions & { readonly matcher: T },
  ): void;
  /** Registers a handler. Typed from the catalog: the event, ctx and return type are checked. */
  on<K extends HookName>(hook: K, handler: NoInfer<HookHandler<K>>, options?: RegisterOptions): void;
  /** Adds `/name` to the slash commands. Built-in names (help, reset, compact, status) cannot be taken. */
  registerCommand(name: string, command: PluginCommand): void;
  /** Adds a tool. A name a built-in tool, another plugin or an MCP server already has is refused. */
  registerTool(tool: PluginTool): void;
}

export interface PluginDefinition<Config = unknown> {
  readonly id: string;
  readonly name?: string;
  readonly version?: string;
  /** Registers the plugin's handlers. May be async; nothing takes effect until it finishes. */
  setup(api: PluginApi<Config>): void | Promise<void>;
}

/**
 * Types a plugin. It returns its argument unchanged: a plain object of the same shape works
 * too, so a plugin file need not import Gatehouse.
 */
export function definePlugin<Config = unknown>(plugin: PluginDefinition<Config>): PluginDefinition<Config> {
  return plugin;
}
