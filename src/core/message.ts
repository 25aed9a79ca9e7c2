import { z } from "zod";

/**
 * The message model shared by every layer: the store persists it, the runtime builds it,
 * hooks see frozen snapshots of it. Parts: text, reasoning, tool calls and results, images, files.
 */
export const TextPartSchema = z.object({ type: z.literal("text"), text: z.string() }).strict();
export const ReasoningPartSchema = z.object({ type: z.literal("reasoning"), text: z.string() }).strict();
export const ToolCallPartSchema = z
  .object({ type: z.literal("tool_call"), toolCallId: z.string(), toolName: z.string(), input: z.unknown() })
  .strict();
export const ToolResultPartSchema = z
  .object({
    type: z.literal("tool_result"),
    toolCallId: z.string(),
    toolName: z.string(),
    output: z.unknown(),
    isError: z.boolean().optional(),
  })
  .strict();
export const ImagePartSchema = z.object({ type: z.literal("image"), mediaType: z.string(), data: z.string() }).strict();
export const FilePartSchema = z
  .object({ type: z.literal("file"), mediaType: z.string(), data: z.string(), filename: z.string().optional() })
  .strict();

export const PartSchema = z.discriminatedUnion("type", [
  TextPartSchema,
  ReasoningPartSchema,
  ToolCallPartSchema,
  ToolResultPartSchema,
  ImagePartSchema,
  FilePartSchema,
]);

export const RoleSchema = z.enum(["user", "assistant", "tool", "system", "summary"]);

export type TextPart = z.infer<typeof TextPartSchema>;
export type ReasoningPart = z.infer<typeof ReasoningPartSchema>;
export type ToolCallPart = z.infer<typeof ToolCallPartSchema>;
export type ToolResultPart = z.infer<typeof ToolResultPartSchema>;
export type ImagePart = z.infer<typeof ImagePartSchema>;
export type FilePart = z.infer<typeof FilePartSchema>;
export type Part = z.infer<typeof PartSchema>;
export type Role = z.infer<typeof RoleSchema>;

/** A message as stored: ordered within its session, tagged with the run that wrote it. */
export interface Message {
  readonly id: string;
  readonly sessionId: string;
  /** The run that wrote it; null for messages written outside a run (e.g. a summary). */
  readonly runId: string | null;
  /** Position within the session, strictly increasing. */
  readonly seq: number;
  readonly role: Role;
  readonly parts: readonly Part[];
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly idempotencyKey?: string;
  readonly createdAt: string;
}

/** The text of a message: its text parts joined, in order. */
export function messageText(message: { readonly parts: readonly Part[] }): string {
  let text = "";
  for (const part of message.parts) if (part.type === "text") text += part.text;
  return text;
}
