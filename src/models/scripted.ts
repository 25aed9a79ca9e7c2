import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import {
  APICallError,
  type LanguageModelV3,
  type LanguageModelV3CallOptions,
  type LanguageModelV3Content,
  type LanguageModelV3GenerateResult,
  type LanguageModelV3Prompt,
  type LanguageModelV3StreamPart,
  type LanguageModelV3StreamResult,
  type LanguageModelV3Usage,
  type SharedV3ProviderOptions,
} from "@ai-sdk/provider";
import { jsonErrorText, parseJsonText } from "../core/json.js";
import { ScriptedFileError, ScriptedModelError } from "./errors.js";
import { type RunView, viewRun } from "./scripted-prompt.js";
import { applyTemplates, parseScript, type Script, type ScriptInput, type ScriptTurn } from "./scripted-schema.js";
import { estimateUsage, scriptedUsage } from "./scripted-usage.js";

export type { Script, ScriptInput, ScriptTurn } from "./scripted-schema.js";

/** One piece of a scripted answer, in output order. */
type Item =
  | { kind: "text"; text: string; chunks: number }
  | { kind: "reasoning"; text: string }
  | { kind: "file"; mediaType: string; data: string }
  | { kind: "tool-call"; id: string; name: string; input: string };

interface Answer {
  readonly items: Item[];
  readonly usage: LanguageModelV3Usage;
  readonly error?: APICallError;
}

type Responder = (prompt: LanguageModelV3Prompt, callOptions?: SharedV3ProviderOptions) => Answer;

/**
 * A deterministic `LanguageModelV3`. Each call is answered from the prompt alone (see `viewRun`),
 * so the same script gives the same answers in every process.
 */
class ScriptedLanguageModel implements LanguageModelV3 {
  readonly specificationVersion = "v3";
  readonly provider = "scripted";
  readonly supportedUrls = {};

  constructor(
    readonly modelId: string,
    private readonly respond: Responder,
  ) {}

  async doGenerate(options: LanguageModelV3CallOptions): Promise<LanguageModelV3GenerateResult> {
    options.abortSignal?.throwIfAborted();
    const answer = this.respond(options.prompt, options.providerOptions);
    if (answer.error) throw answer.error;
    const content = answer.items.map(toContent);
    return { content, finishReason: finishReason(answer), usage: answer.usage, warnings: [] };
  }

  async doStream(options: LanguageModelV3CallOptions): Promise<LanguageModelV3StreamResult> {
    const signal = options.abortSignal;
    signal?.throwIfAborted();
    const answer = this.respond(options.prompt, options.providerOptions);
    // An error with nothing before it fails the call itself, as an HTTP error would; an error
    // after some output fails the stream part-way, as a dropped connection would.
    if (answer.error && answer.items.length === 0) throw answer.error;
    const parts = streamParts(answer, this.modelId);
    let next = 0;
    const stream = new ReadableStream<LanguageModelV3StreamPart>({
      pull(controller) {
        if (signal?.aborted) {
          controller.error(signal.reason);
          return;
        }
        const part = parts[next++];
        if (part === undefined) controller.close();
        else controller.enqueue(part);
      },
    });
    return { stream };
  }
}

function toContent(item: Item): LanguageModelV3Content {
  switch (item.kind) {
    case "text":
    case "reasoning":
      return { type: item.kind, text: item.text };
    case "file":
      return { type: "file", mediaType: item.mediaType, data: item.data };
    case "tool-call":
      return { type: "tool-call", toolCallId: item.id, toolName: item.name, input: item.input };
  }
}

function finishReason(answer: Answer): LanguageModelV3GenerateResult["finishReason"] {
  if (answer.error) return { unified: "error", raw: "error" };
  return answer.items.some((i) => i.kind === "tool-call")
    ? { unified: "tool-calls", raw: "tool_calls" }
    : { unified: "stop", raw: "stop" };
}

function streamParts(answer: Answer, modelId: string): LanguageModelV3StreamPart[] {
  const parts: LanguageModelV3StreamPart[] = [
    { type: "stream-start", warnings: [] },
    { type: "response-metadata", modelId },
  ];
  answer.items.forEach((item, index) => {
    const id = String(index);
    switch (item.kind) {
      case "text":
        parts.push({ type: "text-start", id });
        for (const delta of split(item.text, item.chunks)) parts.push({ type: "text-delta", id, delta });
        parts.push({ type: "text-end", id });
        break;
      case "reasoning":
        parts.push(
          { type: "reasoning-start", id },
          { type: "reasoning-delta", id, delta: item.text },
          { type: "reasoning-end", id },
        );
        break;
      case "file":
        parts.push({ type: "file", mediaType: item.mediaType, data: item.data });
        break;
      case "tool-call":
        parts.push(
          { type: "tool-input-start", id: item.id, toolName: item.name },
          { type: "tool-input-delta", id: item.id, delta: item.input },
          { type: "tool-input-end", id: item.id },
          { type: "tool-call", toolCallId: item.id, toolName: item.name, input: item.input },
        );
        break;
    }
  });
  if (answer.error) parts.push({ type: "error", error: answer.error });
  parts.push({ type: "finish", usage: answer.usage, finishReason: finishReason(answer) });
  return parts;
}

/** `n` deltas of near-equal length, never splitting a surrogate pair, never empty (unless the text is). */
export function split(text: string, n: number): string[] {
  const chars = Array.from(text);
  const count = Math.max(1, Math.min(n, chars.length));
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    out.push(
      chars.slice(Math.floor((i * chars.length) / count), Math.floor(((i + 1) * chars.length) / count)).join(""),
    );
  }
  return out;
}

