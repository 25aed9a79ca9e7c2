import { z } from "zod";
import { CategorySchema, IdentifierSchema } from "../core/identifiers.js";
import { PartSchema } from "../core/message.js";
import { StoreError } from "./errors.js";
import { AUDIT_OUTCOMES, INJECTION_PLACEMENTS, RUN_STATUSES, RUN_TRIGGERS } from "./types.js";

// Everything the store receives from callers is checked here, once; rows read back from the
// database are the store's own writes and are trusted.

// PostgreSQL text cannot hold NUL; refusing it everywhere keeps the backends interchangeable.
const noNul = (s: string) => !s.includes("\u0000");
const text = z.string().refine(noNul, "must not contain NUL characters");
const id = text.min(1).max(200);
const metadata = z.record(z.string(), z.unknown());
const time = z.union([z.iso.datetime({ offset: true }), z.date()]).transform((t) => new Date(t).toISOString());
/** Identifier-like: no spaces, so a sentence (a reason, a prompt) cannot be smuggled through it. */
const slug = IdentifierSchema;

/** A session's title: one line of at most 500 characters (what the server's API accepts). */
export const SessionTitleSchema = text
  .trim()
  .min(1)
  .max(500)
  .refine((s) => !/[\n\r]/.test(s), "must be one line");

export const CreateSessionSchema = z
  .object({
    id: id.optional(),
    key: text.min(1).max(500).nullish(),
    parentSessionId: id.nullish(),
    title: SessionTitleSchema.nullish(),
  })
  .strict();

export const StartRunSchema = z
  .object({
    sessionId: id,
    id: id.optional(),
    depth: z.number().int().min(0).max(1000).default(0),
    parentRunId: id.nullish(),
    trigger: z.enum(RUN_TRIGGERS).default("user"),
    jobId: id.nullish(),
  })
  .strict();

export const AppendMessageSchema = z
  .object({
    sessionId: id,
    runId: id.nullable(),
    role: z.enum(["user", "assistant", "tool", "system"]),
    parts: z.array(PartSchema),
    metadata: metadata.default({}),
    idempotencyKey: text.min(1).max(500).optional(),
  })
  .strict()
  .refine((m) => m.role !== "assistant" || m.parts.length > 0, {
    message: "an assistant message needs at least one part (providers reject empty ones)",
  });

export const BlockSchema = z
  .object({
    notice: z.string().min(1),
    blockedBy: slug,
    hook: slug,
    category: CategorySchema.optional(),
    status: z.enum(RUN_STATUSES).exclude(["running"]).optional(),
    detail: slug.optional(),
  })
  .strict();

export const RewriteTextsSchema = z.array(z.string());

export const CompactionSchema = z
  .object({
    sessionId: id,
    fromSeq: z.number().int().min(1),
    toSeq: z.number().int().min(1),
    summary: z.string().min(1),
    metadata: metadata.default({}),
  })
  .strict()
  .refine((c) => c.fromSeq <= c.toSeq, { message: "fromSeq must not exceed toSeq" });

export const InjectionSchema = z
  .object({
    sessionId: id,
    text: text.min(1),
    placement: z.enum(INJECTION_PLACEMENTS),
    idempotencyKey: text.min(1).max(500).optional(),
    expiresAt: time.optional(),
  })
  .strict();

export const AuditSchema = z
  .object({
    hook: slug,
    pluginId: slug,
    outcome: z.enum(AUDIT_OUTCOMES),
    category: CategorySchema.optional(),
    sessionId: id.optional(),
    runId: id.optional(),
    at: time.optional(),
  })
  .strict();

export const IdSchema = id;
export const IdListSchema = z.array(id);

/** Parses at the boundary; a failure is a StoreError("invalid") naming the field, never echoing its value. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues.map((i) => `${i.path.join(".") || "(input)"}: ${i.message}`).join("; ");
  throw new StoreError("invalid", `invalid ${what}: ${issues}`);
}
