import { randomUUID } from "node:crypto";
import type { Message, Part, Role } from "../core/message.js";
import type { HookEngine } from "../hooks/engine.js";
import { newTraceparent, type RunContext, runWithContext } from "../hooks/run-context.js";
import type { Attribution } from "../hooks/types.js";
import { announceDelivery, gateReply } from "../runtime/doors/gates.js";
import type { Gatehouse } from "../runtime/gatehouse.js";
import { notices } from "../runtime/notices.js";

/**
 * What the host adapters (the AI SDK middleware, the OpenAI Agents guardrails) share: the
 * catalog's gates run on a host's prompt, answer and tool calls, with the verdicts a `gatehouse
 * run` would reach. The host keeps its own conversation; Gatehouse's store gets what the engine's
 * audit interceptor writes for a verdict (hook, plugin, outcome, category: never content or a
 * reason). A block's internal reason never leaves the engine: what a host is handed is the
 * user-facing message or Gatehouse's own notice, which names only the plugin.
 */

/** Where a host's calls run, as hooks see it (`ctx.sessionId`, `ctx.runId`) and the audit keeps it. */
export interface HostSession {
  /** Default: one session per adapter. */
  readonly sessionId?: string;
  /** `ctx.agentId` of the hooks. Default: `main`. */
  readonly agentId?: string;
}

/** A host's conversation before a model call, in Gatehouse's words. */
export interface HostTurn {
  /** The user's input: the text of the last user message. */
  readonly prompt: string;
  /** What the model receives, as one text (every message's text, in order). */
  readonly modelPrompt: string;
  /** The turns before the user's input. */
  readonly earlier: readonly { readonly role: Role; readonly parts: readonly Part[] }[];
  readonly systemPrompt: string;
}

/** A gate's verdict as a host shows it: pass, or the text the user reads instead (null: nothing is delivered). */
export type HostVerdict =
  | { readonly pass: true }
  | { readonly pass: false; readonly by: Attribution; readonly message: string | null };

/** The gates of one host call: the hooks run inside one run context. */
export interface HostRun {
  readonly engine: HookEngine;
  readonly context: RunContext;
  /** Runs `fn` with the run context every hook of this call sees. */
  within<T>(fn: () => Promise<T>): Promise<T>;
}

/** Opens a host call: the Gatehouse ready (plugins loaded, store open), and a run context for its hooks. */
export async function hostRun(
  gatehouse: Gatehouse,
  session: Required<HostSession>,
  runId: string = randomUUID(),
  signal?: AbortSignal,
): Promise<HostRun> {
  await gatehouse.ready();
  const context: RunContext = Object.freeze({
    sessionId: session.sessionId,
    sessionKey: session.sessionId,
    runId,
    agentId: session.agentId,
    depth: 0,
    trigger: "api",
    channel: "api",
    traceparent: newTraceparent(),
    ...(signal === undefined ? {} : { signal }),
  });
  return { engine: gatehouse.engine, context, within: (fn) => runWithContext(context, fn) };
}

/** The session an adapter's calls belong to unless told otherwise. */
export function hostSession(options: HostSession | undefined): Required<HostSession> {
  return { sessionId: options?.sessionId ?? randomUUID(), agentId: options?.agentId ?? "main" };
}

const never = new AbortController().signal;
const signalOf = (run: HostRun) => ({ signal: run.context.signal ?? never });

/**
 * The input door's two gates, as a run has them (docs/lifecycle.md, steps 2 and 9):
 * `before_input` on the user's input, then `before_agent_run` on what the model receives. A
 * block's notice goes through the output gates, as a run's does.
 */
export async function admitTurn(run: HostRun, turn: HostTurn): Promise<HostVerdict> {
  return run.within(async () => {
    const { engine, context } = run;
    const gates = [
      () => engine.emit("before_input", { prompt: turn.prompt }),
      () =>
        engine.emit("before_agent_run", {
          prompt: turn.prompt,
          modelPrompt: turn.modelPrompt,
          messages: turn.earlier.map((m, seq) => messageOf(context, m, seq)),
          systemPrompt: turn.systemPrompt,
        }),
    ];
    for (const gate of gates) {
      const verdict = await gate();
      if (verdict.outcome === "block")
        return blocked(run, verdict.by, verdict.message ?? notices.promptBlocked(verdict.by.pluginId), {
          own: notices.promptBlocked(verdict.by.pluginId),
        });
    }
    return { pass: true };
  });
}

/** The host's answer after the output gates: what is delivered (`texts` as the gates left them), or the block. */
export type GatedAnswer =
  | { readonly pass: true; readonly texts: readonly string[] }
  | Exclude<HostVerdict, { pass: true }>;

/**
 * The output door (steps 10–12): `before_response_emit` then `message_sending` on the answer's
 * texts (the last is the reply), then `message_sent`. A block delivers its notice in their place.
 */
export async function gateAnswer(run: HostRun, texts: readonly string[]): Promise<GatedAnswer> {
  return run.within(async () => {
    const deps = { engine: run.engine };
    const gated = await gateReply(deps, signalOf(run), {
      source: "model",
      text: texts.at(-1) ?? "",
      allContent: texts,
    });
    if (gated.kind === "blocked")
      return blocked(run, gated.by, gated.notice, {
        own: notices.responseBlocked(gated.by.pluginId),
        afterResponseGate: true,
      });
    if (gated.kind === "cancelled") return { pass: false, by: gated.by, message: null };
    await announceDelivery(deps, gated.text);
    return { pass: true, texts: gated.allContent };
  });
}

