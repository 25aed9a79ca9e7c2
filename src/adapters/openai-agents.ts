import type { Part, Role } from "../core/message.js";
import type { Attribution } from "../hooks/types.js";
import type { Gatehouse } from "../runtime/gatehouse.js";
import {
  admitToolCall,
  admitTurn,
  answersGated,
  type GatedAnswer,
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
 * Gatehouse in OpenAI Agents JS (`gatehouse-runtime/openai-agents`, docs/hosts/openai-agents.md):
 * input, output and tool guardrails that run the project's plugins. A block becomes the SDK's
 * tripwire, its `outputInfo` carrying the user-facing message (never the hook's reason).
 * `@openai/agents` is the caller's (an optional peer dependency): this module imports nothing of
 * it, not even its types. The shapes below are the parts of the SDK's types the guardrails use,
 * written so that what they produce is assignable to the SDK's own (`InputGuardrail`,
 * `OutputGuardrail`, `ToolInputGuardrailDefinition`, `ToolOutputGuardrailDefinition`, `Model`):
 * test/adapters/openai-agents.test.ts type-checks them against the real SDK and runs them in it.
 */

/** What the SDK hands an input or output guardrail as the agent (its `Agent`). */
export interface AgentsAgent {
  readonly tools: readonly unknown[];
  readonly instructions?: unknown;
}

/** A guardrail's verdict (the SDK's `GuardrailFunctionOutput`). */
export interface AgentsGuardrailOutput {
  tripwireTriggered: boolean;
  outputInfo: unknown;
}

/** An input guardrail (the SDK's `InputGuardrail`). */
export interface AgentsInputGuardrail {
  name: string;
  runInParallel?: boolean;
  execute(args: {
    agent: AgentsAgent;
    input: string | readonly unknown[];
    context: object;
  }): Promise<AgentsGuardrailOutput>;
}

/** An output guardrail (the SDK's `OutputGuardrail`). */
export interface AgentsOutputGuardrail {
  name: string;
  execute(args: { agentOutput: unknown; context: object }): Promise<AgentsGuardrailOutput>;
}

/** A tool guardrail's verdict (the SDK's `ToolGuardrailFunctionOutput`). */
export interface AgentsToolGuardrailOutput {
  outputInfo?: unknown;
  behavior: { type: "allow" } | { type: "rejectContent"; message: string } | { type: "throwException" };
}

/** The function call a tool guardrail sees (the SDK's `FunctionCallItem`). */
interface AgentsToolCall {
  name: string;
  callId: string;
  arguments: string;
}

/** A tool input guardrail (the SDK's `ToolInputGuardrailDefinition`). */
export interface AgentsToolInputGuardrail {
  type: "tool_input";
  name: string;
  run(data: { context: object; toolCall: AgentsToolCall }): Promise<AgentsToolGuardrailOutput>;
}

/** A tool output guardrail (the SDK's `ToolOutputGuardrailDefinition`). */
export interface AgentsToolOutputGuardrail {
  type: "tool_output";
  name: string;
  run(data: { context: object; toolCall: AgentsToolCall; output: unknown }): Promise<AgentsToolGuardrailOutput>;
}

/**
 * A model (the SDK's `Model`), generic in the SDK's request, response and stream event types so
 * that the wrapped model has exactly the type of the model it wraps.
 */
export interface AgentsModel<
  Request extends { signal?: AbortSignal } = { signal?: AbortSignal },
  Response = unknown,
  Event extends AgentsStreamEvent = AgentsStreamEvent,
  RetryArgs = never,
  RetryAdvice = never,
> {
  getResponse(request: Request): Promise<Response>;
  getStreamedResponse(request: Request): AsyncIterable<Event>;
  getRetryAdvice?(args: RetryArgs): Promise<RetryAdvice | undefined> | RetryAdvice | undefined;
}

/** A streamed event (the SDK's `StreamEvent`): `response_done` carries the response. */
export interface AgentsStreamEvent {
  type: string;
  response?: unknown;
}

export type GatehouseAgentsOptions = HostSession;

/**
 * A tripwire's `outputInfo`: what the user may read (`message`; null when `message_sending`
 * cancelled even the notice) and which policy decided. `rewritten`: the output gates changed the
 * answer, which a guardrail cannot do in place: `message` is the answer as they left it.
 */
export type GatehouseTripwireInfo =
  | { readonly message: string | null; readonly hook: string; readonly pluginId: string }
  | { readonly message: string; readonly rewritten: true };

export interface GatehouseGuardrails {
  /** For `Agent({ inputGuardrails })`: `before_input`, then `before_agent_run`; runs before the model (not in parallel). */
  readonly input: AgentsInputGuardrail;
  /** For `Agent({ outputGuardrails })`: `before_response_emit`, `message_sending`, `message_sent` on the final output. */
  readonly output: AgentsOutputGuardrail;
  /** For `tool({ inputGuardrails })`: `before_tool_call`. */
  readonly toolInput: AgentsToolInputGuardrail;
  /** For `tool({ outputGuardrails })`: `after_tool_call`. */
  readonly toolOutput: AgentsToolOutputGuardrail;
  /**
   * For `Agent({ model })`: the model with its streamed answers held until the output gates
   * passed them. A text they change or block is not streamed at all; the output guardrail then
   * trips on the verdict they reached (the gates run once).
   */
  model<
    Request extends { signal?: AbortSignal },
    Response,
    Event extends AgentsStreamEvent,
    RetryArgs = never,
    RetryAdvice = never,
  >(
    model: AgentsModel<Request, Response, Event, RetryArgs, RetryAdvice>,
  ): AgentsModel<Request, Response, Event, RetryArgs, RetryAdvice>;
}

/**
 * The guardrails of one Gatehouse. Every hook of one `Runner.run` sees one run id (`ctx.runId`),
 * and the audit records its verdicts under it. While a tool hook listens, the input guardrail
 * refuses to start an agent with a tool that lacks the tool guardrails (a hosted tool, or a
 * function tool without `toolInput` and `toolOutput`): its calls would run ungated.
 */
export function gatehouseGuardrails(gatehouse: Gatehouse, options?: GatehouseAgentsOptions): GatehouseGuardrails {
  const session = hostSession(options);
  // One Gatehouse run per SDK run: the SDK hands every guardrail the same context object.
  const runIds = new WeakMap<object, string>();
  const runOf = (context: object) => {
    const runId = runIds.get(context) ?? crypto.randomUUID();
    runIds.set(context, runId);
    return hostRun(gatehouse, session, runId);
  };

  const toolInput: AgentsToolInputGuardrail = {
    type: "tool_input",
    name: "gatehouse:before_tool_call",
    async run({ context, toolCall }) {
      const run = await runOf(context);
      const call = { toolName: toolCall.name, toolCallId: toolCall.callId, params: parseArguments(toolCall.arguments) };
      const admission = await admitToolCall(run, call);
      if (admission.stop) return halt(admission.stop);
      if (!admission.run) return reject(admission.message);
      // A guardrail cannot change the arguments the SDK runs the tool with: a rewrite it cannot apply refuses the call.
      if (admission.rewritten)
        return reject(
          `The ${call.toolName} call was not run: a policy rewrote its input, which this host cannot apply.`,
        );
      return { behavior: { type: "allow" } };
    },
  };

  const toolOutput: AgentsToolOutputGuardrail = {
    type: "tool_output",
    name: "gatehouse:after_tool_call",
    async run({ context, toolCall, output }) {
      const run = await runOf(context);
      const call = { toolName: toolCall.name, toolCallId: toolCall.callId, params: parseArguments(toolCall.arguments) };
      // The SDK hands output guardrails the output of a call that returned; a failure is already the model's text.
      const verdict = await gateToolOutput(run, call, { result: output }, 0);
      if (verdict.stop) return halt(verdict.stop);
      if (verdict.kind === "withheld") return reject(verdict.message);
      if (verdict.kind === "rewritten") return reject(asText(verdict.output));
      return { behavior: { type: "allow" } };
    },
  };

  const input: AgentsInputGuardrail = {
    name: "gatehouse:input",
    // Before the model: a guardrail run in parallel would let the model read the prompt it blocks.
    runInParallel: false,
    async execute({ agent, input, context }) {
      const run = await runOf(context);
      // After runOf: the plugins (and their hooks) are loaded once the Gatehouse is ready.
      if (toolsGated(run.engine)) refuseUngatedTools(agent.tools, toolInput, toolOutput);
      const verdict = await admitTurn(
        run,
        turnOf(input, typeof agent.instructions === "string" ? agent.instructions : ""),
      );
      return verdict.pass ? PASS : tripwire(verdict.by, verdict.message);
    },
  };

  // Answers the held stream already took through the output gates, by text, for the output guardrail.
  const streamVerdicts = new Map<string, GatedAnswer>();
  const gateOnce = async (text: string, run: () => Promise<HostRun>) => {
    const known = streamVerdicts.get(text);
    streamVerdicts.delete(text);
    return known ?? gateAnswer(await run(), [text]);
  };

  const output: AgentsOutputGuardrail = {
    name: "gatehouse:output",
    async execute({ agentOutput, context }) {
      const text = asText(agentOutput);
      if (text === "") return PASS;
      const gated = await gateOnce(text, () => runOf(context));
      if (!gated.pass) return tripwire(gated.by, gated.message);
      const delivered = gated.texts.at(-1) ?? "";
      if (delivered === text) return PASS;
      return {
        tripwireTriggered: true,
        outputInfo: { message: delivered, rewritten: true } satisfies GatehouseTripwireInfo,
      };
    },
  };

  const model = <
    Request extends { signal?: AbortSignal },
    Response,
    Event extends AgentsStreamEvent,
    RetryArgs = never,
    RetryAdvice = never,
  >(
    inner: AgentsModel<Request, Response, Event, RetryArgs, RetryAdvice>,
  ): AgentsModel<Request, Response, Event, RetryArgs, RetryAdvice> => ({
    getResponse: (request) => inner.getResponse(request),
    ...(inner.getRetryAdvice ? { getRetryAdvice: (args: RetryArgs) => inner.getRetryAdvice?.(args) } : {}),
    async *getStreamedResponse(request) {
      const held: Event[] = [];
      for await (const event of inner.getStreamedResponse(request)) {
        if (event.type !== "response_done") {
          held.push(event);
          continue;
        }
        const text = responseText(event.response);
        const run = await hostRun(gatehouse, session, undefined, request.signal);
        let passed = text === "" || !answersGated(run.engine);
        if (!passed) {
          const gated = await gateAnswer(run, [text]);
          if (streamVerdicts.size >= MAX_STREAM_VERDICTS) streamVerdicts.clear();
          streamVerdicts.set(text, gated);
          passed = gated.pass && gated.texts.at(-1) === text;
        }
        for (const e of held.splice(0)) if (passed || !carriesText(e)) yield e;
        yield event;
      }
      // A stream that ended before its response was done: its text was never checked.
      for (const e of held) if (!carriesText(e)) yield e;
    },
  });

  return { input, output, toolInput, toolOutput, model };
}

/** A bound on verdicts no output guardrail took (an agent with the model wrapper but not the guardrail). */
const MAX_STREAM_VERDICTS = 100;

/** Text deltas, and the provider's raw events (which hold the same text). */
function carriesText(event: AgentsStreamEvent): boolean {
  return event.type === "output_text_delta" || event.type === "model";
}

/** The assistant text of a model response's output items. */
function responseText(response: unknown): string {
  const output = (response as { output?: unknown } | undefined)?.output;
  if (!Array.isArray(output)) return "";
  return (output as Item[])
    .filter((i) => i.type === "message" && i.role === "assistant")
    .map(itemText)
    .join("");
}

const PASS: AgentsGuardrailOutput = { tripwireTriggered: false, outputInfo: null };

function tripwire(by: Attribution, message: string | null): AgentsGuardrailOutput {
  return {
    tripwireTriggered: true,
    outputInfo: { message, hook: by.hook, pluginId: by.pluginId } satisfies GatehouseTripwireInfo,
  };
}

/** The model reads `message` in place of the call's output. */
function reject(message: string): AgentsToolGuardrailOutput {
  return { behavior: { type: "rejectContent", message } };
}

/** A hook's `stopRun`: the SDK run ends now, with the stop's message for the user. */
function halt(stop: HostStop): AgentsToolGuardrailOutput {
  return {
    behavior: { type: "throwException" },
    outputInfo: {
      message: stop.message,
      hook: stop.by.hook,
      pluginId: stop.by.pluginId,
    } satisfies GatehouseTripwireInfo,
  };
}

function refuseUngatedTools(
  tools: readonly unknown[],
  toolInput: AgentsToolInputGuardrail,
  toolOutput: AgentsToolOutputGuardrail,
): void {
  const ungated = tools.flatMap((t) => {
    const tool = t as {
      type?: string;
      name?: string;
      inputGuardrails?: readonly unknown[];
      outputGuardrails?: readonly unknown[];
    };
    const gated =
      tool.type === "function" &&
      tool.inputGuardrails?.includes(toolInput) === true &&
      tool.outputGuardrails?.includes(toolOutput) === true;
    return gated ? [] : [tool.name ?? tool.type ?? "(unnamed)"];
  });
  if (ungated.length)
    throw new Error(
      `Gatehouse: tool ${ungated.join(", ")} lacks the Gatehouse tool guardrails (toolInput and toolOutput); its calls would run past before_tool_call and after_tool_call`,
    );
}

function parseArguments(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function asText(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value ?? "");
}

type Item = { readonly role?: string; readonly content?: unknown; readonly type?: string };

/** The SDK's run input (a string, or the conversation's items) as the input gates read it. */
function turnOf(input: string | readonly unknown[], instructions: string): HostTurn {
  if (typeof input === "string")
    return {
      prompt: input,
      modelPrompt: [instructions, input].filter(Boolean).join("\n\n"),
      earlier: [],
      systemPrompt: instructions,
    };
  const items = input as readonly Item[];
  const lastUser = items.findLastIndex((i) => i.role === "user");
  // Every item but the prompt, those after it too (an assistant prefill): before_agent_run sees them all.
  const earlier = items.flatMap((i, at) => {
    const role = at === lastUser ? undefined : ROLES[i.role ?? ""];
    return role ? [{ role, parts: [{ type: "text", text: itemText(i) } satisfies Part] }] : [];
  });
  const system = items.filter((i) => i.role === "system").map(itemText);
  return {
    prompt: lastUser < 0 ? "" : itemText(items[lastUser] as Item),
    modelPrompt: [instructions, ...items.map(itemText)].filter(Boolean).join("\n\n"),
    earlier,
    systemPrompt: [instructions, ...system].filter(Boolean).join("\n\n"),
  };
}

const ROLES: Readonly<Record<string, Role>> = { user: "user", assistant: "assistant" };

function itemText(item: Item): string {
  const { content } = item;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((p: { text?: unknown }) => (typeof p.text === "string" ? p.text : "")).join("");
}
