import { newTraceparent, type RunContext, runWithContext } from "../hooks/run-context.js";
import { loadShellParser, type PermissionPolicy } from "../permissions/index.js";
import type { Gatehouse } from "../runtime/gatehouse.js";
import { notices } from "../runtime/notices.js";
import type { HookRequest } from "./request.js";

/**
 * What the project's plugins and permission rules decided about one request, in Gatehouse's
 * terms; answer.ts writes it in the agent's protocol. Messages are user-safe by the catalog's
 * contract: a plugin's internal `reason` never gets here (the engine drops it).
 */
export interface HostVerdict {
  /** The call does not run, the prompt is refused, or the output is withheld; the message is what the model or user reads. */
  readonly block?: { readonly message: string };
  /** A person must approve the call (`requireApproval`, `permissionDecision: "ask"`, an ask rule). */
  readonly ask?: string;
  /** A plugin said the call needs no permission prompt. */
  readonly allow?: true;
  /** The call runs with these params (Gatehouse's shape). */
  readonly params?: unknown;
  /** The output the model reads instead of the tool's. */
  readonly result?: unknown;
  readonly additionalContext?: string;
  /** The agent goes back for one more pass with this instruction (before_agent_finalize). */
  readonly revise?: string;
  /** The agent stops once this call is done (a tool hook's `stopRun`). */
  readonly stop?: { readonly message?: string };
}

/** What a guard needs of the project: its Gatehouse (plugins loaded) and its permission rules. */
export interface GuardProject {
  readonly gatehouse: Gatehouse;
  readonly policy: PermissionPolicy;
}

/**
 * Fails closed: the request is refused with `message` wherever the event can refuse (a project
 * whose plugins could not be loaded, an unreadable payload, an evaluation that threw). A Stop
 * is never sent back on a failure: a broken guard must not loop the agent.
 */
export function failClosed(request: Pick<HookRequest, "hook"> | undefined, message: string): HostVerdict {
  return request?.hook === "before_agent_finalize" ? {} : { block: { message } };
}

export const GUARD_FAILED = "Blocked: the Gatehouse policy could not be evaluated.";

/** Runs the request's catalog hook on the project's plugins (and, for tool calls, its deny and ask rules). */
export async function evaluate(project: GuardProject, request: HookRequest): Promise<HostVerdict> {
  const context: RunContext = {
    sessionId: request.sessionId,
    sessionKey: request.sessionId,
    runId: `hook:${request.agent}:${request.sessionId}`,
    agentId: request.agent,
    depth: request.event === "SubagentStop" ? 1 : 0,
    trigger: "api",
    channel: "cli",
    traceparent: newTraceparent(),
  };
  return runWithContext(context, () => dispatch(project, request));
}

async function dispatch({ gatehouse, policy }: GuardProject, request: HookRequest): Promise<HostVerdict> {
  const { engine } = gatehouse;
  switch (request.hook) {
    case "before_tool_call": {
      const { toolName, params, toolCallId } = request;
      if (toolName === "Bash") await loadShellParser();
      // Deny rules first, as in a run: no plugin sees a call a rule refuses.
      const deny = policy.denyRule(toolName, params, request.sessionId);
      if (deny) return { block: { message: notices.permissionDenied(toolName, `rule ${deny.rule}`) } };
      const pre = await engine.emit("before_tool_call", { toolName, params, toolCallId });
      const r = pre.result;
      const stop = r.stopRun ? { stop: r.stopRun } : {};
      if (r.block) {
        const pluginId = pre.decidedBy?.pluginId ?? "gatehouse";
        const message = r.blockMessage ?? notices.toolBlocked(toolName, pluginId, r.blockReason);
        return { block: { message }, ...stop };
      }
      const finalParams = r.params ?? params;
      // A rewrite meets the deny rules again.
      const denied = r.params === undefined ? undefined : policy.denyRule(toolName, finalParams, request.sessionId);
      if (denied) return { block: { message: notices.permissionDenied(toolName, `rule ${denied.rule}`) } };
      const decision = policy.decide(toolName, finalParams, r.requireApproval ? "ask" : r.permissionDecision);
      // Only what a rule or a plugin said is Gatehouse's to say; the agent's own mode decides the rest.
      const asks = decision.behavior === "ask" && (decision.by === "rule" || decision.by === "hook");
      return {
        ...(r.params === undefined ? {} : { params: r.params }),
        ...(asks ? { ask: r.requireApproval?.title ?? `Gatehouse asks before this ${toolName} call.` } : {}),
        ...(!asks && r.permissionDecision === "allow" ? { allow: true as const } : {}),
        ...(decision.behavior === "deny" ? { block: { message: notices.permissionDenied(toolName, "a rule") } } : {}),
        ...stop,
      };
    }
    case "after_tool_call": {
      const { toolName, params, toolCallId, durationMs } = request;
      const post = await engine.emit("after_tool_call", {
        toolName,
        params,
        toolCallId,
        ...(request.error === undefined ? { result: request.result } : { error: request.error }),
        durationMs,
      });
      const r = post.result;
      const extra = {
        ...(r.additionalContext === undefined ? {} : { additionalContext: r.additionalContext }),
        ...(r.stopRun ? { stop: r.stopRun } : {}),
      };
      if (r.block) {
        const pluginId = post.decidedBy?.pluginId ?? "gatehouse";
        return { block: { message: notices.toolWithheld(toolName, pluginId, r.blockReason) }, ...extra };
      }
      return { ...(r.result === undefined ? {} : { result: r.result }), ...extra };
    }
    case "before_input": {
      const gate = await engine.emit("before_input", { prompt: request.prompt });
      if (gate.outcome === "pass") return {};
      return { block: { message: gate.message ?? notices.promptBlocked(gate.by.pluginId) } };
    }
    case "before_agent_finalize": {
      const attempt = request.stopHookActive ? 1 : 0;
      const final = await engine.emit("before_agent_finalize", {
        lastAssistantMessage: request.lastAssistantMessage,
        messages: [],
        stopHookActive: request.stopHookActive,
        attempt,
      });
      const r = final.result;
      if (r.action === "finalize") return {};
      // One more pass per answer the agent gives: the agent's own loop cap applies on top.
      const retries = (r.retry ?? []).filter((x) => attempt < (x.maxAttempts ?? 1));
      const instruction = retries.map((x) => x.instruction).join("\n\n");
      return instruction === "" ? {} : { revise: instruction };
    }
  }
}
