import type { EnvPolicy } from "../core/env-policy.js";
import { envMasker } from "../core/secret-values.js";
import { REVISION_LIMITS } from "../hooks/revisions.js";
import type { RunContext } from "../hooks/run-context.js";
import type { PluginDefinition, PluginLogger } from "../plugins/define.js";
import type { StoreView } from "../store/types.js";
import { type BackgroundStart, type MergedVerdict, runCommandHooks, runsInBackground } from "./dispatch.js";
import { hookEnv } from "./env.js";
import { createEnvFile } from "./env-file.js";
import { type CommandHookEvent, notificationTypeOf } from "./events.js";
import { commandLineOf, type HandlerOutcome, type McpToolCaller } from "./executor.js";
import { buildPayload, type EventInputs, type PermissionMode } from "./payload.js";
import type { AgentEvaluator, PromptEvaluator, UsageSink } from "./prompt-handler.js";
import { reportRuns } from "./report.js";
import type { ConfiguredHandler } from "./sources.js";
import { claudeToolResponse } from "./tool-response.js";
import { HOOK_BLOCK_REASON, HOOK_STOP_REASON } from "./verdict.js";

export const COMMAND_HOOKS_PLUGIN_ID = "command-hooks";
/** Consecutive Stop / SubagentStop blocks allowed in one run before the answer stands. */
export const MAX_STOP_BLOCKS = REVISION_LIMITS.stop.limit;
// Command hooks keep their own timeouts (seconds, per handler); the engine's must not cut them short.
const ENGINE_TIMEOUT_MS = 600_000;

export interface CommandHooksPluginOptions {
  readonly handlers: readonly ConfiguredHandler[];
  readonly store: () => StoreView;
  readonly projectDir: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** What of `env` hook processes and `http` headers may see. */
  readonly envPolicy?: EnvPolicy;
  /** Variables SessionStart hooks set through `CLAUDE_ENV_FILE`, for the session's later Bash calls. */
  readonly onSessionEnv?: (sessionId: string, variables: Readonly<Record<string, string>>) => void;
  /** The model `prompt` handlers ask. */
  readonly evaluatePrompt?: PromptEvaluator;
  /** The read-only agent `agent` handlers run. */
  readonly evaluateAgent?: AgentEvaluator;
  /**
   * Where a `prompt` or `agent` handler's model calls count their tokens: the usage of the run
   * with this id (undefined when it is no run under way, e.g. `SessionEnd` from `sessions rm`).
   */
  readonly runUsage?: (runId: string) => UsageSink | undefined;
  /** Calls a connected MCP server's tool, for `mcp_tool` handlers. */
  readonly callMcpTool?: McpToolCaller;
  /** The permission mode in force: every payload's `permission_mode`. */
  readonly permissionMode?: PermissionMode;
  /** gatehouse.json's `model.reasoningEffort`: the tool events' `effort.level` and `CLAUDE_EFFORT`. */
  readonly effort?: string;
}

/**
 * Claude Code's events on Gatehouse's hook engine (docs/command-hooks.md): each event is one handler on
 * the runtime point it maps to, so a command hook's verdict takes effect exactly like a
 * typed plugin's — a UserPromptSubmit block stops the input at `before_input` (before slash
 * commands and claims), a PostToolUse or PostToolUseFailure block withholds the output, Stop
 * fires for the top-level agent and SubagentStop only inside sub-agents (by run depth).
 */
