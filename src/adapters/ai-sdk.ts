import type {
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3FinishReason,
  LanguageModelV3GenerateResult,
  LanguageModelV3Middleware,
  LanguageModelV3Prompt,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
} from "@ai-sdk/provider";
import { type FlexibleSchema, safeValidateTypes } from "@ai-sdk/provider-utils";
import type { Part } from "../core/message.js";
import type { Gatehouse } from "../runtime/gatehouse.js";
import {
  admitToolCall,
  admitTurn,
  answersGated,
  deliverStop,
  gateAnswer,
  gateToolOutput,
  type HostRun,
  type HostSession,
  type HostStop,
  type HostTurn,
  hostRun,
  hostSession,
  toolsGated,
} from "./policy.js";

/**
 * Gatehouse in the Vercel AI SDK (`gatehouse-runtime/ai-sdk`, docs/hosts/ai-sdk.md): a
 * `wrapLanguageModel` middleware for the input and output gates, and `gatehouseTools` for the
 * tool gates, which only the tools' own `execute` can enforce (the model only asks for a call;
 * the SDK's loop runs it). The `ai` package is the caller's: this module needs only the
 * provider types Gatehouse already depends on.
 */

/** What a model call's hooks see: the session (`ctx.sessionId`) and agent id. Give tools the same. */
export type GatehouseAiSdkOptions = HostSession;

/** The tools each Gatehouse wrapped, by name: a model offered any other tool would run it ungated. */
const wrappedTools = new WeakMap<Gatehouse, Set<string>>();
/** Tool calls whose hooks asked to end the run (`stopRun`): the next model call after them delivers the notice instead. */
const pendingStops = new WeakMap<Gatehouse, Map<string, HostStop>>();
/** A bound on stops nobody consumed (the caller's loop ended first). */
const MAX_PENDING_STOPS = 1_000;

/**
 * What `gatehouseTools` needs of an AI SDK tool, spelt structurally: the caller's `ai` may bring
 * its own copy of the provider utilities, whose `Tool` type would not match ours.
 */
export interface ExecutableTool {
  readonly inputSchema?: unknown;
  // biome-ignore lint/suspicious/noExplicitAny: the SDK's tools take their own input and options types
  readonly execute?: (input: any, options: any) => unknown;
}

/** What the SDK hands a tool's `execute` that the gates use. */
interface ExecutionOptions {
  readonly toolCallId: string;
  readonly abortSignal?: AbortSignal;
}

/** A tool call a policy refused: the model reads `message` as the tool's error. */
export class GatehouseToolError extends Error {
  override readonly name = "GatehouseToolError";
}

/**
 * The middleware: before each model call, the input gates on its prompt (`before_input` on the
 * last user message, `before_agent_run` on all of it); after it, the output gates on the text it generated (`before_response_emit`,
 * `message_sending`, `message_sent`). While an output gate listens, a stream is held until it
 * ends and passed; a block (or a stop a tool hook asked for) answers with its notice instead of
 * the model's text, and the model is not called. Throws when a tool hook listens and the call
 * offers a tool that `gatehouseTools` did not wrap.
 */
export function gatehouseMiddleware(gatehouse: Gatehouse, options?: GatehouseAiSdkOptions): LanguageModelV3Middleware {
  const session = hostSession(options);
  return {
    specificationVersion: "v3",
    async wrapGenerate({ doGenerate, params }) {
      const run = await hostRun(gatehouse, session, undefined, params.abortSignal);
      const answered = await beforeModel(gatehouse, run, params);
      if (answered) return generated(answered.message);
      const result = await doGenerate();
      if (!answersGated(run.engine)) return result;
      const gated = await gateContent(run, result.content);
      if (!gated) return result;
      // The provider's raw body still holds the text the gates changed.
      const { body: _raw, ...response } = result.response ?? {};
      return { ...result, ...gated, response };
    },
    async wrapStream({ doStream, params }) {
      const run = await hostRun(gatehouse, session, undefined, params.abortSignal);
      const answered = await beforeModel(gatehouse, run, params);
      if (answered) return { stream: streamed(answered.message) };
      const result = await doStream();
      if (!answersGated(run.engine)) return result;
      return { ...result, stream: result.stream.pipeThrough(holdUntilGated(run)) };
    },
  };
}

