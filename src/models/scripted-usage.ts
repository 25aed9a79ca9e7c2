import type { LanguageModelV3Prompt, LanguageModelV3Usage } from "@ai-sdk/provider";
import { outputText } from "./scripted-prompt.js";
import type { ScriptTurn } from "./scripted-schema.js";

export function scriptedUsage(usage: NonNullable<ScriptTurn["usage"]>): LanguageModelV3Usage {
  const { inputTokens, outputTokens, reasoningTokens, cachedInputTokens } = usage;
  return {
    inputTokens: {
      total: inputTokens,
      noCache:
        inputTokens !== undefined && cachedInputTokens !== undefined ? inputTokens - cachedInputTokens : inputTokens,
      cacheRead: cachedInputTokens,
      cacheWrite: undefined,
    },
    outputTokens: {
      total: outputTokens,
      text: outputTokens !== undefined && reasoningTokens !== undefined ? outputTokens - reasoningTokens : outputTokens,
      reasoning: reasoningTokens,
    },
  };
}

/**
 * Without `usage`, tokens are estimated at 4 characters each, so budgets and compaction see a
 * prompt that grows with the conversation, deterministically.
 */
export function estimateUsage(
  prompt: LanguageModelV3Prompt,
  output: { readonly text: number; readonly reasoning: number },
): LanguageModelV3Usage {
  let inputChars = 0;
  for (const message of prompt) {
    if (message.role === "system") {
      inputChars += message.content.length;
      continue;
    }
    for (const part of message.content) {
      if (part.type === "text" || part.type === "reasoning") inputChars += part.text.length;
      else if (part.type === "tool-call") inputChars += JSON.stringify(part.input ?? {}).length;
      else if (part.type === "tool-result") inputChars += outputText(part.output).length;
    }
  }
  const tokens = (chars: number) => Math.ceil(chars / 4);
  return scriptedUsage({
    inputTokens: tokens(inputChars),
    outputTokens: tokens(output.text) + tokens(output.reasoning),
    reasoningTokens: tokens(output.reasoning),
  });
}
