import { randomUUID } from "node:crypto";
import type { Message, Part } from "../core/message.js";
import { modelReadText } from "../runtime/prompt.js";
import type { RunEvent, RunOutcome, RunResult } from "../runtime/types.js";
import type { Tool } from "../tools/types.js";
import { VERSION } from "../version.js";
import { type OutStream, writeJson } from "./output.js";

/**
 * `gatehouse run --output-format json | stream-json` in `claude -p`'s shapes (Claude Code's
 * SDK message types: `system`/`init`, `assistant`, `user`, `result`), so that parsers written for
 * `claude -p` read Gatehouse unchanged. Gatehouse's own data rides along in extra fields (the
 * result's `outcome`, `runId`, `reply`, `steps`, …); its run events stay available as
 * `--output-format gatehouse-events`.
 */

/** What the run was started with, for the `init` message. */
export interface RunDescription {
  readonly cwd: string;
  readonly model: string;
  readonly permissionMode: string;
  /** The tools offered (MCP servers' once started), for `init` and for the text each result shows the model. */
  readonly tools: Promise<readonly Tool[]>;
  /** The runtime's Agent tool is offered too. */
  readonly subagents: boolean;
}

/** A tool call a policy refused before it ran (a rule, the mode, a PreToolUse hook), as Claude Code lists it. */
interface ClaudeDenial {
  readonly tool_name: string;
  readonly tool_use_id: string;
  readonly tool_input: unknown;
}

/** Claude Code's `subtype` and `terminal_reason` for a Gatehouse outcome. */
const ENDINGS: Readonly<Record<RunOutcome, { subtype: string; terminal: string; error: boolean }>> = {
  completed: { subtype: "success", terminal: "completed", error: false },
  claimed: { subtype: "success", terminal: "completed", error: false },
  // A hook stopped the run: Claude Code reports that as a success that a hook ended.
  blocked: { subtype: "success", terminal: "hook_stopped", error: false },
  max_steps: { subtype: "error_max_turns", terminal: "max_turns", error: true },
  failed: { subtype: "error_during_execution", terminal: "model_error", error: true },
  cancelled: { subtype: "error_during_execution", terminal: "aborted_streaming", error: true },
};

/** Claude Code's `usage` keys, with Gatehouse's own (`inputTokens`, …) kept beside them. */
function usageOf(result: RunResult): Record<string, unknown> {
  const u = result.usage;
  return {
    input_tokens: u?.inputTokens ?? 0,
    output_tokens: u?.outputTokens ?? 0,
    cache_creation_input_tokens: u?.cacheWriteTokens ?? 0,
    cache_read_input_tokens: u?.cacheReadTokens ?? 0,
    ...u,
  };
}

/**
 * The `result` message (`--output-format json` prints only this). Gatehouse prices nothing:
 * `total_cost_usd` is 0 and `modelUsage` holds tokens only.
 */
export function resultMessage(
  result: RunResult,
  stopReason: string | null,
  model: string,
  denials: readonly ClaudeDenial[],
  endLine: string | undefined,
): Record<string, unknown> {
  const ending = ENDINGS[result.outcome];
  const usage = usageOf(result);
  // `usage` is Claude Code's, with Gatehouse's keys inside it.
  const { usage: _, ...own } = result;
  return {
    type: "result",
    subtype: ending.subtype,
    is_error: ending.error,
    duration_ms: Math.round(result.durationMs),
    // Gatehouse does not time model calls apart from the run.
    duration_api_ms: Math.round(result.durationMs),
    num_turns: result.steps,
    result: result.reply ?? "",
    stop_reason: stopReason,
    session_id: result.sessionId,
    total_cost_usd: 0,
    usage,
    modelUsage: {
      [model]: {
        inputTokens: usage.input_tokens,
        outputTokens: usage.output_tokens,
        cacheReadInputTokens: usage.cache_read_input_tokens,
        cacheCreationInputTokens: usage.cache_creation_input_tokens,
        webSearchRequests: 0,
        costUSD: 0,
      },
    },
    permission_denials: denials,
    terminal_reason: ending.terminal,
    uuid: randomUUID(),
    ...(ending.error && endLine !== undefined ? { errors: [endLine] } : {}),
    // Gatehouse's own fields, as `--output-format json` printed them before it took Claude Code's shape.
    ...own,
  };
}

/** Claude Code's content blocks for one stored message's parts; a tool result as the text the model read. */
function blocksOf(parts: readonly Part[], tools: ReadonlyMap<string, Tool>): Record<string, unknown>[] {
  const blocks: Record<string, unknown>[] = [];
  for (const part of parts) {
    if (part.type === "text") blocks.push({ type: "text", text: part.text });
    else if (part.type === "reasoning") blocks.push({ type: "thinking", thinking: part.text });
    else if (part.type === "tool_call")
      blocks.push({ type: "tool_use", id: part.toolCallId, name: part.toolName, input: part.input });
    else if (part.type === "tool_result")
      blocks.push({
        type: "tool_result",
        tool_use_id: part.toolCallId,
        content: modelReadText(part.output, part.isError === true, tools.get(part.toolName)),
        is_error: part.isError === true,
      });
  }
  return blocks;
}

