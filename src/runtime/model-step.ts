import type { LanguageModelV3FunctionTool } from "@ai-sdk/provider";
import { type CollectedResponse, collectStream } from "../models/collect.js";
import type { RuntimeDeps } from "./deps.js";
import { buildModelPrompt } from "./prompt.js";
import type { RunState } from "./state.js";

/**
 * One model call (docs/lifecycle.md, steps 10b–10c): observers hear about it without being
 * awaited; the answer streams; its text goes to `onText`, which the output door gives only
 * while no output gate listens.
 */
export async function callModel(
  deps: RuntimeDeps,
  state: RunState,
  tools: readonly LanguageModelV3FunctionTool[],
  onText: ((delta: string) => void) | undefined,
): Promise<CollectedResponse> {
  const { engine } = deps;
  const { provider, modelId, model } = state.model;
  const step = ++state.steps;
  state.emit({ type: "step", step });
  const prompt = buildModelPrompt(state, deps.tools);
  if (engine.hasHooks("llm_input"))
    engine.emit("llm_input", { provider, model: modelId, messages: state.history, systemPrompt: state.systemPrompt() });
  if (engine.hasHooks("model_call_started")) engine.emit("model_call_started", { provider, model: modelId, step });
  const started = performance.now();
  let response: CollectedResponse;
  try {
    const { stream } = await model.doStream({
      prompt,
      ...(tools.length ? { tools: [...tools] } : {}),
      abortSignal: state.signal,
      providerOptions: { gatehouse: { runPrompt: state.prompt, step } },
    });
    response = await collectStream(stream, onText ? (e) => e.type === "text-delta" && onText(e.delta) : undefined);
  } catch (error) {
    engine.emit("model_call_ended", {
      provider,
      model: modelId,
      step,
      durationMs: performance.now() - started,
      error: error instanceof Error ? error.name : "Error",
    });
    throw error;
  }
  state.addUsage(response.usage);
  if (engine.hasHooks("model_call_ended"))
    engine.emit("model_call_ended", {
      provider,
      model: modelId,
      step,
      durationMs: performance.now() - started,
      usage: plainUsage(response.usage),
    });
  if (engine.hasHooks("llm_output"))
    engine.emit("llm_output", {
      provider,
      model: modelId,
      assistantTexts: response.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])),
      usage: plainUsage(response.usage),
    });
  return response;
}

function plainUsage(usage: CollectedResponse["usage"]) {
  return {
    ...(usage.inputTokens === undefined ? {} : { inputTokens: usage.inputTokens }),
    ...(usage.outputTokens === undefined ? {} : { outputTokens: usage.outputTokens }),
    ...(usage.totalTokens === undefined ? {} : { totalTokens: usage.totalTokens }),
  };
}
