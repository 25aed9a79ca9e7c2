import { randomUUID } from "node:crypto";
import type { JSONSchema7, LanguageModelV3FunctionTool } from "@ai-sdk/provider";
import type { Part } from "../core/message.js";
import { childRunContext, newTraceparent, type RunContext, runWithContext } from "../hooks/run-context.js";
import { sanitizeLogLine } from "../hooks/sanitize.js";
import type { MergedResult } from "../hooks/types.js";
import { toModelTools } from "../models/tools.js";
import type { Session } from "../store/types.js";
import type { Tool } from "../tools/types.js";
import { compact } from "./compaction.js";
import type { RuntimeDeps } from "./deps.js";
import type { EventSink } from "./events.js";
import { askForRevision } from "./finalize.js";
import { callModel } from "./model-step.js";
import { notices } from "./notices.js";
import { deliver, gateResponse } from "./output.js";
import { type Draft, draftMessage, writeMessage } from "./persist.js";
import { RunState } from "./state.js";
import { runToolCalls } from "./tool-calls.js";
import type { RunInput, RunOutcome, RunResult } from "./types.js";
import { discardUncheckedOutput, recoverInterruptedRuns } from "./unchecked.js";

/**
 * One run = one user turn, in the order of DESIGN §3. Each step below is one function; a step
 * that ends the turn (a slash command, a claim, a block) returns false and the run goes
 * straight to its end (step 13), which always happens once the run was admitted.
 */
export async function executeRun(
  deps: RuntimeDeps,
  input: RunInput,
  emit: EventSink,
  child?: ChildPlacement,
): Promise<RunResult> {
  const signal = input.signal ?? new AbortController().signal;
  // 0. Admission: the session, its run lock (one run per session, across processes), a run id.
  const { session, created } = child ? { session: child.session, created: true } : await openSession(deps, input);
  const lock = await deps.store.acquireRunLock(session.id, { signal });
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
    );
    if (input.priorMessages?.length) state.priorMessages = input.priorMessages;
    if (input.model !== undefined) state.modelSpec = input.model;
    if (child?.context) state.context.append.push(child.context);
    // A cancelled run does not wait out its hooks' timeouts.
    const cancelHooks = () => deps.engine.cancelRun(run.id);
    signal.addEventListener("abort", cancelHooks, { once: true });
    try {
      return await runWithContext(context, () => lifecycle(deps, state, session, created, context));
    } finally {
      signal.removeEventListener("abort", cancelHooks);
    }
  } finally {
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
  state.emit({ type: "run-start", sessionId, runId: state.runId });
  try {
    state.model = await deps.models.resolve(
      state.modelSpec === undefined ? undefined : { modelOverride: state.modelSpec },
    );
    state.setHistory(await deps.store.history(sessionId));
    // Hooks nobody listens to are not awaited: each await is a promise, and every promise pays the run
    // context's async hooks.
    if (created && engine.hasHooks("session_start"))
      await engine.emit("session_start", { sessionId, source: "startup" });
    // 1.
    if (engine.hasHooks("message_received"))
      await engine.emit("message_received", { content: state.prompt, channel: context.channel });
    if (engine.hasHooks("inbound_claim") && (await claimInbound(deps, state, context))) return result(state, sessionId);
    // 2. Slash commands answer the turn themselves; no agent hook fires for them.
    const command = deps.commands.parse(state.prompt);
    if (command) {
      const reply = await deps.commands.run(command.name, command.args, {
        deps,
        state,
        resetSession: async () => {
          sessionId = await resetSession(deps, session);
          return sessionId;
        },
      });
      state.reply = reply ?? null;
      if (reply !== undefined) state.emit({ type: "final", text: reply });
      return result(state, sessionId);
    }
    // 3.
    if (engine.hasHooks("before_agent_reply") && (await claimTurn(deps, state))) return result(state, sessionId);
    // 4–6.
    await prepareTurn(deps, state);
    // 7.
    if (!(await admitPrompt(deps, state))) return result(state, sessionId);
    // 8–9.
    await agentLoop(deps, state, context.depth);
    // 10–12.
    await gateResponse(deps, state);
    if (state.outcome !== "blocked") await deliver(deps, state);
  } catch (error) {
    state.outcome = state.signal.aborted ? "cancelled" : "failed";
    state.reply = null;
    if (state.outcome === "failed") state.error = describeFailure(error);
    if (!outputGated(deps)) await closeDanglingToolCalls(deps, state);
    else if (!(await discardUncheckedOutput(deps, state))) state.leftForRecovery = true;
  } finally {
    // 13.
    await endRun(deps, state);
  }
  return result(state, sessionId);
}

/**
 * 1. `inbound_claim`: a channel plugin may take the message before it becomes an agent turn
 * (not conversation-gated, so it sees only this message). Its reply is delivered as is.
 */
