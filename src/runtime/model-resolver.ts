import type { LanguageModelV3 } from "@ai-sdk/provider";
import { resolveModel } from "../models/index.js";
import type { ModelResolver, ResolvedModel } from "./deps.js";

/**
 * Resolves model specs for a run (the configured model, or a run's or hook's own spec), each spec
 * loaded once. `base` is the configured spec, or a model object given in code.
 */
export function modelResolver(
  base: string | LanguageModelV3,
  cwd: string,
  env: NodeJS.ProcessEnv | undefined,
): ModelResolver {
  const cache = new Map<string, Promise<ResolvedModel>>();
  const baseSpec = typeof base === "string" ? base : undefined;
  const load = (spec: string): Promise<ResolvedModel> => {
    let cached = cache.get(spec);
    if (!cached) {
      cached = resolveModel(spec, { cwd, ...(env ? { env } : {}) }).then((model) => ({
        model,
        provider: spec.slice(0, spec.indexOf(":")),
        modelId: model.modelId,
      }));
      cache.set(spec, cached);
    }
    return cached;
  };
  return {
    resolve(override) {
      const wanted = override?.modelOverride;
      if (wanted?.includes(":")) return load(wanted);
      if (wanted || override?.providerOverride) {
        const provider = override?.providerOverride ?? baseSpec?.slice(0, baseSpec.indexOf(":"));
        const id = wanted ?? (typeof base === "string" ? base.slice(base.indexOf(":") + 1) : base.modelId);
        if (provider) return load(`${provider}:${id}`);
      }
      if (baseSpec) return load(baseSpec);
      const model = base as LanguageModelV3;
      return Promise.resolve({ model, provider: model.provider, modelId: model.modelId });
    },
  };
}
