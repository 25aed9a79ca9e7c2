import type { Part } from "../core/message.js";
import type { CollectedToolCall } from "../models/collect.js";
import type { Tool, ToolContext } from "../tools/types.js";
import { requestApproval } from "./approvals.js";
import type { RuntimeDeps } from "./deps.js";
import { notices } from "./notices.js";
import { writeMessage } from "./persist.js";
import type { RunState } from "./state.js";

interface ToolOutcome {
  readonly output: unknown;
  readonly isError: boolean;
  readonly withheld?: boolean;
  readonly additionalContext?: string;
}

/**
 * Runs the tool calls of one model step and stores their results, in call order. Calls run
 * concurrently only when every tool of the step says it may; a run that stops waits for all of
 * them, so no call (or sub-agent run) goes on after its run ended.
 */
export async function runToolCalls(
  deps: RuntimeDeps,
  state: RunState,
  calls: readonly CollectedToolCall[],
  available: ReadonlyMap<string, Tool>,
): Promise<void> {
  const parallel = calls.length > 1 && calls.every((c) => available.get(c.toolName)?.parallel === true);
  const outcomes: ToolOutcome[] = [];
  if (parallel) {
    const settled = await Promise.allSettled(
      calls.map((call) => runToolCall(deps, state, call, available.get(call.toolName))),
    );
    for (const s of settled) {
      if (s.status === "rejected") throw s.reason;
      outcomes.push(s.value);
    }
  } else for (const call of calls) outcomes.push(await runToolCall(deps, state, call, available.get(call.toolName)));
  for (const [i, call] of calls.entries()) await storeResult(deps, state, call, outcomes[i] as ToolOutcome);
}

/**
 * DESIGN §3 step 8e for one call: before_tool_call (may rewrite, block or ask for approval) →
 * approval → execute unless blocked → after_tool_call (may rewrite or withhold the output).
 * A blocked call never runs and gets no after_tool_call; a withheld output is replaced by a
 * notice before it reaches the model, the store, the event stream or any later hook.
 */
async function runToolCall(
  deps: RuntimeDeps,
  state: RunState,
  call: CollectedToolCall,
  tool: Tool | undefined,
): Promise<ToolOutcome> {
  const { engine } = deps;
  const { toolName, toolCallId } = call;
  if (!tool) {
    const message = deps.tools.has(toolName) ? notices.toolNotAllowed(toolName) : notices.unknownTool(toolName);
    state.emit({ type: "tool-blocked", toolCallId, toolName, message });
    return { output: message, isError: true };
  }
  const childRuns: string[] = [];
  const ctx: ToolContext = {
    signal: state.signal,
    cwd: deps.config.cwd,
    onChildRun: (id) => childRuns.push(id),
    toolCallId,
  };
  let params = parseInput(tool, call, ctx);
  if (params instanceof InvalidInput) return { output: params.message, isError: true };

  const pre = await engine.emit("before_tool_call", { toolName, params, toolCallId });
  state.signal.throwIfAborted();
  if (pre.result.block) {
    const by = pre.decidedBy as NonNullable<typeof pre.decidedBy>;
    const message = notices.toolBlocked(toolName, by.pluginId, pre.result.blockReason);
    state.emit({ type: "tool-blocked", toolCallId, toolName, message });
    return { output: message, isError: true };
  }
  if (pre.result.params !== undefined) {
    const rewritten = tool.inputSchema.safeParse(pre.result.params);
    if (!rewritten.success) return { output: `Invalid input for ${toolName} after a policy rewrite.`, isError: true };
    params = rewritten.data;
  }
  const approval = pre.result.requireApproval;
  if (approval) {
    const allowed = await requestApproval(deps, state, { toolName, toolCallId, params, ...approval });
    if (!allowed) {
      const message = notices.approvalDenied(toolName);
      state.emit({ type: "tool-blocked", toolCallId, toolName, message });
      return { output: message, isError: true };
    }
  }

  state.emit({ type: "tool-call", toolCallId, toolName, input: params });
  const started = performance.now();
  let result: unknown;
  let error: string | undefined;
  try {
    result = await tool.execute(params, ctx);
  } catch (thrown) {
    state.signal.throwIfAborted();
    error = thrown instanceof Error ? thrown.message : String(thrown);
  }
  const post = await engine.emit("after_tool_call", {
    toolName,
    params,
    toolCallId,
    ...(error === undefined ? { result } : { error }),
    durationMs: performance.now() - started,
  });
  state.signal.throwIfAborted();
  const context = post.result.additionalContext;
  const extra = context === undefined ? {} : { additionalContext: context };
  if (post.result.block) {
    const by = post.decidedBy as NonNullable<typeof post.decidedBy>;
    const notice = notices.toolWithheld(toolName, by.pluginId, post.result.blockReason);
    // A sub-agent's answer is stored in its own session too: the withheld output goes there as well.
    for (const runId of childRuns) await deps.store.blockRun(runId, { notice, blockedBy: by.pluginId, hook: by.hook });
    return {
      output: notice,
      isError: false,
      withheld: true,
      ...extra,
    };
  }
  if (post.result.result !== undefined) return { output: post.result.result, isError: false, ...extra };
  return error === undefined
    ? { output: result, isError: false, ...extra }
    : { output: error, isError: true, ...extra };
}

class InvalidInput {
  constructor(readonly message: string) {}
}

function parseInput(tool: Tool, call: CollectedToolCall, ctx: ToolContext): unknown {
  if (call.inputError !== undefined) return new InvalidInput(`The ${call.toolName} arguments were not valid JSON.`);
  const parsed = tool.inputSchema.safeParse(call.input);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".") || "(input)"}: ${i.message}`).join("; ");
    return new InvalidInput(`Invalid input for ${call.toolName}: ${problems}`);
  }
  return tool.normalizeInput ? tool.normalizeInput(parsed.data, ctx) : parsed.data;
}

async function storeResult(deps: RuntimeDeps, state: RunState, call: CollectedToolCall, outcome: ToolOutcome) {
  const { toolName, toolCallId } = call;
  const resultPart = (output: unknown, isError: boolean): Part => ({
    type: "tool_result",
    toolCallId,
    toolName,
    output,
    ...(isError ? { isError: true } : {}),
  });
  const parts: Part[] = [resultPart(outcome.output, outcome.isError)];
  if (outcome.additionalContext) parts.push({ type: "text", text: outcome.additionalContext });
  const stored = await writeMessage(deps, state, { role: "tool", parts }, () => ({
    role: "tool",
    parts: [resultPart("[This tool result was not stored by policy.]", true)],
  }));
  const storedResult = stored?.parts.find((p) => p.type === "tool_result");
  state.emit({
    type: "tool-result",
    toolCallId,
    toolName,
    output: storedResult?.type === "tool_result" ? storedResult.output : outcome.output,
    isError: outcome.isError,
    withheld: outcome.withheld === true,
  });
}
