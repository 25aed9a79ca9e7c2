import { randomUUID } from "node:crypto";
import type { JSONSchema7, LanguageModelV3FunctionTool } from "@ai-sdk/provider";
import { linkedSignal } from "../core/abort.js";
import { childRunContext, newTraceparent, type RunContext, runWithContext } from "../hooks/run-context.js";
import type { MergedResult } from "../hooks/types.js";
import type { ModelUsage } from "../models/collect.js";
import { internalRunError, modelRunError, type RunError } from "../models/failure.js";
import { ModelCallFailure } from "../models/retry.js";
import { toModelTools } from "../models/tools.js";
import type { FinalRunStatus, RunSummary, RunUsage, Session } from "../store/types.js";
import type { Tool } from "../tools/types.js";
import { compact } from "./compaction.js";
import type { RuntimeDeps } from "./deps.js";
import { admitInput, admitPrompt, storePrompt } from "./doors/input.js";
import {
  deliverAnswer,
  deliverReply,
  deliverStop,
  liveText,
  outputGated,
  storeRevisionFeedback,
  writeAssistant,
} from "./doors/output.js";
import { closeDanglingToolCalls, runToolCalls } from "./doors/tool.js";
import { discardUncheckedOutput, recoverInterruptedRuns } from "./doors/unchecked.js";
import type { EventSink } from "./events.js";
import { askForRevision } from "./finalize.js";
import { callModel } from "./model-step.js";
import { RunState } from "./state.js";
import type { RunInput, RunResult } from "./types.js";

/**
 * One run = one user turn, in the order of docs/lifecycle.md (the step numbers below are its).
 * Each step is one function; a step that ends the turn (a block, a slash command, a claim)
 * returns false and the run goes straight to its end (step 13), which always happens once the
 * run was admitted. Text reaches the user and the store only through the doors (./doors/).
 */
export async function executeRun(
  deps: RuntimeDeps,
  input: RunInput,
  emit: EventSink,
  child?: ChildPlacement,
): Promise<RunResult> {
  const requestedAt = performance.now();
  // 0. Admission: the session, its run lock (one run per session, across processes), a run id.
  const { session, created } = child ? { session: child.session, created: true } : await openSession(deps, input);
  const lock = await deps.store.acquireRunLock(session.id, {
    ...(input.signal ? { signal: input.signal } : {}),
    onWait: () => emit({ type: "lock-wait", sessionId: session.id }),
  });
  // A lock another process took over (this one missed its lease's heartbeats) means that process may
  // already have recovered this run: it stops here, as if cancelled, rather than write on.
  const linked = input.signal ? linkedSignal([input.signal, lock.lost]) : undefined;
  const signal = linked?.signal ?? lock.lost;
  const onLost = () =>
    deps.logger.warn(`session ${session.id}: another process took over its run lock; the run was stopped`);
  lock.lost.addEventListener("abort", onLost, { once: true });
  try {
    if (!child && !created && lock.interruptedRuns > 0) await recoverInterruptedRuns(deps, session.id);
    const trigger = child ? "subagent" : (input.trigger ?? "api");
    const run = await deps.store.startRun({
      sessionId: session.id,
      trigger,
      ...(child ? { depth: child.parent.depth + 1, parentRunId: child.parent.runId } : {}),
      ...(input.jobId === undefined ? {} : { jobId: input.jobId }),
    });
    const identity = { sessionId: session.id, sessionKey: session.key ?? session.id, runId: run.id };
    const context: RunContext = child
      ? childRunContext(child.parent, { ...identity, agentId: child.agentType, signal })
      : {
          ...identity,
          agentId: "main",
          depth: 0,
          trigger,
          channel: input.channel ?? "api",
          ...(input.jobId === undefined ? {} : { jobId: input.jobId }),
          traceparent: continuedTraceparent(input.traceparent),
          signal,
        };
    const state = new RunState(
      session.id,
      run.id,
      input.prompt,
      signal,
      emit,
      input.systemPrompt ?? deps.config.systemPrompt,
      requestedAt,
      {
        ...(input.priorMessages?.length ? { priorMessages: input.priorMessages } : {}),
        ...(input.model === undefined ? {} : { modelSpec: input.model }),
      },
    );
    if (child?.context)
      state.addContext("append", child.context, { type: "hook_additional_context", hookEvent: "SubagentStart" });
    // A cancelled run does not wait out its hooks' timeouts.
    const cancelHooks = () => deps.engine.cancelRun(run.id);
    signal.addEventListener("abort", cancelHooks, { once: true });
    deps.runUsage.set(run.id, (usage) => state.addUsage(usage));
    try {
      return await runWithContext(context, () => lifecycle(deps, state, session, created, context));
    } finally {
      deps.runUsage.delete(run.id);
      signal.removeEventListener("abort", cancelHooks);
    }
  } finally {
    linked?.release();
    lock.lost.removeEventListener("abort", onLost);
    await lock.release();
  }
}

