import { categorySlug } from "../core/identifiers.js";
import { HOOKS, type HookSpec } from "../hooks/catalog.js";
import type { HookInterceptor } from "../hooks/intercept.js";
import type { Attribution } from "../hooks/types.js";
import type { HostLogger } from "../plugins/host.js";
import type { AuditOutcome, StoreView } from "../store/types.js";
import type { RuntimeDeps } from "./deps.js";
import type { RunState } from "./state.js";

/** Where the runtime and the console already looked for it. */
export { categorySlug };

const CAUSE_OUTCOME: Record<Attribution["cause"], AuditOutcome | undefined> = {
  decision: undefined,
  threw: "error",
  timeout: "timeout",
  invalid: "invalid",
  cancelled: "cancel",
};

/** Who decided: a hook's attribution, or a decision point outside the catalog (a permission). */
type Decider = Pick<Attribution, "pluginId" | "cause"> & {
  readonly hook: Attribution["hook"] | "permission" | "approval";
};

/**
 * Records a decision point outside the catalog (a permission decision) the way hook decisions
 * are recorded: hook, plugin, outcome, category, run, time.
 */
export function audit(
  deps: RuntimeDeps,
  state: RunState,
  by: Decider,
  decision: AuditOutcome,
  category?: string,
): Promise<void> {
  const ids = { sessionId: state.sessionId, runId: state.runId };
  return writeRecord(deps.store, deps.logger, ids, by, decision, category);
}

/** What a dispatch's outcome says about who decided, as the engine returns it. */
interface DecisionShape {
  readonly outcome?: string;
  readonly by?: Attribution;
  readonly category?: string;
  readonly handled?: boolean;
  readonly decidedBy?: Attribution;
  readonly stoppedBy?: Attribution;
}

/**
 * The audit trail as an engine interceptor: every verdict of a hook inside a run (a gate's
 * block, a claim, a latch a modify hook set — a block, or `cancel` for delivery) becomes one
 * record before the run acts on it. What counts as which is read from the catalog (the hook's
 * kind and its latch field), not decided at call sites.
 */
export function auditInterceptor(store: StoreView, logger: HostLogger): HookInterceptor {
  return {
    name: "audit",
    result(d, out) {
      if (!out || d.run.runId === "") return undefined;
      const o = out as DecisionShape;
      const ids = { sessionId: d.run.sessionId, runId: d.run.runId };
      const spec: HookSpec = HOOKS[d.hook];
      if (spec.kind === "gate" && o.outcome === "block" && o.by)
        return writeRecord(store, logger, ids, o.by, "block", o.category);
      if (spec.kind === "claim" && o.handled && o.by) return writeRecord(store, logger, ids, o.by, "claim");
      const latch = spec.blockField ?? "block";
      const outcome = latch === "cancel" ? "cancel" : latch === "deny" ? "deny" : "block";
      const decided = o.decidedBy
        ? () => writeRecord(store, logger, ids, o.decidedBy as Attribution, outcome)
        : undefined;
      // A hook that ends the run (`stopRun`) is a verdict too: a block with category "stop".
      const stopped = o.stoppedBy
        ? () => writeRecord(store, logger, ids, o.stoppedBy as Attribution, "block", "stop")
        : undefined;
      if (decided && stopped) return decided().then(stopped);
      return (decided ?? stopped)?.();
    },
  };
}

/**
 * `GATEHOUSE_LOG_LEVEL=debug` / `--verbose`: one line per hook dispatch that had handlers — the hook,
 * how many handlers, what was decided (pass, block, claim), how long it took. Never the event or a reason.
 */
export function debugInterceptor(logger: HostLogger): HookInterceptor {
  return {
    name: "debug-log",
    result(d, out) {
      if (d.handlers === 0) return;
      const o = (out ?? {}) as DecisionShape;
      const by = o.by ?? o.decidedBy;
      const decision = o.outcome === "block" || o.decidedBy ? "block" : o.handled ? "claim" : (o.outcome ?? "done");
      logger.debug(
        `hook ${d.hook}: ${d.handlers} ${d.handlers === 1 ? "handler" : "handlers"}, ${decision}${by ? ` by ${by.pluginId}` : ""} in ${Math.round(performance.now() - d.startedAt)} ms`,
      );
    },
  };
}

/**
 * Records a decision: hook, plugin, outcome, category, run, time. Nothing else can be passed,
 * so no reason or content can reach the audit trail.
 */
async function writeRecord(
  store: StoreView,
  logger: HostLogger,
  ids: { readonly sessionId: string; readonly runId: string },
  by: Decider,
  decision: AuditOutcome,
  category?: string,
): Promise<void> {
  const slug = categorySlug(category);
  try {
    await store.writeAudit({
      hook: by.hook,
      pluginId: by.pluginId,
      outcome: CAUSE_OUTCOME[by.cause] ?? decision,
      ...(slug ? { category: slug } : {}),
      ...ids,
    });
  } catch (error) {
    logger.warn(`audit record for ${by.hook} not written: ${(error as Error).name}`);
  }
}
