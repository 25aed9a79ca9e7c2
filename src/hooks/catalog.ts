import { z } from "zod";
import { type Message, PartSchema, RoleSchema } from "../core/message.js";

/**
 * The hook catalog: every hook Gatehouse fires, declared once. Types (`api.on`), result
 * validation, merge rules, failure policy, timeouts, permissions, the generated reference
 * (docs/hooks.md) and the conformance matrix all derive from this table. No call site
 * decides a merge rule or a failure policy.
 */

export type HookKind = "observe" | "modify" | "claim" | "gate" | "sync";
export type FailurePolicy = "open" | "closed";

/**
 * How one result field of a modify or sync hook combines across handlers:
 * - chain: each handler sees the value as rewritten by the handlers before it; the last rewrite wins.
 * - first: the highest-priority defined value wins.
 * - concat: strings joined with a blank line, in handler order.
 * - intersect: lists intersected.
 * - latch: once true stays true, and the remaining handlers are not called.
 * - collect: every defined value, in handler order, as a list.
 * - rank: the strongest value by the declared order wins (first listed is strongest).
 */
export type FieldRule =
  | { readonly rule: "chain" | "first" | "concat" | "intersect" | "latch" | "collect" }
  | { readonly rule: "rank"; readonly order: readonly string[] };

/** Who may register the hook when the plugin is not bundled (docs/hooks.md, Access ★). */
export interface HookAccess {
  readonly conversation: boolean;
  readonly promptInjection: boolean;
}

export interface HookSpec {
  readonly kind: HookKind;
  readonly failure: FailurePolicy;
  /** Per-handler default; operators and plugins can override (see timeouts in the engine). */
  readonly timeoutMs: number;
  readonly access: HookAccess;
  /** When it fires, in one sentence, for the reference. */
  readonly fires: string;
  readonly event: z.ZodObject;
  /** Modify, claim and sync hooks: a strict schema of what a handler may return. */
  readonly result?: z.ZodObject;
  readonly rules?: Readonly<Record<string, FieldRule>>;
  /** Observe hooks whose handlers are not awaited by the run (bounded background queue). */
  readonly detached?: boolean;
  /** Event field a registration's `matcher` is tested against. */
  readonly matcher?: "toolName";
  /** Fail-closed modify hooks: the latch a handler failure sets (it becomes a block). */
  readonly blockField?: string;
  /**
   * Modify hooks: a field that ends the run once the current step is done. Not a latch (the
   * remaining handlers still decide about this call); the first handler to set it is named in
   * the outcome's `stoppedBy`.
   */
  readonly stopField?: string;
  /**
   * Cross-field checks and canonical forms after schema validation. Returns the result to
   * merge, or a string saying why it is invalid (the failure policy then applies).
   */
  readonly normalize?: (
    result: Record<string, unknown>,
    event: Record<string, unknown>,
  ) => Record<string, unknown> | string;
  readonly deprecated?: string;
}

const OBSERVE_MS = 15_000;
const GATE_MS = 15_000;
const LONG_MS = 30_000;

const NONE: HookAccess = { conversation: false, promptInjection: false };
const CONVERSATION: HookAccess = { conversation: true, promptInjection: false };
const PROMPT_INJECTION: HookAccess = { conversation: true, promptInjection: true };

const chain = { rule: "chain" } as const;
const first = { rule: "first" } as const;
const concat = { rule: "concat" } as const;
const intersect = { rule: "intersect" } as const;
const latch = { rule: "latch" } as const;
const collect = { rule: "collect" } as const;

const messages = () => z.custom<readonly Message[]>().meta({ type: "Message[]" });
const message = () => z.custom<Message>().meta({ type: "Message" });
// What a handler returns is checked: the runtime stores its role, parts and metadata, so a message
// of another shape is an invalid result (discarded, or a block where the hook fails closed).
const ReturnedMessageSchema = z.looseObject({
  role: RoleSchema,
  parts: z.array(PartSchema),
  metadata: z.record(z.string(), z.unknown()).optional(),
});
const returnedMessage = () =>
  z.custom<Message>((value) => ReturnedMessageSchema.safeParse(value).success).meta({ type: "Message" });