/**
 * Where a sub-agent's run sits: under its parent run, in a session created for it (before
 * `subagent_start`, so hooks know its id), with context the parent's hooks added.
 */
export interface ChildPlacement {
  readonly parent: RunContext;
  readonly session: Session;
  readonly agentType: string;
  readonly context?: string;
}

async function lifecycle(
  deps: RuntimeDeps,
  state: RunState,
  session: Session,
  created: boolean,
  context: RunContext,
): Promise<RunResult> {
  const { engine } = deps;
  let sessionId = state.sessionId;
  state.emit({ type: "run-start", sessionId, runId: state.runId, outputHeld: outputGated(deps) });
  try {
    state.useModel(
      await deps.models.resolve(state.modelSpec === undefined ? undefined : { modelOverride: state.modelSpec }),
    );
    state.setHistory(await deps.store.history(sessionId));
    // Hooks nobody listens to are not awaited: each await is a promise, and every promise pays the run
    // context's async hooks.
    // Claude Code's SessionStart sources: a new session, or one this instance resumes (`--session`).
    const opened = deps.sessionsOpened.has(sessionId);
    deps.sessionsOpened.add(sessionId);
    if ((created || !opened) && engine.hasHooks("session_start"))
      await engine.emit("session_start", {
        sessionId,
        source: created ? "startup" : "resume",
        model: state.modelName(),
      });
    // 1.
    if (engine.hasHooks("message_received"))
      await engine.emit("message_received", { content: state.prompt, channel: context.channel });
    // 2. The input door: every input, a slash command with its arguments too, before anything acts on it.
    const command = deps.commands.parse(state.prompt);
    if (!(await admitInput(deps, state, command))) return result(state, sessionId);
    // 3.
    if (engine.hasHooks("inbound_claim") && (await claimInbound(deps, state, context))) return result(state, sessionId);
    // 4. Slash commands answer the turn themselves; no agent hook fires for them.
    if (command) {
      const reply = await deps.commands.run(command.name, command.args, {
        deps,
        state,
        resetSession: async () => {
          sessionId = await resetSession(deps, session, state.modelName());
          return sessionId;
        },
      });
      if (reply !== undefined) await deliverReply(deps, state, "command", reply);
      return result(state, sessionId);
    }
    // 5.
    if (engine.hasHooks("before_agent_reply") && (await claimTurn(deps, state))) return result(state, sessionId);
    // 6–8.
    await prepareTurn(deps, state);
    // 9.
    if (!(await admitPrompt(deps, state))) return result(state, sessionId);
    // 10–11.
    const answered = await agentLoop(deps, state, context.depth);
    // 12. The output door: the notice of a tool hook that stopped the run, or the answer (a
    // permission deny with `interrupt` already delivered its own).
    if (state.interruptedBy !== undefined) return result(state, sessionId);
    if (state.stopRequest) await deliverStop(deps, state, state.stopRequest);
    else if (!answered) {
      // The step limit ended the loop while the model was still calling tools: there is no answer to deliver.
      state.setMaxSteps();
      return result(state, sessionId);
    } else await deliverAnswer(deps, state, "model");
  } catch (error) {
    if (state.signal.aborted) state.setStopped("cancelled");
    else state.setStopped("failed", runErrorOf(error, state));
    if (!outputGated(deps)) await closeDanglingToolCalls(deps, state);
    else if (!(await discardUncheckedOutput(deps, state))) state.leaveForRecovery();
  } finally {
    // 13.
    await endRun(deps, state);
  }
  return result(state, sessionId);
}

