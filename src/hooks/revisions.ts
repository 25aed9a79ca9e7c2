/**
 * The limits of docs/lifecycle.md step 11 on sending a final answer back, by the budget a retry counts
 * against: a plugin's `revise` at most 3 times per run, whatever a retry's `maxAttempts` says
 * (that only bounds its own instruction); Claude Code's Stop / SubagentStop blocks (retries
 * with `budget: "stop"`) at most 8 times in a row. Part of the engine's contract for
 * `before_agent_finalize`, so adapters (command hooks) read it from here.
 */
export const REVISION_LIMITS = {
  revise: { limit: 3, counts: "per-run" },
  stop: { limit: 8, counts: "consecutive" },
} as const satisfies Record<string, { limit: number; counts: "per-run" | "consecutive" }>;
export type RevisionBudget = keyof typeof REVISION_LIMITS;
