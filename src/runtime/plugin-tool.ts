import { z } from "zod";
import type { PluginTool } from "../plugins/define.js";
import { type Tool, ToolError } from "../tools/types.js";

/**
 * A plugin's tool as the runtime runs it: the input must be an object (its JSON Schema is what
 * the model is shown, as for MCP tools), and a throw is the tool's error, as the model sees it.
 */
export function pluginTool(tool: PluginTool): Tool<Record<string, unknown>, unknown> {
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: z.record(z.string(), z.unknown()),
    jsonSchema: tool.inputSchema,
    ...(tool.parallel === undefined ? {} : { parallel: tool.parallel }),
    async execute(input, ctx) {
      try {
        return await tool.execute(input, { signal: ctx.signal, cwd: ctx.cwd, toolCallId: ctx.toolCallId ?? "" });
      } catch (error) {
        if (error instanceof ToolError) throw error;
        throw new ToolError(error instanceof Error ? error.message : String(error));
      }
    },
    ...(tool.toModelOutput
      ? { toModelOutput: (output: unknown) => (tool.toModelOutput as (o: unknown) => string)(output) }
      : {}),
  };
}
