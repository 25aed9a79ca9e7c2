import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Prompt,
  LanguageModelV3StreamResult,
} from "@ai-sdk/provider";
import { z } from "zod";
import { createScriptedModel, type ScriptInput } from "../src/models/index.js";
import { definePlugin, type PluginDefinition } from "../src/plugins/index.js";
import type { Tool } from "../src/tools/types.js";
import { MARK, type PlannedRun, type Target } from "./scenario.js";

/** The compaction call ends with this instruction (src/runtime/compaction.ts). */
const SUMMARY_INSTRUCTION = "Summarize the conversation above";
const TOKEN = /(?:CANARY|REDACTED|REASON|NOTICE)-[A-Za-z0-9-]+/g;

/**
 * The scripted model, plus the adversarial summarizer: a compaction call is answered with every
 * canary the prompt holds, so a summary written from content that is later blocked or rewritten
 * carries that content (the store must drop such a summary).
 */
export function harnessModel(script: ScriptInput, onCall?: (prompt: LanguageModelV3Prompt) => void): LanguageModelV3 {
  const scripted = createScriptedModel(script, { name: "harness" });
  const summarize = (prompt: LanguageModelV3Prompt): LanguageModelV3 => {
    const tokens = new Set(JSON.stringify(prompt).match(TOKEN) ?? []);
    return createScriptedModel({ runs: [{ turns: [{ text: `Summary: ${[...tokens].join(" ") || "nothing"}` }] }] });
  };
  const pick = (options: LanguageModelV3CallOptions) => {
    onCall?.(options.prompt);
    return isSummaryCall(options.prompt) ? summarize(options.prompt) : scripted;
  };
  return {
    specificationVersion: "v3",
    provider: "scripted",
    modelId: "harness",
    supportedUrls: {},
    doGenerate: (options) => pick(options).doGenerate(options),
    doStream: (options): PromiseLike<LanguageModelV3StreamResult> => pick(options).doStream(options),
  };
}

function isSummaryCall(prompt: LanguageModelV3Prompt): boolean {
  const last = prompt.at(-1);
  if (last?.role !== "user") return false;
  const first = last.content[0];
  return first?.type === "text" && first.text.startsWith(SUMMARY_INSTRUCTION);
}

/** A tool whose output is not in its input: a canary there can only come from the output. */
export function lookupTool(table: Readonly<Record<string, string>>): Tool<{ key: string }, { value: string }> {
  return {
    name: "Lookup",
    description: "Looks a key up",
    inputSchema: z.object({ key: z.string() }),
    parallel: true,
    async execute(input) {
      return { value: table[input.key] ?? "nothing" };
    },
  };
}

export const echoTool: Tool<{ text: string }, { echoed: string }> = {
  name: "Echo",
  description: "Echoes its text",
  inputSchema: z.object({ text: z.string() }),
  async execute(input) {
    return { echoed: input.text };
  },
};

/**
 * The scenario's policies, deciding by content: a prompt gate, a tool-output withholder, a
 * response gate that blocks or rewrites, a delivery gate that cancels or rewrites. Notices are
 * user-facing; reasons are internal and must never be seen again.
 */
export function policyPlugin(runs: readonly PlannedRun[], targets: readonly Target[]): PluginDefinition {
  const byTag = new Map(runs.map((r) => [r.tag, r]));
  const runOf = (prompt: string) => byTag.get(/^\[([a-z0-9]+)\]/.exec(prompt)?.[1] ?? "");
  const replacer = (kind: Target["kind"]) => {
    const pairs = targets
      .filter((t) => t.kind === kind && t.replacement)
      .map((t) => [t.canary, t.replacement as string]);
    return (text: string) => {
      let out = text;
      for (const [canary, replacement] of pairs) out = out.replaceAll(canary as string, replacement as string);
      return out;
    };
  };
  const rewriteResponse = replacer("response-rewrite");
  const rewriteDelivery = replacer("delivery-rewrite");
  const runPrompts = new Map<string, string>();
  return definePlugin({
    id: "policy",
    setup(api) {
      api.on("message_received", (e, ctx) => void runPrompts.set(ctx.runId, e.content));
      api.on("agent_end", (_e, ctx) => void runPrompts.delete(ctx.runId));
      api.on("before_agent_run", (e) => {
        if (!e.prompt.includes(MARK.promptGate)) return undefined;
        const run = runOf(e.prompt);
        return {
          outcome: "block",
          reason: run?.reason ?? "internal",
          ...(run?.notice ? { message: run.notice } : {}),
          category: "canary",
        };
      });
      api.on("after_tool_call", (e) =>
        JSON.stringify(e.result ?? null).includes(MARK.withholdPlugin) ? { block: true } : undefined,
      );
      api.on("before_response_emit", (e, ctx) => {
        if (e.content.includes(MARK.responseBlock)) {
          const run = runOf(runPrompts.get(ctx.runId) ?? "");
          return { block: true, ...(run?.notice ? { blockReason: run.notice } : {}) };
        }
        const allContent = e.allContent.map(rewriteResponse);
        return allContent.some((t, i) => t !== e.allContent[i]) ? { allContent } : undefined;
      });
      api.on("message_sending", (e, ctx) => {
        if (e.content.includes(MARK.cancel)) {
          const run = runOf(runPrompts.get(ctx.runId) ?? "");
          return { cancel: true, cancelReason: run?.reason ?? "internal" };
        }
        const content = rewriteDelivery(e.content);
        return content === e.content ? undefined : { content };
      });
    },
  });
}