const anyValue = () => z.custom<unknown>().meta({ type: "unknown" });
const replySource = z
  .enum(["model", "claim", "command", "notice"])
  .describe("what the reply is: a model answer, a claim's reply, a slash command's reply, or a block notice");
const text = z.string();

const injectionEntry = z.object({ id: z.string(), text: z.string(), placement: z.enum(["prepend", "append"]) });
const usage = z
  .object({
    inputTokens: z.number().optional(),
    outputTokens: z.number().optional(),
    totalTokens: z.number().optional(),
  })
  .meta({ type: "Usage" });
/** Claude Code's `continue: false` on a tool event: the agent stops, and the user reads why. */
const stopRun = z
  .object({
    message: z.string().optional().describe("user-safe; shown to the user as the run's reply, never to the model"),
  })
  .strict()
  .optional()
  .describe(
    "end the run once this step's tool calls are done: no further model call; the run ends blocked and the user is shown `message`",
  );

const approvalRequest = z
  .object({
    title: z.string().min(1),
    description: z.string().optional(),
    timeoutMs: z.number().int().positive().optional(),
    /**
     * Claude Code's headless PreToolUse `ask`: where no one can be asked, the call is refused at
     * once (no permission_request, no permission_denied), and the model reads `reason`.
     */
    unattended: z
      .object({ reason: z.string().min(1).optional() })
      .strict()
      .optional(),
  })
  .strict();

const modelResolveResult = {
  modelOverride: z.string().min(1).optional().describe("model id or full `provider:model` spec"),
  providerOverride: z.string().min(1).optional().describe("provider name"),
};
const promptBuildResult = {
  systemPrompt: z.string().optional().describe("replaces the system prompt"),
  prependContext: z.string().optional().describe("model-only text before the user's prompt"),
  appendContext: z.string().optional().describe("model-only text after the user's prompt"),
  prependSystemContext: z.string().optional().describe("text before the system prompt"),
  appendSystemContext: z.string().optional().describe("text after the system prompt"),
  toolsAllow: z.array(z.string()).optional().describe("tool names this run may use"),
};
const modelResolveRules = { modelOverride: first, providerOverride: first } as const;
const promptBuildRules = {
  systemPrompt: first,
  prependContext: concat,
  appendContext: concat,
  prependSystemContext: concat,
  appendSystemContext: concat,
  toolsAllow: intersect,
} as const;

function defineHook<const S extends HookSpec>(spec: S): S {
  return spec;
}

/** `allContent` and `content` stay consistent: `content === allContent.at(-1)`; `""` blocks. */
function normalizeResponseEmit(
  result: Record<string, unknown>,
  event: Record<string, unknown>,
): Record<string, unknown> | string {
  const before = event.allContent as readonly string[];
  let content = result.content as string | undefined;
  let all = result.allContent as string[] | undefined;
  if (all !== undefined && all.length !== before.length)
    return `allContent has ${all.length} entries; this run has ${before.length} assistant texts`;
  if (content !== undefined && all !== undefined && content !== all.at(-1))
    return "content and allContent disagree on the final text";
  if (all !== undefined && content === undefined) content = all.at(-1);
  if (content !== undefined && all === undefined) all = before.length ? [...before.slice(0, -1), content] : [content];
  if (content === "" || all?.some((t) => t === "")) return { ...result, block: true };
  return { ...result, ...(content === undefined ? {} : { content, allContent: all }) };
}

/**
 * The one block verdict: `{ outcome: "block", reason?, message? }` on every hook that can block,
 * as on gates. `reason` is internal (never shown, logged or stored); `message` is what the reader
 * of the block sees — the user, or for the tool hooks the model. `{ outcome: "pass" }` says
 * nothing. A hook's own fields (`block` + `blockReason`, `cancel` + `cancelReason`) stay accepted
 * as aliases: `normalize` turns the verdict into them, and a result that says both must agree.
 */