export function createCommandHooksPlugin(
  options: CommandHooksPluginOptions,
): PluginDefinition & { readonly runsHeld: () => number } {
  const { handlers } = options;
  const configured = new Set(handlers.map((h) => h.event));
  // Per run, until its agent_end: what UserPromptSubmit and PreToolUse added, and Stop's blocks so far.
  const promptContext = new Map<string, string>();
  const toolContext = new Map<string, Map<string, string>>();
  const stopBlocks = new Map<string, number>();
  const hookEnvOptions = {
    projectDir: options.projectDir,
    ...(options.env ? { env: options.env } : {}),
    ...(options.envPolicy ? { envPolicy: options.envPolicy } : {}),
  };
  // Built once: the withheld values do not change while the plugin lives (secret-values.ts).
  const secrets = envMasker([process.env, options.env ?? {}], options.envPolicy);
  // The plugin's own (sanitized) logger, handed over at setup.
  let log: PluginLogger | undefined;
  // Claude Code's background hooks (`async`, `asyncRewake`), per run: the ones still running, and
  // what finished ones said, for the model's next call in the run (else the session's next run).
  const hasBackground = handlers.some(runsInBackground);
  const backgroundJobs = new Map<string, Set<{ controller: AbortController; done: Promise<void> }>>();
  const backgroundText = new Map<string, string[]>();

  function startBackground(
    handler: ConfiguredHandler,
    start: BackgroundStart,
    event: CommandHookEvent,
    ctx: Pick<RunContext, "sessionId" | "runId">,
  ): void {
    const controller = new AbortController();
    const jobs = backgroundJobs.get(ctx.runId) ?? new Set();
    backgroundJobs.set(ctx.runId, jobs);
    const job = {
      controller,
      done: start(controller.signal)
        .then(async (outcome) => {
          jobs.delete(job);
          // Outside any run (SessionEnd), nothing waits for the set.
          if (ctx.runId === "" && jobs.size === 0) backgroundJobs.delete("");
          if (outcome.aborted) return;
          // What a background hook says is for the model only: its systemMessage is not shown to the user.
          const { systemMessage: _shown, feedback: _feedback, ...verdict } = outcome.verdict;
          if (log) reportRuns(log, event, [{ handler, outcome: { ...outcome, verdict } }]);
          log?.debug(`${event} background hook (${handler.source}, ${handler.path}) finished`);
          const text = backgroundAnswer(handler, outcome);
          if (text === undefined) return;
          if (backgroundJobs.has(ctx.runId) && ctx.runId !== "") {
            backgroundText.set(ctx.runId, [...(backgroundText.get(ctx.runId) ?? []), text]);
          } else if (ctx.sessionId) {
            await options.store().queueInjection({ sessionId: ctx.sessionId, text, placement: "append" });
          }
        })
        .catch((error: unknown) =>
          log?.warn(`${event} background hook (${handler.source}, ${handler.path}): ${error}`),
        ),
    };
    jobs.add(job);
  }

  /** A run's end kills its background hooks (Claude Code's `-p` teardown); what they said goes to the session's next run. */
  async function endBackground(ctx: Pick<RunContext, "sessionId" | "runId">): Promise<void> {
    const jobs = backgroundJobs.get(ctx.runId);
    backgroundJobs.delete(ctx.runId);
    for (const job of jobs ?? []) job.controller.abort();
    await Promise.all([...(jobs ?? [])].map((j) => j.done));
    const said = backgroundText.get(ctx.runId);
    backgroundText.delete(ctx.runId);
    if (said && ctx.sessionId)
      await options.store().queueInjection({ sessionId: ctx.sessionId, text: said.join("\n\n"), placement: "append" });
  }

  /** What finished background hooks of the run said since the last call, for the model's next call. */
  function takeBackgroundText(runId: string): string | undefined {
    const said = backgroundText.get(runId);
    backgroundText.delete(runId);
    return said?.join("\n\n");
  }

  /** A session's transcript file as hooks read it (written on demand); "" when there is none. */
  const transcriptOf = async (sessionId: string) =>
    sessionId
      ? await options
          .store()
          .materializeTranscript(sessionId)
          .catch(() => "")
      : "";

  async function fire<E extends CommandHookEvent>(
    event: E,
    ctx: Pick<RunContext, "sessionId" | "runId" | "depth" | "agentId">,
    input: EventInputs[E],
    signal?: AbortSignal,
    variables?: Readonly<Record<string, string>>,
  ): Promise<MergedVerdict | undefined> {
    if (!configured.has(event)) return undefined;
    const transcriptPath = await transcriptOf(ctx.sessionId);
    const payload = buildPayload(
      event,
      {
        sessionId: ctx.sessionId,
        transcriptPath,
        cwd: options.projectDir,
        ...(options.permissionMode ? { permissionMode: options.permissionMode } : {}),
        ...(options.effort ? { effort: options.effort } : {}),
        runId: ctx.runId,
        depth: ctx.depth,
        ...(ctx.depth > 0 ? { agent: { id: ctx.sessionId, type: ctx.agentId } } : {}),
      },
      input,
    );
    const merged = await runCommandHooks(event, undefined, payload, handlers, {
      projectDir: options.projectDir,
      sessionId: ctx.sessionId,
      ...(options.env ? { env: options.env } : {}),
      ...(options.envPolicy ? { envPolicy: options.envPolicy } : {}),
      ...(signal ? { signal } : {}),
      ...(variables ? { variables } : {}),
      ...(options.evaluatePrompt ? { evaluatePrompt: options.evaluatePrompt } : {}),
      ...(options.evaluateAgent ? { evaluateAgent: options.evaluateAgent } : {}),
      onModelUsage: options.runUsage?.(ctx.runId),
      ...(options.callMcpTool ? { callMcpTool: options.callMcpTool } : {}),
      secrets,
      ...(hasBackground ? { background: (h, start) => startBackground(h, start, event, ctx) } : {}),
    });
    if (log) reportRuns(log, event, merged.runs);
    return merged;
  }

  const blocks = (v: MergedVerdict | undefined) =>
    v !== undefined && (v.decision === "block" || v.decision === "deny" || v.continue === false);
  const reasonOf = (v: MergedVerdict) => v.reason ?? v.stopReason ?? HOOK_BLOCK_REASON;
  const opts = (id: string) => ({ id, timeoutMs: ENGINE_TIMEOUT_MS });
  const stopInstruction = (v: MergedVerdict | undefined) => {
    const parts = [v?.decision === "block" ? reasonOf(v) : undefined, v?.additionalContext];
    const text = parts.filter((t): t is string => !!t).join("\n\n");
    return text === "" ? undefined : text;
  };
  const any = (...events: CommandHookEvent[]) => events.some((e) => configured.has(e));
  /** The session's title, for SessionStart's and UserPromptSubmit's `session_title`. */
  const titleOf = async (sessionId: string): Promise<{ sessionTitle?: string }> => {
    const title = (await options.store().getSession(sessionId))?.title;
    return title ? { sessionTitle: title } : {};
  };

  const plugin: PluginDefinition = {
    id: COMMAND_HOOKS_PLUGIN_ID,
    name: "Claude Code command hooks",
    setup(api) {
      log = api.logger;
      // Only events someone configured get a handler: an unused event stays free.
      if (any("SessionStart"))
        api.on(
          "session_start",
          async (e, ctx) => {
            // Claude Code starts no session for a sub-agent: SubagentStart is its start.
            if (ctx.depth > 0) return;
            const source = e.source ?? "startup";
            const input = {
              source,
              ...(e.model === undefined ? {} : { model: e.model }),
              ...(await titleOf(e.sessionId)),
            };
            const envFile = await createEnvFile();
            const variables = { CLAUDE_ENV_FILE: envFile.path };
            const v = await fire("SessionStart", ctx, input, ctx.signal, variables);
            const base = { ...hookEnv({ ...hookEnvOptions, sessionId: e.sessionId }), ...variables };
            const { CLAUDE_ENV_FILE: _file, ...exported } = await envFile.collect(base);
            if (Object.keys(exported).length > 0) options.onSessionEnv?.(e.sessionId, exported);
            // As /rename; Claude Code ignores it when a session is cleared or compacted.
            if (v?.sessionTitle && (source === "startup" || source === "resume"))
              await options.store().setSessionTitle(e.sessionId, v.sessionTitle);
            if (v?.additionalContext)
              await options
                .store()
                .queueInjection({ sessionId: e.sessionId, text: v.additionalContext, placement: "prepend" });
          },
          opts("SessionStart"),
        );
      if (any("SessionEnd"))
        api.on(
          "session_end",
          async (e, ctx) => {
            await fire(
              "SessionEnd",
              { ...ctx, sessionId: e.sessionId },
              { reason: SESSION_END_REASONS[e.reason ?? ""] ?? "other" },
              ctx.signal,
            );
          },
          opts("SessionEnd"),
        );
      // The first thing an input meets, slash commands and claimed turns included, as in Claude Code.
      // Sub-agents get SubagentStart instead.
      if (any("UserPromptSubmit"))
        api.on(
          "before_input",
          async (e, ctx) => {
            if (ctx.depth > 0) return undefined;
            const title = await titleOf(ctx.sessionId);
            const v = await fire("UserPromptSubmit", ctx, { prompt: e.prompt, ...title }, ctx.signal);
            if (!v) return undefined;
            if (v.sessionTitle) await options.store().setSessionTitle(ctx.sessionId, v.sessionTitle);
            if (blocks(v)) {
              const reason = reasonOf(v);
              // Claude Code shows a UserPromptSubmit block's reason to the user: here it is the notice.
              return { outcome: "block", reason, message: reason, category: "UserPromptSubmit" };
            }
            if (v.additionalContext) promptContext.set(ctx.runId, v.additionalContext);
            return undefined;
          },
          opts("UserPromptSubmit"),
        );
      // Its context is the model's, for a turn that reaches the model.
      if (any("UserPromptSubmit"))
        api.on(
          "agent_turn_prepare",
          (_e, ctx) => {
            const context = promptContext.get(ctx.runId);
            promptContext.delete(ctx.runId);
            return context === undefined ? undefined : { appendContext: context };
          },
          opts("UserPromptSubmit-context"),
        );
      if (any("PreToolUse"))
        api.on(
          "before_tool_call",
          async (e, ctx) => {
            const v = await fire(
              "PreToolUse",
              ctx,
              { toolName: e.toolName, toolInput: e.params, toolUseId: e.toolCallId },
              ctx.signal,
            );
            if (!v) return undefined;
            // `continue: false` stops the agent (Claude Code): the call does not run, and the run ends after this step.
            if (v.continue === false) return { block: true, blockReason: stoppedReasonOf(v), stopRun: stopRunOf(v) };
            // A blocked call gets no after_tool_call: its context would wait there for nothing.
            if (blocks(v)) {
              const speaksClaude = v.decidedBy === undefined || v.decidedBy.dialect.startsWith("claude");
              // Claude Code's words for Claude Code hooks, Gemini CLI's for its hooks; the others keep Gatehouse's notice.
              const message = speaksClaude
                ? { blockMessage: preToolUseError(e.toolName, v, secrets.mask) }
                : v.decidedBy?.dialect === "gemini"
                  ? { blockMessage: `Tool execution blocked: ${reasonOf(v)}` }
                  : {};
              return { block: true, blockReason: reasonOf(v), ...message };
            }
            if (v.additionalContext) {
              const ofRun = toolContext.get(ctx.runId) ?? new Map<string, string>();
              toolContext.set(ctx.runId, ofRun.set(e.toolCallId, v.additionalContext));
            }
            return {
              ...(v.updatedInput === undefined ? {} : { params: v.updatedInput }),
              // allow skips the permission prompt (never a deny rule); ask forces one.
              ...(v.decision === "allow" ? { permissionDecision: "allow" as const } : {}),
              ...(v.decision === "ask"
                ? {
                    permissionDecision: "ask" as const,
                    requireApproval: {
                      title: v.reason ?? `Allow ${e.toolName}?`,
                      // With no one to ask, Claude Code refuses the call and the model reads the hook's reason.
                      unattended: v.reason === undefined ? {} : { reason: v.reason },
                    },
                  }
                : {}),
            };
          },
          opts("PreToolUse"),
        );
      // PermissionRequest answers a permission ask before plugins' approvers and the person
      // (docs/permissions.md): allow or deny decide, a deny may end the run.
      if (any("PermissionRequest"))
        api.on(
          "permission_request",
          async (e, ctx) => {
            const v = await fire(
              "PermissionRequest",
              ctx,
              {
                toolName: e.toolName,
                toolInput: e.params,
                permissionSuggestions: e.suggestions.map((rule) => ({
                  type: "addRules",
                  rules: [ruleValue(rule)],
                  behavior: "allow",
                  destination: "session",
                })),
              },
              ctx.signal,
            );
            if (!v) return undefined;
            // `continue: false` denies whatever the decision says, as a PreToolUse one blocks the call;
            // only a deny's `interrupt` ends the run.
            if (blocks(v)) return { deny: true, message: reasonOf(v), ...(v.interrupt ? { interrupt: true } : {}) };
            if (v.decision !== "allow") return undefined;
            return { allow: true, ...(v.updatedInput === undefined ? {} : { updatedInput: v.updatedInput }) };
          },
          { ...opts("PermissionRequest"), priority: PERMISSION_REQUEST_PRIORITY },
        );
      // PermissionDenied sees every denial of the permission check; `retry` is all it can say.
      if (any("PermissionDenied"))
        api.on(
          "permission_denied",
          async (e, ctx) => {
            const call = { toolName: e.toolName, toolInput: e.params, toolUseId: e.toolCallId, reason: e.reason };
            const v = await fire("PermissionDenied", ctx, call, ctx.signal);
            return v?.retry ? { retry: true } : undefined;
          },
          opts("PermissionDenied"),
        );
      if (any("PreToolUse", "PostToolUse", "PostToolUseFailure"))
        api.on(
          "after_tool_call",
          async (e, ctx) => {
            const ofRun = toolContext.get(ctx.runId);
            const pre = ofRun?.get(e.toolCallId);
            ofRun?.delete(e.toolCallId);
            if (ofRun?.size === 0) toolContext.delete(ctx.runId);
            const call = {
              toolName: e.toolName,
              toolInput: e.params,
              toolUseId: e.toolCallId,
              durationMs: e.durationMs,
            };
            const v =
              e.error === undefined
                ? await fire(
                    "PostToolUse",
                    ctx,
                    { ...call, toolResponse: claudeToolResponse(e.toolName, e.result) },
                    ctx.signal,
                  )
                : await fire("PostToolUseFailure", ctx, { ...call, error: e.error }, ctx.signal);
            const context = [pre, v?.additionalContext].filter((t): t is string => !!t).join("\n\n");
            const withContext = {
              ...(context ? { additionalContext: context } : {}),
              // `continue: false` stops the agent once this step is done; the output itself stays unless a hook blocked it.
              ...(v?.continue === false ? { stopRun: stopRunOf(v) } : {}),
            };
            // A PostToolUseFailure block withholds the failure too: a Gatehouse extension (Claude Code cannot).
            if (v !== undefined && (v.decision === "block" || v.decision === "deny")) {
              // Gemini CLI's AfterTool deny reads "Tool result blocked: <reason>" to the model.
              const gemini = v.decidedBy?.dialect === "gemini";
              const blockReason = gemini ? `Tool result blocked: ${reasonOf(v)}` : reasonOf(v);
              return { block: true, blockReason, ...withContext };
            }
            if (e.error === undefined && v?.updatedToolOutput !== undefined)
              return { result: v.updatedToolOutput, ...withContext };
            return Object.keys(withContext).length > 0 ? withContext : undefined;
          },
          opts("PostToolUse"),
        );
      if (any("PostToolBatch") || hasBackground)
        api.on(
          "after_tool_batch",
          async (e, ctx) => {
            const toolCalls = e.calls.map((c) => ({
              toolName: c.toolName,
              toolInput: c.params,
              toolUseId: c.toolCallId,
              // Claude Code sends PostToolBatch the text the model reads, not the tool's object.
              toolResponse: c.modelText,
            }));
            const v = await fire("PostToolBatch", ctx, { toolCalls }, ctx.signal);
            const context = [v?.additionalContext, takeBackgroundText(ctx.runId)].filter(Boolean).join("\n\n");
            if (!v) return context ? { additionalContext: context } : undefined;
            // Claude Code: a block or `continue: false` stops the agent loop; the reason is the user's.
            const stops = v.decision === "block" || v.continue === false;
            const message = v.decision === "block" ? v.reason : v.stopReason;
            return {
              ...(context ? { additionalContext: context } : {}),
              ...(stops ? { stopRun: message === undefined ? {} : { message } } : {}),
            };
          },
          opts("PostToolBatch"),
        );
      if (any("Stop", "SubagentStop"))
        api.on(
          "before_agent_finalize",
          async (e, ctx) => {
            const loopCount = stopBlocks.get(ctx.runId) ?? 0;
            const stop = { stopHookActive: loopCount > 0, lastAssistantMessage: e.lastAssistantMessage, loopCount };
            const v =
              ctx.depth > 0
                ? await fire(
                    "SubagentStop",
                    ctx,
                    {
                      ...stop,
                      agentId: ctx.sessionId,
                      agentType: ctx.agentId,
                      agentTranscriptPath: await transcriptOf(ctx.sessionId),
                    },
                    ctx.signal,
                  )
                : await fire("Stop", ctx, stop, ctx.signal);
            // A block sends the agent back, and so does additionalContext (Claude Code's non-error
            // feedback that continues the turn); `continue: false` asks it to stop, and wins over both.
            const instruction = v?.continue === false ? undefined : stopInstruction(v);
            if (instruction === undefined || loopCount >= MAX_STOP_BLOCKS) {
              stopBlocks.delete(ctx.runId);
              return undefined;
            }
            stopBlocks.set(ctx.runId, loopCount + 1);
            return {
              action: "revise",
              retry: {
                instruction,
                idempotencyKey: `${COMMAND_HOOKS_PLUGIN_ID}:stop:${loopCount}`,
                budget: "stop",
              },
            };
          },
          opts("Stop"),
        );
      if (any("UserPromptSubmit", "Stop", "SubagentStop", "PreToolUse", "StopFailure") || hasBackground)
        api.on(
          "agent_end",
          async (e, ctx) => {
            await endBackground(ctx);
            // A turn of the main agent that ended in an error: Claude Code's StopFailure (its answer is ignored).
            if (e.outcome === "failed" && ctx.depth === 0 && configured.has("StopFailure"))
              await fire(
                "StopFailure",
                ctx,
                {
                  error: stopFailureError(e.failure, e.error),
                  ...(e.error === undefined ? {} : { errorDetails: e.error }),
                },
                ctx.signal,
              );
            // With the context of calls that never got an after_tool_call (approval denied, the run stopped or failed).
            for (const map of [promptContext, stopBlocks, toolContext]) map.delete(ctx.runId);
          },
          opts("cleanup"),
        );
      if (any("SubagentStart"))
        api.on(
          "subagent_start",
          async (e, ctx) => {
            const v = await fire(
              "SubagentStart",
              ctx,
              { agentId: e.childSessionId, agentType: e.agentType },
              ctx.signal,
            );
            return v?.additionalContext ? { additionalContext: v.additionalContext } : undefined;
          },
          opts("SubagentStart"),
        );
      if (any("PreCompact"))
        api.on(
          "before_compaction",
          async (e, ctx) => {
            const v = await fire(
              "PreCompact",
              ctx,
              { trigger: e.trigger, ...(e.instructions === undefined ? {} : { customInstructions: e.instructions }) },
              ctx.signal,
            );
            if (!blocks(v)) return undefined;
            // Claude Code shows a PreCompact block's stderr (or reason) to the user: /compact replies with it.
            // A handler that failed (onFailure "block") said nothing of its own: Gatehouse's notice stands alone.
            const failed = v?.runs.find((r) => r.handler === v.decidedBy)?.outcome.verdict.error !== undefined;
            const message = failed ? undefined : (v?.reason ?? v?.stopReason);
            return { block: true, ...(message === undefined ? {} : { message }) };
          },
          opts("PreCompact"),
        );
      if (any("PostCompact"))
        api.on(
          "after_compaction",
          async (e, ctx) => {
            await fire("PostCompact", ctx, { trigger: e.trigger, compactSummary: e.summary }, ctx.signal);
          },
          opts("PostCompact"),
        );
      if (any("Notification"))
        api.on(
          "notification",
          async (e, ctx) => {
            await fire(
              "Notification",
              ctx,
              { message: e.message, notificationType: notificationTypeOf(e.kind) },
              ctx.signal,
            );
          },
          opts("Notification"),
        );
    },
  };

  const runs = () =>
    new Set([
      ...promptContext.keys(),
      ...toolContext.keys(),
      ...stopBlocks.keys(),
      ...backgroundJobs.keys(),
      ...backgroundText.keys(),
    ]).size;
  return Object.assign(plugin, { runsHeld: runs });
}