/**
 * The tools with their `execute` behind the tool gates: `before_tool_call` may rewrite the input
 * (checked by the tool's schema again) or refuse the call, which then does not run and the model
 * reads the hook's message as the tool's error; `after_tool_call` may rewrite or withhold the
 * output (or the failure) before the model and the SDK's steps and messages see it. A tool
 * without `execute` is returned as it is (the caller runs it, ungated: the middleware refuses it
 * while a tool hook listens).
 */
export function gatehouseTools<T extends Record<string, ExecutableTool>>(
  gatehouse: Gatehouse,
  tools: T,
  options?: GatehouseAiSdkOptions,
): T {
  const session = hostSession(options);
  const names = wrappedTools.get(gatehouse) ?? new Set<string>();
  wrappedTools.set(gatehouse, names);
  const out: Record<string, ExecutableTool> = {};
  for (const [name, tool] of Object.entries(tools)) {
    const execute = tool.execute;
    if (!execute) {
      out[name] = tool;
      continue;
    }
    names.add(name);
    out[name] = {
      ...tool,
      execute: (input: unknown, opts: ExecutionOptions) =>
        gatedExecute(gatehouse, session, { name, tool, execute }, input, opts),
    };
  }
  return out as T;
}

async function gatedExecute(
  gatehouse: Gatehouse,
  session: Required<HostSession>,
  { name, tool, execute }: { name: string; tool: ExecutableTool; execute: NonNullable<ExecutableTool["execute"]> },
  input: unknown,
  opts: ExecutionOptions,
): Promise<unknown> {
  const run = await hostRun(gatehouse, session, undefined, opts.abortSignal);
  const call = { toolName: name, toolCallId: opts.toolCallId, params: input };
  const admission = await admitToolCall(run, call);
  if (admission.stop) rememberStop(gatehouse, opts.toolCallId, admission.stop);
  if (!admission.run) throw new GatehouseToolError(admission.message);
  let params = admission.params;
  if (admission.rewritten) {
    const checked = await safeValidateTypes({ value: params, schema: tool.inputSchema as FlexibleSchema<unknown> });
    if (!checked.success) throw new GatehouseToolError(`Invalid input for ${name} after a policy rewrite.`);
    params = checked.value;
  }
  const startedAt = performance.now();
  let outcome: { result: unknown } | { error: string };
  let thrown: unknown;
  try {
    outcome = { result: await finalValue(execute(params, opts)) };
  } catch (error) {
    opts.abortSignal?.throwIfAborted();
    thrown = error;
    outcome = { error: error instanceof Error ? error.message : String(error) };
  }
  const verdict = await gateToolOutput(run, { ...call, params }, outcome, performance.now() - startedAt);
  if (verdict.stop) rememberStop(gatehouse, opts.toolCallId, verdict.stop);
  if (verdict.kind === "withheld") return verdict.message;
  if (verdict.kind === "rewritten") return verdict.output;
  if ("error" in outcome) throw thrown;
  return outcome.result;
}

/** A tool's output: its value, or the last value it streamed (preliminary outputs are not shown ungated). */
async function finalValue(output: unknown): Promise<unknown> {
  const value = await output;
  if (value === null || typeof value !== "object" || !(Symbol.asyncIterator in value)) return value;
  let last: unknown;
  for await (const item of value as AsyncIterable<unknown>) last = item;
  return last;
}

function rememberStop(gatehouse: Gatehouse, toolCallId: string, stop: HostStop): void {
  const stops = pendingStops.get(gatehouse) ?? new Map<string, HostStop>();
  pendingStops.set(gatehouse, stops);
  if (stops.size >= MAX_PENDING_STOPS) stops.delete(stops.keys().next().value as string);
  stops.set(toolCallId, stop);
}