const verdictFields = {
  outcome: z
    .enum(["pass", "block"])
    .optional()
    .describe('"block" blocks (the one block verdict, as on gates); "pass" says nothing'),
  reason: z.string().optional().describe("with outcome block: internal, never shown, logged or stored"),
};

interface VerdictFields {
  /** The hook's latch: `block`, `cancel`. */
  readonly block: string;
  /** Where `message` goes when the hook spells it otherwise (`blockReason` on the tool hooks). */
  readonly shown?: string;
  /** Where `reason` goes, if the hook keeps an internal reason at all. */
  readonly internal?: string;
}

const responseEmitVerdict = blockVerdict({ block: "block", internal: "blockReason" });

function blockVerdict(fields: VerdictFields) {
  return (result: Record<string, unknown>): Record<string, unknown> | string => {
    const { outcome, reason, ...out } = result;
    const message = fields.shown === undefined ? undefined : out.message;
    if (fields.shown !== undefined) delete out.message;
    const set = (field: string, value: unknown, from: string): string | undefined => {
      if (value === undefined) return undefined;
      if (out[field] !== undefined && out[field] !== value) return `${from} and ${field} disagree`;
      out[field] = value;
      return undefined;
    };
    if (outcome === "block" && out[fields.block] === false) return `outcome "block" with ${fields.block}: false`;
    if (outcome === "pass" && out[fields.block] === true) return `outcome "pass" with ${fields.block}: true`;
    if (outcome === "block") out[fields.block] = true;
    const clash =
      (fields.internal ? set(fields.internal, reason, "reason") : undefined) ??
      (fields.shown ? set(fields.shown, message, "message") : undefined);
    return clash ?? out;
  };
}