/**
 * What a finished background hook tells the model (hooks.md, "Run hooks in the background"): its
 * JSON `additionalContext` and `systemMessage`; an `asyncRewake` hook that exits 2, its stderr (or
 * stdout). Decisions are ignored: the action they would decide already happened.
 */
function backgroundAnswer(handler: ConfiguredHandler, outcome: HandlerOutcome): string | undefined {
  const def = handler.definition;
  if (def.type === "command" && def.asyncRewake && outcome.exitCode === 2)
    return outcome.stderr.trim() || outcome.stdout.trim() || undefined;
  const { additionalContext, systemMessage } = outcome.verdict;
  const text = [additionalContext, systemMessage].filter(Boolean).join("\n\n");
  return text === "" ? undefined : text;
}

/** Claude Code's StopFailure `error` for a run's failure: from its kind and status, else from its text. */
function stopFailureError(failure: { kind: string; status?: number } | undefined, text: string | undefined): string {
  if (failure?.status === 529) return "overloaded";
  if (failure?.status === 402) return "billing_error";
  const byKind: Record<string, string> = {
    rate_limit: "rate_limit",
    auth: "authentication_failed",
    missing_key: "authentication_failed",
    not_found: "model_not_found",
    server: "server_error",
    bad_request: "invalid_request",
  };
  const known = failure && byKind[failure.kind];
  if (known) return known;
  const t = text ?? "";
  if (/\b429\b|rate.?limit/i.test(t)) return "rate_limit";
  if (/\b529\b|overloaded/i.test(t)) return "overloaded";
  if (/\b40[13]\b|unauthori[sz]ed|authentication|api key/i.test(t)) return "authentication_failed";
  if (/\b402\b|billing|quota/i.test(t)) return "billing_error";
  if (/\b404\b|model.*not.?found|NoSuchModel/i.test(t)) return "model_not_found";
  if (/\b5\d\d\b/.test(t)) return "server_error";
  if (/\b400\b|invalid.?request/i.test(t)) return "invalid_request";
  return "unknown";
}