/**
 * What happens before the model is called: the tools checked, a stop a tool hook asked for,
 * then the input gates. Returns the text to answer with instead of the
 * model (null: nothing), or undefined when the model is called.
 */
async function beforeModel(
  gatehouse: Gatehouse,
  run: HostRun,
  params: LanguageModelV3CallOptions,
): Promise<{ message: string | null } | undefined> {
  if (toolsGated(run.engine)) {
    const names = wrappedTools.get(gatehouse);
    const ungated = (params.tools ?? []).filter((t) => t.type !== "function" || !names?.has(t.name));
    if (ungated.length)
      throw new Error(
        `Gatehouse: tool ${ungated.map((t) => t.name).join(", ")} is offered to the model without gatehouseTools(); its calls would run past before_tool_call and after_tool_call`,
      );
  }
  const last = params.prompt.at(-1);
  if (last?.role === "tool") {
    const stops = pendingStops.get(gatehouse);
    for (const part of last.content) {
      const stop = part.type === "tool-result" ? stops?.get(part.toolCallId) : undefined;
      if (!stop) continue;
      for (const p of last.content) if (p.type === "tool-result") stops?.delete(p.toolCallId);
      return { message: (await deliverStop(run, stop)).message };
    }
  }
  // Every call meets the input gates, not only one that ends in a user message: a prompt with an
  // assistant prefill, or a tool loop replayed from elsewhere, would otherwise reach the model
  // unchecked. The later steps of a tool loop show the gates the same user message again.
  const verdict = await admitTurn(run, turnOf(params.prompt));
  return verdict.pass ? undefined : { message: verdict.message };
}

/** The SDK's prompt as the input gates read it: the last user message is the prompt, every other message is in `earlier`. */
function turnOf(prompt: LanguageModelV3Prompt): HostTurn {
  const system = prompt.filter((m) => m.role === "system").map((m) => m.content);
  const rest = prompt.filter((m) => m.role !== "system");
  const user = rest.findLastIndex((m) => m.role === "user");
  const text = (m: (typeof rest)[number]) => partsOf(m.content).flatMap((p) => (p.type === "text" ? [p.text] : []));
  const last = rest[user];
  return {
    prompt: last ? text(last).join("") : "",
    modelPrompt: [...system, ...rest.flatMap(text)].join("\n\n"),
    earlier: rest.filter((_, i) => i !== user).map((m) => ({ role: m.role, parts: partsOf(m.content) })),
    systemPrompt: system.join("\n\n"),
  };
}

function partsOf(content: Exclude<LanguageModelV3Prompt[number]["content"], string>): Part[] {
  return content.flatMap((p): Part[] => {
    switch (p.type) {
      case "text":
        return [{ type: "text", text: p.text }];
      case "reasoning":
        return [{ type: "reasoning", text: p.text }];
      case "tool-call":
        return [{ type: "tool_call", toolCallId: p.toolCallId, toolName: p.toolName, input: p.input }];
      case "tool-result":
        return [{ type: "tool_result", toolCallId: p.toolCallId, toolName: p.toolName, output: p.output }];
      default:
        return [];
    }
  });
}

const STOP: LanguageModelV3FinishReason = { unified: "stop", raw: undefined };
const NO_USAGE: LanguageModelV3Usage = {
  inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 0, text: 0, reasoning: 0 },
};

/** An answer Gatehouse gives in the model's place (a block's notice): no model call was made. */
function generated(message: string | null): LanguageModelV3GenerateResult {
  return {
    content: message === null ? [] : [{ type: "text", text: message }],
    finishReason: STOP,
    usage: NO_USAGE,
    warnings: [],
  };
}

