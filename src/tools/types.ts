import type { z } from "zod";
import type { ModelUsage } from "../models/collect.js";

/** A sub-agent run's cost as its tool reports it (its own sub-agents' included). */
export interface ChildRunCost {
  readonly runId: string;
  readonly agentType: string;
  readonly outcome: string;
  readonly steps: number;
  readonly usage?: ModelUsage;
}

/** What a tool's execute() receives besides its input. */
export interface ToolContext {
  /** Aborted when the run is cancelled or the tool's own timeout passes. */
  readonly signal: AbortSignal;
  /** The project directory: relative paths resolve against it, processes start in it. */
  readonly cwd: string;
  /**
   * A tool that runs a sub-agent reports the child run here, so that a verdict withholding its
   * output removes that output from the child's session too.
   */
  readonly onChildRun?: (runId: string) => void;
  /** A tool that ran a sub-agent reports what it cost, which counts in the parent run's steps and usage. */
  readonly onChildRunEnded?: (child: ChildRunCost) => void;
  /** The model's id for this call (absent when a tool runs outside a run's tool loop). */
  readonly toolCallId?: string;
  /**
   * Variables hooks set for this session (Claude Code's `CLAUDE_ENV_FILE`). A tool that starts a
   * process adds them to its environment before its own environment policy applies.
   */
  readonly env?: Readonly<Record<string, string>>;
  /** The run's session (absent outside a run): a tool that keeps state per conversation keys it by this. */
  readonly sessionId?: string;
  /**
   * Which files a search may look into or list (absent: every file). A command hook's agent passes
   * the permission check here, so a Grep or Glob of a folder skips what a rule keeps it from reading.
   */
  readonly readable?: (file: string) => boolean;
  /**
   * A sandboxed command's connection to a host no sandbox list names: the permission flow decides
   * it as a `WebFetch` of that host (rules, hooks, the approver; denied where no one can be asked).
   */
  readonly askNetwork?: (host: string, port: number | undefined) => Promise<boolean>;
  /** The sandbox refused something: recorded in the audit trail as a decision, with no path or host. */
  readonly sandboxRefused?: (kind: "network" | "filesystem") => void;
}

/**
 * A tool the model may call. `inputSchema` is a zod schema: the runtime validates the model's
 * input with it before hooks see the call, and publishes it to the model as JSON Schema.
 */
export interface Tool<Input = unknown, Output = unknown> {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: z.ZodType<Input>;
  /**
   * Optional: the JSON Schema to publish to the model instead of the one derived from
   * `inputSchema`. MCP tools set it to the server's own schema, which zod cannot express
   * faithfully; `inputSchema` then only validates loosely.
   */
  readonly jsonSchema?: Readonly<Record<string, unknown>>;
  /** True when calls of this tool may run concurrently with other calls in the same step. */
  readonly parallel?: boolean;
  /**
   * Optional: turn the model's input into the form hooks see (e.g. resolve relative file
   * paths to absolute ones). Runs after validation, before `before_tool_call`.
   */
  normalizeInput?(input: Input, ctx: ToolContext): Input;
  execute(input: Input, ctx: ToolContext): Promise<Output>;
  /**
   * Optional: the text the model reads for a result. The structured output stays what hooks
   * (`tool_response`) and the store see; without this the runtime serializes it as JSON.
   */
  toModelOutput?(output: Output): string;
}

export interface ToolErrorOptions extends ErrorOptions {
  /** Structured data about the failure (e.g. Bash's output on a non-zero exit). */
  readonly details?: unknown;
}

/** A tool failure the model should see as an error result (not a crash of the run). */
export class ToolError extends Error {
  override readonly name = "ToolError";
  readonly details?: unknown;

  constructor(message: string, options?: ToolErrorOptions) {
    super(message, options);
    if (options?.details !== undefined) this.details = options.details;
  }
}
