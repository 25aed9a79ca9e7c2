/**
 * The scripted model's file format (`scripted:<file>`):
 *
 * ```json
 * { "runs": [
 *   { "match": "weather", "turns": [
 *     { "toolCalls": [{ "name": "get_weather", "input": { "city": "{{prompt}}" } }] },
 *     { "text": "It is {{lastToolResult}}.", "chunks": 3, "usage": { "inputTokens": 120, "outputTokens": 9 } } ] },
 *   { "turns": [{ "text": "I only talk about the weather." }] } ] }
 * ```
 *
 * A turn answers with, in this order: `text`, then `parts` (text | reasoning | image | file), then
 * `toolCalls`. `error` (a string or `{message, statusCode?, isRetryable?}`) fails the call, or the
 * stream after that output if the turn has any. Without `usage`, tokens are estimated.
 */
import { z } from "zod";

/** The placeholders a scripted text may use; anything else in `{{…}}` is a typo, reported at load. */
export const TEMPLATE_NAMES = ["prompt", "lastToolResult", "lastUserMessage"] as const;
const PLACEHOLDER = /\{\{\s*([^}]*?)\s*\}\}/g;

const templated = z.string().superRefine((text, ctx) => {
  for (const [, name] of text.matchAll(PLACEHOLDER)) {
    if (!(TEMPLATE_NAMES as readonly string[]).includes(name ?? "")) {
      ctx.addIssue({
        code: "custom",
        message: `unknown template {{${name}}}; expected one of ${TEMPLATE_NAMES.map((n) => `{{${n}}}`).join(", ")}`,
      });
    }
  }
});

const count = z.number().int().nonnegative();

const UsageSchema = z
  .object({
    inputTokens: count.optional(),
    outputTokens: count.optional(),
    reasoningTokens: count.optional(),
    cachedInputTokens: count.optional(),
  })
  .strict();

const PartSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text"), text: templated }).strict(),
  z.object({ type: z.literal("reasoning"), text: templated }).strict(),
  z.object({ type: z.literal("image"), mediaType: z.string().startsWith("image/"), data: z.string() }).strict(),
  z.object({ type: z.literal("file"), mediaType: z.string(), data: z.string() }).strict(),
]);

const ToolCallSchema = z
  .object({
    name: z.string().min(1),
    input: z.record(z.string(), z.unknown()).default({}),
    /** Overrides the generated id (`call_<turn>_<i>`). */
    id: z.string().min(1).optional(),
  })
  .strict();

const ErrorSchema = z.union([
  z.string().min(1),
  z
    .object({
      message: z.string().min(1),
      statusCode: z.number().int().min(100).max(599).optional(),
      /** Off by default: a stateless script answers a retry with the same error. */
      isRetryable: z.boolean().optional(),
    })
    .strict(),
]);

export const TurnSchema = z
  .object({
    text: templated.optional(),
    parts: z.array(PartSchema).optional(),
    toolCalls: z.array(ToolCallSchema).optional(),
    usage: UsageSchema.optional(),
    error: ErrorSchema.optional(),
    chunks: z.number().int().positive().optional(),
  })
  .strict();

const RegexSchema = z.string().superRefine((source, ctx) => {
  try {
    new RegExp(source);
  } catch (error) {
    ctx.addIssue({ code: "custom", message: `invalid regular expression: ${(error as Error).message}` });
  }
});

export const RunSchema = z
  .object({
    match: RegexSchema.optional(),
    turns: z.array(TurnSchema).min(1),
  })
  .strict();

export const ScriptSchema = z.object({ runs: z.array(RunSchema).min(1) }).strict();

export type ScriptTurn = z.infer<typeof TurnSchema>;
export type ScriptRun = z.infer<typeof RunSchema>;
/** A script as written (tool inputs may be omitted). */
export type ScriptInput = z.input<typeof ScriptSchema>;
export type Script = z.infer<typeof ScriptSchema>;

export function applyTemplates(
  text: string,
  values: Readonly<Record<(typeof TEMPLATE_NAMES)[number], string>>,
): string {
  // One pass: a substituted value that itself contains {{prompt}} is not expanded again.
  return text.replace(PLACEHOLDER, (whole, name: string) =>
    Object.hasOwn(values, name) ? values[name as keyof typeof values] : whole,
  );
}

/** `runs[0].turns[1].toolCalls[0].name` from a zod issue path. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else out += out === "" ? String(key) : `.${String(key)}`;
  }
  return out === "" ? "(top level)" : out;
}

/** Validates a script; the error lists every problem as `path: message`, one per line. */
export function parseScript(value: unknown): { ok: true; script: Script } | { ok: false; problems: string[] } {
  const result = ScriptSchema.safeParse(value);
  if (result.success) return { ok: true, script: result.data };
  return { ok: false, problems: result.error.issues.map((issue) => `${formatPath(issue.path)}: ${issue.message}`) };
}
