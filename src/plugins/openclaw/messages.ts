import type { Message, Part } from "../../core/message.js";
import { openClawResultText, openClawToolName, toOpenClawParams, toOpenClawResult } from "./tools.js";

/**
 * Gatehouse messages as OpenClaw's agent messages (`{ role, content: [...] }` with `text`,
 * `thinking`, `toolCall` blocks, and `toolResult` messages), with OpenClaw's tool names. Events
 * that carry history give OpenClaw plugins this shape; the sync message hooks translate a
 * returned message back.
 */

type Block = Record<string, unknown>;
export interface OpenClawMessage {
  readonly role: string;
  readonly content: readonly Block[];
  readonly [key: string]: unknown;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function block(part: Part): Block | undefined {
  switch (part.type) {
    case "text":
      return { type: "text", text: part.text };
    case "reasoning":
      return { type: "thinking", thinking: part.text };
    case "tool_call":
      return {
        type: "toolCall",
        id: part.toolCallId,
        name: openClawToolName(part.toolName),
        arguments: toOpenClawParams(part.toolName, part.input),
      };
    case "image":
      return { type: "image", data: part.data, mimeType: part.mediaType };
    default:
      return undefined;
  }
}

export function toOpenClawMessage(message: Pick<Message, "role" | "parts">): OpenClawMessage {
  const result = message.parts.find((p) => p.type === "tool_result");
  if (message.role === "tool" && result?.type === "tool_result") {
    const oc = toOpenClawResult(result.output);
    return {
      role: "toolResult",
      toolCallId: result.toolCallId,
      toolName: openClawToolName(result.toolName),
      content: oc.content,
      details: oc.details,
      isError: result.isError === true,
    };
  }
  const content = message.parts.map(block).filter((b): b is Block => b !== undefined);
  return { role: message.role === "summary" ? "user" : message.role, content };
}

export function toOpenClawMessages(messages: readonly Pick<Message, "role" | "parts">[]): OpenClawMessage[] {
  return messages.map(toOpenClawMessage);
}

function textOf(content: unknown): string | undefined {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return undefined;
  const texts = content.filter((b) => isRecord(b) && b.type === "text" && typeof b.text === "string");
  return texts.length === 0 ? undefined : texts.map((b) => (b as { text: string }).text).join("\n");
}

/**
 * A message an OpenClaw plugin returned from `tool_result_persist` or `before_message_write`,
 * applied to the Gatehouse message it was made from: the text it holds replaces the text
 * (a tool result's output, or the first text part), every other part stays. A message with no
 * readable text gives undefined: the caller hands it on as returned, for validation to refuse.
 */
export function fromOpenClawMessage<M extends Pick<Message, "role" | "parts">>(
  returned: unknown,
  original: M,
): M | undefined {
  if (!isRecord(returned)) return undefined;
  const text = textOf(returned.content);
  if (text === undefined) return undefined;
  if (original.role === "tool") {
    const parts = original.parts.map((p) => {
      if (p.type !== "tool_result") return p;
      const before = toOpenClawResult(p.output);
      // Changed text wins: `details` still holds the original output, which a redaction of the
      // text must not bring back. Changed details with the text untouched replace the output.
      if (text !== openClawResultText(before)) return { ...p, output: text };
      return "details" in returned && returned.details !== before.details ? { ...p, output: returned.details } : p;
    });
    return { ...original, parts };
  }
  let placed = false;
  const parts: Part[] = [];
  for (const p of original.parts) {
    if (p.type !== "text") parts.push(p);
    else if (!placed) {
      parts.push({ type: "text", text });
      placed = true;
    }
  }
  if (!placed) parts.unshift({ type: "text", text });
  return { ...original, parts };
}