async function claimInbound(deps: RuntimeDeps, state: RunState, context: RunContext): Promise<boolean> {
  if (!deps.engine.hasHooks("inbound_claim")) return false;
  const claim = await deps.engine.emit("inbound_claim", { content: state.prompt, channel: context.channel });
  if (!claim.handled) return false;
  state.outcome = "claimed";
  const reply = claim.result.reply;
  if (reply !== undefined) {
    state.reply = reply;
    await deliver(deps, state);
  }
  return true;
}

/** 3. `before_agent_reply`: a plugin may answer the turn without the model. */
async function claimTurn(deps: RuntimeDeps, state: RunState): Promise<boolean> {
  if (!deps.engine.hasHooks("before_agent_reply")) return false;
  const claim = await deps.engine.emit("before_agent_reply", { cleanedBody: state.prompt.trim() });
  if (!claim.handled) return false;
  state.outcome = "claimed";
  await writeMessage(deps, state, { role: "user", parts: [{ type: "text", text: state.prompt }] });
  const reply = claim.result.reply?.text;
  if (reply === undefined) return true;
  await writeMessage(deps, state, { role: "assistant", parts: [{ type: "text", text: reply }] });
  // A claimed reply is still an answer: the output gates apply to it as to any other.
  await gateResponse(deps, state);
  if ((state.outcome as RunOutcome) !== "blocked") await deliver(deps, state);
  return true;
}

/** 4–6. Model choice, injected context, prompt assembly. Nothing here is stored. */
async function prepareTurn(deps: RuntimeDeps, state: RunState): Promise<void> {
  const { engine } = deps;
  const { prompt } = state;
  let override = engine.hasHooks("before_model_resolve")
    ? (await engine.emit("before_model_resolve", { prompt })).result
    : {};
  state.injections = await deps.store.peekInjections(state.sessionId);
  const { context } = state;
  for (const injection of state.injections) {
    if (injection.placement === "system") context.systemAppend.push(injection.text);
    else context[injection.placement].push(injection.text);
  }
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
    if (result.prependContext) context.prepend.push(result.prependContext);
    if (result.appendContext) context.append.push(result.appendContext);
  }
  for (const hook of ["before_prompt_build", "before_agent_start"] as const) {
    if (!engine.hasHooks(hook)) continue;
    if (hook === "before_agent_start") warnDeprecated(deps);
    const { result }: { result: MergedResult<"before_agent_start"> } = await engine.emit(hook, {
      prompt,
      messages: state.history,
    });
    if (result.systemPrompt !== undefined) context.systemPrompt = result.systemPrompt;
    if (result.prependContext) context.prepend.push(result.prependContext);
    if (result.appendContext) context.append.push(result.appendContext);
    if (result.prependSystemContext) context.systemPrepend.push(result.prependSystemContext);
    if (result.appendSystemContext) context.systemAppend.push(result.appendSystemContext);
    if (result.toolsAllow) {
      const allow = result.toolsAllow;
      state.toolsAllow = state.toolsAllow ? state.toolsAllow.filter((t) => allow.includes(t)) : allow;
    }
    if (!override.modelOverride && !override.providerOverride) {
      override = {
        ...(result.modelOverride === undefined ? {} : { modelOverride: result.modelOverride }),
        ...(result.providerOverride === undefined ? {} : { providerOverride: result.providerOverride }),
      };
    }
  }
  if (override.modelOverride || override.providerOverride) state.model = await deps.models.resolve(override);
}

/**
 * 7. `before_agent_run`: the last word before the model. A block cancels the turn: no model
 * call, no finalize; only a notice is stored in place of the prompt, and queued injections
 * wait for the next run. A pass stores the user's own words (never the injected context).
 */
async function admitPrompt(deps: RuntimeDeps, state: RunState): Promise<boolean> {
  const priors = state.priorMessages.map(
    (m): Draft => ({ role: m.role, parts: [{ type: "text", text: m.text }], metadata: { prior: true } }),
  );
  const gate = await deps.engine.emit("before_agent_run", {
    prompt: state.prompt,
    modelPrompt: state.modelPromptText(),
    messages: priors.length ? [...state.history, ...priors.map((d) => draftMessage(state, d))] : state.history,
    systemPrompt: state.systemPrompt(),
  });
  // A run cancelled while its gate was deciding is cancelled, not blocked.
  state.signal.throwIfAborted();
  if (gate.outcome === "block") {
    const { by } = gate;
    const notice = gate.message ?? notices.promptBlocked(by.pluginId);
    await deps.store.blockPrompt(state.runId, {
      notice,
      blockedBy: by.pluginId,
      hook: by.hook,
      ...(gate.category === undefined ? {} : { category: gate.category }),
    });
    state.outcome = "blocked";
    state.blockedBy = { pluginId: by.pluginId, hook: by.hook, ...(gate.category ? { category: gate.category } : {}) };
    state.reply = notice;
    state.emit({ type: "blocked", hook: by.hook, pluginId: by.pluginId, message: notice });
    return false;
  }
  // The caller's earlier turns, now that the gate has seen them: stored with this run, before its prompt.
  for (const prior of priors) await writeMessage(deps, state, prior);
  await writeMessage(deps, state, { role: "user", parts: [{ type: "text", text: state.prompt }] });
  if (state.injections.length)
    await deps.store.commitInjections(
      state.runId,
      state.injections.map((i) => i.id),
    );
  return true;
}

