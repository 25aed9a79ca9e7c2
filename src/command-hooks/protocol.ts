import { z } from "zod";
import { DIALECT_SPECS, type Dialect, isForeign } from "./dialects.js";
import { type CommandHookEvent, EVENT_SPECS, type EventSpec, type VerdictField } from "./events.js";
import { interpretForeign } from "./foreign.js";
import type { OnFailure } from "./settings.js";
import {
  HOOK_BLOCK_REASON,
  type HookDecision,
  type HookError,
  NO_DECISION_BLOCK_REASON,
  type NormalizedVerdict,
  userSafeText,
} from "./verdict.js";

/** What came back from a handler, before any interpretation. */
export interface RawOutcome {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  aborted?: boolean;
  spawnError?: string;
  /** HTTP handlers: the response status (the body is `stdout`). */
  httpStatus?: number;
}

/** What a handler that produced nothing (yet) returned: no exit, no output. */
export const NO_OUTCOME: Readonly<RawOutcome & { aborted: boolean; truncated: boolean; droppedBytes: number }> =
  Object.freeze({
    exitCode: null,
    signal: null,
    stdout: "",
    stderr: "",
    timedOut: false,
    aborted: false,
    truncated: false,
    droppedBytes: 0,
  });

export interface InterpretOptions {
  dialect: Dialect;
  onFailure: OnFailure;
  /** The handler's command line, kept out of any reason shown to users. */
  commandLine?: string;
  /** A foreign dialect's event, and the payload it was sent (to translate tool input back). */
  native?: { readonly event: string; readonly observe?: boolean; readonly payload: Readonly<Record<string, unknown>> };
}

const Obj = z.record(z.string(), z.unknown());

/** Types of the fields we read; unknown keys are tolerated (Claude Code keeps adding some). */
export const HookJsonSchema = z.looseObject({
  continue: z.boolean().optional(),
  stopReason: z.string().optional(),
  suppressOutput: z.boolean().optional(),
  systemMessage: z.string().optional(),
  decision: z.enum(["block", "approve"]).optional(),
  reason: z.string().optional(),
  additionalContext: z.string().optional(),
  updatedToolOutput: z.unknown().optional(),
  result: z.string().optional(),
  hookSpecificOutput: z
    .looseObject({
      hookEventName: z.string().optional(),
      permissionDecision: z.enum(["allow", "deny", "ask", "defer"]).optional(),
      permissionDecisionReason: z.string().optional(),
      updatedInput: Obj.optional(),
      additionalContext: z.string().optional(),
      updatedToolOutput: z.unknown().optional(),
      updatedMCPToolOutput: z.unknown().optional(),
      decision: z
        .looseObject({
          behavior: z.enum(["allow", "deny"]),
          updatedInput: Obj.optional(),
          message: z.string().optional(),
          interrupt: z.boolean().optional(),
        })
        .optional(),
      retry: z.boolean().optional(),
      // SessionStart and UserPromptSubmit (docs/command-hooks.md lists what each does here).
      sessionTitle: z.string().optional(),
      initialUserMessage: z.string().optional(),
      watchPaths: z.array(z.string()).optional(),
      reloadSkills: z.boolean().optional(),
      suppressOriginalPrompt: z.boolean().optional(),
    })
    .optional(),
});
export type HookJson = z.infer<typeof HookJsonSchema>;

export type Parsed =
  | { kind: "empty" }
  | { kind: "plain"; text: string }
  | { kind: "json"; value: HookJson }
  | { kind: "invalid"; detail: string };

/** stdout is JSON only when it starts with `{` (after whitespace); anything else is plain text. */
export function parseStdout(stdout: string, event: CommandHookEvent): Parsed {
  const text = stdout.trim();
  if (text === "") return { kind: "empty" };
  if (!text.startsWith("{")) return { kind: "plain", text };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { kind: "invalid", detail: `stdout is not valid JSON: ${(e as Error).message}` };
  }
  const r = HookJsonSchema.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0];
    return { kind: "invalid", detail: `stdout JSON: ${issue?.path.join(".") || "(root)"}: ${issue?.message}` };
  }
  const name = r.data.hookSpecificOutput?.hookEventName;
  if (name !== undefined && name !== event) {
    return { kind: "invalid", detail: `hookSpecificOutput.hookEventName is "${name}", expected "${event}"` };
  }
  return { kind: "json", value: r.data };
}

