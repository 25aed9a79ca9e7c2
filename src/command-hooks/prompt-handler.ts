import { z } from "zod";
import type { Env } from "../core/env-policy.js";
import { envMasker } from "../core/secret-values.js";
import { maskSecrets } from "../core/secrets.js";
import type { HookAgentRequest, HookModelRequest, UsageSink } from "../runtime/hook-model.js";
import { type CommandHookEvent, EVENT_SPECS } from "./events.js";
import { type Ctx, failure, keepFields, NO_OUTCOME, type RawOutcome } from "./protocol.js";
import type { ModelHandlerDef, OnFailure } from "./settings.js";
import type { HookError, NormalizedVerdict } from "./verdict.js";

export type { UsageSink } from "../runtime/hook-model.js";

/**
 * Claude Code's model-evaluated handlers. `prompt`: one model call decides. `agent`: a read-only
 * agent decides, after reading the project with Read, Grep and Glob (at most
 * `AGENT_HOOK_MAX_TURNS` model calls). Both read the handler's text with `$ARGUMENTS` replaced by
 * the hook input as JSON (appended when the placeholder is missing; `\$` is a literal dollar),
 * with anything that looks like a secret masked — the agent's tool results too — and answer
 * `{"ok": true}` or `{"ok": false, "reason": "…"}`. Their model calls go straight to the model: no
 * hook sees them (a hook's own evaluation is not a run and must not fire hooks), and they carry no
 * provider key, since keys live in the provider's client, never in text.
 */

/** Claude Code's defaults. */
export const MODEL_HANDLER_DEFAULT_TIMEOUT_MS = { prompt: 30_000, agent: 60_000 } as const;

/** Claude Code's limit for an agent hook: its model calls, tool rounds included. */
export const AGENT_HOOK_MAX_TURNS = 50;

/** Asks a model once; resolves with its text. */
export type PromptEvaluator = (request: HookModelRequest) => Promise<string>;

/** Runs the read-only agent; resolves with its final text, or undefined when it gave none within `maxTurns`. */
export type AgentEvaluator = (request: HookAgentRequest) => Promise<string | undefined>;

const ANSWER =
  'answer with one JSON object and nothing else: {"ok": true} when the condition is met, or {"ok": false, "reason": "<why, in one or two sentences>"} when it is not.';

export const PROMPT_HOOK_SYSTEM = `You evaluate a condition for an automated policy hook of an AI agent. Read the instructions and the hook input, then ${ANSWER}`;

export const AGENT_HOOK_SYSTEM = `You verify a condition for an automated policy hook of an AI agent. Read the instructions and the hook input; you may inspect the project with the Read, Grep and Glob tools (read-only; some files may be refused). When you know, ${ANSWER}`;

const ReplySchema = z.looseObject({
  ok: z.boolean(),
  reason: z.string().optional(),
  impossible: z.boolean().optional(),
});

/**
 * The text the model reads: secrets masked by shape, and the value of every provider credential
 * and Gatehouse secret of `env` wherever it appears (a tool's output may have printed one).
 */
export function promptHookText(template: string, input: object, env: Env): string {
  const json = JSON.stringify(input);
  let used = false;
  const text = template.replace(/\\\$|\$ARGUMENTS/g, (m) => {
    if (m === "\\$") return "$";
    used = true;
    return json;
  });
  return maskHookText(used ? text : `${text}\n\n${json}`, env);
}

/**
 * `text` with secrets masked by shape, and by value: every withheld secret of `env` and of
 * Gatehouse's own environment, in each spelling `src/core/secret-values.ts` covers.
 */
export function maskHookText(text: string, env: Env): string {
  return maskSecrets(envMasker([process.env, env]).mask(text));
}

export interface ModelHandlerRun {
  readonly raw: RawOutcome & { aborted: boolean; truncated: boolean; droppedBytes: number };
  readonly verdict: NormalizedVerdict;
}

export interface ModelHandlerOptions {
  readonly onFailure: OnFailure;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal | undefined;
  /** Whose credentials and secrets are masked. */
  readonly env: Env;
  /** Without it `prompt` handlers fail (under their onFailure); the same for `agent` and `evaluateAgent`. */
  readonly evaluatePrompt?: PromptEvaluator | undefined;
  readonly evaluateAgent?: AgentEvaluator | undefined;
  readonly onUsage?: UsageSink | undefined;
}

