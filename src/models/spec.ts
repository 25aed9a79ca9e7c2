import { ModelSpecError } from "./errors.js";

export type ModelSpec =
  | { readonly provider: "openai"; readonly modelId: string }
  | { readonly provider: "anthropic"; readonly modelId: string }
  | { readonly provider: "openai-compatible"; readonly baseURL: string; readonly modelId: string }
  | { readonly provider: "scripted"; readonly source: "echo" }
  | { readonly provider: "scripted"; readonly source: "file"; readonly file: string };

const EXPECTED =
  "expected openai:<model>, anthropic:<model>, openai-compatible:<baseURL>#<model> or scripted:<file>|echo";

/** Parses `provider:model` without touching the file system or the network. */
export function parseModelSpec(spec: string): ModelSpec {
  const colon = spec.indexOf(":");
  if (colon <= 0) throw new ModelSpecError(`model spec '${spec}' has no provider; ${EXPECTED}`, spec);
  const provider = spec.slice(0, colon);
  const rest = spec.slice(colon + 1).trim();
  const missing = (what: string) => new ModelSpecError(`model spec '${spec}' is missing ${what}; ${EXPECTED}`, spec);
  switch (provider) {
    case "openai":
    case "anthropic":
      if (rest === "") throw missing("the model name");
      return { provider, modelId: rest };
    case "openai-compatible":
      return parseCompatible(spec, rest);
    case "scripted":
      if (rest === "") throw missing("the script file (or 'echo')");
      return rest === "echo" ? { provider, source: "echo" } : { provider, source: "file", file: rest };
    default:
      throw new ModelSpecError(`unknown provider '${provider}' in model spec '${spec}'; ${EXPECTED}`, spec);
  }
}

function parseCompatible(spec: string, rest: string): ModelSpec {
  // The last '#' splits, so a model id never needs escaping and a base URL has no use for a fragment.
  const hash = rest.lastIndexOf("#");
  const baseURL = hash < 0 ? rest : rest.slice(0, hash);
  const modelId = hash < 0 ? "" : rest.slice(hash + 1).trim();
  if (hash < 0 || modelId === "" || baseURL === "") {
    throw new ModelSpecError(
      `model spec '${spec}' must look like openai-compatible:<baseURL>#<model>, e.g. openai-compatible:http://localhost:11434/v1#llama3.2`,
      spec,
    );
  }
  let url: URL;
  try {
    url = new URL(baseURL);
  } catch {
    throw new ModelSpecError(`model spec '${spec}': base URL '${baseURL}' is not a valid URL`, spec);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ModelSpecError(`model spec '${spec}': base URL '${baseURL}' must be http:// or https://`, spec);
  }
  return { provider: "openai-compatible", baseURL, modelId };
}
