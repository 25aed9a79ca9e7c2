import { z } from "zod";
import { DIALECTS } from "./dialects.js";

/**
 * Schemas for the Claude Code `hooks` block and for Gatehouse's `commandHooks` options.
 * Handler schemas list every field they accept: the loader reports any other key as an
 * error, because a silently ignored `timeout_ms` is how hooks end up never timing out.
 */

export const SOURCE_NAMES = [
  "managed",
  "user",
  "project",
  "local",
  "plugin",
  "config",
  "cli",
  "code-puppy",
  "gemini-user",
  "gemini",
  "codex-user",
  "codex",
  "codex-user-toml",
  "codex-toml",
  "cursor-user",
  "cursor",
] as const;
export type SourceName = (typeof SOURCE_NAMES)[number];

export const OnFailureSchema = z.enum(["continue", "block"]);
export type OnFailure = z.infer<typeof OnFailureSchema>;

const common = {
  timeout: z.number().positive().optional(),
  if: z.string().min(1).optional(),
  onFailure: OnFailureSchema.optional(),
  // Accepted for Claude Code compatibility; Gatehouse has no spinner and no skill scope.
  statusMessage: z.string().optional(),
  once: z.boolean().optional(),
};

export const commandHandlerShape = {
  type: z.literal("command"),
  command: z.string().min(1),
  args: z.array(z.string()).optional(),
  shell: z.enum(["sh", "bash", "powershell"]).optional(),
  async: z.boolean().optional(),
  asyncRewake: z.boolean().optional(),
  ...common,
};

export const httpHandlerShape = {
  type: z.literal("http"),
  url: z.url({ protocol: /^https?$/ }),
  headers: z.record(z.string(), z.string()).optional(),
  allowedEnvVars: z.array(z.string()).optional(),
  ...common,
};

/** What a model-evaluated handler says: its instruction (`$ARGUMENTS` is the hook input) and which model answers. */
const modelHandlerFields = {
  prompt: z.string().min(1),
  /** A Gatehouse model spec (`provider:model`); without it the configured model answers. */
  model: z.string().min(1).optional(),
};

/**
 * Claude Code's `prompt` handler: a model reads `prompt` (with `$ARGUMENTS` replaced by the hook
 * input) and answers `{ok, reason?}`.
 */
export const promptHandlerShape = {
  type: z.literal("prompt"),
  ...modelHandlerFields,
  continueOnBlock: z.boolean().optional(),
  ...common,
};

/**
 * Claude Code's `agent` handler: a read-only agent (Read, Grep, Glob; at most 50 model turns)
 * checks `prompt` and answers `{ok, reason?}`, as a `prompt` handler with `continueOnBlock: true`.
 */
export const agentHandlerShape = {
  type: z.literal("agent"),
  ...modelHandlerFields,
  ...common,
};

/**
 * Claude Code's `mcp_tool` handler: calls `tool` of the connected MCP server `server` with `input`,
 * whose string values may say `${path}` (`${tool_input.file_path}`) to take a value of the hook
 * input; the tool's text is read like a command's stdout.
 */
export const mcpToolHandlerShape = {
  type: z.literal("mcp_tool"),
  server: z.string().min(1),
  tool: z.string().min(1),
  input: z.record(z.string(), z.unknown()).optional(),
  ...common,
};

/** Fields Code Puppy's hooks.json adds; accepted only in `code-puppy` dialect sources. */
export const codePuppyExtraShape = {
  enabled: z.boolean().optional(),
  id: z.string().optional(),
};

/** Fields other agent CLIs' hook files add, accepted in their own sources only. */
export const DIALECT_EXTRA_SHAPES = {
  gemini: {
    name: z.string().optional(),
    description: z.string().optional(),
    env: z.record(z.string(), z.string()).optional(),
  },
  codex: { commandWindows: z.string().optional(), timeoutSec: z.number().positive().optional() },
  cursor: { failClosed: z.boolean().optional(), matcher: z.string().optional(), loop_limit: z.number().optional() },
} as const;

