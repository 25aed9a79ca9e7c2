import type { LanguageModelV3CallOptions, LanguageModelV3FunctionTool } from "@ai-sdk/provider";
import { type CollectedResponse, collectStream } from "../models/collect.js";
import { modelRunError } from "../models/failure.js";
import { CommittedOutput, ModelCallFailure, withModelRetries } from "../models/retry.js";
import type { ModelSettings, RuntimeDeps } from "./deps.js";
import { buildModelPrompt } from "./prompt.js";
import type { RunState } from "./state.js";

/**
 * One model call (docs/lifecycle.md, steps 10b–10c): observers hear about it without being
 * awaited; the answer streams; its text goes to `onText`, which the output door gives only
 * while no output gate listens. A retryable failure before anything streamed is tried again
 * (`model.maxRetries`), each retry reported as a `retry` run event.
 */
export async function callModel(
  deps: RuntimeDeps,
  state: RunState,
  tools: readonly LanguageModelV3FunctionTool[],
  onText: ((delta: string) => void) | undefined,
): Promise<CollectedResponse> {
  const { engine, logger } = deps;
  const { provider, modelId, model } = state.model;
  const step = state.countStep();
  const tokens = state.totalUsage()?.totalTokens;
  state.emit({ type: "step", step, ...(tokens === undefined ? {} : { tokens }) });
  const prompt = buildModelPrompt(state, deps.tools);
  if (engine.hasHooks("llm_input"))
    engine.emit("llm_input", { provider, model: modelId, messages: state.history, systemPrompt: state.systemPrompt() });
  if (engine.hasHooks("model_call_started")) engine.emit("model_call_started", { provider, model: modelId, step });
  const started = performance.now();
  const settings = deps.config.model;
  const options: LanguageModelV3CallOptions = {
    prompt,
    ...(tools.length ? { tools: [...tools] } : {}),
    abortSignal: state.signal,
    ...callSettings(settings, provider),
    providerOptions: { ...providerSettings(settings, provider), gatehouse: { runPrompt: state.prompt, step } },
  };
  // Debug lines are built only when someone reads them: this runs at every step.
  const debug = logger.debugEnabled === true;
  if (debug)
    logger.debug(`model call: step ${step}, ${provider}:${modelId}, ${prompt.length} messages, ${tools.length} tools`);
  let response: CollectedResponse;
  try {
    response = await withModelRetries(
      async () => {
        const { stream } = await model.doStream(options);
        let streamed = false;
        try {
          return await collectStream(stream, (e) => {
            if (e.type === "finish") return;
            streamed = true;
            if (onText && e.type === "text-delta") onText(e.delta);
          });
        } catch (error) {
          // Something already streamed: trying again would repeat it (and bill it twice).
          throw streamed ? new CommittedOutput(error) : error;
        }
      },
      {
        maxRetries: settings.maxRetries,
        signal: state.signal,
        onRetry: ({ attempt, delayMs, error }) => {
          const failure = modelRunError(error, { provider, model: modelId });
          state.emit({
            type: "retry",
            step,
            attempt,
            maxAttempts: settings.maxRetries + 1,
            delayMs,
            kind: failure.kind,
            ...(failure.status === undefined ? {} : { status: failure.status }),
          });
          logger.debug(
            `model call: step ${step} retry ${attempt - 1}/${settings.maxRetries} in ${delayMs} ms after ${failure.kind}${failure.status === undefined ? "" : ` (${failure.status})`}`,
          );
        },
      },
    );
  } catch (error) {
    const cause = error instanceof ModelCallFailure ? error.cause : error;
    const durationMs = Math.round(performance.now() - started);
    if (debug) logger.debug(`model call: step ${step} failed after ${durationMs} ms`);
    engine.emit("model_call_ended", {
      provider,
      model: modelId,
      step,
      durationMs,
      error: cause instanceof Error ? cause.name : "Error",
    });
    throw error;
  }
  state.addUsage(response.usage);
  const durationMs = performance.now() - started;
  if (debug)
    logger.debug(
      `model call: step ${step} done in ${Math.round(durationMs)} ms, ${response.finishReason}, ${response.toolCalls.length} tool calls, tokens in ${response.usage.inputTokens ?? "?"} out ${response.usage.outputTokens ?? "?"}`,
    );
  if (engine.hasHooks("model_call_ended"))
    engine.emit("model_call_ended", { provider, model: modelId, step, durationMs, usage: plainUsage(response.usage) });
  if (engine.hasHooks("llm_output"))
    engine.emit("llm_output", {
      provider,
      model: modelId,
      assistantTexts: response.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])),
      usage: plainUsage(response.usage),
    });
  return response;
}

/** gatehouse.json `model` settings the AI SDK has a call option for. */
function callSettings(settings: ModelSettings, _provider: string): Partial<LanguageModelV3CallOptions> {
  return {
    ...(settings.temperature === undefined ? {} : { temperature: settings.temperature }),
    ...(settings.maxOutputTokens === undefined ? {} : { maxOutputTokens: settings.maxOutputTokens }),
  };
}

/** `reasoningEffort` is each provider's own option: OpenAI's `reasoningEffort`, Anthropic's `effort`. */
function providerSettings(
  settings: ModelSettings,
  provider: string,
): NonNullable<LanguageModelV3CallOptions["providerOptions"]> {
  const effort = settings.reasoningEffort;
  if (effort === undefined) return {};
  if (provider === "anthropic") return { anthropic: { effort: effort === "minimal" ? "low" : effort } };
  if (provider === "openai" || provider === "openai-compatible") return { [provider]: { reasoningEffort: effort } };
  return {};
}

function plainUsage(usage: CollectedResponse["usage"]) {
  return {
    ...(usage.inputTokens === undefined ? {} : { inputTokens: usage.inputTokens }),
    ...(usage.outputTokens === undefined ? {} : { outputTokens: usage.outputTokens }),
    ...(usage.totalTokens === undefined ? {} : { totalTokens: usage.totalTokens }),
  };
}
