import type { Part } from "../../core/message.js";
import type { Attribution } from "../../hooks/types.js";
import type { CollectedResponse, CollectedToolCall } from "../../models/collect.js";
import { loadShellParser, withRealPath } from "../../permissions/index.js";
import type { Tool, ToolContext } from "../../tools/types.js";
import type { RuntimeDeps } from "../deps.js";
import { notices } from "../notices.js";
import { modelReadText } from "../prompt.js";
import type { RunState } from "../state.js";
import type { ChildRunSummary, PermissionDenial } from "../types.js";
import { recordSandboxRefusal, settlePermission, settleSandboxHost } from "./approvals.js";
import { applyBlock } from "./block.js";
import { outbox } from "./outbox.js";
import { writeAssistant } from "./output.js";
import { storeAttachments, writeMessage } from "./persist.js";

/**
 * The tool door (docs/lifecycle.md, step 8d–8f). A call runs only past `before_tool_call` (and an
 * approval when one is asked); its output, success or failure, reaches the model, the store,
 * the terminal and later hooks only past `after_tool_call` (command hooks `PostToolUse` and
 * `PostToolUseFailure`), which may rewrite or withhold it. The model's message is stored after
 * its calls were decided, each call with the input it ran with — a rewrite's, or a placeholder
 * for a call that did not run — so an input a policy refused is never written anywhere.
 */

/** The stored input of a call that did not run (blocked, denied, unknown or malformed). */
export const NOT_RUN_INPUT: Readonly<Record<string, never>> = Object.freeze({});

interface ToolOutcome {
  readonly output: unknown;
  readonly isError: boolean;
  readonly withheld?: boolean;
  readonly additionalContext?: string;
}

/** Each call that started, by id: the input it runs with. */
type Started = Map<string, unknown>;

/**
 * Runs the tool calls of one model step, then stores the step's assistant message and the
 * results, in call order. Calls run concurrently only when every tool of the step says it may;
 * a run that stops waits for all of them, so no call (or sub-agent run) goes on after its run.
 * A run that stops mid-step still stores the message (the calls that started did run), and its
 * end answers or removes the calls left without a result.
 */
export async function runToolCalls(
  deps: RuntimeDeps,
  state: RunState,
  response: Pick<CollectedResponse, "parts" | "toolCalls">,
  available: ReadonlyMap<string, Tool>,
): Promise<void> {
  const calls = response.toolCalls;
  const parallel = calls.length > 1 && calls.every((c) => available.get(c.toolName)?.parallel === true);
  const started: Started = new Map();
  const outcomes: ToolOutcome[] = [];
  try {
    if (parallel) {
      const settled = await Promise.allSettled(
        calls.map((call) => runToolCall(deps, state, call, available.get(call.toolName), started)),
      );
      for (const s of settled) {
        if (s.status === "rejected") throw s.reason;
        outcomes.push(s.value);
      }
    } else
      for (const call of calls)
        outcomes.push(await runToolCall(deps, state, call, available.get(call.toolName), started));
  } catch (error) {
    await writeAssistant(deps, state, asRan(response.parts, started)).catch(() => undefined);
    throw error;
  }
  await writeAssistant(deps, state, asRan(response.parts, started));
  // What later hooks see of each call is what was stored: the model reads nothing else.
  const stored: ToolOutcome[] = [];
  for (const [i, call] of calls.entries())
    stored.push(await storeResult(deps, state, call, outcomes[i] as ToolOutcome));
  const interrupted = state.interruptedBy;
  if (interrupted) {
    // A permission deny with `interrupt`: the run ends here, its notice delivered like any block's.
    const by = { hook: "permission_request", pluginId: interrupted.decidedBy, cause: "decision" } as const;
    const notice = notices.permissionInterrupted(interrupted.toolName, interrupted.decidedBy);
    await applyBlock(deps, state, { kind: "reply", by, notice });
    return;
  }
  // A hook already ended the run (`continue: false`): as in Claude Code, no PostToolBatch follows.
  if (deps.engine.hasHooks("after_tool_batch") && !state.stopRequest)
    await afterBatch(deps, state, calls, stored, started);
}

