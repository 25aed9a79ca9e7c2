import { messageText } from "../core/message.js";
import { collectStream } from "../models/collect.js";
import { type Tool, ToolError } from "../tools/types.js";
import type { ModelResolver } from "./deps.js";

/**
 * The model call of a `prompt` command hook: the configured model, or the spec the handler
 * names. It goes straight to the provider, outside any run: no hook sees it (a hook's own
 * evaluation must not fire hooks), and it is not stored.
 */
export function hookModelCall(models: ModelResolver) {
  return async (request: {
    readonly model: string | undefined;
    readonly system: string;
    readonly prompt: string;
    readonly signal: AbortSignal;
  }): Promise<string> => {
    const { model } = await models.resolve(request.model === undefined ? undefined : { modelOverride: request.model });
    const { stream } = await model.doStream({
      prompt: [
        { role: "system", content: request.system },
        { role: "user", content: [{ type: "text", text: request.prompt }] },
      ],
      abortSignal: request.signal,
    });
    return messageText(await collectStream(stream));
  };
}

/**
 * The tool call of an `mcp_tool` command hook: the connected server's tool, called directly with
 * the handler's input — not a tool call of the run, so no tool hook sees it and nothing is stored.
 */
export function hookMcpCall(
  tools: () => ReadonlyMap<string, Tool> | undefined,
  cwd: string,
  /** MCP servers start in the background: a hook that fires before they settled waits for them. */
  waitForTools: (signal: AbortSignal) => Promise<void> | undefined = () => undefined,
) {
  return async (
    server: string,
    tool: string,
    input: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<{ readonly text: string; readonly isError: boolean }> => {
    const name = `mcp__${server}__${tool}`;
    if (!tools()?.has(name)) await waitForTools(signal);
    const found = tools()?.get(name);
    if (!found) throw new Error(`MCP tool "${tool}" of server "${server}" is not connected`);
    const parsed = found.inputSchema.safeParse(input);
    if (!parsed.success) throw new Error(`invalid input for MCP tool "${tool}": ${parsed.error.issues[0]?.message}`);
    try {
      const output = await found.execute(parsed.data, { signal, cwd });
      return { text: found.toModelOutput ? found.toModelOutput(output) : JSON.stringify(output), isError: false };
    } catch (error) {
      if (error instanceof ToolError) return { text: error.message, isError: true };
      throw error;
    }
  };
}