/**
 * 3. `inbound_claim`: a channel plugin may take the message before it becomes an agent turn
 * (not conversation-gated, so it sees only this message). Its reply goes out through the
 * output door; it is not stored, since the message never became a turn.
 */
async function claimInbound(deps: RuntimeDeps, state: RunState, context: RunContext): Promise<boolean> {
  const claim = await deps.engine.emit("inbound_claim", { content: state.prompt, channel: context.channel });
  if (!claim.handled) return false;
  state.setClaimed();
  const reply = claim.result.reply;
  if (reply !== undefined) await deliverReply(deps, state, "claim", reply);
  return true;
}

/**
 * 5. `before_agent_reply`: a plugin may answer the turn without the model. The prompt is stored
 * (it passed the input door), the reply as the run's answer, which the output door then delivers
 * like any other.
 */
async function claimTurn(deps: RuntimeDeps, state: RunState): Promise<boolean> {
  const claim = await deps.engine.emit("before_agent_reply", { cleanedBody: state.prompt.trim() });
  if (!claim.handled) return false;
  state.setClaimed();
  await storePrompt(deps, state);
  const reply = claim.result.reply?.text;
  if (reply === undefined) return true;
  await writeAssistant(deps, state, [{ type: "text", text: reply }]);
  await deliverAnswer(deps, state, "claim");
  return true;
}

/** 6–8. Model choice, injected context, prompt assembly. Nothing here is stored. */
async function prepareTurn(deps: RuntimeDeps, state: RunState): Promise<void> {
  const { engine } = deps;
  const { prompt } = state;
  let override = engine.hasHooks("before_model_resolve")
    ? (await engine.emit("before_model_resolve", { prompt })).result
    : {};
  state.takeInjections(await deps.store.peekInjections(state.sessionId));
  // Claude Code records SessionStart's context (the queued injections' source there) and UserPromptSubmit's.
  const sessionStart = { type: "hook_additional_context", hookEvent: "SessionStart" } as const;
  const promptSubmit = { type: "hook_additional_context", hookEvent: "UserPromptSubmit" } as const;
  for (const injection of state.injections)
    if (injection.placement === "system") state.addContext("systemAppend", injection.text);
    else state.addContext(injection.placement, injection.text, sessionStart);
  if (engine.hasHooks("agent_turn_prepare")) {
    const { result } = await engine.emit("agent_turn_prepare", {
      prompt,
      messages: state.history,
      queuedInjections: state.injections.map(({ id, text, placement }) => ({
        id,
        text,
        placement: placement === "system" ? "append" : placement,
      })),
    });
    if (result.prependContext) state.addContext("prepend", result.prependContext, promptSubmit);
    if (result.appendContext) state.addContext("append", result.appendContext, promptSubmit);
  }
  for (const hook of ["before_prompt_build", "before_agent_start"] as const) {
    if (!engine.hasHooks(hook)) continue;
    if (hook === "before_agent_start") warnDeprecated(deps);
    const { result }: { result: MergedResult<"before_agent_start"> } = await engine.emit(hook, {
      prompt,
      messages: state.history,
    });
    if (result.systemPrompt !== undefined) state.replaceSystemPrompt(result.systemPrompt);
    if (result.prependContext) state.addContext("prepend", result.prependContext, promptSubmit);
    if (result.appendContext) state.addContext("append", result.appendContext, promptSubmit);
    if (result.prependSystemContext) state.addContext("systemPrepend", result.prependSystemContext);
    if (result.appendSystemContext) state.addContext("systemAppend", result.appendSystemContext);
    if (result.toolsAllow) state.narrowTools(result.toolsAllow);
    if (!override.modelOverride && !override.providerOverride) {
      override = {
        ...(result.modelOverride === undefined ? {} : { modelOverride: result.modelOverride }),
        ...(result.providerOverride === undefined ? {} : { providerOverride: result.providerOverride }),
      };
    }
  }
  if (override.modelOverride || override.providerOverride) state.useModel(await deps.models.resolve(override));
}

