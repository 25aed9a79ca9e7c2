import type { LanguageModelV3Prompt } from "@ai-sdk/provider";
import { type Message, modelHistory } from "../core/message.js";
import { contextMessage, contextTextPart, GATEHOUSE_KEY, toModelPrompt } from "../models/prompt.js";
import type { Tool } from "../tools/types.js";
import type { RunState } from "./state.js";

/**
 * The prompt for the next model call: stored history, the system prompt with its context,
 * hook context around the run's own user message, and each revision instruction after the
 * answer it asked to revise. Only the stored part ever reaches the store; the rest lives for
 * this run alone.
 */
export function buildModelPrompt(state: RunState, tools: ReadonlyMap<string, Tool>): LanguageModelV3Prompt {
  const options = { systemPrompt: state.systemPrompt(), runId: state.runId, tools };
  const prompt: LanguageModelV3Prompt = [];
  const history = modelHistory(state.history);
  let from = 0;
  for (const revision of state.revisions) {
    // An anchor lost to compaction puts the instruction where the surviving history starts.
    const at = history.findIndex((m) => m.id === revision.afterMessageId);
    const to = at < from ? from : at + 1;
    prompt.push(...convert(history.slice(from, to), from === 0, options), contextMessage(revision.text));
    from = to;
  }
  prompt.push(...convert(history.slice(from), from === 0, options));
  const { prepend, append } = state.context;
  addContext(prompt, prepend, append);
  return prompt;
}

function convert(
  messages: readonly Message[],
  first: boolean,
  options: { systemPrompt: string; runId: string; tools: ReadonlyMap<string, Tool> },
): LanguageModelV3Prompt {
  const { systemPrompt, runId, tools } = options;
  return toModelPrompt(
    messages.map((m) => (m.role === "tool" ? modelView(m, tools) : m)),
    first ? { systemPrompt, runId } : { runId },
  );
}

/**
 * Tools may show the model a text rendering of their output; hooks and the store keep the
 * structure. An output a policy replaced (a notice, a rewrite of another shape) is sent as is.
 */
function modelView(message: Message, tools: ReadonlyMap<string, Tool>): Message {
  let changed = false;
  const parts = message.parts.map((part) => {
    if (part.type !== "tool_result") return part;
    const output = rendered(part.output, part.isError === true, tools.get(part.toolName));
    if (output === part.output) return part;
    changed = true;
    return { ...part, output };
  });
  return changed ? { ...message, parts } : message;
}

/** A successful structured output in its tool's text rendering, or the output itself. */
function rendered(output: unknown, isError: boolean, tool: Tool | undefined): unknown {
  if (isError || typeof output !== "object" || output === null || !tool?.toModelOutput) return output;
  try {
    return tool.toModelOutput(output);
  } catch {
    return output;
  }
}

/** The text a model reads for a tool output (Claude Code's PostToolBatch `tool_response`). */
export function modelReadText(output: unknown, isError: boolean, tool: Tool | undefined): string {
  const shown = rendered(output, isError, tool);
  if (typeof shown === "string") return shown;
  if (shown === undefined || shown === null) return "";
  try {
    return JSON.stringify(shown) ?? String(shown);
  } catch {
    return String(shown);
  }
}

function addContext(prompt: LanguageModelV3Prompt, prepend: readonly string[], append: readonly string[]): void {
  if (!prepend.length && !append.length) return;
  const start = prompt.findIndex((m) => {
    const mark = m.providerOptions?.[GATEHOUSE_KEY] as { runStart?: boolean } | undefined;
    return m.role === "user" && mark?.runStart === true;
  });
  const message = prompt[start];
  if (message?.role !== "user") return;
  prompt[start] = {
    ...message,
    content: [...prepend.map(contextTextPart), ...message.content, ...append.map(contextTextPart)],
  };
}
