import type { LanguageModelV3, LanguageModelV3FunctionTool, LanguageModelV3Prompt } from "@ai-sdk/provider";
import { messageText, type ToolResultPart } from "../core/message.js";
import { hookModelSpec } from "../models/aliases.js";
import { type CollectedResponse, type CollectedToolCall, collectStream, type ModelUsage } from "../models/collect.js";
import { type PromptMessage, toModelPrompt } from "../models/prompt.js";
import { toModelTools } from "../models/tools.js";
import { type PermissionPolicy, withRealPath } from "../permissions/index.js";
import type { SandboxPolicy } from "../sandbox/policy.js";
import { readDenied } from "../sandbox/refusals.js";
import { resolvePath } from "../tools/builtin/fs-util.js";
import { createGlobTool, createGrepTool, createReadTool } from "../tools/builtin/index.js";
import { mcpToolName } from "../tools/mcp-name.js";
import { type Tool, type ToolContext, ToolError } from "../tools/types.js";
import type { ModelResolver } from "./deps.js";
import { denialText, InvalidInput, parseInput } from "./doors/tool.js";
import { notices } from "./notices.js";

/** Where a hook's model calls count their tokens: the usage of the run whose event fired the hook. */
export type UsageSink = (usage: ModelUsage) => void;

/** One evaluation by a `prompt` or `agent` command hook: `model` is a Gatehouse spec, or undefined for the configured model. */
export interface HookModelRequest {
  readonly model: string | undefined;
  readonly system: string;
  /** Already masked. */
  readonly prompt: string;
  readonly signal: AbortSignal;
  /** Told each model call's usage; absent for a hook that fired outside a run. */
  readonly onUsage?: UsageSink | undefined;
}

export interface HookAgentRequest extends HookModelRequest {
  /** Model calls allowed, tool rounds included. */
  readonly maxTurns: number;
  /** What every tool result goes through before the model reads it (secrets masked). */
  readonly mask: (text: string) => string;
}

/**
 * The model call of a `prompt` command hook: the configured model, or the spec the handler
 * names. It goes straight to the provider, outside any run: no hook sees it (a hook's own
 * evaluation must not fire hooks), and it is not stored. Its usage goes to `onUsage`.
 */
export function hookModelCall(models: ModelResolver) {
  return async (request: HookModelRequest): Promise<string> => {
    const model = await hookModel(models, request.model);
    return messageText(
      await hookModelTurn(model, toModelPrompt([userMessage(request.prompt)], request.system), request),
    );
  };
}

interface AgentTools {
  readonly byName: ReadonlyMap<string, Tool>;
  readonly published: readonly LanguageModelV3FunctionTool[];
}
let agentTools: AgentTools | undefined;

/**
 * The agent's tools: the built-in read-only ones, never the run's (a plugin or MCP tool may take a
 * built-in's name). Made on first use: most Gatehouses have no agent hook.
 */
function readOnlyTools(): AgentTools {
  if (agentTools === undefined) {
    const tools = [createReadTool(), createGrepTool(), createGlobTool()] as Tool[];
    agentTools = { byName: new Map(tools.map((t) => [t.name, t])), published: toModelTools(tools) };
  }
  return agentTools;
}

/**
 * The agent of an `agent` command hook: the model with Read, Grep and Glob, for at most
 * `maxTurns` model calls; resolves with its final text (a reply without tool calls), or
 * undefined when it was still calling tools at the last turn. Like a `prompt` hook's call it runs
 * outside any run: no hook fires for its model calls or its tool calls, and nothing is stored.
 * Every call meets the permission rules with no one to ask (`decideUnattended`): a deny or ask
 * rule refuses it, a file reached through a symbolic link included, and a search skips the files
 * a rule keeps it from reading. The sandbox's read rules (`sandboxReads`: `denyRead`, `allowRead`,
 * the credential files) refuse it too, whether or not Bash commands run sandboxed: a policy hook's
 * agent has no business in what the sandbox keeps from the run's commands. Every tool result is
 * masked before the model reads it.
 */
