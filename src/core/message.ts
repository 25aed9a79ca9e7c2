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

/**
 * What a hook added to a run besides the model's and the user's words, as Claude Code's transcript
 * records it (`type: "attachment"`, or a meta user line for a Stop hook's feedback): context the
 * model already read within its run. Stored as a system message carrying this in its metadata, so
 * that hook transcripts, exports and scrubs see it; never sent to a model again.
 */
export interface HookAttachment {
  /** Claude Code's attachment type (`hook_additional_context`), or `stop_hook_feedback` for a revision. */
  readonly type: "hook_additional_context" | "stop_hook_feedback";
  /** The Claude Code event the context came through. */
  readonly hookEvent: string;
  /** The tool call it belongs to, when it belongs to one. */
  readonly toolUseId?: string;
}

const ATTACHMENT_KEY = "hookAttachment";

/** The metadata of a stored attachment. */
export function attachmentMetadata(attachment: HookAttachment): Record<string, unknown> {
  return { [ATTACHMENT_KEY]: attachment };
}

/** The attachment a stored message is, if it is one. */
export function attachmentOf(message: {
  readonly metadata?: Readonly<Record<string, unknown>>;
}): HookAttachment | undefined {
  const value = message.metadata?.[ATTACHMENT_KEY] as HookAttachment | undefined;
  return typeof value === "object" && value !== null && typeof value.type === "string" ? value : undefined;
}

/** The history a model reads: stored attachments were read in their own run, and are not sent again. */
export function modelHistory<M extends { readonly metadata?: Readonly<Record<string, unknown>> }>(
  messages: readonly M[],
): readonly M[] {
  return messages.some((m) => attachmentOf(m) !== undefined)
    ? messages.filter((m) => attachmentOf(m) === undefined)
    : messages;
}
