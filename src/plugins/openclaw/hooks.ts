import type { Message } from "../../core/message.js";
import type { HookName } from "../../hooks/catalog.js";
import { fromOpenClawMessage, toOpenClawMessage, toOpenClawMessages } from "./messages.js";
import { fromOpenClawParams, openClawToolName, toOpenClawParams, toOpenClawResult } from "./tools.js";

/**
 * OpenClaw's hook names on Gatehouse's catalog, as data: where each one fires, how its event
 * and result are translated, which of its result keys Gatehouse has no use for, and which
 * names mean nothing here. The reference table in docs/plugins.md is rendered from this list.
 */

type Obj = Record<string, unknown>;

export interface HookMapping {
  readonly openclaw: string;
  /** The catalog hooks it registers on; empty when the name has no meaning in Gatehouse. */
  readonly targets: readonly HookName[];
  /** What differs, for the reference table. */
  readonly note: string;
  /**
   * OpenClaw ignores what these handlers return (fire-and-forget observers): so does the
   * adapter, and a handler that throws is logged, never a block.
   */
  readonly void?: boolean;
  /** OpenClaw result keys Gatehouse has no use for: dropped, and reported once per plugin. */
  readonly tolerated?: readonly string[];
  /** The Gatehouse event → what the OpenClaw handler receives. */
  readonly event?: (event: Obj, target: HookName, ctx: EventContext) => Obj;
  /** The OpenClaw handler's result → a Gatehouse result for `target`. */
  readonly result?: (result: Obj, target: HookName, event: Obj) => Obj;
}

export interface EventContext {
  readonly runId: string;
  readonly sessionId: string;
  readonly sessionKey: string;
}

const isRecord = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const messages = (m: unknown) => toOpenClawMessages((m ?? []) as Message[]);
const withMessages = (e: Obj): Obj => ({ ...e, messages: messages(e.messages) });

function toolEvent(e: Obj, target: HookName, ctx: EventContext): Obj {
  const toolName = String(e.toolName);
  const out: Obj = {
    ...e,
    toolName: openClawToolName(toolName),
    params: toOpenClawParams(toolName, e.params),
    runId: ctx.runId,
  };
  if (target === "after_tool_call" && e.error === undefined) out.result = toOpenClawResult(e.result);
  return out;
}

const SUBAGENT_OUTCOMES: Readonly<Record<string, string>> = {
  completed: "ok",
  claimed: "ok",
  failed: "error",
  blocked: "error",
  cancelled: "killed",
};

const subagentStart = (e: Obj, _t: HookName, ctx: EventContext): Obj => ({
  childSessionKey: e.childSessionId,
  agentId: e.agentType,
  label: e.agentType,
  mode: "run",
  threadRequested: false,
  runId: ctx.runId,
  requesterSessionKey: ctx.sessionKey,
});
const subagentEnd = (e: Obj, _t: HookName, ctx: EventContext): Obj => ({
  targetSessionKey: e.childSessionId,
  targetKind: "subagent",
  reason: e.outcome,
  outcome: SUBAGENT_OUTCOMES[String(e.outcome)] ?? "error",
  runId: ctx.runId,
});

/*
 * Result translators turn what they can read into Gatehouse's shape and pass everything else on
 * unchanged, so the catalog's strict result schema sees it: an unknown key or a value in the
 * wrong shape is an invalid result under the hook's failure policy (a fail-closed gate blocks),
 * never a key quietly dropped or a value coerced into something valid.
 */

/** A reply payload's text when it is exactly `{ text: string }` (tolerated keys already gone). */
function payloadText(payload: unknown): string | undefined {
  if (!isRecord(payload) || typeof payload.text !== "string") return undefined;
  return Object.keys(payload).length === 1 ? payload.text : undefined;
}

/** A returned OpenClaw message applied to Gatehouse's, or left as returned when unreadable. */
function withMessage(r: Obj, e: Obj): Obj {
  if (r.message === undefined) return r;
  const applied = fromOpenClawMessage(r.message, e.message as Message);
  return { ...r, message: applied ?? r.message };
}

function same(openclaw: HookName, note = "", extra: Partial<HookMapping> = {}): HookMapping {
  return { openclaw, targets: [openclaw], note, ...extra };
}

function none(openclaw: string, note: string): HookMapping {
  return { openclaw, targets: [], note };
}