/**
 * 10–11. Model and tools, step by step, until a final answer that no finalize hook sends back
 * or a hook stops the run (true), or until the step limit (false).
 * A step with tool calls goes through the tool door, which stores the step's message once its
 * calls were decided; a final answer is stored as it is, to be gated by the output door.
 */
async function agentLoop(deps: RuntimeDeps, state: RunState, depth: number): Promise<boolean> {
  // The model needs the whole tool list in its request: wait for servers still starting (once per
  // process; one that failed or timed out is not waited for again). Turns that end before a model
  // call — a blocked or claimed prompt, a slash command — never wait.
  await deps.waitForTools?.(state.signal);
  const tools = availableTools(deps, state, depth);
  const modelTools = publishTools([...tools.values()]);
  const onText = liveText(deps, state);
  const { compaction, maxSteps } = deps.config;
  while (state.steps < maxSteps) {
    state.signal.throwIfAborted();
    if (state.historyTokens() > compaction.contextTokens) await compact(deps, state, "auto");
    const response = await callModel(deps, state, modelTools, onText);
    if (response.toolCalls.length) {
      await runToolCalls(deps, state, response, tools);
      // A hook stopped the run (continue: false, or a permission deny with interrupt): the caller delivers.
      if (state.stopRequest || state.interruptedBy) return true;
      continue;
    }
    await writeAssistant(deps, state, response.parts);
    if (!deps.engine.hasHooks("before_agent_finalize") || !(await askForRevision(deps, state, depth))) return true;
    await storeRevisionFeedback(deps, state);
  }
  return false;
}

/**
 * 13. The run's end: its status, then `agent_end` with the messages as stored after any scrub
 * (and, when the scrub has to wait for recovery, without the output it would remove).
 */
async function endRun(deps: RuntimeDeps, state: RunState): Promise<void> {
  // The usage is final from here: a hook's model call after this (agent_end) has no run to count in.
  deps.runUsage.delete(state.runId);
  if (!state.leftForRecovery) await deps.store.finishRun(state.runId, ...storedEnd(state));
  if (!deps.engine.hasHooks("agent_end")) return;
  const stored = await deps.store.runMessages(state.runId);
  await deps.engine.emit("agent_end", {
    runId: state.runId,
    outcome: state.outcome,
    success: state.outcome === "completed" || state.outcome === "claimed",
    ...(state.error === undefined ? {} : { error: state.error.message, failure: state.error }),
    durationMs: state.durationMs(),
    messages: state.leftForRecovery ? stored.filter((m) => m.role === "user") : stored,
  });
}

/**
 * The run's status and summary for the store. The store's statuses predate `max_steps`: such a run
 * is stored `failed` with the detail `max_steps`.
 */
function storedEnd(state: RunState): [FinalRunStatus, RunSummary] {
  const usage = state.totalUsage();
  const model = state.modelResolved ? state.modelName() : undefined;
  const summary: RunSummary = {
    ...(model && state.steps > 0 ? { model } : {}),
    ...(usage ? { usage: storedUsage(usage) } : {}),
    ...(state.outcome === "max_steps" ? { detail: "max_steps" } : {}),
    ...(state.error ? { errorKind: state.error.kind } : {}),
  };
  return [state.outcome === "max_steps" ? "failed" : state.outcome, summary];
}

function storedUsage(usage: ModelUsage): RunUsage {
  return {
    ...(usage.inputTokens === undefined ? {} : { inputTokens: usage.inputTokens }),
    ...(usage.outputTokens === undefined ? {} : { outputTokens: usage.outputTokens }),
    ...(usage.totalTokens === undefined ? {} : { totalTokens: usage.totalTokens }),
  };
}

function result(state: RunState, sessionId: string): RunResult {
  const usage = state.totalUsage();
  return {
    sessionId,
    runId: state.runId,
    outcome: state.outcome,
    reply: state.reply,
    ...(state.blockedBy ? { blockedBy: state.blockedBy } : {}),
    steps: state.totalSteps(),
    ...(usage ? { usage } : {}),
    ...(state.children.length ? { children: state.children } : {}),
    durationMs: state.durationMs(),
    ...(state.error === undefined ? {} : { error: state.error }),
    permissionDenials: [...state.permissionDenials],
  };
}