/** Builds a scripted model from a script object (validated here; throws `ScriptedFileError`). */
export function createScriptedModel(script: ScriptInput, options: { name?: string } = {}): LanguageModelV3 {
  const name = options.name ?? "<inline>";
  return new ScriptedLanguageModel(
    name,
    responder(validate(script, `scripted model ${name}`, `scripted:${name}`), name),
  );
}

/** The model behind `scripted:echo`: every call answers with the run's user prompt. */
export function createEchoModel(): LanguageModelV3 {
  return new ScriptedLanguageModel("echo", (prompt, callOptions) => {
    const text = viewRun(prompt, callOptions).runPrompt;
    const items: Item[] = [{ kind: "text", text, chunks: 1 }];
    return { items, usage: estimateUsage(prompt, outputSize(items)) };
  });
}

/** Reads and validates a script file; `file` is reported as written, resolved against `cwd`. */
export async function loadScriptedModel(file: string, cwd: string = process.cwd()): Promise<LanguageModelV3> {
  const label = `scripted model file ${file}`;
  const spec = `scripted:${file}`;
  let text: string;
  try {
    text = await readFile(resolve(cwd, file), "utf8");
  } catch (error) {
    throw new ScriptedFileError(
      `${label}: cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
      spec,
    );
  }
  const parsed = parseJsonText(text);
  if (!parsed.ok) {
    const { line, column } = parsed.error;
    throw new ScriptedFileError(`${label}:${line}:${column}: ${jsonErrorText(parsed.error)}`, spec);
  }
  return new ScriptedLanguageModel(file, responder(validate(parsed.value, label, spec), file));
}

function validate(value: unknown, label: string, spec: string): Script {
  const result = parseScript(value);
  if (!result.ok) throw new ScriptedFileError(result.problems.map((p) => `${label}: ${p}`).join("\n"), spec);
  return result.script;
}

function responder(script: Script, name: string): Responder {
  const runs = script.runs.map((run, index) => ({
    ...run,
    index,
    regex: run.match === undefined ? undefined : new RegExp(run.match),
  }));
  const describe = (run: (typeof runs)[number]) =>
    run.regex ? `run matching /${run.match}/ (runs[${run.index}])` : `run runs[${run.index}] (matches any prompt)`;
  return (prompt, callOptions) => {
    const view = viewRun(prompt, callOptions);
    const run = runs.find((r) => r.regex === undefined || r.regex.test(view.runPrompt));
    if (!run) {
      const patterns = runs.map((r) => `/${r.match}/`).join(", ");
      throw new ScriptedModelError(`scripted model ${name}: no run matches this prompt (patterns: ${patterns})`);
    }
    const turn = run.turns[view.turnIndex];
    if (!turn) {
      throw new ScriptedModelError(
        `scripted model ${name}: ${describe(run)} has ${run.turns.length} turn${run.turns.length === 1 ? "" : "s"}; model call ${view.turnIndex + 1} has none`,
      );
    }
    return answer(turn, view, prompt, name);
  };
}

function answer(turn: ScriptTurn, view: RunView, prompt: LanguageModelV3Prompt, name: string): Answer {
  const values = { prompt: view.runPrompt, lastToolResult: view.lastToolResult, lastUserMessage: view.lastUserMessage };
  const fill = (text: string) => applyTemplates(text, values);
  const items: Item[] = [];
  if (turn.text !== undefined) items.push({ kind: "text", text: fill(turn.text), chunks: turn.chunks ?? 1 });
  for (const part of turn.parts ?? []) {
    if (part.type === "text" || part.type === "reasoning") {
      items.push(
        part.type === "text"
          ? { kind: "text", text: fill(part.text), chunks: 1 }
          : { kind: "reasoning", text: fill(part.text) },
      );
    } else {
      items.push({ kind: "file", mediaType: part.mediaType, data: part.data });
    }
  }
  (turn.toolCalls ?? []).forEach((call, i) => {
    items.push({
      kind: "tool-call",
      // Ids depend only on the position in the run, so every process produces the same ones.
      id: call.id ?? `call_${view.turnIndex}_${i}`,
      name: call.name,
      input: JSON.stringify(fillStrings(call.input, fill)),
    });
  });
  const usage = turn.usage ? scriptedUsage(turn.usage) : estimateUsage(prompt, outputSize(items));
  if (turn.error === undefined) return { items, usage };
  const error = typeof turn.error === "string" ? { message: turn.error } : turn.error;
  return {
    items,
    usage,
    error: new APICallError({
      message: error.message,
      url: `scripted:${name}`,
      // Never the prompt: an error may be logged, and the prompt may hold what a hook later blocks.
      requestBodyValues: {},
      ...(error.statusCode !== undefined && { statusCode: error.statusCode }),
      isRetryable: error.isRetryable ?? false,
    }),
  };
}

/** Templates in tool inputs fill known names only: an input may legitimately contain `{{…}}`. */
function fillStrings(value: unknown, fill: (text: string) => string): unknown {
  if (typeof value === "string") return fill(value);
  if (Array.isArray(value)) return value.map((v) => fillStrings(v, fill));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fillStrings(v, fill)]));
  }
  return value;
}

function outputSize(items: readonly Item[]): { text: number; reasoning: number } {
  let text = 0;
  let reasoning = 0;
  for (const item of items) {
    if (item.kind === "text") text += item.text.length;
    else if (item.kind === "reasoning") reasoning += item.text.length;
    else if (item.kind === "tool-call") text += item.name.length + item.input.length;
  }
  return { text, reasoning };
}
