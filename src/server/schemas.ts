import { z } from "zod";

/**
 * The HTTP API's request and response shapes. Fastify validates requests and serializes
 * responses with them, and the OpenAPI document (GET /openapi.json, docs/openapi.json) is
 * generated from them: one source for all three.
 */

const Id = z.string().min(1).max(200);

export const ErrorSchema = z
  .object({
    error: z.object({
      message: z.string(),
      type: z.string(),
      code: z.string().nullable(),
    }),
  })
  .describe("An error, in OpenAI's shape on every route. Never carries a hook's internal reason.");

// Native API

export const SessionSchema = z.object({
  id: z.string(),
  key: z.string().nullable(),
  title: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const CreateSessionBody = z
  .strictObject({
    key: z.string().min(1).max(200).optional().describe("A stable name for the conversation."),
    title: z.string().max(500).optional(),
  })
  .default({});

export const PageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(50),
  offset: z.coerce.number().int().min(0).default(0),
});

export const PartSchema = z.looseObject({ type: z.string() }).describe("A message part (text, tool_call, …).");

export const MessageSchema = z.object({
  id: z.string(),
  runId: z.string().nullable(),
  seq: z.number(),
  role: z.string(),
  parts: z.array(PartSchema),
  createdAt: z.string(),
  notice: z
    .object({ blockedBy: z.string(), hook: z.string(), category: z.string().optional() })
    .optional()
    .describe("On a block notice: the plugin and hook that blocked (never a reason)."),
});

export const UsageSchema = z.object({
  inputTokens: z.number().optional(),
  outputTokens: z.number().optional(),
  totalTokens: z.number().optional(),
});

export const RunSchema = z.object({
  id: z.string(),
  sessionId: z.string(),
  seq: z.number(),
  status: z.enum(["running", "completed", "blocked", "claimed", "failed", "cancelled"]),
  depth: z.number(),
  startedAt: z.string(),
  endedAt: z.string().nullable(),
  model: z.string().optional().describe("The model the run used (provider:model)."),
  usage: UsageSchema.optional().describe("Tokens the run used, its sub-agents' included."),
  detail: z.string().optional().describe("Why it ended, beyond its status: max_steps, interrupted."),
  errorKind: z.string().optional().describe("A failed run's error kind: auth, rate_limit, connection…"),
});

export const SessionDetailSchema = SessionSchema.extend({
  title: z
    .string()
    .nullable()
    .describe("The title given to the session, else its first prompt as the store keeps it (one line); null: neither."),
  principal: z.string().nullable().describe("Who owns it; null for a session made outside serve."),
  runs: z.array(RunSchema),
  messages: z.array(MessageSchema),
});

export const IdParams = z.object({ id: Id });
export const RunIdParams = z.object({ runId: Id });
export const ApprovalParams = z.object({ runId: Id, toolCallId: Id });

export const RunBody = z.strictObject({
  prompt: z.string().min(1).describe("The user's turn."),
  stream: z
    .boolean()
    .optional()
    .describe("Answer with Server-Sent Events of the run's events (as does Accept: text/event-stream)."),
  model: z.string().optional().describe("An agent profile id from GET /v1/models (default: the first)."),
});

export const RunResultSchema = z
  .object({
    sessionId: z.string(),
    runId: z.string(),
    outcome: z
      .enum(["completed", "blocked", "claimed", "failed", "cancelled", "max_steps"])
      .describe("max_steps: the step limit was reached while the model was still calling tools."),
    reply: z.string().nullable().describe("What was delivered: the answer, a block notice, or null."),
    blockedBy: z.object({ pluginId: z.string(), hook: z.string(), category: z.string().optional() }).optional(),
    steps: z.number().describe("Model calls made, sub-agents' included."),
    usage: UsageSchema.optional().describe("Tokens used, sub-agents' included."),
    children: z
      .array(
        z.object({
          runId: z.string(),
          agentType: z.string(),
          outcome: z.string(),
          steps: z.number(),
          usage: UsageSchema.optional(),
        }),
      )
      .optional()
      .describe("The sub-agent runs this run started, each with its own totals."),
    durationMs: z.number().describe("Whole milliseconds, a wait for the session's run lock included."),
  })
  .describe("A run's result (as gatehouse.run() returns it, without internal error detail).");