/** The line a PreToolUse `defer` gets: it means nothing here, and a hook author should know. */
export const DEFER_WARNING =
  'permissionDecision "defer" has no meaning in Gatehouse (no deferred-tool exit to resume); taken as no decision';

/** Turns a raw outcome into a verdict under the handler's dialect. */
export function interpret(event: CommandHookEvent, raw: RawOutcome, opts: InterpretOptions): NormalizedVerdict {
  const spec = EVENT_SPECS[event];
  const ctx: Ctx = { spec, raw, opts, stderr: userSafeText(raw.stderr, opts.commandLine) };
  if (raw.aborted) return { error: "aborted", errorDetail: "the run was cancelled" };
  if (raw.spawnError !== undefined) return failure(ctx, "spawn", raw.spawnError);
  if (raw.timedOut) return failure(ctx, "timeout", "timed out");
  if (raw.httpStatus !== undefined && (raw.httpStatus < 200 || raw.httpStatus > 299)) {
    return failure(ctx, "exit", `HTTP status ${raw.httpStatus}`);
  }
  if (isForeign(opts.dialect)) {
    const verdict = interpretForeign(ctx);
    // An event the foreign tool does not wait for: its failures are reported, its answers ignored.
    if (!opts.native?.observe) return verdict;
    return verdict.error === undefined
      ? {}
      : { error: verdict.error, ...(verdict.errorDetail ? { errorDetail: verdict.errorDetail } : {}) };
  }
  return opts.dialect === "code-puppy" ? codePuppy(ctx) : claude(ctx);
}

export interface Ctx {
  spec: EventSpec;
  raw: RawOutcome;
  opts: InterpretOptions;
  /** stderr as it may be shown. */
  stderr: string | undefined;
}

export function blockDecision(spec: EventSpec): HookDecision | undefined {
  if (spec.decision === "none") return undefined;
  return spec.decision === "block" ? "block" : "deny";
}

export function failure(ctx: Ctx, error: HookError, detail: string): NormalizedVerdict {
  const decision = blockDecision(ctx.spec);
  if (ctx.opts.onFailure !== "block" || !ctx.spec.failureCanBlock || decision === undefined) {
    return { error, errorDetail: detail };
  }
  // A non-zero exit is the hook speaking (its stderr is its reason); 126/127 are the shell's words.
  const code = ctx.raw.exitCode;
  const ownWords = error === "exit" && code !== 126 && code !== 127 ? ctx.stderr : undefined;
  return { decision, reason: ownWords ?? NO_DECISION_BLOCK_REASON, error, errorDetail: detail };
}

export function exitDetail(raw: RawOutcome): string {
  return raw.exitCode === null ? `killed by ${raw.signal ?? "a signal"}` : `exit code ${raw.exitCode}`;
}

export function claude(ctx: Ctx): NormalizedVerdict {
  const { spec, raw } = ctx;
  const dialect = DIALECT_SPECS[ctx.opts.dialect];
  const parsed = parseStdout(raw.stdout, spec.name);
  const jsonReadable = !dialect.jsonOnExitZeroOnly || raw.exitCode === 0;
  if (raw.exitCode === dialect.blockingExit) {
    const fromJson = parsed.kind === "json" && jsonReadable ? fromClaudeJson(spec, parsed.value, ctx) : {};
    return blockingExit(ctx, fromJson);
  }
  if (jsonReadable && parsed.kind === "json") return fromClaudeJson(spec, parsed.value, ctx);
  if (raw.exitCode !== 0) return failure(ctx, "exit", exitDetail(raw));
  if (parsed.kind === "invalid") return failure(ctx, "unparseable", parsed.detail);
  return plainSuccess(spec, parsed);
}

