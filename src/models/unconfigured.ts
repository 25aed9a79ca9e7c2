import type { LanguageModelV3 } from "@ai-sdk/provider";

/**
 * The model of a Gatehouse opened only to browse what is stored (`gatehouse console` in a
 * project with no model): it refuses every call with `message`, so a run started anyway fails
 * saying why instead of answering from some model nobody chose.
 */
export function unconfiguredModel(message: string): LanguageModelV3 {
  const refuse = (): never => {
    throw new Error(message);
  };
  return {
    specificationVersion: "v3",
    provider: "gatehouse",
    modelId: "none",
    supportedUrls: {},
    doGenerate: async () => refuse(),
    doStream: async () => refuse(),
  };
}