/**
 * `after_tool_batch` (Claude Code's PostToolBatch): sees the step's calls as the model will read
 * them; may add model-only context for the rest of the run, or end the run after this step.
 */
async function afterBatch(
  deps: RuntimeDeps,
  state: RunState,
  calls: readonly CollectedToolCall[],
  outcomes: readonly ToolOutcome[],
  started: Started,
): Promise<void> {
  const batch = await deps.engine.emit("after_tool_batch", {
    calls: calls.map((call, i) => ({
      toolName: call.toolName,
      // As stored: the input each call ran with, or none for a call that did not run.
      params: started.has(call.toolCallId) ? started.get(call.toolCallId) : NOT_RUN_INPUT,
      toolCallId: call.toolCallId,
      output: outcomes[i]?.output,
      isError: outcomes[i]?.isError ?? true,
      modelText: modelReadText(outcomes[i]?.output, outcomes[i]?.isError ?? true, deps.tools.get(call.toolName)),
    })),
  });
  state.signal.throwIfAborted();
  noteStop(state, batch);
  if (batch.result.additionalContext) {
    const attachment = { type: "hook_additional_context", hookEvent: "PostToolBatch" } as const;
    state.addContext("append", batch.result.additionalContext, attachment);
    await storeAttachments(deps, state);
  }
}

/**
 * `permission_denied` (Claude Code's PermissionDenied): its handlers see every denial, whoever
 * decided; a `retry` adds a line telling the model it may try again. The call stays denied.
 */
async function permissionDenied(
  deps: RuntimeDeps,
  state: RunState,
  params: unknown,
  denial: PermissionDenial,
  message: string,
): Promise<string> {
  if (!deps.engine.hasHooks("permission_denied")) return message;
  const hooked = await deps.engine.emit("permission_denied", {
    toolName: denial.toolName,
    params,
    toolCallId: denial.toolCallId,
    permissionMode: deps.permissions.mode,
    reason: message,
    deniedBy: denial.reason,
    ...(denial.rule === undefined ? {} : { rule: denial.rule }),
    ...(denial.source === undefined ? {} : { source: denial.source }),
  });
  state.signal.throwIfAborted();
  return hooked.result.retry ? `${message} ${notices.permissionRetry}` : message;
}

/** What the model (and the user) read for a denied call. */
function denialNotice(d: PermissionDenial): string {
  const asked = d.reason === "user" || d.reason === "timeout" || d.reason === "threw";
  if (asked) return notices.approvalDenied(d.toolName);
  if (d.reason === "rule" && d.rule !== undefined && d.ruleId?.includes(".deny.") !== false)
    return denyRuleNotice(d.toolName, d.rule);
  return notices.permissionDenied(d.toolName, denialText(d));
}

/**
 * A deny rule's refusal as Claude Code words it to the model, without the call's input (Claude Code
 * quotes a Bash command or an edited path; a refused call's input is kept nowhere here). The rule
 * and its source are the person's to read: `run`'s text output, `--json`, the audit trail.
 */
function denyRuleNotice(toolName: string, rule: string): string {
  if (toolName === "Read") return notices.readDenied;
  const open = rule.indexOf("(");
  return notices.ruleDenied(toolName, open > 0 && rule.endsWith(")") ? rule.slice(open + 1, -1) : undefined);
}

/** Why a call was denied, in words the user and the model may read: the rule and its source, or the mode. */
export function denialText(d: PermissionDenial): string {
  const from = d.source === "flag" ? d.file : `${d.source} settings`;
  const rule = d.rule === undefined ? "" : `rule ${d.rule} from ${from}`;
  switch (d.reason) {
    case "rule":
      return rule || `${d.mode} mode`;
    case "mode":
      return `${d.mode} mode`;
    case "hook":
      return `a permission hook (${d.decidedBy})`;
    case "nobody":
      return `${rule ? `${rule} asks` : `it needs approval in ${d.mode} mode`}, and no one can be asked here`;
    case "user":
      return "the user said no";
    default:
      return "no answer to the permission ask";
  }
}

