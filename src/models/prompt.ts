import type {
  JSONValue,
  LanguageModelV3FilePart,
  LanguageModelV3Message,
  LanguageModelV3Prompt,
  LanguageModelV3TextPart,
  LanguageModelV3ToolResultOutput,
  LanguageModelV3ToolResultPart,
  SharedV3ProviderOptions,
} from "@ai-sdk/provider";
import type { Message, Part, ToolResultPart } from "../core/message.js";

/**
 * The key under which Gatehouse marks prompt messages and parts (`providerOptions.gatehouse`).
 * Providers read only their own key, so the marks never reach the wire; the scripted model reads
 * them to find the run's user prompt.
 */
export const GATEHOUSE_KEY = "gatehouse";

/** What a prompt mark says. All fields optional; absent means "an ordinary message". */
export interface GatehouseMark {
  /** On the user message that started the current run (set by `toModelPrompt` from `runId`). */
  readonly runStart?: boolean;
  /** On messages or text parts the runtime added as context: not the user's own words. */
  readonly context?: boolean;
  /** What the message was before conversion when its role changed (`summary`, `system`). */
  readonly origin?: "summary" | "system";
}

/** The part of a stored message the conversion needs, so unsaved messages convert too. */
export type PromptMessage = Pick<Message, "role" | "parts"> & { readonly runId?: string | null };

export interface ToModelPromptOptions {
  readonly systemPrompt?: string;
  /** The current run: its first user message is marked `runStart` (see `GatehouseMark`). */
  readonly runId?: string;
}

export const SUMMARY_PREFIX = "Summary of the earlier conversation:\n\n";

export function gatehouseMark(providerOptions: SharedV3ProviderOptions | undefined): GatehouseMark {
  const mark = providerOptions?.[GATEHOUSE_KEY];
  return mark && typeof mark === "object" ? (mark as GatehouseMark) : {};
}

/** A user message the runtime adds as model-only context (injections, hook context). */
export function contextMessage(text: string): LanguageModelV3Message {
  return { role: "user", content: [contextTextPart(text)], providerOptions: mark({ context: true }) };
}

/** A text part of model-only context, for appending to the user's own message. */
export function contextTextPart(text: string): LanguageModelV3TextPart {
  return { type: "text", text, providerOptions: mark({ context: true }) };
}

function mark(value: GatehouseMark): SharedV3ProviderOptions {
  return { [GATEHOUSE_KEY]: { ...value } };
}

/**
 * Converts history to the AI SDK prompt every provider accepts.
 *
 * - The system prompt and system messages that lead the history become system messages. A system
 *   message later in the history becomes user-side context: Anthropic accepts mid-conversation
 *   system messages only behind a beta, and OpenAI-compatible servers differ on them.
 * - A summary becomes a user message prefixed with `SUMMARY_PREFIX` (marked as context), because a
 *   compaction summary stands where the conversation it replaces stood, and a user-side message is
 *   valid at any position for every provider.
 * - Tool results go to `tool` messages whatever role held them; parts a role cannot carry move to
 *   the nearest role that can (a tool message's text or images follow it as a user message).
 *   Empty text is dropped: providers reject empty text blocks.
 */
export function toModelPrompt(
  history: readonly PromptMessage[],
  options?: string | ToModelPromptOptions,
): LanguageModelV3Prompt {
  const { systemPrompt, runId } =
    typeof options === "string" ? { systemPrompt: options, runId: undefined } : (options ?? {});
  const prompt: LanguageModelV3Message[] = [];
  if (systemPrompt) prompt.push({ role: "system", content: systemPrompt });
  let leading = true;
  let runStartMarked = false;
  for (const message of history) {
    if (message.role === "system" && leading) {
      const text = joinText(message.parts);
      if (text !== "") prompt.push({ role: "system", content: text });
      continue;
    }
    leading = false;
    switch (message.role) {
      case "system":
      case "summary": {
        const text = joinText(message.parts);
        if (text === "") break;
        const body = message.role === "summary" ? SUMMARY_PREFIX + text : text;
        prompt.push({
          role: "user",
          content: [{ type: "text", text: body }],
          providerOptions: mark({ context: true, origin: message.role }),
        });
        break;
      }
      case "user": {
        pushTool(prompt, message.parts);
        const content = userContent(message.parts);
        if (content.length === 0) break;
        const isRunStart: boolean = !runStartMarked && runId !== undefined && message.runId === runId;
        runStartMarked ||= isRunStart;
        prompt.push({ role: "user", content, ...(isRunStart && { providerOptions: mark({ runStart: true }) }) });
        break;
      }
      case "assistant": {
        const content = assistantContent(message.parts);
        if (content.length > 0) prompt.push({ role: "assistant", content });
        pushTool(prompt, message.parts);
        break;
      }
      case "tool": {
        pushTool(prompt, message.parts);
        const rest = userContent(message.parts);
        if (rest.length > 0) prompt.push({ role: "user", content: rest });
        break;
      }
    }
  }
  return prompt;
}

