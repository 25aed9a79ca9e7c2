import { z } from "zod";
import { AUDIT_OUTCOMES } from "../../store/types.js";
import { PageQuery, RunSchema, SessionSchema } from "../schemas.js";
import { STEP_KINDS } from "./records.js";

/**
 * Shapes of the API the console reads (and anyone with a key may): session listings with
 * figures, timelines, audit filters, summary and export, runs in progress, the configuration.
 * Every field is an identifier, a name, an enum, a number or a time — or a message as stored.
 */

const Id = z.string().min(1).max(200);
const flag = z.enum(["true", "false"]).transform((v) => v === "true");

export const LoginBody = z.strictObject({
  key: z.string().max(200).optional().describe("An API key; may be left out on the open loopback."),
});
export const LoginSchema = z.object({ principal: z.string(), admin: z.boolean(), csrf: z.string() });
export const MeSchema = z.object({
  authenticated: z.boolean(),
  principal: z.string().optional(),
  admin: z.boolean().optional(),
  csrf: z.string().optional(),
  keyRequired: z.boolean().optional().describe("When not logged in: whether a login needs a key."),
});

export const SessionListQuery = PageQuery.extend({
  q: z
    .string()
    .max(200)
    .optional()
    .describe("Search: part of the title (the given one, else the first prompt), the id or the key (any case)."),
  principal: z.string().max(200).optional().describe("Only this principal's sessions (admin keys)."),
  blocked: flag.optional().describe("true: only sessions with at least one block."),
  scope: z
    .enum(["mine", "all"])
    .default("mine")
    .describe("all: every top-level session, those made outside serve included (admin keys only)."),
});

/** A title as `gatehouse sessions list` and the resume picker show it. */
export const DerivedTitle = z
  .string()
  .nullable()
  .describe(
    "The title given to the session, else its first prompt as the store keeps it (one line, 80 characters at most); null: neither.",
  );

export const SessionListItemSchema = SessionSchema.extend({
  title: DerivedTitle,
  principal: z.string().nullable().describe("Who owns it; null for a session made outside serve (gatehouse run)."),
  runs: z.number(),
  blocks: z.number().describe("Block decisions in its audit trail (hook blocks, denied approvals, cancels)."),
  messages: z.number().describe("Stored messages: the session's size."),
  lastActivityAt: z.string(),
});
export const SessionListWithFigures = z.object({
  data: z.array(SessionListItemSchema),
  more: z.boolean().describe("Whether a next page exists."),
});

export const StepSchema = z.object({
  kind: z.enum(STEP_KINDS),
  at: z.string().describe("When the step started."),
  offsetMs: z.number().describe("Milliseconds after the run started."),
  name: z.string().describe("A hook, tool, provider:model or trigger: an identifier."),
  pluginId: z.string().nullable(),
  outcome: z.string().nullable(),
  category: z.string().nullable(),
  durationMs: z.number().nullable(),
  toolCallId: z.string().nullable(),
  step: z.number().nullable(),
});

/** A failed run's error, as the run's result and `gatehouse run --json` give it. */
export const RunErrorSchema = z.object({
  kind: z.string().describe("auth, rate_limit, server, connection, internal…"),
  provider: z.string(),
  model: z.string().optional(),
  status: z.number().optional().describe("The HTTP status the provider answered."),
  retryable: z.boolean(),
  attempts: z.number().optional(),
  message: z.string().optional().describe("One line, secrets masked; for admin keys only."),
});

export const TimelineRunSchema = RunSchema.extend({
  durationMs: z.number().nullable(),
  error: RunErrorSchema.nullable().describe(
    "A failed run's error (runs served by gatehouse serve); null otherwise — a run rebuilt from the store has only errorKind.",
  ),
  recorded: z
    .boolean()
    .describe(
      "true: the steps were recorded as the run went (a run served by gatehouse serve); false: rebuilt from what the store keeps (audit records and stored tool calls, without durations).",
    ),
  steps: z.array(StepSchema),
});
export const TimelineSchema = z.object({ sessionId: z.string(), runs: z.array(TimelineRunSchema) });

export const AuditFilterQuery = z.object({
  sessionId: Id.optional(),
  runId: Id.optional(),
  hook: z.string().max(100).optional(),
  pluginId: z.string().max(200).optional(),
  outcome: z.enum(AUDIT_OUTCOMES).optional(),
  category: z.string().max(100).optional(),
  principal: z.string().max(200).optional().describe("Only records of this principal's sessions (admin keys)."),
  since: z.iso.datetime({ offset: true }).optional(),
  until: z.iso.datetime({ offset: true }).optional(),
  limit: z.coerce.number().int().min(1).max(10_000).default(1000),
});

export const AuditRecordSchema = z.object({
  id: z.string(),
  hook: z.string(),
  pluginId: z.string(),
  outcome: z.string(),
  category: z.string().nullable(),
  sessionId: z.string().nullable(),
  runId: z.string().nullable(),
  at: z.string(),
  principal: z.string().nullable().optional(),
});
export const AuditListSchema = z.object({ data: z.array(AuditRecordSchema) });

export const AuditSummaryQuery = AuditFilterQuery.extend({
  bucket: z.enum(["hour", "day"]).default("hour"),
  outcome: z.enum(AUDIT_OUTCOMES).default("block"),
});
export const AuditSummarySchema = z.object({
  bucket: z.enum(["hour", "day"]),
  outcome: z.string(),
  buckets: z.array(z.string()).describe("Each bucket's start, oldest first."),
  series: z.array(z.object({ pluginId: z.string(), counts: z.array(z.number()) })),
});

export const AuditExportQuery = AuditFilterQuery.extend({ format: z.enum(["csv", "jsonl"]).default("csv") });

export const LiveSchema = z.object({
  runs: z.array(
    z.object({
      runId: z.string(),
      sessionId: z.string(),
      parentRunId: z.string().nullable(),
      depth: z.number(),
      instance: z.string(),
      startedAt: z.string(),
      principal: z.string().nullable(),
      title: z.string().nullable(),
      steps: z.array(StepSchema),
    }),
  ),
  approvals: z.array(
    z.object({
      runId: z.string(),
      toolCallId: z.string(),
      sessionId: z.string(),
      toolName: z.string(),
      title: z.string(),
      askedAt: z.string(),
      instance: z.string(),
      description: z.string().nullable().describe("The hook's description of the ask, if it gave one."),
      input: z
        .array(z.object({ name: z.string(), text: z.string() }))
        .describe(
          "The tool's input as the terminal shows it, field by field: strings as written, other values as JSON; secrets masked; a long field cut.",
        ),
      rule: z.string().nullable().describe("The ask rule that applies, as written."),
      always: z
        .array(z.string())
        .describe('The exact rules "Allow always" adds for the rest of the session; empty: "always" is not offered.'),
    }),
  ),
});

export const ConfigurationSchema = z
  .looseObject({
    plugins: z.array(z.looseObject({ id: z.string() })).describe("As gatehouse plugins inspect --json lists them."),
    pluginProblems: z.array(z.string()).optional().describe("Problems not tied to one plugin."),
    commandHooks: z.array(z.looseObject({ event: z.string() })).describe("As gatehouse hooks list --json lists them."),
    permissions: z.object({
      rules: z.array(z.looseObject({})),
      note: z.string().optional().describe("Said when there are no rules, or where they come from."),
    }),
    settings: z
      .looseObject({})
      .nullable()
      .describe("gatehouse config --json; null when the service was not opened from a project."),
  })
  .describe(
    "What gatehouse plugins inspect, hooks list, the permissions listing and gatehouse config print, secrets masked as gatehouse config masks them.",
  );