/** A `prompt` or `agent` handler: its model's `{ok, reason}` as a verdict; a failure under its onFailure. */
export async function runModelHandler(
  event: CommandHookEvent,
  def: ModelHandlerDef,
  input: object,
  o: ModelHandlerOptions,
): Promise<ModelHandlerRun> {
  const raw = { ...NO_OUTCOME };
  const failed = (error: HookError, detail: string, extra: Partial<ModelHandlerRun["raw"]> = {}): ModelHandlerRun => {
    const r = { ...raw, ...extra };
    const ctx: Ctx = {
      spec: EVENT_SPECS[event],
      raw: r,
      opts: { dialect: "claude", onFailure: o.onFailure },
      stderr: undefined,
    };
    return { raw: r, verdict: failure(ctx, error, detail) };
  };
  const { signal } = o;
  if (signal?.aborted) return { raw: { ...raw, aborted: true }, verdict: { error: "aborted" } };
  const evaluate = evaluatorFor(def, o);
  if (!evaluate) return failed("spawn", `no model is configured to evaluate ${def.type} hooks`);
  const timeout = AbortSignal.timeout(o.timeoutMs);
  const both = signal ? AbortSignal.any([timeout, signal]) : timeout;
  let reply: string | undefined;
  try {
    reply = await evaluate({
      model: def.model,
      system: def.type === "agent" ? AGENT_HOOK_SYSTEM : PROMPT_HOOK_SYSTEM,
      prompt: promptHookText(def.prompt, input, o.env),
      signal: both,
      onUsage: o.onUsage,
    });
  } catch (e) {
    if (signal?.aborted) return { raw: { ...raw, aborted: true }, verdict: { error: "aborted" } };
    if (timeout.aborted) return failed("timeout", "timed out", { timedOut: true });
    return failed("spawn", `the model call failed: ${(e as Error).name}`);
  }
  if (reply === undefined)
    return failed("unparseable", `the agent gave no answer within ${AGENT_HOOK_MAX_TURNS} model turns`);
  const parsed = ReplySchema.safeParse(parseJsonObject(reply));
  if (!parsed.success) return failed("unparseable", 'the model did not answer {"ok": …}');
  return { raw: { ...raw, exitCode: 0, stdout: reply }, verdict: verdictOf(event, def, parsed.data) };
}

/** The one call shape both handler types are run through; an agent's tool results are masked like its prompt. */
function evaluatorFor(
  def: ModelHandlerDef,
  o: ModelHandlerOptions,
): ((request: HookModelRequest) => Promise<string | undefined>) | undefined {
  if (def.type === "prompt") return o.evaluatePrompt;
  const agent = o.evaluateAgent;
  return (
    agent && ((request) => agent({ ...request, maxTurns: AGENT_HOOK_MAX_TURNS, mask: (t) => maskHookText(t, o.env) }))
  );
}

/** The reply's JSON object, also inside a Markdown code fence or after a sentence. */
function parseJsonObject(text: string): unknown {
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  if (start < 0 || end < start) return undefined;
  try {
    return JSON.parse(text.slice(start, end + 1));
  } catch {
    return undefined;
  }
}

/**
 * What `ok: false` does, event by event, as Claude Code does it. An agent hook always continues
 * on block (Claude Code: "a prompt hook with `continueOnBlock: true`").
 */
function verdictOf(
  event: CommandHookEvent,
  def: ModelHandlerDef,
  reply: z.infer<typeof ReplySchema>,
): NormalizedVerdict {
  if (reply.ok) return {};
  const reason = reply.reason?.trim() || `A ${def.type} hook's condition was not met.`;
  const endsTurn = def.type === "prompt" && !def.continueOnBlock;
  const v: NormalizedVerdict = (() => {
    switch (event) {
      case "PreToolUse":
        return { decision: "deny", reason, ...(endsTurn ? { continue: false, stopReason: reason } : {}) };
      case "PostToolUse":
        return endsTurn ? { continue: false, stopReason: reason } : { additionalContext: reason };
      case "PostToolUseFailure":
        return { additionalContext: reason };
      case "UserPromptSubmit":
        return { decision: "block", reason };
      case "Stop":
      case "SubagentStop":
        return reply.impossible ? {} : { decision: "block", reason };
      default:
        return {};
    }
  })();
  return keepFields(EVENT_SPECS[event], v);
}