/** The blocking exit code: blocks where the event can, with the JSON reason if the JSON blocks, else stderr. */
function blockingExit(ctx: Ctx, fromJson: NormalizedVerdict): NormalizedVerdict {
  const decision = blockDecision(ctx.spec);
  const { decision: jsonDecision, reason: jsonReason, ...rest } = fromJson;
  if (decision === undefined) return withFeedback(ctx, rest, ctx.stderr);
  const jsonBlocks = jsonDecision === "block" || jsonDecision === "deny";
  return { ...rest, decision, reason: (jsonBlocks ? jsonReason : undefined) ?? ctx.stderr ?? HOOK_BLOCK_REASON };
}

/** Non-blocking stderr, routed to whom the dialect says it is for on this event. */
export function withFeedback(ctx: Ctx, v: NormalizedVerdict, feedback: string | undefined): NormalizedVerdict {
  if (feedback === undefined) return v;
  const audience = ctx.spec.feedback[ctx.opts.dialect === "code-puppy" ? "codePuppy" : "claude"];
  if (audience === "model") return { ...v, additionalContext: joinText(v.additionalContext, feedback) };
  return audience === "user" ? { ...v, feedback } : v;
}

const joinText = (a: string | undefined, b: string) => (a === undefined ? b : `${a}\n\n${b}`);

function plainSuccess(spec: EventSpec, parsed: Parsed, contextEvent = spec.plainStdoutIsContext): NormalizedVerdict {
  if (parsed.kind === "plain" && contextEvent) return { additionalContext: parsed.text };
  return {};
}

export function fromClaudeJson(spec: EventSpec, json: HookJson, ctx: Ctx): NormalizedVerdict {
  const hso = json.hookSpecificOutput ?? {};
  const v: NormalizedVerdict = {};
  const safe = (t: string | undefined) => userSafeText(t, ctx.opts.commandLine);
  if (json.continue === false) {
    v.continue = false;
    const stop = safe(json.stopReason);
    if (stop !== undefined) v.stopReason = stop;
  }
  const message = safe(json.systemMessage);
  if (message !== undefined) v.systemMessage = message;
  const context = hso.additionalContext ?? json.additionalContext;
  if (context !== undefined && context !== "") v.additionalContext = context;
  const toolOutput = hso.updatedToolOutput ?? hso.updatedMCPToolOutput ?? json.updatedToolOutput;
  if (toolOutput !== undefined) v.updatedToolOutput = toolOutput;
  if (hso.retry === true) v.retry = true;
  const title = hso.sessionTitle?.trim();
  if (title) v.sessionTitle = title;

  let decision: HookDecision | undefined;
  let reason: string | undefined;
  if (spec.decision === "permission") {
    const legacy = json.decision === "approve" ? "allow" : json.decision === "block" ? "deny" : undefined;
    const pd = hso.permissionDecision === "defer" ? undefined : hso.permissionDecision;
    // Claude Code's defer ends a `-p` run for a later --resume; Gatehouse has no such exit: say so.
    if (hso.permissionDecision === "defer")
      v.systemMessage = [v.systemMessage, DEFER_WARNING].filter((t) => t !== undefined).join("\n");
    decision = pd ?? legacy;
    reason = pd !== undefined ? hso.permissionDecisionReason : json.reason;
    if (hso.updatedInput !== undefined) v.updatedInput = hso.updatedInput;
  } else if (spec.decision === "approval") {
    decision = hso.decision?.behavior;
    reason = hso.decision?.message;
    if (hso.decision?.updatedInput !== undefined) v.updatedInput = hso.decision.updatedInput;
    if (hso.decision?.behavior === "deny" && hso.decision.interrupt === true) v.interrupt = true;
  } else if (spec.decision === "block" && json.decision === "block") {
    decision = "block";
    reason = json.reason;
  }
  if (decision !== undefined) {
    v.decision = decision;
    const blocks = decision === "deny" || decision === "block";
    const shown = safe(reason) ?? (blocks ? (ctx.stderr ?? HOOK_BLOCK_REASON) : undefined);
    if (shown !== undefined) v.reason = shown;
  }
  return keepFields(spec, v);
}