export const RunEventSchema = z
  .looseObject({
    type: z.enum([
      "run-start",
      "step",
      "retry",
      "lock-wait",
      "text-delta",
      "tool-call",
      "tool-blocked",
      "tool-result",
      "approval-requested",
      "compacted",
      "blocked",
      "final",
      "run-end",
    ]),
  })
  .describe(
    "One Server-Sent Event's data: a run event exactly as gatehouse.stream() yields it (event name = type). Assistant text streams live only while no output gate has a handler; otherwise it comes once, as final.",
  );

export const CancelResultSchema = z.object({ runId: z.string(), status: z.literal("cancelling") });

export const ApprovalBody = z.strictObject({ decision: z.enum(["allow-once", "allow-always", "deny"]) });
export const ApprovalResultSchema = z.object({ runId: z.string(), toolCallId: z.string(), decision: z.string() });

// OpenAI-compatible

const ContentPart = z.looseObject({ type: z.string(), text: z.string().optional() });
const ChatContent = z.union([z.string(), z.array(ContentPart)]).nullable();

export const ChatMessageSchema = z.looseObject({
  role: z.enum(["system", "developer", "user", "assistant", "tool", "function"]),
  content: ChatContent.optional(),
});

export const ChatCompletionBody = z
  .looseObject({
    model: z.string(),
    messages: z.array(ChatMessageSchema).min(1),
    stream: z.boolean().nullable().optional(),
    stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullable().optional(),
  })
  .describe(
    "OpenAI's Chat Completions request. Tools, temperature and other sampling fields are accepted and ignored: the agent's own tools run server-side.",
  );

const OpenAIUsage = z.object({ prompt_tokens: z.number(), completion_tokens: z.number(), total_tokens: z.number() });

export const ChatCompletionSchema = z.object({
  id: z.string(),
  object: z.literal("chat.completion"),
  created: z.number(),
  model: z.string(),
  choices: z.array(
    z.object({
      index: z.number(),
      message: z.object({ role: z.literal("assistant"), content: z.string().nullable(), refusal: z.null() }),
      finish_reason: z.string(),
      logprobs: z.null(),
    }),
  ),
  usage: OpenAIUsage,
  gatehouse: z
    .object({ session_id: z.string(), run_id: z.string(), outcome: z.string() })
    .describe("Gatehouse's own fields: the session to continue (X-Gatehouse-Session) and the run's outcome."),
});

export const ResponsesBody = z
  .looseObject({
    model: z.string(),
    input: z.union([
      z.string(),
      z.array(
        z.looseObject({ role: z.string().optional(), type: z.string().optional(), content: ChatContent.optional() }),
      ),
    ]),
    instructions: z.string().nullable().optional(),
    previous_response_id: z.string().nullable().optional(),
    stream: z.boolean().nullable().optional(),
  })
  .describe("OpenAI's Responses request. previous_response_id continues that response's session.");

export const ResponseSchema = z.object({
  id: z.string(),
  object: z.literal("response"),
  created_at: z.number(),
  status: z.string(),
  model: z.string(),
  previous_response_id: z.string().nullable(),
  output: z.array(
    z.object({
      type: z.literal("message"),
      id: z.string(),
      status: z.literal("completed"),
      role: z.literal("assistant"),
      content: z.array(z.object({ type: z.literal("output_text"), text: z.string(), annotations: z.array(z.never()) })),
    }),
  ),
  usage: z.object({ input_tokens: z.number(), output_tokens: z.number(), total_tokens: z.number() }),
  error: z.null(),
  incomplete_details: z.null(),
  gatehouse: z.object({ session_id: z.string(), run_id: z.string(), outcome: z.string() }),
});

export const ModelList = z.object({
  object: z.literal("list"),
  data: z.array(
    z.object({
      id: z.string(),
      object: z.literal("model"),
      created: z.number(),
      owned_by: z.string(),
      description: z.string().optional(),
    }),
  ),
});

// Operations

export const HealthSchema = z.object({ status: z.literal("ok") });
export const ReadySchema = z.object({
  status: z.enum(["ready", "unavailable"]),
  checks: z.object({ store: z.boolean(), plugins: z.boolean(), draining: z.boolean() }),
});