/**
 * What the model reads for a call a PreToolUse hook blocked, in Claude Code's words:
 * `PreToolUse:<tool> hook error: [<command>]: <stderr>` for exit 2, `… hook error: <reason>` for JSON.
 */
const preToolUseError = (toolName: string, v: MergedVerdict, mask: (text: string) => string) =>
  `PreToolUse:${toolName} hook error: ${exitBlockOf(v, mask) ?? v.reason ?? HOOK_BLOCK_REASON}`;

/**
 * A block by exit 2 whose reason is its stderr, quoted as Claude Code quotes it: the command (its
 * withheld variables' values masked), the stderr with its final newline, and, for a hook a Claude
 * Code plugin brought, the line that names the plugin.
 */
function exitBlockOf(v: MergedVerdict, mask: (text: string) => string): string | undefined {
  const def = v.decidedBy?.definition;
  const run = v.runs.find((r) => r.handler === v.decidedBy);
  if (def?.type !== "command" || run?.outcome.exitCode !== 2) return undefined;
  const { stderr } = run.outcome;
  if (v.reason === undefined || v.reason !== stderr.trim()) return undefined;
  const plugin = v.decidedBy?.plugin === undefined ? "" : `\nThis hook comes from the ${v.decidedBy.plugin} plugin.`;
  return `[${mask(commandLineOf(def))}]: ${v.reason}${stderr.endsWith("\n") ? "\n" : ""}${plugin}`;
}

