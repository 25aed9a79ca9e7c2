import type {
  LanguageModelV3Message,
  LanguageModelV3Prompt,
  LanguageModelV3ToolResultOutput,
  SharedV3ProviderOptions,
} from "@ai-sdk/provider";
import { gatehouseMark } from "./prompt.js";

/** What a scripted model derives from the prompt alone: no state survives between calls. */
export interface RunView {
  /** Text of the user message that started the run. */
  readonly runPrompt: string;
  /** 0-based: how many times the model already answered in this run. */
  readonly turnIndex: number;
  readonly lastUserMessage: string;
  readonly lastToolResult: string;
}

/**
 * The run's user prompt is the user message marked `providerOptions.gatehouse.runStart` (the last
 * one, if several), which `toModelPrompt({runId})` sets; a revision instruction or injected context
 * later in the same run therefore neither restarts the turn count nor changes which run matches.
 * Without a mark it is the last user message not marked as context. The turn index is the number
 * of assistant messages after it: the n-th model call of a run sees n-1 answers of that run.
 */
export function viewRun(prompt: LanguageModelV3Prompt, callOptions?: SharedV3ProviderOptions): RunView {
  const view = viewPrompt(prompt);
  // The runtime also says outright which run and which call this is (see `RunCallMark`): that
  // survives a compaction that summarized the run's own prompt and earlier answers away.
  const mark = callOptions?.[GATEHOUSE_CALL_KEY] as RunCallMark | undefined;
  return {
    ...view,
    ...(typeof mark?.runPrompt === "string" ? { runPrompt: mark.runPrompt } : {}),
    ...(typeof mark?.step === "number" ? { turnIndex: mark.step - 1 } : {}),
  };
}

/** What the runtime puts in a call's `providerOptions.gatehouse`; providers read only their own key. */
export interface RunCallMark {
  readonly runPrompt?: string;
  /** 1-based: the n-th model call of the run. */
  readonly step?: number;
}
export const GATEHOUSE_CALL_KEY = "gatehouse";

function viewPrompt(prompt: LanguageModelV3Prompt): RunView {
  let start = findLast(prompt, (m) => m.role === "user" && gatehouseMark(m.providerOptions).runStart === true);
  if (start < 0) start = findLast(prompt, isOwnUserMessage);
  const startMessage = start < 0 ? undefined : prompt[start];
  const last = findLast(prompt, isOwnUserMessage);
  const lastMessage = last < 0 ? undefined : prompt[last];
  let turnIndex = 0;
  for (let i = start + 1; i < prompt.length; i++) if (prompt[i]?.role === "assistant") turnIndex++;
  return {
    runPrompt: startMessage ? userText(startMessage) : "",
    turnIndex,
    lastUserMessage: lastMessage ? userText(lastMessage) : "",
    lastToolResult: lastToolResult(prompt),
  };
}

function isOwnUserMessage(message: LanguageModelV3Message): boolean {
  return message.role === "user" && gatehouseMark(message.providerOptions).context !== true;
}

/** The user's own words: text parts the runtime marked as context are left out. */
function userText(message: LanguageModelV3Message): string {
  if (message.role !== "user") return "";
  let text = "";
  for (const part of message.content) {
    if (part.type === "text" && gatehouseMark(part.providerOptions).context !== true) text += part.text;
  }
  return text;
}

function lastToolResult(prompt: LanguageModelV3Prompt): string {
  for (let i = prompt.length - 1; i >= 0; i--) {
    const message = prompt[i];
    if (message?.role !== "tool") continue;
    for (let j = message.content.length - 1; j >= 0; j--) {
      const part = message.content[j];
      if (part?.type === "tool-result") return outputText(part.output);
    }
  }
  return "";
}

export function outputText(output: LanguageModelV3ToolResultOutput): string {
  switch (output.type) {
    case "text":
    case "error-text":
      return output.value;
    case "json":
    case "error-json":
      return JSON.stringify(output.value);
    case "execution-denied":
      return output.reason ?? "execution denied";
    case "content":
      return output.value.map((item) => (item.type === "text" ? item.text : "")).join("");
  }
}

function findLast<T>(items: readonly T[], predicate: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (predicate(items[i] as T)) return i;
  return -1;
}