export const HOOK_MAPPINGS: readonly HookMapping[] = [
  same("before_model_resolve"),
  same("agent_turn_prepare", "messages in OpenClaw's shape", { event: withMessages }),
  same("before_prompt_build", "messages in OpenClaw's shape", { event: withMessages }),
  same("before_agent_start", "OpenClaw removed it; Gatehouse still fires it (deprecated)", { event: withMessages }),
  same("before_agent_reply", "`reply` keeps `text` (other reply-payload fields dropped)", {
    tolerated: ["reply.mediaUrl", "reply.mediaUrls", "reply.channelData", "reply.isError"],
  }),
  same("before_agent_run", "event adds `modelPrompt`; `metadata` in a block is tolerated", {
    event: withMessages,
    tolerated: ["metadata"],
  }),
  same("model_call_started", "", { event: (e, _t, c) => ({ ...e, runId: c.runId, sessionId: c.sessionId }) }),
  same("model_call_ended", "", {
    event: (e, _t, c) => ({ ...e, runId: c.runId, outcome: e.error === undefined ? "completed" : "error" }),
  }),
  same("llm_input", "`historyMessages` in OpenClaw's shape", {
    event: (e, _t, c) => ({
      ...e,
      runId: c.runId,
      sessionId: c.sessionId,
      historyMessages: messages(e.messages),
      imagesCount: 0,
    }),
  }),
  same("llm_output", "", { event: (e, _t, c) => ({ ...e, runId: c.runId, sessionId: c.sessionId }) }),
  same("before_agent_finalize", "", {
    event: (e, _t, c) => ({ ...withMessages(e), runId: c.runId, sessionId: c.sessionId, sessionKey: c.sessionKey }),
  }),
  same("agent_end", "messages in OpenClaw's shape", { event: withMessages }),
  same("before_compaction", "observe-only in OpenClaw: return values ignored", { void: true }),
  same("after_compaction"),
  same("before_reset"),
  same("inbound_claim", "`reply` (a reply payload) becomes its `text`", {
    result: (r) => {
      const text = payloadText(r.reply);
      return text === undefined ? r : { ...r, reply: text };
    },
  }),
  {
    openclaw: "before_dispatch",
    targets: ["inbound_claim"],
    note: "a claim at the input door: `{ handled, text }` answers the message without a turn",
    event: (e, _t, c) => ({ content: e.content, body: e.content, channel: e.channel, sessionKey: c.sessionKey }),
    // An absent `handled` is no claim (OpenClaw's default); any other value goes to validation.
    result: ({ text, handled = false, ...rest }) => ({
      ...rest,
      handled,
      ...(text === undefined ? {} : { reply: text }),
    }),
  },
  same("message_received", "", { event: (e, _t, c) => ({ from: "user", ...e, sessionKey: c.sessionKey }) }),
  same("message_sending", "`content` rewrites chain (OpenClaw: last writer wins); `metadata` tolerated", {
    tolerated: ["metadata"],
  }),
  {
    openclaw: "reply_payload_sending",
    targets: ["message_sending"],
    note: "`payload.text` is the reply; `payload` rewrites become `content`, `reason` becomes `cancelReason`",
    event: (e, _t, c) => ({
      payload: { text: e.content },
      kind: "final",
      channel: e.to,
      sessionKey: c.sessionKey,
      runId: c.runId,
    }),
    result: ({ payload, reason, ...rest }) => {
      const out: Obj = { ...rest };
      const text = payloadText(payload);
      if (text !== undefined) out.content = text;
      else if (payload !== undefined) out.payload = payload;
      if (reason !== undefined) out.cancelReason = reason;
      return out;
    },
  },
  same("message_sent"),
  same(
    "before_tool_call",
    "tool names and params translated both ways; `params` rewrites chain (OpenClaw: last writer wins, each handler sees the original); `blockReason` first defined wins (OpenClaw: last); `requireApproval` keeps `title`, `description`, `timeoutMs`",
    {
      event: toolEvent,
      tolerated: [
        "requireApproval.scope",
        "requireApproval.severity",
        "requireApproval.timeoutBehavior",
        "requireApproval.timeoutReason",
        "requireApproval.allowedDecisions",
        "requireApproval.pluginId",
        "requireApproval.onResolution",
      ],
      result: (r, _t, e) => {
        const out: Obj = { ...r };
        if (r.params !== undefined) out.params = fromOpenClawParams(String(e.toolName), r.params);
        return out;
      },
    },
  ),
  same("after_tool_call", "void in OpenClaw: return values ignored, a throw is logged (never withholds)", {
    event: toolEvent,
    void: true,
  }),
  same("tool_result_persist", "the message in OpenClaw's shape; a returned message's text is applied", {
    event: (e) => {
      const m = e.message as Message;
      const part = m.parts.find((p) => p.type === "tool_result");
      return {
        ...e,
        message: toOpenClawMessage(m),
        ...(part?.type === "tool_result"
          ? { toolName: openClawToolName(part.toolName), toolCallId: part.toolCallId }
          : {}),
      };
    },
    result: (r, _t, e) => withMessage(r, e),
  }),
  same("before_message_write", "the message in OpenClaw's shape; a returned message's text is applied", {
    event: (e, _t, c) => ({ ...e, message: toOpenClawMessage(e.message as Message), sessionKey: c.sessionKey }),
    result: (r, _t, e) => withMessage(r, e),
  }),
  same("session_start", "", { event: (e, _t, c) => ({ ...e, sessionKey: c.sessionKey }) }),
  same("session_end", "", { event: (e, _t, c) => ({ messageCount: 0, ...e, sessionKey: c.sessionKey }) }),
  {
    openclaw: "subagent_spawned",
    targets: ["subagent_start"],
    note: "fires in the parent before the child run starts (OpenClaw: after launch); void",
    void: true,
    event: subagentStart,
  },
  {
    openclaw: "subagent_ended",
    targets: ["subagent_end"],
    note: "`outcome` mapped to `ok`, `error` or `killed`",
    void: true,
    event: subagentEnd,
  },
  {
    openclaw: "subagent_progress",
    targets: ["subagent_start", "subagent_end"],
    note: "`phase: started` at `subagent_start`, `phase: ended` at `subagent_end`",
    void: true,
    event: (e, t, c) =>
      t === "subagent_start"
        ? { phase: "started", runId: c.runId, childSessionKey: e.childSessionId }
        : { phase: "ended", ...subagentEnd(e, t, c), childSessionKey: e.childSessionId },
  },
  same("before_response_emit", "from OpenClaw's unmerged fork: `content`/`allContent` chain (fork: first writer wins)"),
  none("heartbeat_prompt_contribution", "no heartbeat turns in Gatehouse"),
  none("channel_pairing_requested", "no messaging channels in Gatehouse"),
  none("reply_dispatch", "no reply dispatcher in Gatehouse (use before_agent_reply)"),
  none("subagent_delivery_target", "no channel routing in Gatehouse"),
  none("gateway_start", "no gateway in Gatehouse"),
  none("gateway_stop", "no gateway in Gatehouse"),
  none("cron_reconciled", "no cron scheduler in Gatehouse"),
  none("cron_changed", "no cron scheduler in Gatehouse"),
  none("skill_proposal_evaluate", "no skills in Gatehouse"),
  none("skill_proposal_changed", "no skills in Gatehouse"),
  none("skill_changed", "no skills in Gatehouse"),
  none("before_install", "Gatehouse does not install plugins"),
  none("resolve_exec_env", "Bash's environment is Gatehouse's policy, not a hook's"),
  none("subagent_spawning", "removed from OpenClaw"),
  none("deactivate", "removed from OpenClaw (use gateway_stop)"),
];

const BY_NAME = new Map(HOOK_MAPPINGS.map((m) => [m.openclaw, m]));

export function hookMapping(name: string): HookMapping | undefined {
  return BY_NAME.get(name);
}

/** Drops the tolerated keys a result holds; returns the result and the keys it dropped. */
export function dropTolerated(mapping: HookMapping, result: Obj): { result: Obj; dropped: string[] } {
  const dropped: string[] = [];
  let out = result;
  for (const path of mapping.tolerated ?? []) {
    const [head, tail] = path.split(".") as [string, string | undefined];
    if (tail === undefined) {
      if (head in out) {
        const { [head]: _, ...rest } = out;
        out = rest;
        dropped.push(path);
      }
    } else if (isRecord(out[head]) && tail in (out[head] as Obj)) {
      const { [tail]: _, ...rest } = out[head] as Obj;
      out = { ...out, [head]: rest };
      dropped.push(path);
    }
  }
  return { result: out, dropped };
}
