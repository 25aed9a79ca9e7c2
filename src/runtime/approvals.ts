import { audit } from "./audit.js";
import type { RuntimeDeps } from "./deps.js";
import type { RunState } from "./state.js";
import type { ApprovalAnswer } from "./types.js";

export interface ApprovalAsk {
  readonly toolName: string;
  readonly toolCallId: string;
  readonly params: unknown;
  readonly title: string;
  readonly description?: string;
  readonly timeoutMs?: number;
}

/** Who answered an approval in the audit trail when the approver does not say. */
const APPROVER = "approver";
/** Nobody could answer (no approver configured): the runtime denies. */
const NOBODY = "gatehouse";

/**
 * Pauses a tool call until the approver answers. No approver, no answer in time, an approver
 * that fails, or a cancelled run: all deny. "allow-always" is remembered for the session. Each
 * answer is an audit record naming who gave it (never the request's content).
 */
export async function requestApproval(deps: RuntimeDeps, state: RunState, ask: ApprovalAsk): Promise<boolean> {
  const remembered = deps.alwaysAllowed.get(state.sessionId);
  if (remembered?.has(ask.toolName)) return true;
  state.emit({ type: "approval-requested", toolCallId: ask.toolCallId, toolName: ask.toolName, title: ask.title });
  await deps.engine.emit("notification", { kind: "approval", message: ask.title });
  if (!deps.approver) {
    await record(deps, state, NOBODY, "decision", false);
    return false;
  }
  // A referenced timer (AbortSignal.timeout's is not): a pending approval keeps the process alive.
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), ask.timeoutMs ?? deps.config.approvalTimeoutMs);
  const signal = AbortSignal.any([state.signal, timeout.signal]);
  let answer: ApprovalAnswer | "timeout" | "threw";
  try {
    answer = await Promise.race([
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
      new Promise<"timeout">((resolve) => signal.addEventListener("abort", () => resolve("timeout"), { once: true })),
    ]);
  } catch {
    answer = "threw";
  } finally {
    clearTimeout(timer);
  }
  if (state.signal.aborted) return false;
  if (answer === "timeout" || answer === "threw") {
    await record(deps, state, APPROVER, answer === "timeout" ? "timeout" : "threw", false);
    return false;
  }
  const decision = typeof answer === "string" ? answer : answer.decision;
  const decidedBy = typeof answer === "string" ? APPROVER : answer.decidedBy;
  const allowed = decision === "allow-once" || decision === "allow-always";
  if (decision === "allow-always") {
    if (remembered) remembered.add(ask.toolName);
    else deps.alwaysAllowed.set(state.sessionId, new Set([ask.toolName]));
  }
  await record(deps, state, decidedBy, "decision", allowed);
  return allowed;
}

function record(
  deps: RuntimeDeps,
  state: RunState,
  pluginId: string,
  cause: "decision" | "timeout" | "threw",
  allowed: boolean,
): Promise<void> {
  return audit(deps, state, { hook: "approval", pluginId, cause }, allowed ? "approve" : "deny");
}
