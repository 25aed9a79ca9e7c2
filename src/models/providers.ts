import { type LanguageModelV3, LoadAPIKeyError } from "@ai-sdk/provider";
import type { ModelSpec } from "./spec.js";

export interface ProviderOptions {
  readonly env: NodeJS.ProcessEnv;
  readonly fetch?: typeof fetch;
}

type HttpSpec = Extract<ModelSpec, { provider: "openai" | "anthropic" | "openai-compatible" }>;

/**
 * Builds an AI SDK model for an HTTP provider. Every setting is read from `env` here and passed
 * explicitly: left undefined, the provider packages would fall back to `process.env` on their own,
 * and a caller that passes its own `env` (tests, the server) must never pick up the machine's keys.
 * The provider packages are imported on demand so a run pays only for the provider it uses.
 */
export async function createProviderModel(
  spec: HttpSpec,
  raw: string,
  opts: ProviderOptions,
): Promise<LanguageModelV3> {
  const { env } = opts;
  switch (spec.provider) {
    case "openai": {
      const apiKey = nonEmpty(env.OPENAI_API_KEY);
      if (apiKey === undefined) return missingKey(raw, "openai.chat", spec.modelId, "OpenAI", "OPENAI_API_KEY");
      const { createOpenAI } = await import("@ai-sdk/openai");
      // Chat Completions, not Responses: it is stateless (Responses stores every response
      // server-side by default, and blocked content must not persist anywhere), it is the protocol
      // OPENAI_BASE_URL proxies and openai-compatible servers speak, and our parts carry no
      // provider item ids for Responses to refer back to.
      return createOpenAI({
        apiKey,
        baseURL: nonEmpty(env.OPENAI_BASE_URL) ?? "https://api.openai.com/v1",
        organization: nonEmpty(env.OPENAI_ORG_ID),
        project: nonEmpty(env.OPENAI_PROJECT_ID),
        ...(opts.fetch && { fetch: opts.fetch }),
      }).chat(spec.modelId);
    }
    case "anthropic": {
      const apiKey = nonEmpty(env.ANTHROPIC_API_KEY);
      const authToken = apiKey === undefined ? nonEmpty(env.ANTHROPIC_AUTH_TOKEN) : undefined;
      if (apiKey === undefined && authToken === undefined) {
        return missingKey(
          raw,
          "anthropic.messages",
          spec.modelId,
          "Anthropic",
          "ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)",
        );
      }
      const { createAnthropic } = await import("@ai-sdk/anthropic");
      return createAnthropic({
        ...(apiKey !== undefined ? { apiKey } : { authToken }),
        baseURL: anthropicBaseURL(nonEmpty(env.ANTHROPIC_BASE_URL)),
        ...(opts.fetch && { fetch: opts.fetch }),
      }).messages(spec.modelId);
    }
    case "openai-compatible": {
      const { createOpenAICompatible } = await import("@ai-sdk/openai-compatible");
      // Local servers (Ollama, LM Studio) need no key. OPENAI_API_KEY is deliberately not used:
      // it would hand an OpenAI secret to whatever host the spec names.
      const apiKey = nonEmpty(env.OPENAI_COMPATIBLE_API_KEY);
      return createOpenAICompatible({
        name: "openai-compatible",
        baseURL: spec.baseURL,
        ...(apiKey !== undefined && { apiKey }),
        includeUsage: true,
        ...(opts.fetch && { fetch: opts.fetch }),
      }).chatModel(spec.modelId);
    }
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value.trim();
}

/**
 * ANTHROPIC_BASE_URL follows the Anthropic SDK / Claude Code convention (a host without `/v1`),
 * while the AI SDK appends `/messages` to its base URL. A URL with no path gets `/v1`, so the same
 * variable works for both; a URL with a path is taken as the full prefix.
 */
export function anthropicBaseURL(value: string | undefined): string {
  if (value === undefined) return "https://api.anthropic.com/v1";
  const trimmed = value.replace(/\/+$/, "");
  try {
    if (new URL(trimmed).pathname.replace(/\/+$/, "") === "") return `${trimmed}/v1`;
  } catch {
    // Not a URL: let the provider report it on the first call.
  }
  return trimmed;
}

/**
 * A missing key is reported when the model is called, not when it is resolved, so commands that
 * never call the model (listing, validation, dry runs) still work without credentials.
 */
function missingKey(spec: string, provider: string, modelId: string, label: string, variable: string): LanguageModelV3 {
  const fail = () =>
    Promise.reject(
      new LoadAPIKeyError({ message: `${label} API key is missing for model spec '${spec}': set ${variable}` }),
    );
  return { specificationVersion: "v3", provider, modelId, supportedUrls: {}, doGenerate: fail, doStream: fail };
}
