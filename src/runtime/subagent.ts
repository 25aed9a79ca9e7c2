import { z } from "zod";
import { currentRunContext } from "../hooks/run-context.js";
import { type Tool, ToolError } from "../tools/types.js";
import type { RuntimeDeps } from "./deps.js";
import { dropEvents } from "./events.js";
import { executeRun } from "./run.js";

export const AgentInputSchema = z.object({
  description: z.string().describe("A short (3-5 word) description of the task"),
  prompt: z.string().min(1).describe("The task for the agent to perform"),
  subagent_type: z.string().optional().describe("The type of specialized agent to use for this task"),
});
export type AgentInput = z.infer<typeof AgentInputSchema>;

/**
 * Claude Code's `Agent` tool: a child run at depth + 1 in its own session, under the same
 * runtime, so every hook fires inside it exactly as at top level. Its answer has passed the
 * child's own output gates before it returns here, and then passes the parent's
 * `after_tool_call` as any tool result does. A blocked child returns its notice; a failed one
 * is a tool error, never lost.
 */
export function createAgentTool(
  deps: () => RuntimeDeps,
  maxDepth: number,
): Tool<AgentInput, string> & { readonly maxDepth: number } {
  return {
    name: "Agent",
    maxDepth,
    description:
      "Launch a sub-agent to handle a self-contained task. It works with its own context and tools and returns its final answer.",
    inputSchema: AgentInputSchema,
    parallel: true,
    async execute(input, ctx) {
      const parent = currentRunContext();
      if (!parent) throw new ToolError("the Agent tool runs only inside a run");
      if (parent.depth + 1 > maxDepth) throw new ToolError(`sub-agents may nest at most ${maxDepth} deep`);
      const runtime = deps();
      const { engine } = runtime;
      const agentType = input.subagent_type ?? "general-purpose";
      const session = await runtime.store.createSession({ parentSessionId: parent.sessionId });
      const start = await engine.emit("subagent_start", {
        agentType,
        prompt: input.prompt,
        childSessionId: session.id,
      });
      const result = await executeRun(runtime, { prompt: input.prompt, signal: ctx.signal }, dropEvents, {
        parent,
        session,
        agentType,
        ...(start.result.additionalContext ? { context: start.result.additionalContext } : {}),
      });
      ctx.onChildRun?.(result.runId);
      ctx.onChildRunEnded?.({
        runId: result.runId,
        agentType,
        outcome: result.outcome,
        steps: result.steps,
        ...(result.usage ? { usage: result.usage } : {}),
      });
      await engine.emit("subagent_end", { agentType, outcome: result.outcome, childSessionId: session.id });
      // A child is cancelled only through the signal it shares with this run, so this run is cancelled
      // too; its end answers the Agent call (or removes it with the rest of its unchecked output).
      ctx.signal.throwIfAborted();
      if (result.outcome === "failed")
        throw new ToolError(`the sub-agent failed: ${result.error?.message ?? "unknown error"}`);
      if (result.outcome === "max_steps")
        throw new ToolError(
          `the sub-agent stopped after ${result.steps} model calls, its step limit, before it answered`,
        );
      return result.reply ?? "";
    },
  };
}