/** The model's parts with each call's input as it ran, or the placeholder for a call that did not. */
function asRan(parts: readonly Part[], started: Started): Part[] {
  return parts.map((part) => {
    if (part.type !== "tool_call") return part;
    const input = started.has(part.toolCallId) ? started.get(part.toolCallId) : NOT_RUN_INPUT;
    return input === part.input ? part : { ...part, input };
  });
}

/**
 * One call: before_tool_call (may rewrite, block or ask for approval) → approval → execute
 * unless blocked → after_tool_call (may rewrite or withhold the output or the failure). A
 * blocked call never runs and gets no after_tool_call; a withheld output is replaced by a notice
 * before it reaches the model, the store, the event stream or any later hook.
 */
async function runToolCall(
  deps: RuntimeDeps,
  state: RunState,
  call: CollectedToolCall,
  tool: Tool | undefined,
  started: Started,
): Promise<ToolOutcome> {
  const { engine } = deps;
  const { toolName, toolCallId } = call;
  if (!tool) {
    const message = deps.tools.has(toolName) ? notices.toolNotAllowed(toolName) : notices.unknownTool(toolName);
    outbox(deps, state).emitText({ type: "tool-blocked", toolCallId, toolName, message });
    return { output: message, isError: true };
  }
  // A hook ended the run earlier in this step: the calls after it do not start.
  if (state.stopRequest) {
    const message = notices.notRunAfterStop(toolName);
    outbox(deps, state).emitText({ type: "tool-blocked", toolCallId, toolName, message });
    return { output: message, isError: true };
  }
  const childRuns: string[] = [];
  const sessionEnv = deps.sessionEnv.get(state.sessionId);
  const ctx: ToolContext = {
    signal: state.signal,
    cwd: deps.config.cwd,
    onChildRun: (id) => childRuns.push(id),
    onChildRunEnded: (child) => state.addChild(child as ChildRunSummary),
    toolCallId,
    sessionId: state.sessionId,
    ...(sessionEnv === undefined ? {} : { env: sessionEnv }),
    // A search of a folder leaves out the files a Read deny rule names (as Claude Code applies Read
    // rules to Grep and Glob); without such a rule no file is checked.
    ...(deps.permissions.hasDenyRules("Read", state.sessionId)
      ? { readable: (file: string) => denyRuleOf(deps, "Read", { file_path: file }, state.sessionId) === undefined }
      : {}),
    askNetwork: (host, port) => settleSandboxHost(deps, state, toolCallId, host, port),
    sandboxRefused: (kind) => recordSandboxRefusal(deps, state, kind),
  };
  let params = parseInput(tool, call, ctx);
  if (params instanceof InvalidInput) return { output: params.message, isError: true };
  // What is stored: the model's own input, unless a policy rewrote it.
  let stored: unknown = call.input;
  const { permissions } = deps;
  const notRun = (message: string): ToolOutcome => {
    outbox(deps, state).emitText({ type: "tool-blocked", toolCallId, toolName, message });
    return { output: message, isError: true };
  };
  const denied = async (denial: PermissionDenial, message?: string) =>
    notRun(await permissionDenied(deps, state, params, denial, message ?? denialNotice(denial)));

  // A Bash line is read by a parser that loads once, asynchronously; before it has, no line can be read.
  if (toolName === "Bash") await loadShellParser();
  // Deny rules come first, in every mode: no hook that could let it through sees a call a rule refuses.
  const denyRule = denyRuleOf(deps, toolName, ruleInput(stored, params), state.sessionId);
  if (denyRule) {
    const decision = { behavior: "deny", rule: denyRule, by: "rule" } as const;
    const outcome = await settlePermission(deps, state, { toolName, toolCallId, params, decision });
    if (!outcome.allowed) return await denied(outcome.denial);
  }

  const pre = await engine.emit("before_tool_call", { toolName, params, toolCallId });
  state.signal.throwIfAborted();
  noteStop(state, pre);
  if (pre.result.block) {
    const by = pre.decidedBy as NonNullable<typeof pre.decidedBy>;
    const { blockReason: reason, blockMessage: message } = pre.result;
    const block = { kind: "tool-call", by, toolName, toolCallId, reason, ...(message ? { message } : {}) } as const;
    return { output: await applyBlock(deps, state, block), isError: true };
  }
  if (pre.result.params !== undefined) {
    const rewritten = tool.inputSchema.safeParse(pre.result.params);
    if (!rewritten.success) return { output: `Invalid input for ${toolName} after a policy rewrite.`, isError: true };
    params = rewritten.data;
    stored = params;
  }
  // Then the allow and ask rules and the mode, with what the hooks said (a rewrite meets the deny rules again).
  const approval = pre.result.requireApproval;
  // A hook's requireApproval is an ask that another hook's allow cannot loosen.
  const hookSaid = approval ? "ask" : pre.result.permissionDecision;
  const decision = permissions.decide(toolName, ruleInput(stored, params), hookSaid, state.sessionId);
  const permission = await settlePermission(deps, state, {
    toolName,
    toolCallId,
    params,
    decision,
    ...(approval ? { approval } : {}),
  });
  if (!permission.allowed) {
    if (permission.interrupt) state.interrupt(permission.denial);
    if (permission.final) return notRun(permission.message ?? denialNotice(permission.denial));
    return await denied(permission.denial, permission.message);
  }
  if (permission.params !== undefined) {
    const updated = tool.inputSchema.safeParse(permission.params);
    if (!updated.success) return { output: `Invalid input for ${toolName} after a permission hook.`, isError: true };
    params = updated.data;
    stored = params;
  }

  outbox(deps, state).emitText({ type: "tool-call", toolCallId, toolName, input: params });
  started.set(toolCallId, stored);
  const startedAt = performance.now();
  let result: unknown;
  let error: string | undefined;
  try {
    result = await tool.execute(params, ctx);
  } catch (thrown) {
    state.signal.throwIfAborted();
    error = thrown instanceof Error ? thrown.message : String(thrown);
  }
  // Secrets masked by value (src/core/secret-values.ts) before any hook, the model or the store reads the output.
  const secrets = deps.secretsOf(state.sessionId);
  if (secrets.size > 0) {
    result = secrets.maskDeep(result);
    if (error !== undefined) error = secrets.mask(error);
  }
  if (deps.logger.debugEnabled === true)
    deps.logger.debug(
      `tool call: ${toolName} (${toolCallId}) ${error === undefined ? "done" : "failed"} in ${Math.round(performance.now() - startedAt)} ms`,
    );
  const post = await engine.emit("after_tool_call", {
    toolName,
    params,
    toolCallId,
    ...(error === undefined ? { result } : { error }),
    durationMs: performance.now() - startedAt,
  });
  state.signal.throwIfAborted();
  noteStop(state, post);
  const context = post.result.additionalContext === undefined ? undefined : secrets.mask(post.result.additionalContext);
  const extra = context === undefined ? {} : { additionalContext: context };
  if (post.result.block) {
    const by = post.decidedBy as NonNullable<typeof post.decidedBy>;
    const block = { kind: "tool-output", by, toolName, childRuns, reason: post.result.blockReason } as const;
    return { output: await applyBlock(deps, state, block), isError: false, withheld: true, ...extra };
  }
  // A hook's rewrite is masked too: a plugin may have read a file or a variable the tool was not given.
  if (post.result.result !== undefined)
    return { output: secrets.maskDeep(post.result.result), isError: false, ...extra };
  return error === undefined
    ? { output: result, isError: false, ...extra }
    : { output: error, isError: true, ...extra };
}

