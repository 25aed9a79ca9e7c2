import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { type ModelSpec, parseModelSpec } from "./spec.js";

/**
 * Claude Code's model aliases (model-config.md), as a `prompt` or `agent` hook's `model` names
 * them: `haiku`, `sonnet`, `opus`, and `inherit` (the session's model). They resolve against the
 * provider of the run's model:
 * - `anthropic`: the ids Claude Code's aliases name on the Anthropic API, or what
 *   `ANTHROPIC_DEFAULT_{HAIKU,SONNET,OPUS}_MODEL` says, as in Claude Code;
 * - any other provider (OpenAI, an OpenAI-compatible server, a scripted model): the run's own
 *   model, as `inherit` — those providers have no Claude family to pick from.
 * A name that is no alias is a model id of the run's provider (`gpt-5-mini` under `openai:`), and a
 * name with a colon is a whole Gatehouse spec (`anthropic:claude-haiku-4-5`).
 */
export const MODEL_ALIASES = ["haiku", "sonnet", "opus", "inherit"] as const;
export type ModelAlias = (typeof MODEL_ALIASES)[number];

/** What each family alias names on the Anthropic API (Claude Code 2.1.328's table). */
export const ANTHROPIC_ALIAS_IDS: Readonly<Record<Exclude<ModelAlias, "inherit">, string>> = {
  haiku: "claude-haiku-4-5",
  sonnet: "claude-sonnet-5",
  opus: "claude-opus-5",
};

export const isModelAlias = (name: string): name is ModelAlias => (MODEL_ALIASES as readonly string[]).includes(name);

/**
 * The Gatehouse spec a hook's `model` stands for under a run whose model is `provider`'s, or
 * undefined for the run's own model.
 */
export function hookModelSpec(
  model: string | undefined,
  provider: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): string | undefined {
  if (model === undefined || model === "inherit") return undefined;
  if (model.includes(":")) return model;
  if (!isModelAlias(model)) return `${provider}:${model}`;
  if (provider !== "anthropic") return undefined;
  const pinned = env[`ANTHROPIC_DEFAULT_${model.toUpperCase()}_MODEL`]?.trim();
  return `anthropic:${pinned || ANTHROPIC_ALIAS_IDS[model as keyof typeof ANTHROPIC_ALIAS_IDS]}`;
}

/**
 * Why a hook's `model` cannot be resolved under the run's model spec (for `hooks check`), or
 * undefined when it can be as far as can be told without calling it: the spec must parse, and a
 * scripted model's file must exist.
 */
export function hookModelProblem(
  model: string | undefined,
  runSpec: string | undefined,
  cwd: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): string | undefined {
  if (runSpec === undefined) return "no model is configured to evaluate it";
  const spec = hookModelSpec(model, runSpec.slice(0, runSpec.indexOf(":")), env);
  if (spec === undefined) return undefined;
  const named = model === spec ? `"${model}"` : `"${model}" (${spec} under the run's model ${runSpec})`;
  let parsed: ModelSpec;
  try {
    parsed = parseModelSpec(spec);
  } catch (error) {
    return `${named} is not a model: ${(error as Error).message}`;
  }
  if (parsed.provider === "scripted" && parsed.source === "file" && !existsSync(resolve(cwd, parsed.file)))
    return `${named} names a script file that does not exist; use an alias (haiku, sonnet, opus, inherit) or a whole spec`;
  return undefined;
}
