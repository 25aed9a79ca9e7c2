import type { PluginTool } from "../define.js";
import { isOpenClawResult, OPENCLAW_CORE_TOOLS, openClawResultText } from "./tools.js";

/**
 * Tools an OpenClaw plugin adds (`api.registerTool`) as Gatehouse plugin tools: offered to the
 * model under their own name and hooked like any other tool. OpenClaw's `execute(toolCallId,
 * params, signal)` returns `{ content, details }`; the model reads the text content.
 */

type Obj = Record<string, unknown>;
const isRecord = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

export class ToolAdaptError extends Error {}

export interface ToolContext {
  readonly cwd: string;
  readonly pluginId: string;
  readonly config: unknown;
}

/**
 * A tool, a factory `(ctx) => tool | tool[] | null`, or a `{ contextVersion: 2, create }`
 * descriptor. Factories are called once, when the plugin loads, with the project as the
 * workspace: Gatehouse assembles its tools once, not per turn.
 */
export function adaptTool(value: unknown, options: unknown, ctx: ToolContext): PluginTool[] {
  const factoryContext = { workspaceDir: ctx.cwd, agentId: "main", config: ctx.config, sandboxed: false };
  let made: unknown = value;
  if (typeof value === "function") made = (value as (c: unknown) => unknown)(factoryContext);
  else if (isRecord(value) && typeof value.create === "function")
    made = (value.create as (c: unknown) => unknown)({ ...factoryContext, assertInvocationCurrent: () => {} });
  if (made === null || made === undefined) return [];
  const list = Array.isArray(made) ? made : [made];
  const names = isRecord(options) && Array.isArray(options.names) ? options.names : undefined;
  const optional = isRecord(options) && options.optional === true;
  return list.map((tool, i) =>
    toPluginTool(tool, names?.[i] ?? (isRecord(options) ? options.name : undefined), optional),
  );
}

/** `optional`: offered only when allowlisted (the registration's `{ optional: true }` or the tool's own). */
function toPluginTool(tool: unknown, nameOption: unknown, optional: boolean): PluginTool {
  if (!isRecord(tool)) throw new ToolAdaptError("api.registerTool expects a tool object or a factory");
  const name = typeof tool.name === "string" && tool.name !== "" ? tool.name : nameOption;
  if (typeof name !== "string" || name === "") throw new ToolAdaptError("a tool needs a non-empty name");
  if (OPENCLAW_CORE_TOOLS.has(name))
    throw new ToolAdaptError(`tool name "${name}" is an OpenClaw core tool's; a plugin tool may not take it`);
  if (typeof tool.execute !== "function") throw new ToolAdaptError(`tool "${name}": execute is not a function`);
  if (!isRecord(tool.parameters)) throw new ToolAdaptError(`tool "${name}": parameters must be a JSON Schema object`);
  const execute = tool.execute as (id: string, params: unknown, signal?: AbortSignal) => Promise<unknown>;
  const prepare =
    typeof tool.prepareArguments === "function" ? (tool.prepareArguments as (a: unknown) => unknown) : undefined;
  return {
    name,
    description: typeof tool.description === "string" ? tool.description : "",
    // TypeBox schemas are JSON Schema with symbol-keyed extras: JSON round-tripping keeps the schema.
    inputSchema: JSON.parse(JSON.stringify(tool.parameters)) as Obj,
    parallel: tool.executionMode === "parallel",
    ...(optional || tool.optional === true ? { optional: true } : {}),
    async execute(input, c) {
      return execute.call(tool, c.toolCallId, prepare ? prepare(input) : input, c.signal);
    },
    toModelOutput(output) {
      if (isOpenClawResult(output)) return openClawResultText(output);
      return typeof output === "string" ? output : (JSON.stringify(output) ?? "");
    },
  };
}