export function hookAgentCall(
  models: ModelResolver,
  permissions: PermissionPolicy,
  cwd: string,
  sandboxReads: SandboxPolicy["filesystem"],
) {
  const refusal = (toolName: string, input: unknown): string | undefined => {
    const forms = withRealPath(input);
    for (const form of forms) {
      const decision = permissions.decideUnattended(toolName, form);
      if (decision.behavior === "allow") continue;
      const { rule } = decision;
      return notices.permissionDenied(
        toolName,
        denialText({
          toolName,
          toolCallId: "",
          reason: decision.behavior === "ask" ? "nobody" : decision.by === "mode" ? "mode" : "rule",
          decidedBy: "permissions",
          mode: permissions.mode,
          ...(rule ? { rule: rule.rule, source: rule.source, ...(rule.file ? { file: rule.file } : {}) } : {}),
        }),
      );
    }
    // After the rules, so a read both refuse names its rule.
    for (const form of forms) {
      const path = pathOf(form);
      if (path !== undefined && readDenied(resolvePath(path, cwd), sandboxReads))
        return notices.permissionDenied(toolName, "the sandbox's filesystem rules keep it from being read");
    }
    return undefined;
  };
  const readable = (file: string) => refusal("Read", { file_path: file }) === undefined;

  return async (request: HookAgentRequest): Promise<string | undefined> => {
    const model = await hookModel(models, request.model);
    const tools = readOnlyTools();
    const ctx: ToolContext = { signal: request.signal, cwd, readable };
    const history: PromptMessage[] = [userMessage(request.prompt)];
    for (let turn = 0; turn < request.maxTurns; turn++) {
      const response = await hookModelTurn(model, toModelPrompt(history, request.system), request, tools.published);
      if (response.toolCalls.length === 0) return messageText(response);
      history.push({ role: "assistant", parts: response.parts });
      const results = await Promise.all(
        response.toolCalls.map((call) => readOnlyCall(tools.byName.get(call.toolName), call, ctx, refusal)),
      );
      history.push({ role: "tool", parts: results.map((r) => ({ ...r, output: request.mask(r.output) })) });
    }
    return undefined;
  };
}

/** The file or folder a read names (`file_path` of Read, `path` of Grep and Glob). */
function pathOf(input: unknown): string | undefined {
  const fields = (typeof input === "object" && input !== null ? input : {}) as Record<string, unknown>;
  const path = fields.file_path ?? fields.path;
  return typeof path === "string" ? path : undefined;
}

/** One tool call of the agent: the result as the model reads it (before masking). */
async function readOnlyCall(
  tool: Tool | undefined,
  call: CollectedToolCall,
  ctx: ToolContext,
  refusal: (toolName: string, input: unknown) => string | undefined,
): Promise<ToolResultPart & { output: string }> {
  const result = (output: string, isError = false) => ({
    type: "tool_result" as const,
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    output,
    ...(isError ? { isError: true } : {}),
  });
  if (!tool) return result(notices.unknownTool(call.toolName), true);
  const input = parseInput(tool, call, ctx);
  if (input instanceof InvalidInput) return result(input.message, true);
  const refused = refusal(call.toolName, input);
  if (refused !== undefined) return result(refused, true);
  try {
    const output = await tool.execute(input, ctx);
    return result(tool.toModelOutput ? tool.toModelOutput(output) : JSON.stringify(output));
  } catch (error) {
    ctx.signal.throwIfAborted();
    return result(error instanceof ToolError ? error.message : `${call.toolName} failed`, true);
  }
}

/** The hook's model: Claude Code's aliases resolve against the provider of the run's model (src/models/aliases.ts). */
async function hookModel(models: ModelResolver, name: string | undefined): Promise<LanguageModelV3> {
  const run = await models.resolve();
  const spec = hookModelSpec(name, run.provider);
  return spec === undefined ? run.model : (await models.resolve({ modelOverride: spec })).model;
}

const userMessage = (text: string): PromptMessage => ({ role: "user", parts: [{ type: "text", text }] });

/** One model call of a hook's evaluation, its usage counted where the request says. */
async function hookModelTurn(
  model: LanguageModelV3,
  prompt: LanguageModelV3Prompt,
  request: HookModelRequest,
  tools?: readonly LanguageModelV3FunctionTool[],
): Promise<CollectedResponse> {
  const { stream } = await model.doStream({
    prompt,
    ...(tools ? { tools: [...tools] } : {}),
    abortSignal: request.signal,
  });
  const response = await collectStream(stream);
  request.onUsage?.(response.usage);
  return response;
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
    const name = mcpToolName(server, tool);
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
