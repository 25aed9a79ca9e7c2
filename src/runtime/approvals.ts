import type { RuntimeDeps } from "./deps.js";
import type { RunState } from "./state.js";
import type { ApprovalDecision } from "./types.js";

export interface ApprovalAsk {
  readonly toolName: string;
  readonly toolCallId: string;
  readonly params: unknown;
  readonly title: string;
  readonly description?: string;
  readonly timeoutMs?: number;
}

/**
 * Pauses a tool call until the approver answers. No approver, no answer in time, an approver
 * that fails, or a cancelled run: all deny. "allow-always" is remembered for the session.
 */
export async function requestApproval(deps: RuntimeDeps, state: RunState, ask: ApprovalAsk): Promise<boolean> {
  const remembered = deps.alwaysAllowed.get(state.sessionId);
  if (remembered?.has(ask.toolName)) return true;
  state.emit({ type: "approval-requested", toolCallId: ask.toolCallId, toolName: ask.toolName, title: ask.title });
  await deps.engine.emit("notification", { kind: "approval", message: ask.title });
  if (!deps.approver) return false;
  // A referenced timer (AbortSignal.timeout's is not): a pending approval keeps the process alive.
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), ask.timeoutMs ?? deps.config.approvalTimeoutMs);
  const signal = AbortSignal.any([state.signal, timeout.signal]);
  let decision: ApprovalDecision;
  try {
    decision = await Promise.race([
      deps.approver(
        {
          sessionId: state.sessionId,
          runId: state.runId,
          toolName: ask.toolName,
          toolCallId: ask.toolCallId,
          params: ask.params,
          title: ask.title,
          ...(ask.description === undefined ? {} : { description: ask.description }),
        },
        signal,
      ),
      new Promise<ApprovalDecision>((resolve) =>
        signal.addEventListener("abort", () => resolve("deny"), { once: true }),
      ),
    ]);
  } catch {
    decision = "deny";
  } finally {
    clearTimeout(timer);
  }
  if (decision === "allow-always") {
    if (remembered) remembered.add(ask.toolName);
    else deps.alwaysAllowed.set(state.sessionId, new Set([ask.toolName]));
  }
  return decision === "allow-once" || decision === "allow-always";
}