function streamed(message: string | null): ReadableStream<LanguageModelV3StreamPart> {
  const parts: LanguageModelV3StreamPart[] = [
    { type: "stream-start", warnings: [] },
    ...textParts(message),
    { type: "finish", finishReason: STOP, usage: NO_USAGE },
  ];
  return new ReadableStream({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  });
}

const TEXT_ID = "gatehouse";
function textParts(message: string | null): LanguageModelV3StreamPart[] {
  if (message === null) return [];
  return [
    { type: "text-start", id: TEXT_ID },
    { type: "text-delta", id: TEXT_ID, delta: message },
    { type: "text-end", id: TEXT_ID },
  ];
}

/**
 * A generated answer after the output gates: undefined when they left it as it was; else its text
 * rewritten (its reasoning dropped, as a run drops a rewritten answer's), or only the block's
 * notice (its tool calls dropped: the SDK's loop ends there, as a blocked run does).
 */
async function gateContent(
  run: HostRun,
  content: readonly LanguageModelV3Content[],
): Promise<{ content: LanguageModelV3Content[]; finishReason?: LanguageModelV3FinishReason } | undefined> {
  const text = content.flatMap((c) => (c.type === "text" ? [c.text] : [])).join("");
  if (text === "") return undefined;
  const gated = await gateAnswer(run, [text]);
  if (!gated.pass)
    return { content: gated.message === null ? [] : [{ type: "text", text: gated.message }], finishReason: STOP };
  const delivered = gated.texts.at(-1) ?? "";
  if (delivered === text) return undefined;
  const at = content.findIndex((c) => c.type === "text");
  const others = content.filter((c, i) => i !== at && c.type !== "text" && c.type !== "reasoning");
  const before = content.slice(0, at).filter((c) => c.type !== "reasoning").length;
  others.splice(before, 0, { type: "text", text: delivered });
  return { content: others };
}

/**
 * Holds a stream until it ends, then passes its text through the output gates and sends what
 * they left (as `gateContent`). A stream that failed sends no text: unchecked text is never shown.
 */
function holdUntilGated(run: HostRun): TransformStream<LanguageModelV3StreamPart, LanguageModelV3StreamPart> {
  const parts: LanguageModelV3StreamPart[] = [];
  return new TransformStream({
    transform(part) {
      parts.push(part);
    },
    async flush(controller) {
      for (const part of await gateStream(run, parts)) controller.enqueue(part);
    },
  });
}

const TEXT_PARTS = new Set([
  "text-start",
  "text-delta",
  "text-end",
  "reasoning-start",
  "reasoning-delta",
  "reasoning-end",
]);
const FRAME_PARTS = new Set(["stream-start", "response-metadata", "finish", "error"]);
/** Parts that carry the answer's text: a changed answer sends none of them (raw chunks hold the provider's text). */
const isTextPart = (p: LanguageModelV3StreamPart) => TEXT_PARTS.has(p.type) || p.type === "raw";

async function gateStream(run: HostRun, parts: LanguageModelV3StreamPart[]): Promise<LanguageModelV3StreamPart[]> {
  const text = parts.flatMap((p) => (p.type === "text-delta" ? [p.delta] : [])).join("");
  if (parts.some((p) => p.type === "error")) return parts.filter((p) => !isTextPart(p));
  if (text === "") return parts;
  const gated = await gateAnswer(run, [text]);
  if (!gated.pass) {
    const frame = parts.filter((p) => FRAME_PARTS.has(p.type) && p.type !== "finish");
    const finish = parts.find((p) => p.type === "finish");
    const usage = finish?.type === "finish" ? finish.usage : NO_USAGE;
    return [...frame, ...textParts(gated.message), { type: "finish", finishReason: STOP, usage }];
  }
  const delivered = gated.texts.at(-1) ?? "";
  if (delivered === text) return parts;
  const at = parts.findIndex((p) => p.type === "text-start");
  const before = parts.slice(0, at).filter((p) => !isTextPart(p));
  const after = parts.slice(at).filter((p) => !isTextPart(p));
  return [...before, ...textParts(delivered), ...after];
}