/**
 * What permission rules read: the parsed input, plus the top-level fields the model sent that
 * the tool's schema dropped. A parameter rule compares the literal input (`Agent(model:opus)`
 * denies a call that asks for opus even where the tool ignores `model`), as in Claude Code.
 */
function ruleInput(literal: unknown, params: unknown): unknown {
  const isRecord = (v: unknown): v is Record<string, unknown> =>
    typeof v === "object" && v !== null && !Array.isArray(v);
  return isRecord(literal) && isRecord(params) && literal !== params ? { ...literal, ...params } : params;
}

/** The deny rule that covers the call, its path taken as given or through symbolic links. */
function denyRuleOf(deps: RuntimeDeps, toolName: string, input: unknown, sessionId: string) {
  for (const form of withRealPath(input)) {
    const rule = deps.permissions.denyRule(toolName, form, sessionId);
    if (rule) return rule;
  }
  return undefined;
}

/** A tool hook's `stopRun`: the run ends once this step's calls are done (run.ts, then `applyBlock`). */
function noteStop(
  state: RunState,
  outcome: { readonly result: { readonly stopRun?: { readonly message?: string } }; readonly stoppedBy?: Attribution },
): void {
  if (outcome.result.stopRun === undefined || outcome.stoppedBy === undefined) return;
  state.requestStop({ by: outcome.stoppedBy, message: outcome.result.stopRun.message });
}