/**
 * A notice on its way to the user, as a run's block delivers it: through `message_sending` (and
 * `before_response_emit` unless that gate produced it); a gate that stops the notice leaves
 * Gatehouse's own, which names only the plugin.
 */
async function blocked(
  run: HostRun,
  by: Attribution,
  notice: string,
  { own, afterResponseGate = false }: { readonly own: string; readonly afterResponseGate?: boolean },
): Promise<Exclude<HostVerdict, { pass: true }>> {
  const deps = { engine: run.engine };
  const gated = await gateReply(deps, signalOf(run), { source: "notice", text: notice, afterResponseGate });
  const message = gated.kind === "delivered" ? gated.text : gated.kind === "blocked" ? own : null;
  if (message !== null) await announceDelivery(deps, message);
  return { pass: false, by, message };
}

/** A tool hook's `stopRun` ends the host's run: its notice is delivered as a block's is. */
export function deliverStop(run: HostRun, stop: HostStop): Promise<Exclude<HostVerdict, { pass: true }>> {
  return run.within(() => blocked(run, stop.by, stop.message, { own: notices.runStopped(stop.by.pluginId) }));
}

/** A tool call as the host asks for it. */
export interface HostToolCall {
  readonly toolName: string;
  readonly toolCallId: string;
  readonly params: unknown;
}

/** A hook's `stopRun`: the host's run is to end after this step, the user reading `message`. */
export interface HostStop {
  readonly by: Attribution;
  readonly message: string;
}

export type ToolAdmission =
  | { readonly run: true; readonly params: unknown; readonly rewritten: boolean; readonly stop?: HostStop }
  /** The call does not run; `message` is what the model reads in place of its output. */
  | { readonly run: false; readonly message: string; readonly stop?: HostStop };

/**
 * `before_tool_call` (step 8e): may rewrite the input, block the call (the model reads the hook's
 * message, never the internal reason), or ask for an approval nobody can give here (a denial,
 * as `run` gives one without an approver).
 */
export async function admitToolCall(run: HostRun, call: HostToolCall): Promise<ToolAdmission> {
  return run.within(async () => {
    const pre = await run.engine.emit("before_tool_call", call);
    const stop = stopOf(pre);
    const { result } = pre;
    if (result.block) {
      const by = pre.decidedBy as Attribution;
      const message = result.blockMessage ?? notices.toolBlocked(call.toolName, by.pluginId, result.blockReason);
      return { run: false, message, ...stop };
    }
    if (result.requireApproval) {
      const why = "a policy asks for approval, and no one can be asked here";
      const message = result.requireApproval.unattended?.reason ?? notices.permissionDenied(call.toolName, why);
      return { run: false, message, ...stop };
    }
    const rewritten = result.params !== undefined;
    return { run: true, params: rewritten ? result.params : call.params, rewritten, ...stop };
  });
}

export type ToolOutputVerdict =
  | { readonly kind: "as-is"; readonly stop?: HostStop }
  | { readonly kind: "rewritten"; readonly output: unknown; readonly stop?: HostStop }
  /** `message` replaces the output (or the failure) everywhere. */
  | { readonly kind: "withheld"; readonly message: string; readonly stop?: HostStop };

/**
 * `after_tool_call` (step 8f) on a call's output or failure, before the model or the host's
 * history sees it: rewritten, withheld (a notice in its place: the tool did run), or as it is.
 */
export async function gateToolOutput(
  run: HostRun,
  call: HostToolCall,
  outcome: { readonly result: unknown } | { readonly error: string },
  durationMs: number,
): Promise<ToolOutputVerdict> {
  return run.within(async () => {
    const post = await run.engine.emit("after_tool_call", { ...call, ...outcome, durationMs });
    const stop = stopOf(post);
    const { result } = post;
    if (result.block) {
      const by = post.decidedBy as Attribution;
      return {
        kind: "withheld",
        message: notices.toolWithheld(call.toolName, by.pluginId, result.blockReason),
        ...stop,
      };
    }
    if (result.result !== undefined) return { kind: "rewritten", output: result.result, ...stop };
    return { kind: "as-is", ...stop };
  });
}

/** Whether a tool hook listens: then every tool the model may call must pass through the adapter. */
export function toolsGated(engine: HookEngine): boolean {
  return engine.hasHooks("before_tool_call") || engine.hasHooks("after_tool_call");
}

/** Whether an output gate listens: then no text reaches the host until the gates passed it. */
export function answersGated(engine: HookEngine): boolean {
  return engine.hasHooks("before_response_emit") || engine.hasHooks("message_sending");
}

function stopOf(outcome: {
  readonly result: { readonly stopRun?: { readonly message?: string } };
  readonly stoppedBy?: Attribution;
}): { stop?: HostStop } {
  const by = outcome.stoppedBy;
  if (outcome.result.stopRun === undefined || by === undefined) return {};
  return { stop: { by, message: outcome.result.stopRun.message ?? notices.runStopped(by.pluginId) } };
}

function messageOf(context: RunContext, m: HostTurn["earlier"][number], seq: number): Message {
  return {
    id: "",
    sessionId: context.sessionId,
    runId: null,
    seq,
    role: m.role,
    parts: m.parts,
    metadata: { host: true },
    createdAt: new Date().toISOString(),
  };
}