/** What a `continue: false` hook shows the user: its `stopReason` (never shown to the model). */
const stopRunOf = (v: MergedVerdict) => (v.stopReason === undefined ? {} : { message: v.stopReason });

/** What the model reads for a call a `continue: false` stopped: the hook's block reason, never its stopReason. */
const stoppedReasonOf = (v: MergedVerdict) =>
  (v.decision === "block" || v.decision === "deny" ? v.reason : undefined) ?? HOOK_STOP_REASON;

/** Command hooks answer a permission ask before plugins do (Claude Code has no plugins there). */
const PERMISSION_REQUEST_PRIORITY = 1000;

/** session_end's reason as Claude Code's SessionEnd names it; anything else is "other". */
const SESSION_END_REASONS: Readonly<Record<string, EventInputs["SessionEnd"]["reason"]>> = {
  reset: "clear",
  input_exit: "prompt_input_exit",
};

/** A rule as Claude Code's `permission_suggestions` write it: `{ toolName, ruleContent? }`. */
function ruleValue(rule: string): { toolName: string; ruleContent?: string } {
  const open = rule.indexOf("(");
  if (open === -1 || !rule.endsWith(")")) return { toolName: rule };
  return { toolName: rule.slice(0, open), ruleContent: rule.slice(open + 1, -1) };
}