/** 8–9. Model and tools, step by step, until a final answer that no finalize hook sends back. */
async function agentLoop(deps: RuntimeDeps, state: RunState, depth: number): Promise<void> {
  const tools = availableTools(deps, state, depth);
  const modelTools = publishTools([...tools.values()]);
  const liveText = !outputGated(deps);
  const { compaction, maxSteps } = deps.config;
  while (state.steps < maxSteps) {
    state.signal.throwIfAborted();
    if (state.historyTokens() > compaction.contextTokens) await compact(deps, state, "auto");
    const response = await callModel(deps, state, modelTools, liveText);
    if (response.parts.length) await writeMessage(deps, state, { role: "assistant", parts: response.parts });
    if (response.toolCalls.length) {
      await runToolCalls(deps, state, response.toolCalls, tools);
      continue;
    }
    if (!deps.engine.hasHooks("before_agent_finalize") || !(await askForRevision(deps, state))) return;
  }
}

/** Whether an output gate has a handler: then no output counts until the gates passed it. */
function outputGated(deps: RuntimeDeps): boolean {
  return deps.engine.hasHooks("before_response_emit") || deps.engine.hasHooks("message_sending");
}

/**
 * 13. The run's end: its status, then `agent_end` with the messages as stored after any scrub
 * (and, when the scrub has to wait for recovery, without the output it would remove).
 */
async function endRun(deps: RuntimeDeps, state: RunState): Promise<void> {
  if (!state.leftForRecovery) await deps.store.finishRun(state.runId, state.outcome);
  if (!deps.engine.hasHooks("agent_end")) return;
  const stored = await deps.store.runMessages(state.runId);
  await deps.engine.emit("agent_end", {
    runId: state.runId,
    outcome: state.outcome,
    success: state.outcome === "completed" || state.outcome === "claimed",
    ...(state.error === undefined ? {} : { error: state.error }),
    durationMs: performance.now() - state.startedAt,
    messages: state.leftForRecovery ? stored.filter((m) => m.role === "user") : stored,
  });
}

function result(state: RunState, sessionId: string): RunResult {
  return {
    sessionId,
    runId: state.runId,
    outcome: state.outcome,
    reply: state.reply,
    ...(state.blockedBy ? { blockedBy: state.blockedBy } : {}),
    steps: state.steps,
    ...(state.usage ? { usage: state.usage } : {}),
    durationMs: performance.now() - state.startedAt,
    ...(state.error === undefined ? {} : { error: state.error }),
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
async function resetSession(deps: RuntimeDeps, old: Session): Promise<string> {
  const { engine, store } = deps;
  await engine.emit("before_reset", { sessionId: old.id, reason: "reset" });
  await engine.emit("session_end", { sessionId: old.id, reason: "reset" });
  const fresh = await store.createSession({ key: old.key ?? old.id, id: randomUUID() });
  await engine.emit("session_start", { sessionId: fresh.id, source: "clear" });
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

/**
 * A run that stopped between a tool call and its result would leave history the providers
 * reject; each unanswered call gets an error result saying the run ended. (With an output gate
 * the calls go with the run's unchecked output instead.)
 */
async function closeDanglingToolCalls(deps: RuntimeDeps, state: RunState): Promise<void> {
  const answered = new Set<string>();
  const calls: Part[] = [];
  for (const m of state.runMessages)
    for (const p of m.parts) {
      if (p.type === "tool_result") answered.add(p.toolCallId);
      if (p.type === "tool_call") calls.push(p);
    }
  for (const call of calls) {
    if (call.type !== "tool_call" || answered.has(call.toolCallId)) continue;
    const output = `The run ended (${state.outcome}) before this call finished.`;
    await deps.store
      .appendMessage({
        sessionId: state.sessionId,
        runId: state.runId,
        role: "tool",
        parts: [{ type: "tool_result", toolCallId: call.toolCallId, toolName: call.toolName, output, isError: true }],
      })
      .catch((error: unknown) => deps.logger.warn(`could not close tool call: ${(error as Error).name}`));
  }
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

function describeFailure(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return sanitizeLogLine(text);
}
