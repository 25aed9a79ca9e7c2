import type { Attribution } from "../hooks/types.js";
import type { AuditOutcome } from "../store/types.js";
import type { RuntimeDeps } from "./deps.js";
import type { RunState } from "./state.js";

const CAUSE_OUTCOME: Record<Attribution["cause"], AuditOutcome | undefined> = {
  decision: undefined,
  threw: "error",
  timeout: "timeout",
  invalid: "invalid",
  cancelled: "cancel",
};

/** Who decided: a hook's attribution, or a decision point outside the catalog (an approval). */
type Decider = Pick<Attribution, "pluginId" | "cause"> & { readonly hook: Attribution["hook"] | "approval" };

/**
 * Records a hook decision: hook, plugin, outcome, category, run, time. Nothing else can be
 * passed, so no reason or content can reach the audit trail.
 */
export async function audit(
  deps: RuntimeDeps,
  state: RunState,
  by: Decider,
  decision: AuditOutcome,
  category?: string,
): Promise<void> {
  const slug = category
    ?.replace(/[^A-Za-z0-9._:-]/g, "-")
    .replace(/^[^A-Za-z0-9]+/, "")
    .slice(0, 64);
  try {
    await deps.store.writeAudit({
      hook: by.hook,
      pluginId: by.pluginId,
      outcome: CAUSE_OUTCOME[by.cause] ?? decision,
      ...(slug ? { category: slug } : {}),
      sessionId: state.sessionId,
      runId: state.runId,
    });
  } catch (error) {
    deps.logger.warn(`audit record for ${by.hook} not written: ${(error as Error).name}`);
  }
}
