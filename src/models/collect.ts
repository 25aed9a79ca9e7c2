import type { LanguageModelV3FinishReason, LanguageModelV3StreamPart, LanguageModelV3Usage } from "@ai-sdk/provider";
import type { Part, ToolCallPart } from "../core/message.js";

export interface ModelUsage {
  readonly inputTokens: number | undefined;
  readonly outputTokens: number | undefined;
  readonly totalTokens: number | undefined;
  readonly reasoningTokens: number | undefined;
  readonly cacheReadTokens: number | undefined;
  readonly cacheWriteTokens: number | undefined;
}

export type FinishReason = LanguageModelV3FinishReason["unified"];

/** A tool call as the model sent it; `inputError` when its arguments were not valid JSON. */
export interface CollectedToolCall extends ToolCallPart {
  /** The arguments exactly as streamed. */
  readonly inputText: string;
  /** Set when `inputText` is not JSON; `input` is then the raw text, for the runtime to reject. */
  readonly inputError?: string;
}

export interface CollectedResponse {
  /** The assistant message's parts, in the order the model produced them. */
  readonly parts: Part[];
  readonly toolCalls: CollectedToolCall[];
  readonly usage: ModelUsage;
  readonly finishReason: FinishReason;
}

/** Live progress while a response streams; `collectStream`'s result is the authoritative total. */
export type ModelStreamEvent =
  | { readonly type: "text-delta"; readonly delta: string }
  | { readonly type: "reasoning-delta"; readonly delta: string }
  | { readonly type: "tool-input-start"; readonly toolCallId: string; readonly toolName: string }
  | { readonly type: "tool-input-delta"; readonly toolCallId: string; readonly delta: string }
  | { readonly type: "tool-call"; readonly toolCall: CollectedToolCall }
  | { readonly type: "finish"; readonly usage: ModelUsage; readonly finishReason: FinishReason };

/** A stream ended with an error part whose payload is not an Error (e.g. an OpenAI error object). */
export class ModelStreamError extends Error {
  override readonly name = "ModelStreamError";
}

export const EMPTY_USAGE: ModelUsage = {
  inputTokens: undefined,
  outputTokens: undefined,
  totalTokens: undefined,
  reasoningTokens: undefined,
  cacheReadTokens: undefined,
  cacheWriteTokens: undefined,
};

export function toModelUsage(usage: LanguageModelV3Usage | undefined): ModelUsage {
  if (!usage) return EMPTY_USAGE;
  const input = usage.inputTokens.total;
  const output = usage.outputTokens.total;
  return {
    inputTokens: input,
    outputTokens: output,
    totalTokens: input === undefined && output === undefined ? undefined : (input ?? 0) + (output ?? 0),
    reasoningTokens: usage.outputTokens.reasoning,
    cacheReadTokens: usage.inputTokens.cacheRead,
    cacheWriteTokens: usage.inputTokens.cacheWrite,
  };
}

/**
 * Drains a model stream into our parts. Text and reasoning keep one part per block the model
 * opened (so text, tool call, text stays three parts in that order); deltas reach `onEvent` as
 * they arrive. An error part rejects: Error payloads (e.g. `APICallError`) as they are, so
 * callers can still read `isRetryable`.
 */
export async function collectStream(
  stream: ReadableStream<LanguageModelV3StreamPart> | AsyncIterable<LanguageModelV3StreamPart>,
  onEvent?: (event: ModelStreamEvent) => void,
): Promise<CollectedResponse> {
  const parts: Part[] = [];
  const toolCalls: CollectedToolCall[] = [];
  const open = new Map<string, { type: "text" | "reasoning"; text: string; index: number }>();
  let usage: ModelUsage = EMPTY_USAGE;
  let finishReason: FinishReason = "other";

  const block = (kind: "text" | "reasoning", id: string) => {
    const key = `${kind}:${id}`;
    let current = open.get(key);
    if (!current) {
      current = { type: kind, text: "", index: parts.length };
      parts.push({ type: kind, text: "" });
      open.set(key, current);
    }
    return current;
  };

  for await (const part of iterate(stream)) {
    switch (part.type) {
      case "text-start":
      case "reasoning-start":
        block(part.type === "text-start" ? "text" : "reasoning", part.id);
        break;
      case "text-delta":
      case "reasoning-delta": {
        const kind = part.type === "text-delta" ? "text" : "reasoning";
        const current = block(kind, part.id);
        current.text += part.delta;
        parts[current.index] = { type: kind, text: current.text };
        // Providers open a block with an empty delta; it is no progress worth reporting.
        if (part.delta !== "") onEvent?.({ type: part.type, delta: part.delta });
        break;
      }
      case "text-end":
      case "reasoning-end":
        // A provider may reuse a block id later; the next delta then starts a new part.
        open.delete(`${part.type === "text-end" ? "text" : "reasoning"}:${part.id}`);
        break;
      case "tool-input-start":
        if (!part.providerExecuted)
          onEvent?.({ type: "tool-input-start", toolCallId: part.id, toolName: part.toolName });
        break;
      case "tool-input-delta":
        onEvent?.({ type: "tool-input-delta", toolCallId: part.id, delta: part.delta });
        break;
      case "tool-call": {
        if (part.providerExecuted) break;
        const call = toToolCall(part.toolCallId, part.toolName, part.input);
        toolCalls.push(call);
        parts.push({ type: "tool_call", toolCallId: call.toolCallId, toolName: call.toolName, input: call.input });
        onEvent?.({ type: "tool-call", toolCall: call });
        break;
      }
      case "file": {
        const data = typeof part.data === "string" ? part.data : Buffer.from(part.data).toString("base64");
        parts.push(
          part.mediaType.startsWith("image/")
            ? { type: "image", mediaType: part.mediaType, data }
            : { type: "file", mediaType: part.mediaType, data },
        );
        break;
      }
      case "finish":
        usage = toModelUsage(part.usage);
        finishReason = part.finishReason.unified;
        break;
      case "error":
        throw part.error instanceof Error
          ? part.error
          : new ModelStreamError(describeError(part.error), { cause: part.error });
      default:
        break;
    }
  }
  const kept = parts.filter((p) => !((p.type === "text" || p.type === "reasoning") && p.text === ""));
  onEvent?.({ type: "finish", usage, finishReason });
  return { parts: kept, toolCalls, usage, finishReason };
}

function toToolCall(toolCallId: string, toolName: string, inputText: string): CollectedToolCall {
  // Models send "" for a call without arguments; that means an empty object.
  if (inputText.trim() === "") return { type: "tool_call", toolCallId, toolName, input: {}, inputText };
  try {
    return { type: "tool_call", toolCallId, toolName, input: JSON.parse(inputText), inputText };
  } catch (error) {
    const inputError = `tool call ${toolName} (${toolCallId}): arguments are not valid JSON: ${(error as Error).message}`;
    return { type: "tool_call", toolCallId, toolName, input: inputText, inputText, inputError };
  }
}

function describeError(error: unknown): string {
  if (error && typeof error === "object" && "message" in error && typeof error.message === "string")
    return error.message;
  if (typeof error === "string") return error;
  try {
    return `model stream failed: ${JSON.stringify(error)}`;
  } catch {
    return "model stream failed";
  }
}

async function* iterate<T>(stream: ReadableStream<T> | AsyncIterable<T>): AsyncGenerator<T> {
  if (Symbol.asyncIterator in stream) {
    yield* stream as AsyncIterable<T>;
    return;
  }
  const reader = (stream as ReadableStream<T>).getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    // Stops the provider's HTTP body when we leave early (an error part, or the caller's throw).
    await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}
