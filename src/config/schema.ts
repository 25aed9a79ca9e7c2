import { z } from "zod";
import { CommandHooksConfigSchema, HooksBlockSchema } from "../command-hooks/settings.js";
import { isAddressOrRange } from "../core/address.js";
import { normalizeHostname } from "../core/hostname.js";
import { PERMISSION_MODES } from "../permissions/policy.js";
import { PluginEntrySchema, PluginHookOptionsSchema } from "../plugins/config.js";
import { storeSpellingProblem } from "../store/spelling.js";
import { McpServersConfigSchema } from "../tools/mcp-config.js";
import { ModelSpecSchema } from "./model-spec.js";
import { ServerConfigSchema } from "./server.js";

const MODEL_SPEC_HELP =
  "The default model as a provider:model spec (openai:<model>, anthropic:<model>, openai-compatible:<baseURL>#<model>, scripted:<file>|echo). --model and then GATEHOUSE_MODEL override it. A relative scripted file is found from this file's folder.";

/** Mirrors `resolveStoreOptions`, which refuses URLs of any other scheme: refused here, with a path. */
const StoreSchema = z
  .string()
  .min(1)
  .superRefine((s, ctx) => {
    const problem = storeSpellingProblem(s);
    if (problem !== undefined) ctx.addIssue({ code: "custom", message: problem });
  });

/**
 * `gatehouse.json`. Every object is strict: a misspelt key is an error, never silently ignored
 * (a `tools.dney` that denies nothing is how a guard gets switched off). The descriptions end
 * up in the published JSON Schema, where editors show them.
 */
