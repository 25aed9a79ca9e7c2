import { linkedSignal } from "../../core/abort.js";
import { type PermissionDecision, type PermissionRule, ruleTextKept } from "../../permissions/index.js";
import { audit, categorySlug } from "../audit.js";
import type { RuntimeDeps } from "../deps.js";
import type { RunState } from "../state.js";
import type { ApprovalAnswer, PermissionDenial } from "../types.js";

/** A call the permission check did not simply allow. */
export interface PermissionAsk {
  readonly toolName: string;
  readonly toolCallId: string;
  readonly params: unknown;
  readonly decision: PermissionDecision;
  /** A `before_tool_call` hook's `requireApproval`: its question for the person asked. */
  readonly approval?: {
    readonly title: string;
    readonly description?: string;
    readonly timeoutMs?: number;
    readonly unattended?: { readonly reason?: string };
  };
}

/** What the ask came to: the call runs (with `params` when a hook rewrote them), or a denial. */
export type PermissionOutcome =
  | { readonly allowed: true; readonly params?: unknown }
  | {
      readonly allowed: false;
      readonly denial: PermissionDenial;
      readonly message?: string;
      readonly interrupt?: boolean;
      /** The denial is the hook's own answer: `permission_denied` does not fire for it. */
      readonly final?: boolean;
    };

/** Who decided, in the audit trail, when nobody but Gatehouse's own rules did. */
const RULES = "permissions";
/** No person could be asked: Gatehouse denied. */
const NOBODY = "gatehouse";
/** An approver that does not name who answered. */
const APPROVER = "approver";

/**
 * The permission step of the tool door (docs/lifecycle.md, step 10d; docs/permissions.md), after the
 * deny rules and the tool hooks: a deny is final; an ask goes to `permission_request` handlers
 * (command hooks' `PermissionRequest` among them), then to the approver (a person at a terminal,
 * a client of `serve`), else it is denied; an allow remembered from an "always" answer still
 * meets `permission_request`, where a deny stands. Each decision is one audit record naming
 * who decided and the rule with its source.
 */
export async function settlePermission(
  deps: RuntimeDeps,
  state: RunState,
  ask: PermissionAsk,
): Promise<PermissionOutcome> {
  const { decision } = ask;
  if (decision.behavior === "allow" && !decision.remembered) {
    if (decision.by !== "default") await record(deps, state, RULES, "approve", decision.rule);
    return { allowed: true };
  }
  if (decision.behavior === "deny") return deny(deps, state, ask, decision.by === "mode" ? "mode" : "rule", RULES);

  // Claude Code without anyone to ask (`-p`): a PreToolUse ask is refused there and then, with the
  // hook's reason for the model; neither PermissionRequest nor PermissionDenied hooks hear of it.
  const unattended = ask.approval?.unattended;
  if (decision.behavior === "ask" && unattended && !deps.approver) {
    const outcome = await deny(deps, state, ask, "nobody", NOBODY);
    return { ...outcome, ...(unattended.reason ? { message: unattended.reason } : {}), final: true };
  }
  // A hook's ask comes back whatever rule is added: "always" is offered only for the rules' own asks.
  const suggestions =
    decision.by === "hook" ? [] : deps.permissions.suggestRules(ask.toolName, ask.params, state.sessionId);
  if (deps.engine.hasHooks("permission_request")) {
    const hooked = await deps.engine.emit("permission_request", {
      toolName: ask.toolName,
      params: ask.params,
      toolCallId: ask.toolCallId,
      permissionMode: deps.permissions.mode,
      ...(decision.rule ? { rule: decision.rule.rule } : {}),
      suggestions,
      remembered: decision.remembered === true,
    });
    state.signal.throwIfAborted();
    const verdict = hooked.result;
    if (verdict.deny) {
      // The engine's audit interceptor recorded who denied (hook permission_request, outcome deny).
      const by = hooked.decidedBy?.pluginId ?? "permission_request";
      const outcome = await deny(deps, state, ask, "hook", by, undefined, null);
      return {
        ...outcome,
        ...(verdict.message ? { message: verdict.message } : {}),
        ...(verdict.interrupt ? { interrupt: true } : {}),
      };
    }
    if (verdict.allow && decision.behavior === "ask") {
      const updated = verdict.updatedInput;
      const denyRule =
        updated === undefined ? undefined : deps.permissions.denyRule(ask.toolName, updated, state.sessionId);
      if (denyRule)
        return deny(deps, state, { ...ask, decision: { behavior: "deny", rule: denyRule, by: "rule" } }, "rule", RULES);
      await record(deps, state, "permission_request", "approve", decision.rule);
      return updated === undefined ? { allowed: true } : { allowed: true, params: updated };
    }
  }
  if (decision.behavior === "allow") {
    await record(deps, state, RULES, "approve", decision.rule);
    return { allowed: true };
  }
  return askApprover(deps, state, ask, suggestions);
}

/**
 * A sandboxed Bash command's connection to a host no sandbox list names, through the permission
 * flow as a `WebFetch` of that host: `WebFetch(domain:…)` rules decide, then `permission_request`
 * hooks and the approver; where no one can be asked it is denied. Each answer is an audit record.
 */
export async function settleSandboxHost(
  deps: RuntimeDeps,
  state: RunState,
  toolCallId: string,
  host: string,
  port: number | undefined,
): Promise<boolean> {
  const bracketed = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  const params = { url: `https://${bracketed}${port === undefined ? "" : `:${port}`}/`, prompt: "" };
  const decision = deps.permissions.decide("WebFetch", params, undefined, state.sessionId);
  const title = `Allow a sandboxed Bash command to connect to ${bracketed}${port === undefined ? "" : `:${port}`}?`;
  const outcome = await settlePermission(deps, state, {
    toolName: "WebFetch",
    toolCallId,
    params,
    decision,
    approval: { title },
  });
  return outcome.allowed;
}