const FIELD_KEYS: Record<VerdictField, (keyof NormalizedVerdict)[]> = {
  additionalContext: ["additionalContext"],
  updatedInput: ["updatedInput"],
  updatedToolOutput: ["updatedToolOutput"],
  continue: ["continue", "stopReason"],
  systemMessage: ["systemMessage"],
  retry: ["retry"],
  sessionTitle: ["sessionTitle"],
};

/** Drops what the event cannot act on, so a merged verdict never carries a field nobody reads. */
export function keepFields(spec: EventSpec, v: NormalizedVerdict): NormalizedVerdict {
  for (const [field, keys] of Object.entries(FIELD_KEYS) as [VerdictField, (keyof NormalizedVerdict)[]][]) {
    if (!spec.fields.has(field)) for (const k of keys) delete v[k];
  }
  return v;
}

const CODE_PUPPY_CONTEXT_EVENTS = new Set<CommandHookEvent>(["PreToolUse", "UserPromptSubmit", "SessionStart"]);

/**
 * Code Puppy: exit 1 blocks with stderr, exit 2 is feedback, exit 0 may carry a control JSON
 * (`decision`/`result` "block", `permissionDecision` "deny" or `continue:false` block). Plain
 * stdout is context on the events where Code Puppy injects it.
 */
function codePuppy(ctx: Ctx): NormalizedVerdict {
  const { spec, raw } = ctx;
  const parsed = parseStdout(raw.stdout, spec.name);
  const control = parsed.kind === "json" ? codePuppyControl(parsed.value, ctx) : undefined;
  const context = control?.context ?? (parsed.kind === "plain" ? parsed.text : undefined);
  const base: NormalizedVerdict =
    context !== undefined && CODE_PUPPY_CONTEXT_EVENTS.has(spec.name) ? { additionalContext: context } : {};
  const decision = blockDecision(spec);
  if (raw.exitCode === 1) {
    if (decision === undefined) return withFeedback(ctx, base, ctx.stderr);
    return { ...base, decision, reason: control?.reason ?? ctx.stderr ?? HOOK_BLOCK_REASON };
  }
  if (raw.exitCode === 2) return withFeedback(ctx, base, ctx.stderr);
  if (raw.exitCode !== 0) return failure(ctx, "exit", exitDetail(raw));
  if (parsed.kind === "invalid") return failure(ctx, "unparseable", parsed.detail);
  if (control?.blocks && decision !== undefined) {
    return { ...base, decision, reason: control.reason ?? ctx.stderr ?? HOOK_BLOCK_REASON };
  }
  // On Stop a block means "keep going", so `continue:false` (stop) cannot be read as a block.
  if (control?.stops) return { ...base, continue: false, ...(control.reason ? { stopReason: control.reason } : {}) };
  return base;
}

const STOP_EVENTS = new Set<CommandHookEvent>(["Stop", "SubagentStop"]);

function codePuppyControl(
  json: HookJson,
  ctx: Ctx,
): { blocks: boolean; stops: boolean; reason?: string; context?: string } {
  const hso = json.hookSpecificOutput ?? {};
  const stops = json.continue === false && STOP_EVENTS.has(ctx.spec.name);
  const blocks =
    json.result === "block" ||
    json.decision === "block" ||
    hso.permissionDecision === "deny" ||
    (json.continue === false && !stops);
  const reason = userSafeText(json.reason ?? hso.permissionDecisionReason ?? json.stopReason, ctx.opts.commandLine);
  const context = hso.additionalContext ?? json.additionalContext;
  return {
    blocks,
    stops,
    ...(reason !== undefined ? { reason } : {}),
    ...(context !== undefined && context !== "" ? { context } : {}),
  };
}