function joinText(parts: readonly Part[]): string {
  return parts
    .filter((p) => p.type === "text")
    .map((p) => p.text)
    .join("\n\n");
}

function pushTool(prompt: LanguageModelV3Message[], parts: readonly Part[]): void {
  const results = parts.filter((p) => p.type === "tool_result").map(toolResult);
  if (results.length === 0) return;
  const last = prompt.at(-1);
  // Results of one step's calls belong in one tool message, whichever messages stored them.
  if (last?.role === "tool") last.content.push(...results);
  else prompt.push({ role: "tool", content: results });
}

function userContent(parts: readonly Part[]): Array<LanguageModelV3TextPart | LanguageModelV3FilePart> {
  const content: Array<LanguageModelV3TextPart | LanguageModelV3FilePart> = [];
  for (const part of parts) {
    if (part.type === "text" && part.text !== "") content.push({ type: "text", text: part.text });
    else if (part.type === "image" || part.type === "file") content.push(filePart(part));
  }
  return content;
}

function assistantContent(parts: readonly Part[]): Extract<LanguageModelV3Message, { role: "assistant" }>["content"] {
  const content: Extract<LanguageModelV3Message, { role: "assistant" }>["content"] = [];
  for (const part of parts) {
    switch (part.type) {
      case "text":
        if (part.text !== "") content.push({ type: "text", text: part.text });
        break;
      case "reasoning":
        if (part.text !== "") content.push({ type: "reasoning", text: part.text });
        break;
      case "tool_call":
        content.push({
          type: "tool-call",
          toolCallId: part.toolCallId,
          toolName: part.toolName,
          input: part.input ?? {},
        });
        break;
      case "image":
      case "file":
        content.push(filePart(part));
        break;
      case "tool_result":
        break;
    }
  }
  return content;
}

/** Our `data` is base64, a data: URL or an http(s) URL; the AI SDK wants base64 or a URL object. */
function filePart(part: Extract<Part, { type: "image" | "file" }>): LanguageModelV3FilePart {
  const dataUrl = /^data:([^;,]*)(;base64)?,(.*)$/s.exec(part.data);
  let data: string | URL = part.data;
  if (dataUrl) {
    const payload = dataUrl[3] ?? "";
    data = dataUrl[2] ? payload : Buffer.from(decodeURIComponent(payload), "utf8").toString("base64");
  } else if (/^https?:\/\//i.test(part.data)) {
    data = new URL(part.data);
  }
  return {
    type: "file",
    mediaType: part.mediaType,
    data,
    ...(part.type === "file" && part.filename !== undefined && { filename: part.filename }),
  };
}

function toolResult(part: ToolResultPart): LanguageModelV3ToolResultPart {
  return { type: "tool-result", toolCallId: part.toolCallId, toolName: part.toolName, output: toolOutput(part) };
}

function toolOutput(part: ToolResultPart): LanguageModelV3ToolResultOutput {
  const { output, isError } = part;
  if (typeof output === "string") return { type: isError ? "error-text" : "text", value: output };
  if (output === undefined || output === null) return { type: isError ? "error-text" : "text", value: "" };
  const value = toJSONValue(output);
  if (typeof value === "string") return { type: isError ? "error-text" : "text", value };
  return { type: isError ? "error-json" : "json", value };
}

/** Tool outputs are arbitrary values; what cannot be JSON (cycles, bigint) is sent as its string form. */
function toJSONValue(value: unknown): JSONValue {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? String(value) : (JSON.parse(text) as JSONValue);
  } catch {
    return String(value);
  }
}