export const GatehouseConfigSchema = z
  .strictObject({
    $schema: z.string().optional().describe("Where editors find this schema; ignored by Gatehouse."),
    $comment: z
      .union([z.string(), z.array(z.string())])
      .optional()
      .describe("Notes for people reading this file (JSON has no comments); ignored by Gatehouse."),
    model: z
      .union([
        ModelSpecSchema.describe(MODEL_SPEC_HELP),
        z
          .strictObject({
            spec: ModelSpecSchema.optional().describe(MODEL_SPEC_HELP),
            temperature: z.number().min(0).max(2).optional().describe("Sampling temperature passed to the provider."),
            maxOutputTokens: z.number().int().min(1).optional().describe("Most tokens one model call may generate."),
            reasoningEffort: z
              .enum(["minimal", "low", "medium", "high"])
              .optional()
              .describe("OpenAI's reasoningEffort; Anthropic's effort (minimal is sent as low)."),
            maxRetries: z
              .number()
              .int()
              .min(0)
              .max(10)
              .optional()
              .describe(
                "Retries of a model call that failed before anything streamed (408, 409, 429, 5xx, a connection error), after retry-after or an exponential backoff with jitter. Default 2.",
              ),
          })
          .describe("The model spec with settings passed to every model call."),
      ])
      .optional()
      .describe("The default model: a provider:model spec, or an object with the spec and its settings."),
    plugins: z
      .array(PluginEntrySchema)
      .optional()
      .describe("Plugins from files (relative to this file's folder) or packages, loaded in order."),
    hooks: HooksBlockSchema.optional().describe(
      "Claude Code settings.json hooks: event name → matcher groups of command, http, prompt, agent or mcp_tool handlers.",
    ),
    disableAllHooks: z
      .boolean()
      .optional()
      .describe(
        "true turns every command hook off (all sources), as in Claude Code's settings.json; --settings '{\"disableAllHooks\":false}' turns them back on.",
      ),
    hookTimeouts: PluginHookOptionsSchema.pick({ timeoutMs: true, timeouts: true })
      .optional()
      .describe(
        "Operator-wide plugin hook timeouts in milliseconds: timeoutMs for every hook, timeouts per hook. A plugin's own hooks settings take precedence.",
      ),
    commandHooks: CommandHooksConfigSchema.optional().describe("How Claude-Code-style command hooks are read and run."),
    permissions: z
      .strictObject({
        allow: z
          .array(z.string().min(1))
          .optional()
          .describe('Rules whose calls run without asking, e.g. "Bash(npm test:*)".'),
        ask: z.array(z.string().min(1)).optional().describe("Rules whose calls always ask."),
        deny: z
          .array(z.string().min(1))
          .optional()
          .describe('Rules whose calls never run, in every mode, e.g. "Bash(rm:*)" or "Read(./.env)".'),
        defaultMode: z
          .enum(PERMISSION_MODES)
          .optional()
          .describe(
            "default | acceptEdits | plan | dontAsk | bypassPermissions (bypassPermissions must be enabled by the operator).",
          ),
        additionalDirectories: z
          .array(z.string().min(1))
          .optional()
          .describe("Folders besides the project where acceptEdits accepts edits (relative to this file's folder)."),
      })
      .optional()
      .describe(
        "Claude Code's permission rules and mode (docs/permissions.md), merged with the .claude/ settings files' and --settings'; a deny anywhere beats an allow anywhere.",
      ),
    mcpServers: McpServersConfigSchema.optional().describe(
      "MCP servers (as in .mcp.json) whose tools are offered as mcp__<server>__<tool>.",
    ),
    tools: z
      .strictObject({
        allow: z.array(z.string().min(1)).optional().describe("Only these tools (names or globs) are offered."),
        deny: z.array(z.string().min(1)).optional().describe("These tools are never offered, even when allowed."),
        alsoAllow: z
          .array(z.string().min(1))
          .optional()
          .describe(
            "Optional plugin tools (OpenClaw's registerTool(tool, { optional: true })) to offer as well: tool names or globs, plugin ids, or group:plugins. tools.allow entries count too.",
          ),
        bash: z
          .strictObject({
            passEnv: z
              .array(z.string().min(1))
              .optional()
              .describe(
                "Variables the environment policy removes (provider keys, GATEHOUSE_* secrets, environment.deny) that the Bash tool's commands may see anyway. Names, or patterns with *.",
              ),
          })
          .optional()
          .describe("The built-in Bash tool."),
        webFetch: z
          .strictObject({
            maxBytes: z.number().int().positive().optional().describe("Largest body read (default 5 MiB)."),
            timeoutMs: z.number().int().positive().optional().describe("Time for the whole fetch (default 30000)."),
            allowPrivateNetwork: z
              .boolean()
              .optional()
              .describe(
                "Also fetch every local and private network's addresses: loopback, private, link-local, unique-local, CGNAT (default false). Cloud metadata services stay refused unless allowPrivateHosts names them.",
              ),
            allowPrivateHosts: z
              .array(
                z
                  .string()
                  .refine(
                    (entry) => isAddressOrRange(entry) || normalizeHostname(entry.replace(/^\*\./, "")) !== undefined,
                    {
                      message: "expected a host name (*.example.com for subdomains), an IP address or a CIDR range",
                    },
                  ),
              )
              .optional()
              .describe(
                "Local or private hosts WebFetch may fetch all the same: host names (*. for subdomains; a named host may resolve to any address), IP addresses and CIDR ranges (10.1.0.0/16).",
              ),
          })
          .optional()
          .describe(
            "Offers the built-in WebFetch tool (Claude Code's: an HTTP GET, content as text). Off unless set: a tool that reaches the network is your choice.",
          ),
      })
      .optional()
      .describe("Which tools the model may use; deny wins over allow."),
    environment: z
      .strictObject({
        deny: z
          .array(z.string().min(1))
          .optional()
          .describe(
            "Further variables to remove from every process Gatehouse starts for the model or a hook (Bash tool, command hooks, MCP servers) and from http hook headers: names, or patterns with * (STRIPE_*). Provider keys and GATEHOUSE_* secrets are always removed.",
          ),
      })
      .optional()
      .describe(
        "The environment policy: what the Bash tool, command hooks and MCP servers do not inherit. tools.bash.passEnv and commandHooks.passEnv add variables back for one of them; an MCP server's env sets its own.",
      ),
    store: StoreSchema.optional().describe(
      'Where sessions are stored: a postgres:// URL, "memory", or a SQLite file path (relative to this file\'s folder). GATEHOUSE_DATABASE_URL overrides it. Default: .gatehouse/gatehouse.db in the data folder.',
    ),
    maxSteps: z.number().int().min(1).max(1000).optional().describe("Model calls per turn at most (default 25)."),
    subagents: z
      .strictObject({
        maxDepth: z
          .number()
          .int()
          .min(1)
          .max(10)
          .optional()
          .describe("How deep sub-agents may nest: 1 (default) lets the main agent start sub-agents that start none."),
      })
      .optional()
      .describe("Sub-agents started by the Agent tool (when tools allow it)."),
    systemPrompt: z.string().optional().describe("The system prompt of every run."),
    compaction: z
      .strictObject({
        contextTokens: z
          .number()
          .int()
          .min(1)
          .optional()
          .describe("Compact when the history's estimated tokens exceed this (default 100000)."),
        keepRecent: z
          .number()
          .int()
          .min(0)
          .optional()
          .describe("Messages kept verbatim after the summary (default 6)."),
      })
      .optional()
      .describe("When and how the history is summarized."),
    server: ServerConfigSchema.optional(),
  })
  .describe("Gatehouse project configuration (gatehouse.json).");

/** gatehouse.json as validated. */
export type GatehouseConfig = z.infer<typeof GatehouseConfigSchema>;
/** gatehouse.json as written. */
export type GatehouseConfigInput = z.input<typeof GatehouseConfigSchema>;

let jsonSchema: Record<string, unknown> | undefined;

/** The JSON Schema of gatehouse.json as written (`io: "input"`), generated from the zod schema. */
export function configJsonSchema(): Record<string, unknown> {
  if (!jsonSchema) {
    const { $schema, ...rest } = z.toJSONSchema(GatehouseConfigSchema, { io: "input" }) as Record<string, unknown>;
    jsonSchema = { $schema, title: "gatehouse.json", ...rest };
  }
  return jsonSchema;
}

/** Where the published schema lives, relative to the package root. */
export const CONFIG_SCHEMA_FILE = "schema/gatehouse.schema.json";

/** The text of `schema/gatehouse.schema.json`, byte for byte. */
export function renderConfigJsonSchema(): string {
  return `${JSON.stringify(configJsonSchema(), null, 2)}\n`;
}