/**
 * Follows a run's events and tells which calls a policy refused before they ran (`tool-blocked`),
 * for `permission_denials`; with `stream-json`, it also prints the messages as the run stores them.
 */
export class ClaudeOutput {
  readonly #blocked = new Set<string>();
  readonly #printed = new Set<string>();
  #runId: string | undefined;
  #pending: Promise<void> = Promise.resolve();

  constructor(
    private readonly stream: boolean,
    private readonly stdout: OutStream,
    private readonly describe: RunDescription,
    private readonly runMessages: (runId: string) => Promise<readonly Message[]>,
  ) {}

  onEvent(event: RunEvent): void {
    if (event.type === "tool-blocked") this.#blocked.add(event.toolCallId);
    if (!this.stream) return;
    if (event.type === "run-start") {
      this.#runId = event.runId;
      this.#enqueue(() => this.#init(event.sessionId));
    } else if (event.type === "step" || event.type === "tool-result" || event.type === "tool-blocked")
      this.#enqueue(() => this.#flush());
  }

  /** Prints what is left and the result (stream-json), or only the result (json). */
  async finish(result: RunResult, endLine: string | undefined): Promise<void> {
    this.#runId ??= result.runId;
    const messages = await this.runMessages(result.runId);
    if (this.stream) this.#enqueue(() => this.#flush(messages));
    await this.#pending;
    const denials = this.#denials(result, messages);
    await writeJson(this.stdout, resultMessage(result, stopReasonOf(messages), this.describe.model, denials, endLine));
  }

  #enqueue(step: () => Promise<void>): void {
    // In order; a failed read of the store is not a reason to lose the rest of the stream.
    this.#pending = this.#pending.then(step).catch(() => {});
  }

  async #init(sessionId: string): Promise<void> {
    await writeJson(this.stdout, {
      type: "system",
      subtype: "init",
      cwd: this.describe.cwd,
      session_id: sessionId,
      tools: [...(await this.describe.tools).map((t) => t.name), ...(this.describe.subagents ? ["Agent"] : [])],
      mcp_servers: [],
      model: this.describe.model,
      permissionMode: this.describe.permissionMode,
      slash_commands: [],
      apiKeySource: "none",
      claude_code_version: VERSION,
      output_style: "default",
      agents: [],
      skills: [],
      plugins: [],
      uuid: randomUUID(),
      gatehouse_version: VERSION,
    });
  }

  /** Prints the run's stored messages not printed yet: what the model said, and the tool results it read. */
  async #flush(known?: readonly Message[]): Promise<void> {
    const runId = this.#runId;
    if (runId === undefined) return;
    const messages = known ?? (await this.runMessages(runId));
    const tools = new Map((await this.describe.tools).map((t) => [t.name, t]));
    for (const message of messages) {
      if (this.#printed.has(message.id)) continue;
      const blocks = blocksOf(message.parts, tools);
      const role = message.role === "assistant" ? "assistant" : message.role === "tool" ? "user" : undefined;
      // The prompt itself is the caller's; Claude Code does not echo it either.
      if (role === undefined || blocks.length === 0) continue;
      this.#printed.add(message.id);
      const common = { parent_tool_use_id: null, session_id: message.sessionId, uuid: randomUUID() };
      await writeJson(
        this.stdout,
        role === "assistant"
          ? {
              type: "assistant",
              message: {
                id: message.id,
                type: "message",
                role,
                model: this.describe.model,
                content: blocks,
                stop_reason: null,
                stop_sequence: null,
                usage: { input_tokens: 0, output_tokens: 0 },
              },
              ...common,
            }
          : { type: "user", message: { role, content: blocks }, ...common, tool_use_result: toolUseResult(message) },
      );
    }
  }

  #denials(result: RunResult, messages: readonly Message[]): ClaudeDenial[] {
    const inputs = new Map<string, { name: string; input: unknown }>();
    for (const m of messages)
      for (const p of m.parts)
        if (p.type === "tool_call") inputs.set(p.toolCallId, { name: p.toolName, input: p.input });
    const ids = [...result.permissionDenials.map((d) => d.toolCallId), ...this.#blocked];
    return [...new Set(ids)].flatMap((id) => {
      const call = inputs.get(id);
      const denial = result.permissionDenials.find((d) => d.toolCallId === id);
      const name = call?.name ?? denial?.toolName;
      return name === undefined ? [] : [{ tool_name: name, tool_use_id: id, tool_input: call?.input ?? {} }];
    });
  }
}

/** The tool's output as data (Claude Code's `tool_use_result`): the first result's. */
function toolUseResult(message: Message): unknown {
  const part = message.parts.find((p) => p.type === "tool_result");
  return part?.type === "tool_result" ? part.output : undefined;
}

/** Why the model's last answer ended, as Claude Code reports it: it called tools, or it was done; null without one. */
function stopReasonOf(messages: readonly Message[]): string | null {
  const last = messages.findLast((m) => m.role === "assistant");
  if (last === undefined) return null;
  return last.parts.some((p) => p.type === "tool_call") ? "tool_use" : "end_turn";
}