export const CommandHandlerSchema = z.strictObject(commandHandlerShape);
export const HttpHandlerSchema = z.strictObject(httpHandlerShape);
export const PromptHandlerSchema = z.strictObject(promptHandlerShape);
export const AgentHandlerSchema = z.strictObject(agentHandlerShape);
export const McpToolHandlerSchema = z.strictObject(mcpToolHandlerShape);
export const HandlerSchema = z.discriminatedUnion("type", [
  CommandHandlerSchema,
  HttpHandlerSchema,
  PromptHandlerSchema,
  AgentHandlerSchema,
  McpToolHandlerSchema,
]);

export type CommandHandlerDef = z.infer<typeof CommandHandlerSchema> & {
  /** Extra variables for the process (Gemini CLI's `env`). */
  readonly env?: Readonly<Record<string, string>>;
};
export type HttpHandlerDef = z.infer<typeof HttpHandlerSchema>;
export type PromptHandlerDef = z.infer<typeof PromptHandlerSchema>;
export type AgentHandlerDef = z.infer<typeof AgentHandlerSchema>;
/** The handlers a model evaluates. */
export type ModelHandlerDef = PromptHandlerDef | AgentHandlerDef;
export type McpToolHandlerDef = z.infer<typeof McpToolHandlerSchema>;
export type HandlerDefinition = CommandHandlerDef | HttpHandlerDef | ModelHandlerDef | McpToolHandlerDef;

export const MatcherGroupSchema = z.strictObject({
  matcher: z.string().optional(),
  hooks: z.array(z.unknown()),
});

/** The `hooks` key of a settings file: event name → matcher groups. */
export const HooksBlockSchema = z.record(z.string(), z.array(MatcherGroupSchema));

/** A whole Claude Code settings file; keys other than hooks belong to Claude Code and pass through. */
export const SettingsFileSchema = z.looseObject({
  hooks: HooksBlockSchema.optional(),
  disableAllHooks: z.boolean().optional(),
  /** Managed settings only: every hook but the managed ones is ignored. */
  allowManagedHooksOnly: z.boolean().optional(),
});

/** `commandHooks` in gatehouse.json. */
export const CommandHooksConfigSchema = z.strictObject({
  /** Dialect per source; the `code-puppy` source defaults to `code-puppy`, every other to `claude`. */
  dialects: z.partialRecord(z.enum(SOURCE_NAMES), z.enum(DIALECTS)).optional(),
  /** Read ~/.code_puppy/hooks.json as the `code-puppy` source. */
  codePuppy: z.boolean().optional(),
  /** Read Gemini CLI's hooks: `~/.gemini/settings.json` and `.gemini/settings.json`. */
  gemini: z.boolean().optional(),
  /** Read Codex's hooks: `~/.codex/hooks.json`, `.codex/hooks.json` and the `[hooks]` tables of their config.toml. */
  codex: z.boolean().optional(),
  /** Read Cursor's hooks: `~/.cursor/hooks.json` and `.cursor/hooks.json`. */
  cursor: z.boolean().optional(),
  /** Default for handlers without their own `onFailure`. */
  onFailure: OnFailureSchema.optional().describe(
    'What a handler that times out, cannot start or answers nonsense does, for handlers without their own "onFailure": "continue" (Claude Code\'s rule, the default) or "block" (fail closed). Precedence: the handler\'s own onFailure > this > "continue".',
  ),
  /** Variables the environment policy removes that hooks may see anyway. */
  passEnv: z
    .array(z.string().min(1))
    .optional()
    .describe(
      "Variables the environment policy removes (provider keys, GATEHOUSE_* secrets, environment.deny) that command hooks may see anyway, and that http hooks may put in their headers (when also in allowedEnvVars). Names, or patterns with *.",
    ),
});
export type CommandHooksConfig = z.infer<typeof CommandHooksConfigSchema>;
