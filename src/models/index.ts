import type { LanguageModelV3 } from "@ai-sdk/provider";
import { createProviderModel } from "./providers.js";
import { createEchoModel, loadScriptedModel } from "./scripted.js";
import { parseModelSpec } from "./spec.js";

export type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3Prompt } from "@ai-sdk/provider";
export {
  type CollectedResponse,
  type CollectedToolCall,
  collectStream,
  type FinishReason,
  ModelStreamError,
  type ModelStreamEvent,
  type ModelUsage,
  toModelUsage,
} from "./collect.js";
export { ModelSpecError, ScriptedFileError, ScriptedModelError } from "./errors.js";
export {
  contextMessage,
  contextTextPart,
  GATEHOUSE_KEY,
  type GatehouseMark,
  gatehouseMark,
  type PromptMessage,
  SUMMARY_PREFIX,
  type ToModelPromptOptions,
  toModelPrompt,
} from "./prompt.js";
export {
  createEchoModel,
  createScriptedModel,
  loadScriptedModel,
  type Script,
  type ScriptInput,
  type ScriptTurn,
} from "./scripted.js";
export { type ModelSpec, parseModelSpec } from "./spec.js";
export { type ToolDefinition, toModelTools } from "./tools.js";

export interface ResolveModelOptions {
  /** Where a relative `scripted:<file>` is found. Default: `process.cwd()`. */
  readonly cwd?: string;
  /** Where keys and base URLs are read. Default: `process.env`; nothing else is consulted. */
  readonly env?: NodeJS.ProcessEnv;
  /** Passed to the provider packages (tests, proxies). */
  readonly fetch?: typeof fetch;
}

/**
 * Turns a `provider:model` spec into a model. A malformed spec or scripted file throws
 * `ModelSpecError` here; a missing API key fails the first call instead, so commands that never
 * call the model work without credentials.
 */
export async function resolveModel(spec: string, opts: ResolveModelOptions = {}): Promise<LanguageModelV3> {
  const parsed = parseModelSpec(spec);
  if (parsed.provider === "scripted") {
    return parsed.source === "echo" ? createEchoModel() : loadScriptedModel(parsed.file, opts.cwd);
  }
  return createProviderModel(parsed, spec, { env: opts.env ?? process.env, ...(opts.fetch && { fetch: opts.fetch }) });
}
