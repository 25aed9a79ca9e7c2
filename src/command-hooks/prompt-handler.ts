import { z } from "zod";
import { isGatehouseSecret, isProviderCredential } from "../core/env-policy.js";
import { MASK, maskSecrets } from "../core/secrets.js";
import { type CommandHookEvent, EVENT_SPECS } from "./events.js";
import { type Ctx, failure, keepFields, NO_OUTCOME, type RawOutcome } from "./protocol.js";
import type { OnFailure, PromptHandlerDef } from "./settings.js";
import type { HookError, NormalizedVerdict } from "./verdict.js";

/**
 * Claude Code's `prompt` handler: one model call decides. The prompt is the handler's text with
 * `$ARGUMENTS` replaced by the hook input as JSON (appended when the placeholder is missing;
 * `\$` is a literal dollar), with anything that looks like a secret masked; the model answers
 * `{"ok": true}` or `{"ok": false, "reason": "…"}`. The call goes straight to the model: no hook
 * sees it (it is not a run), and it carries no provider key, since keys live in the provider's
 * client, never in text.
 */

/** Claude Code's default for prompt hooks. */
export const PROMPT_HANDLER_DEFAULT_TIMEOUT_MS = 30_000;

/** Asks a model: `model` is a Gatehouse model spec, or undefined for the configured model. */
export type PromptEvaluator = (request: {
  readonly model: string | undefined;
  readonly system: string;
  readonly prompt: string;
  readonly signal: AbortSignal;
}) => Promise<string>;

export const PROMPT_HOOK_SYSTEM =
  'You evaluate a condition for an automated policy hook of an AI agent. Read the instructions and the hook input, then answer with one JSON object and nothing else: {"ok": true} when the condition is met, or {"ok": false, "reason": "<why, in one or two sentences>"} when it is not.';

const ReplySchema = z.looseObject({
  ok: z.boolean(),
  reason: z.string().optional(),
  impossible: z.boolean().optional(),
});

/**
 * The text the model reads: secrets masked by shape, and the value of every provider credential
 * and Gatehouse secret of `env` wherever it appears (a tool's output may have printed one).
 */
export function promptHookText(
  template: string,
  input: object,
  env: Readonly<Record<string, string | undefined>>,
): string {
  const json = JSON.stringify(input);
  let used = false;
  let text = template.replace(/\\\$|\$ARGUMENTS/g, (m) => {
    if (m === "\\$") return "$";
    used = true;
    return json;
  });
  if (!used) text = `${text}\n\n${json}`;
  for (const [name, value] of Object.entries(env))
    if (value !== undefined && value.length >= 8 && (isProviderCredential(name) || isGatehouseSecret(name)))
      text = text.split(value).join(MASK);
  return maskSecrets(text);
}

export interface PromptRun {
  readonly raw: RawOutcome & { aborted: boolean; truncated: boolean; droppedBytes: number };
  readonly verdict: NormalizedVerdict;
}

export async function runPromptHandler(
  event: CommandHookEvent,
  def: PromptHandlerDef,
  onFailure: OnFailure,
  input: object,
  timeoutMs: number,
  evaluate: PromptEvaluator | undefined,
  signal: AbortSignal | undefined,
  env: Readonly<Record<string, string | undefined>>,
): Promise<PromptRun> {
  const raw = { ...NO_OUTCOME };
  const failed = (error: HookError, detail: string, extra: Partial<PromptRun["raw"]> = {}): PromptRun => {
    const r = { ...raw, ...extra };
    const ctx: Ctx = { spec: EVENT_SPECS[event], raw: r, opts: { dialect: "claude", onFailure }, stderr: undefined };
    return { raw: r, verdict: failure(ctx, error, detail) };
  };
  if (signal?.aborted) return { raw: { ...raw, aborted: true }, verdict: { error: "aborted" } };
  if (!evaluate) return failed("spawn", "no model is configured to evaluate prompt hooks");
  const timeout = AbortSignal.timeout(timeoutMs);
  const both = signal ? AbortSignal.any([timeout, signal]) : timeout;
  let reply: string;
  try {
    reply = await evaluate({
      model: def.model,
      system: PROMPT_HOOK_SYSTEM,
      prompt: promptHookText(def.prompt, input, env),
      signal: both,
    });
  } catch (e) {
    if (signal?.aborted) return { raw: { ...raw, aborted: true }, verdict: { error: "aborted" } };
    if (timeout.aborted) return failed("timeout", "timed out", { timedOut: true });
    return failed("spawn", `the model call failed: ${(e as Error).name}`);
  }
  const parsed = ReplySchema.safeParse(parseJsonObject(reply));
  if (!parsed.success) return failed("unparseable", 'the model did not answer {"ok": …}');
  return { raw: { ...raw, exitCode: 0, stdout: reply }, verdict: verdictOf(event, def, parsed.data) };
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

const DEFAULT_REASON = "A prompt hook's condition was not met.";

/** What `ok: false` does, event by event, as Claude Code does it. */
function verdictOf(
  event: CommandHookEvent,
  def: PromptHandlerDef,
  reply: z.infer<typeof ReplySchema>,
): NormalizedVerdict {
  if (reply.ok) return {};
  const reason = reply.reason?.trim() || DEFAULT_REASON;
  const endsTurn = !def.continueOnBlock;
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