async function openSession(deps: RuntimeDeps, input: RunInput): Promise<{ session: Session; created: boolean }> {
  const { store } = deps;
  const existing = input.sessionId
    ? await store.getSession(input.sessionId)
    : input.sessionKey
      ? await store.getSessionByKey(input.sessionKey)
      : undefined;
  if (existing) return { session: existing, created: false };
  try {
    const session = await store.createSession({
      ...(input.sessionId ? { id: input.sessionId } : {}),
      key: input.sessionKey ?? null,
    });
    return { session, created: true };
  } catch (error) {
    // Another process created it between our look-up and our insert.
    const raced = input.sessionId ? await store.getSession(input.sessionId) : undefined;
    if (raced) return { session: raced, created: false };
    throw error;
  }
}

/** /reset: the old session ends and a new one with the same key starts. */
async function resetSession(deps: RuntimeDeps, old: Session, model: string): Promise<string> {
  const { engine, store } = deps;
  await engine.emit("before_reset", { sessionId: old.id, reason: "reset" });
  await engine.emit("session_end", { sessionId: old.id, reason: "reset" });
  const fresh = await store.createSession({ key: old.key ?? old.id, id: randomUUID() });
  deps.sessionsOpened.add(fresh.id);
  await engine.emit("session_start", { sessionId: fresh.id, source: "clear", model });
  return fresh.id;
}

/** Each tool as published, computed once per tool object: deriving JSON Schema from zod took ~15 µs a run. */
const published = new WeakMap<Tool, LanguageModelV3FunctionTool>();

/** The tools as the model sees them: a tool's own JSON Schema (MCP) or one derived from its zod schema. */
function publishTools(tools: readonly Tool[]): LanguageModelV3FunctionTool[] {
  return tools.map((tool) => {
    let entry = published.get(tool);
    if (!entry) {
      entry = tool.jsonSchema
        ? {
            type: "function",
            name: tool.name,
            description: tool.description,
            inputSchema: tool.jsonSchema as JSONSchema7,
          }
        : (toModelTools([tool])[0] as LanguageModelV3FunctionTool);
      published.set(tool, entry);
    }
    return entry;
  });
}

/** Configured tools, narrowed by `toolsAllow`; a sub-agent at the depth limit loses `Agent`. */
function availableTools(deps: RuntimeDeps, state: RunState, depth: number): ReadonlyMap<string, Tool> {
  const allow = state.toolsAllow;
  const agent = deps.tools.get("Agent") as (Tool & { maxDepth?: number }) | undefined;
  const nestingAllowed = agent?.maxDepth === undefined || depth + 1 <= agent.maxDepth;
  if (!allow && nestingAllowed) return deps.tools;
  return new Map(
    [...deps.tools].filter(([name]) => (!allow || allow.includes(name)) && (name !== "Agent" || nestingAllowed)),
  );
}

const deprecationWarned = new WeakSet<RuntimeDeps>();
function warnDeprecated(deps: RuntimeDeps): void {
  if (deprecationWarned.has(deps)) return;
  deprecationWarned.add(deps);
  const plugins = new Set(deps.engine.registrations("before_agent_start").map((r) => r.pluginId));
  for (const id of plugins)
    deps.logger.warn(
      `plugin ${id} uses before_agent_start, which is deprecated: use before_model_resolve and before_prompt_build`,
    );
}

/** The caller's trace context as given (the run's spans are its children), or a new trace when there is none or it is malformed. */
function continuedTraceparent(incoming: string | undefined): string {
  const valid = incoming !== undefined && /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/.test(incoming);
  return valid ? incoming : newTraceparent();
}

/** A model call's failure names its provider and status; anything else is Gatehouse's own. */
function runErrorOf(error: unknown, state: RunState): RunError {
  if (!(error instanceof ModelCallFailure)) return internalRunError(error);
  const { provider, modelId } = state.model;
  return modelRunError(error.cause, { provider, model: modelId, attempts: error.attempts });
}