export const HOOKS = {
  session_start: defineHook({
    kind: "observe",
    failure: "open",
    timeoutMs: OBSERVE_MS,
    access: NONE,
    fires:
      "when a run opens a session that did not exist (`startup`), when this instance first runs on a session that did (`resume`), after /reset (`clear`) and after a compaction (`compact`)",
    event: z.object({
      sessionId: text,
      source: z.enum(["startup", "resume", "clear", "compact"]).optional(),
      model: text.optional().describe("the run's model, as `provider:model`"),
    }),
  }),
  session_end: defineHook({
    kind: "observe",
    failure: "open",
    timeoutMs: OBSERVE_MS,
    access: NONE,
    fires:
      "when a session ends: /reset, deletion, or the end of the `run` or `chat` process that ran it (the session stays resumable)",
    event: z.object({
      sessionId: text,
      reason: z
        .string()
        .optional()
        .describe("`reset`, `deleted`, `exit` (the process ended) or `input_exit` (the user left chat)"),
    }),
  }),
  before_reset: defineHook({
    kind: "observe",
    failure: "open",
    timeoutMs: OBSERVE_MS,
    access: NONE,
    fires: "on /reset, before the session is replaced",
    event: z.object({ sessionId: text, reason: z.string().optional() }),
  }),
  message_received: defineHook({
    kind: "observe",
    failure: "open",
    timeoutMs: OBSERVE_MS,
    access: NONE,
    fires: "when a user message arrives, before the input gate and slash commands",
    event: z.object({ content: text, from: z.string().optional(), channel: z.string().optional() }),
  }),
  before_input: defineHook({
    kind: "gate",
    failure: "closed",
    timeoutMs: GATE_MS,
    access: NONE,
    fires:
      "when a run's input arrives (a prompt, or a slash command with its arguments), before slash commands and claims; a block ends the turn",
    event: z.object({
      prompt: text.describe("the input as the user sent it, a slash command's arguments included"),
      command: z
        .object({ name: text, args: text })
        .optional()
        .describe("set when the input is a slash command: its name (without /) and its arguments"),
    }),
  }),
  inbound_claim: defineHook({
    kind: "claim",
    failure: "open",
    timeoutMs: GATE_MS,
    access: NONE,
    fires: "when an inbound message arrives on a channel, after the input gate, before it becomes an agent turn",
    event: z.object({ content: text, channel: z.string().optional() }),
    result: z.object({ handled: z.boolean(), reply: z.string().optional() }).strict(),
  }),
  before_agent_reply: defineHook({
    kind: "claim",
    failure: "open",
    timeoutMs: GATE_MS,
    access: CONVERSATION,
    fires:
      "after the input gate and slash commands, before anything model-related; a claim answers the turn without the model",
    event: z.object({ cleanedBody: text }),
    result: z
      .object({
        handled: z.boolean(),
        reply: z.object({ text: z.string() }).strict().optional(),
        reason: z.string().optional(),
      })
      .strict(),
  }),
  before_model_resolve: defineHook({
    kind: "modify",
    failure: "open",
    timeoutMs: GATE_MS,
    access: CONVERSATION,
    fires: "before the model is chosen for the run",
    event: z.object({ prompt: text }),
    result: z.object(modelResolveResult).strict(),
    rules: modelResolveRules,
  }),
  agent_turn_prepare: defineHook({
    kind: "modify",
    failure: "open",
    timeoutMs: GATE_MS,
    access: PROMPT_INJECTION,
    fires: "while the turn is prepared; sees queued injections without consuming them",
    event: z.object({ prompt: text, messages: messages(), queuedInjections: z.array(injectionEntry) }),
    result: z
      .object({ prependContext: promptBuildResult.prependContext, appendContext: promptBuildResult.appendContext })
      .strict(),
    rules: { prependContext: concat, appendContext: concat },
  }),
  before_prompt_build: defineHook({
    kind: "modify",
    failure: "open",
    timeoutMs: GATE_MS,
    access: PROMPT_INJECTION,
    fires: "when the model prompt is assembled",
    event: z.object({ prompt: text, messages: messages() }),
    result: z.object(promptBuildResult).strict(),
    rules: promptBuildRules,
  }),
  before_agent_start: defineHook({
    kind: "modify",
    failure: "open",
    timeoutMs: GATE_MS,
    access: PROMPT_INJECTION,
    fires: "with before_prompt_build, for plugins written against the older combined hook",
    deprecated: "use before_model_resolve and before_prompt_build",
    event: z.object({ prompt: text, messages: messages() }),
    result: z.object({ ...modelResolveResult, ...promptBuildResult }).strict(),
    rules: { ...modelResolveRules, ...promptBuildRules },
  }),
  before_agent_run: defineHook({
    kind: "gate",
    failure: "closed",
    timeoutMs: GATE_MS,
    access: CONVERSATION,
    fires: "once the final model prompt is known, before the first model call; a block cancels the turn",
    event: z.object({
      prompt: text.describe("the user's input"),
      modelPrompt: text.describe("what the model will receive, injected context included"),
      messages: messages(),
      systemPrompt: text,
    }),
  }),
  llm_input: defineHook({
    kind: "observe",
    failure: "open",
    timeoutMs: OBSERVE_MS,
    access: CONVERSATION,
    detached: true,
    fires: "before each model call, with what the model receives",
    event: z.object({ provider: text, model: text, messages: messages(), systemPrompt: z.string().optional() }),
  }),
  llm_output: defineHook({
    kind: "observe",
    failure: "open",
    timeoutMs: OBSERVE_MS,
    access: CONVERSATION,
    detached: true,
    fires: "after each model call, with what the model answered",
    event: z.object({ provider: text, model: text, assistantTexts: z.array(z.string()), usage: usage.optional() }),
  }),
  model_call_started: defineHook({
    kind: "observe",
    failure: "open",
    timeoutMs: OBSERVE_MS,
    access: NONE,
    detached: true,
    fires: "when a model call starts (no content)",
    event: z.object({ provider: text, model: text, step: z.number() }),
  }),
  model_call_ended: defineHook({
    kind: "observe",
    failure: "open",
    timeoutMs: OBSERVE_MS,
    access: NONE,
    detached: true,
    fires: "when a model call ends, successfully or not (no content)",
    event: z.object({
      provider: text,
      model: text,
      step: z.number(),
      durationMs: z.number(),
      usage: usage.optional(),
      error: z.string().optional(),
    }),
  }),
  before_tool_call: defineHook({
    kind: "modify",
    failure: "closed",
    timeoutMs: GATE_MS,
    access: NONE,
    matcher: "toolName",
    blockField: "block",
    fires: "before each tool call executes",
    event: z.object({ toolName: text, params: anyValue(), toolCallId: text }),
    result: z
      .object({
        params: anyValue().optional().describe("replacement tool input"),
        ...verdictFields,
        message: z.string().optional().describe("with outcome block: what the model reads as the tool's error"),
        block: z.boolean().optional().describe('alias of outcome "block"'),
        blockReason: z
          .string()
          .optional()
          .describe("alias of message: user-safe; the model sees it as the tool's error"),
        blockMessage: z
          .string()
          .optional()
          .describe("user-safe; the model's whole text for the blocked call, in place of Gatehouse's notice"),
        requireApproval: approvalRequest.optional(),
        stopRun,
        permissionDecision: z
          .enum(["allow", "ask"])
          .optional()
          .describe(
            "allow: no permission prompt for this call (deny rules and plan mode still apply); ask: a prompt even where a rule allows it",
          ),
      })
      .strict(),
    stopField: "stopRun",
    rules: {
      params: chain,
      block: latch,
      blockReason: first,
      blockMessage: first,
      requireApproval: first,
      stopRun: first,
      permissionDecision: { rule: "rank", order: ["ask", "allow"] },
    },
    normalize: blockVerdict({ block: "block", shown: "blockReason" }),
  }),
  permission_request: defineHook({
    kind: "modify",
    failure: "open",
    timeoutMs: LONG_MS,
    access: NONE,
    matcher: "toolName",
    fires:
      'when a tool call would ask for permission (docs/permissions.md), before a person is asked; also for a call an earlier "always" answer allowed',
    event: z.object({
      toolName: text,
      params: anyValue(),
      toolCallId: text,
      permissionMode: z.enum(["default", "acceptEdits", "plan", "dontAsk", "bypassPermissions"]),
      rule: z.string().optional().describe("the ask (or remembered allow) rule that applies, as written"),
      suggestions: z.array(z.string()).describe('the rules an "always" answer would add'),
      remembered: z.boolean().describe('an earlier "always" answer allows the call: only a deny changes anything'),
    }),
    blockField: "deny",
    result: z
      .object({
        deny: z
          .boolean()
          .optional()
          .describe("refuses the call; wins over any allow, and the remaining handlers are not called"),
        allow: z.boolean().optional().describe("runs the call without asking anyone (no effect on a remembered allow)"),
        message: z.string().optional().describe("with deny: what the model reads as the tool's error"),
        interrupt: z.boolean().optional().describe("with deny: the run ends"),
        updatedInput: anyValue().optional().describe("with allow: the input the call runs with"),
      })
      .strict(),
    rules: { deny: latch, allow: first, message: first, interrupt: first, updatedInput: first },
  }),
  permission_denied: defineHook({
    kind: "modify",
    failure: "open",
    timeoutMs: GATE_MS,
    access: NONE,
    matcher: "toolName",
    fires:
      "when the permission check denies a tool call (a rule, the mode, nobody to ask, the person, a permission_request handler), before the model reads the denial",
    event: z.object({
      toolName: text,
      params: anyValue(),
      toolCallId: text,
      permissionMode: z.enum(["default", "acceptEdits", "plan", "dontAsk", "bypassPermissions"]),
      reason: text.describe("what the model reads: the denial and why"),
      deniedBy: z
        .enum(["rule", "mode", "hook", "nobody", "user", "timeout", "threw"])
        .describe("what denied: a rule, the mode, a permission_request handler, nobody to ask, the person, no answer"),
      rule: z.string().optional().describe("the rule that applied, as written"),
      source: z.string().optional().describe("where that rule came from (user, project, local, managed, cli…)"),
    }),
    result: z
      .object({
        retry: z.boolean().optional().describe("tells the model it may try the call again (the call stays denied)"),
      })
      .strict(),
    rules: { retry: first },
  }),
  after_tool_call: defineHook({
    kind: "modify",
    failure: "closed",
    timeoutMs: GATE_MS,
    access: NONE,
    matcher: "toolName",
    blockField: "block",
    fires: "after each tool call, before its result reaches the model, the store or any later event",
    event: z.object({
      toolName: text,
      params: anyValue(),
      toolCallId: text,
      result: anyValue().optional().describe("the output of a call that succeeded"),
      error: z
        .string()
        .optional()
        .describe(
          "set when the call failed: the error, with the output the tool printed (a non-zero exit, an MCP isError)",
        ),
      durationMs: z.number(),
    }),
    result: z
      .object({
        result: anyValue().optional().describe("replacement tool output"),
        ...verdictFields,
        message: z.string().optional().describe("with outcome block: what the model reads in the notice"),
        block: z
          .boolean()
          .optional()
          .describe('alias of outcome "block": withhold the output (or the failure), a notice replaces it everywhere'),
        blockReason: z.string().optional().describe("alias of message: user-safe; the model sees it in the notice"),
        additionalContext: z.string().optional(),
        stopRun,
      })
      .strict(),
    stopField: "stopRun",
    rules: { result: chain, block: latch, blockReason: first, additionalContext: concat, stopRun: first },
    normalize: blockVerdict({ block: "block", shown: "blockReason" }),
  }),
  after_tool_batch: defineHook({
    kind: "modify",
    failure: "open",
    timeoutMs: GATE_MS,
    access: NONE,
    fires:
      "once per model step with tool calls, after every call of the step was decided and its result stored, before the next model call",
    event: z.object({
      calls: z
        .array(
          z.object({
            toolName: text,
            params: anyValue(),
            toolCallId: text,
            output: anyValue().describe("what the model reads: the output as after_tool_call left it, or the notice"),
            isError: z.boolean(),
            modelText: z.string().describe("the same as the text the model reads (a tool's own rendering, or JSON)"),
          }),
        )
        .describe("the step's calls, in call order"),
    }),
    result: z
      .object({
        additionalContext: z.string().optional().describe("model-only context for the rest of this run"),
        stopRun,
      })
      .strict(),
    stopField: "stopRun",
    rules: { additionalContext: concat, stopRun: first },
  }),
  tool_result_persist: defineHook({
    kind: "sync",
    failure: "open",
    timeoutMs: 0,
    access: NONE,
    fires: "synchronously, before a tool result message is written",
    event: z.object({ message: message() }),
    result: z.object({ message: returnedMessage().optional() }).strict(),
    rules: { message: chain },
  }),
  before_message_write: defineHook({
    kind: "sync",
    failure: "open",
    timeoutMs: 0,
    access: NONE,
    fires: "synchronously, before any message is written to the store",
    event: z.object({ message: message() }),
    result: z.object({ message: returnedMessage().optional(), block: z.boolean().optional() }).strict(),
    rules: { message: chain, block: latch },
  }),
  before_compaction: defineHook({
    kind: "modify",
    failure: "open",
    timeoutMs: LONG_MS,
    access: NONE,
    fires: "before history is compacted (automatically or by /compact)",
    event: z.object({
      messageCount: z.number(),
      tokenCount: z.number(),
      trigger: z.enum(["auto", "manual"]),
      instructions: z.string().optional().describe("what `/compact <instructions>` asked the summary to keep"),
    }),
    result: z
      .object({
        block: z.boolean().optional(),
        message: z
          .string()
          .optional()
          .describe("user-safe; with `block`, what the user is told instead of Gatehouse's own notice"),
        instructions: z.string().optional(),
      })
      .strict(),
    rules: { block: latch, message: first, instructions: concat },
  }),
  after_compaction: defineHook({
    kind: "observe",
    failure: "open",
    timeoutMs: LONG_MS,
    access: NONE,
    fires: "after history was compacted",
    event: z.object({
      compactedCount: z.number(),
      summary: text,
      trigger: z.enum(["auto", "manual"]).describe('"manual" for /compact, "auto" when over the context budget'),
    }),
  }),
  subagent_start: defineHook({
    kind: "modify",
    failure: "open",
    timeoutMs: GATE_MS,
    access: NONE,
    fires: "in the parent run, before a sub-agent's child run starts",
    event: z.object({
      agentType: text,
      prompt: text,
      childSessionId: text.describe("the child run's session id, which its own events carry"),
    }),
    result: z.object({ additionalContext: z.string().optional() }).strict(),
    rules: { additionalContext: concat },
  }),
  subagent_end: defineHook({
    kind: "observe",
    failure: "open",
    timeoutMs: OBSERVE_MS,
    access: NONE,
    fires: "in the parent run, after a sub-agent's child run ended",
    event: z.object({
      agentType: text,
      outcome: text,
      childSessionId: text.describe("the child run's session id, as subagent_start gave it"),
    }),
  }),
  before_agent_finalize: defineHook({
    kind: "modify",
    failure: "open",
    timeoutMs: GATE_MS,
    access: CONVERSATION,
    fires: "when the model gives a final answer (no tool calls); may ask for one more pass",
    event: z.object({
      lastAssistantMessage: text,
      messages: messages(),
      stopHookActive: z.boolean(),
      attempt: z.number(),
    }),
    result: z
      .object({
        action: z.enum(["continue", "revise", "finalize"]).optional(),
        reason: z.string().optional(),
        retry: z
          .object({
            instruction: z.string().min(1),
            maxAttempts: z
              .number()
              .int()
              .positive()
              .optional()
              .describe("how often this instruction may loop (default 1); the run's limit still applies"),
            idempotencyKey: z.string().optional(),
            budget: z
              .enum(["revise", "stop"])
              .optional()
              .describe(
                'the limit it counts against: "revise" (default) 3 per run, "stop" (Claude Code Stop blocks) 8 in a row',
              ),
          })
          .strict()
          .optional(),
      })
      .strict(),
    rules: { action: { rule: "rank", order: ["finalize", "revise", "continue"] }, reason: concat, retry: collect },
  }),
  before_response_emit: defineHook({
    kind: "modify",
    failure: "closed",
    timeoutMs: GATE_MS,
    access: NONE,
    blockField: "block",
    fires:
      "before any reply reaches the user (a model answer, a claim's reply, a command's reply, a notice), before it is stored as delivered; sees every assistant text of the run",
    event: z.object({
      content: text.describe("the reply: the final assistant text, or the claim's, command's or notice's text"),
      allContent: z
        .array(z.string())
        .describe("every assistant text of this run, oldest first (a reply other than a model answer: just it)"),
      source: replySource,
    }),
    result: z
      .object({
        content: z.string().optional(),
        allContent: z.array(z.string()).optional(),
        ...verdictFields,
        message: z.string().min(1).optional().describe("with outcome block: the notice the user is shown instead"),
        block: z.boolean().optional().describe('alias of outcome "block"'),
        blockReason: z.string().optional().describe("alias of reason: internal, never shown, logged or stored"),
      })
      .strict(),
    rules: { content: chain, allContent: chain, block: latch, blockReason: first, message: first },
    normalize: (result, event) => {
      const canonical = responseEmitVerdict(result);
      return typeof canonical === "string" ? canonical : normalizeResponseEmit(canonical, event);
    },
  }),
  message_sending: defineHook({
    kind: "modify",
    failure: "closed",
    timeoutMs: GATE_MS,
    access: NONE,
    blockField: "cancel",
    fires:
      "just before any reply is delivered, after before_response_emit; what it returns is what is delivered and stored",
    event: z.object({ to: text, content: text, source: replySource }),
    result: z
      .object({
        content: z.string().optional().describe("the text delivered, and stored, instead"),
        ...verdictFields,
        cancel: z
          .boolean()
          .optional()
          .describe('alias of outcome "block": deliver nothing; the store keeps a notice in the reply\'s place'),
        cancelReason: z.string().optional().describe("alias of reason: internal, never shown, logged or stored"),
      })
      .strict(),
    rules: { content: chain, cancel: latch, cancelReason: first },
    normalize: blockVerdict({ block: "cancel", internal: "cancelReason" }),
  }),
  message_sent: defineHook({
    kind: "observe",
    failure: "open",
    timeoutMs: OBSERVE_MS,
    access: NONE,
    fires: "after delivery was attempted",
    event: z.object({ to: text, content: text, success: z.boolean() }),
  }),
  notification: defineHook({
    kind: "observe",
    failure: "open",
    timeoutMs: OBSERVE_MS,
    access: NONE,
    fires: "when Gatehouse needs the user's attention (an approval request, for example)",
    event: z.object({ kind: text, message: text }),
  }),
  agent_end: defineHook({
    kind: "observe",
    failure: "open",
    timeoutMs: LONG_MS,
    access: CONVERSATION,
    fires: "once for every run that passed admission, whatever its outcome, after any scrub",
    event: z.object({
      runId: text,
      outcome: z.enum(["completed", "blocked", "claimed", "failed", "cancelled", "max_steps"]),
      success: z.boolean(),
      error: z.string().optional().describe("a failed run's error message, in one line (OpenClaw's field)"),
      failure: z
        .object({
          kind: text,
          provider: text,
          model: text.optional(),
          status: z.number().optional(),
          retryable: z.boolean(),
          attempts: z.number().optional(),
          message: text,
        })
        .optional()
        .describe("a failed run's error as data: kind (auth, rate_limit, connection…), provider, HTTP status"),
      durationMs: z.number(),
      messages: messages().describe("the run's messages as stored, after any scrub"),
    }),
  }),
} as const satisfies Record<string, HookSpec>;