/** A call whose input the tool's schema refused: `message` is what the model reads. */
export class InvalidInput {
  constructor(readonly message: string) {}
}

/** The model's input, validated by the tool's schema and normalized as hooks and the tool see it. */
export function parseInput(tool: Tool, call: CollectedToolCall, ctx: ToolContext): unknown {
  if (call.inputError !== undefined) return new InvalidInput(`The ${call.toolName} arguments were not valid JSON.`);
  const parsed = tool.inputSchema.safeParse(call.input);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".") || "(input)"}: ${i.message}`).join("; ");
    return new InvalidInput(`Invalid input for ${call.toolName}: ${problems}`);
  }
  return tool.normalizeInput ? tool.normalizeInput(parsed.data, ctx) : parsed.data;
}

function resultPart(call: CollectedToolCall, output: unknown, isError: boolean): Part {
  return {
    type: "tool_result",
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    output,
    ...(isError ? { isError: true } : {}),
  };
}

/** Stores a call's result through the persistence hooks; returns the result as stored (or the notice, when nothing was). */
async function storeResult(
  deps: RuntimeDeps,
  state: RunState,
  call: CollectedToolCall,
  outcome: ToolOutcome,
): Promise<ToolOutcome> {
  const { toolName, toolCallId } = call;
  const parts: Part[] = [resultPart(call, outcome.output, outcome.isError)];
  if (outcome.additionalContext) parts.push({ type: "text", text: outcome.additionalContext });
  const stored = await writeMessage(deps, state, { role: "tool", parts }, () => ({
    role: "tool",
    parts: [resultPart(call, notices.resultNotStored, true)],
  }));
  const storedResult = stored?.parts.find((p) => p.type === "tool_result");
  // Nothing stored (the gates kept the result and its replacement out): the user is told so, not shown the output.
  const kept =
    storedResult?.type === "tool_result"
      ? { output: storedResult.output, isError: storedResult.isError === true }
      : { output: notices.resultNotStored, isError: true };
  outbox(deps, state).emitText({
    type: "tool-result",
    toolCallId,
    toolName,
    output: kept.output,
    isError: outcome.isError,
    withheld: outcome.withheld === true,
  });
  return { ...outcome, ...kept };
}

/**
 * A run that stopped between a tool call and its result would leave history the providers
 * reject; each unanswered call gets an error result saying the run ended. (With an output gate
 * the calls go with the run's unchecked output instead.)
 */
export async function closeDanglingToolCalls(deps: RuntimeDeps, state: RunState): Promise<void> {
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
    await outbox(deps, state)
      .store.appendMessage({
        sessionId: state.sessionId,
        runId: state.runId,
        role: "tool",
        parts: [{ type: "tool_result", toolCallId: call.toolCallId, toolName: call.toolName, output, isError: true }],
      })
      .catch((error: unknown) => deps.logger.warn(`could not close tool call: ${(error as Error).name}`));
  }
}