/** A sandbox refusal: a decision in the audit trail, with its kind only (no path, no host). */
export function recordSandboxRefusal(deps: RuntimeDeps, state: RunState, kind: "network" | "filesystem"): void {
  audit(deps, state, { hook: "permission", pluginId: "sandbox", cause: "decision" }, "deny", `sandbox:${kind}`).catch(
    (error: unknown) => deps.logger.warn(`audit: ${(error as Error).message}`),
  );
}

/** The person (or client) behind the approver. Nobody there, no answer in time, a failure: deny. */
async function askApprover(
  deps: RuntimeDeps,
  state: RunState,
  ask: PermissionAsk,
  suggestions: readonly string[],
): Promise<PermissionOutcome> {
  if (!deps.approver) return deny(deps, state, ask, "nobody", NOBODY, suggestions);
  const title = ask.approval?.title ?? `Allow ${ask.toolName}?`;
  state.emit({ type: "approval-requested", toolCallId: ask.toolCallId, toolName: ask.toolName, title });
  // Claude Code's `permission_prompt` notification: only when someone is actually asked.
  await deps.engine.emit("notification", { kind: "approval", message: title });
  // A referenced timer (AbortSignal.timeout's is not): a pending approval keeps the process alive.
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), ask.approval?.timeoutMs ?? deps.config.approvalTimeoutMs);
  const { signal, release } = linkedSignal([state.signal, timeout.signal]);
  let answer: ApprovalAnswer | "timeout" | "threw";
  let onAbort: (() => void) | undefined;
  try {
    answer = await Promise.race([
      deps.approver(
        {
          sessionId: state.sessionId,
          runId: state.runId,
          toolName: ask.toolName,
          toolCallId: ask.toolCallId,
          params: ask.params,
          title,
          ...(ask.approval?.description === undefined ? {} : { description: ask.approval.description }),
          ...(ask.decision.rule ? { rule: ask.decision.rule.rule } : {}),
          suggestions,
        },
        signal,
      ),
      new Promise<"timeout">((resolve) => {
        onAbort = () => resolve("timeout");
        signal.addEventListener("abort", onAbort, { once: true });
      }),
    ]);
  } catch {
    answer = "threw";
  } finally {
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener("abort", onAbort);
    release();
  }
  state.signal.throwIfAborted();
  if (answer === "timeout" || answer === "threw")
    return deny(deps, state, ask, answer, APPROVER, undefined, "approval");
  const choice = typeof answer === "string" ? answer : answer.decision;
  const decidedBy = typeof answer === "string" ? APPROVER : answer.decidedBy;
  if (choice === "nobody") return deny(deps, state, ask, "nobody", decidedBy, suggestions);
  if (choice === "deny") return deny(deps, state, ask, "user", decidedBy, undefined, "approval");
  if (choice === "allow-always" || choice === "allow-always-local") {
    // "Always" is the rules the person was shown, never the whole tool.
    try {
      deps.permissions.remember(state.sessionId, "allow", suggestions, choice === "allow-always" ? "session" : "local");
    } catch (error) {
      deps.logger.warn(`the rule was kept for this session only: ${(error as Error).message}`);
      deps.permissions.remember(state.sessionId, "allow", suggestions, "session");
    }
  }
  await record(deps, state, decidedBy, "approve", ask.decision.rule, "decision", "approval");
  return { allowed: true };
}

async function deny(
  deps: RuntimeDeps,
  state: RunState,
  ask: Pick<PermissionAsk, "toolName" | "toolCallId" | "decision">,
  reason: PermissionDenial["reason"],
  by: string,
  suggestions?: readonly string[],
  /** Who keeps the record: `permission` (rules, modes, nobody to ask), `approval` (the approver's answer), none (the engine did). */
  hook: "permission" | "approval" | null = "permission",
): Promise<Extract<PermissionOutcome, { allowed: false }>> {
  const { rule } = ask.decision;
  const denial: PermissionDenial = {
    toolName: ask.toolName,
    toolCallId: ask.toolCallId,
    reason,
    decidedBy: by,
    mode: deps.permissions.mode,
    ...(rule
      ? { rule: rule.rule, ruleId: rule.id, source: rule.source, ...(rule.file ? { file: rule.file } : {}) }
      : {}),
    ...(suggestions?.length ? { suggestions } : {}),
  };
  state.addPermissionDenial(denial);
  const cause = reason === "timeout" ? "timeout" : reason === "threw" ? "threw" : "decision";
  if (hook !== null) await record(deps, state, by, "deny", rule, cause, hook);
  return { allowed: false, denial };
}

/**
 * One audit record: who decided (`pluginId`), and in `category` the rule's id
 * (`<source>.<behavior>.<n>`), followed by its text (a slug) only when it came from a settings
 * file: a rule from a flag, from code or from an "always" answer may hold what the model wrote,
 * and the audit trail outlives the session it came from. An approver's answer is recorded under `approval` (the ask it answers is a step of
 * its own); every other decision under `permission`.
 */
function record(
  deps: RuntimeDeps,
  state: RunState,
  by: string,
  outcome: "approve" | "deny",
  rule: PermissionRule | undefined,
  cause: "decision" | "timeout" | "threw" = "decision",
  hook: "permission" | "approval" = "permission",
): Promise<void> {
  const named = rule && (ruleTextKept(rule) ? `${rule.id}:${rule.rule}` : rule.id);
  const category = categorySlug(named ?? `mode:${deps.permissions.mode}`);
  return audit(deps, state, { hook, pluginId: by, cause }, outcome, category);
}
