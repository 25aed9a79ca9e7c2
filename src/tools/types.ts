import type { z } from "zod";

/** What a tool's execute() receives besides its input. */
export interface ToolContext {
  /** Aborted when the run is cancelled or the tool's own timeout passes. */
  readonly signal: AbortSignal;
  /** The project directory: relative paths resolve against it, processes start in it. */
  readonly cwd: string;
}

/**
 * A tool the model may call. `inputSchema` is a zod schema: the runtime validates the model's
 * input with it before hooks see the call, and publishes it to the model as JSON Schema.
 */
export interface Tool<Input = unknown, Output = unknown> {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: z.ZodType<Input>;
  /** True when calls of this tool may run concurrently with other calls in the same step. */
  readonly parallel?: boolean;
  /**
   * Optional: turn the model's input into the form hooks see (e.g. resolve relative file
   * paths to absolute ones). Runs after validation, before `before_tool_call`.
   */
  normalizeInput?(input: Input, ctx: ToolContext): Input;
  execute(input: Input, ctx: ToolContext): Promise<Output>;
}

/** A tool failure the model should see as an error result (not a crash of the run). */
export class ToolError extends Error {
  override readonly name = "ToolError";
}