export type HookCatalog = typeof HOOKS;
export type HookName = keyof HookCatalog;
export const HOOK_NAMES = Object.keys(HOOKS) as HookName[];

export function isHookName(name: string): name is HookName {
  return Object.hasOwn(HOOKS, name);
}

export function hookSpec(name: HookName): HookSpec {
  return HOOKS[name];
}

/** The strict result shape of every gate: pass, or block with an internal reason. */
export const GateVerdictSchema = z.discriminatedUnion("outcome", [
  z.object({ outcome: z.literal("pass") }).strict(),
  z
    .object({
      outcome: z.literal("block"),
      reason: z.string().min(1).describe("internal: never shown, logged or stored"),
      message: z.string().min(1).optional().describe("what the user is shown"),
      category: z.string().min(1).optional(),
    })
    .strict(),
]);
/**
 * The other hooks' spelling, `{ block, blockReason, message? }`, accepted on a gate as an alias:
 * `blockReason` is the internal reason there.
 */
const GateAliasSchema = z
  .object({
    block: z.boolean(),
    blockReason: z.string().min(1).optional(),
    message: z.string().min(1).optional(),
    category: z.string().min(1).optional(),
  })
  .strict()
  .transform(
    ({ block, blockReason, message, category }): z.output<typeof GateVerdictSchema> =>
      block
        ? {
            outcome: "block",
            reason: blockReason ?? "(no reason given)",
            ...(message === undefined ? {} : { message }),
            ...(category === undefined ? {} : { category }),
          }
        : { outcome: "pass" },
  );
export const GateResultSchema = z.union([GateVerdictSchema, GateAliasSchema]);
/** A gate's result as the engine reads it (aliases turned into the verdict). */
export type GateResult = z.output<typeof GateResultSchema>;
/** What a gate's handler may return: the verdict, or its alias. */
export type GateAnswer = z.input<typeof GateResultSchema>;
