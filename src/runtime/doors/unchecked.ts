import type { Run, StoreView } from "../../store/types.js";
import type { RuntimeDeps } from "../deps.js";
import { notices } from "../notices.js";
import type { RunState } from "../state.js";
import { storeWriter } from "./outbox.js";

/**
 * Output that never passed the output gates (docs/security.md: gates fail closed) goes as a block would
 * take it: the run's assistant and tool messages give way to a notice; the user's prompt, which passed
 * its gate, stays. No tool call is left without a result, since the calls go with the answers. Its
 * sub-agent runs are emptied altogether: their task was one of those calls, their answers never
 * passed the parent's after_tool_call.
 */

/**
 * Runs of this session still "running" when we hold its run lock belong to a process that died
 * mid-run (SIGKILL, power loss). Their sub-agent runs go too.
 */
export async function recoverInterruptedRuns(deps: RuntimeDeps, sessionId: string): Promise<void> {
  const { store } = deps;
  const writer = storeWriter(deps);
  const stale = (await store.listRuns(sessionId)).filter((r) => r.status === "running");
  if (stale.length === 0) return;
  const children = await subagentRuns(store, sessionId, stale, (run) => run.status === "running");
  // Interrupted is not a policy decision: the runs end "failed" with the detail "interrupted"; their
  // unchecked output goes as a block would take it.
  const block = {
    notice: notices.interrupted,
    blockedBy: "gatehouse",
    hook: "recovery",
    status: "failed",
    detail: "interrupted",
  } as const;
  for (const run of stale) {
    if ((await store.runMessages(run.id)).length > 0) await writer.blockRun(run.id, block);
    else await store.finishRun(run.id, "failed", { detail: "interrupted" });
  }
  for (const run of children) await writer.blockPrompt(run.id, block);
  for (const run of [...stale, ...children])
    deps.logger.warn(`run ${run.id} was interrupted (its process ended); its unchecked output was removed`);
}

/** Takes over the run lock of every session another owner left behind, and recovers its interrupted runs. */
export async function recoverAbandonedRuns(deps: RuntimeDeps): Promise<string[]> {
  const recovered: string[] = [];
  for (const sessionId of await deps.store.abandonedRunLocks()) {
    const lock = await deps.store.acquireRunLock(sessionId);
    try {
      if (lock.interruptedRuns === 0) continue;
      await recoverInterruptedRuns(deps, sessionId);
      recovered.push(sessionId);
    } finally {
      await lock.release();
    }
  }
  return recovered;
}

/**
 * A run that ends cancelled or failed while an output gate has handlers stopped before its
 * output was checked. Each run keeps its own outcome. Returns false when the store could not
 * do it: the run is then left "running", for the next admission's recovery to finish fail-closed.
 */
export async function discardUncheckedOutput(deps: RuntimeDeps, state: RunState): Promise<boolean> {
  const { store } = deps;
  const writer = storeWriter(deps);
  const outcome = state.outcome === "cancelled" ? "cancelled" : "failed";
  const block = {
    notice: outcome === "cancelled" ? notices.cancelledUnchecked : notices.failedUnchecked,
    blockedBy: "gatehouse",
    hook: outcome === "cancelled" ? "cancellation" : "failure",
  };
  try {
    const own = (await store.getRun(state.runId)) as Run;
    const messages = await store.runMessages(own.id);
    if (messages.some((m) => m.role === "assistant" || m.role === "tool"))
      await writer.blockRun(own.id, { ...block, status: outcome });
    for (const run of await subagentRuns(store, state.sessionId, [own]))
      await writer.blockPrompt(run.id, { ...block, status: run.status === "running" ? outcome : run.status });
    return true;
  } catch (error) {
    deps.logger.warn(`run ${state.runId}: its unchecked output could not be removed yet (${(error as Error).name})`);
    return false;
  }
}

/**
 * The sub-agent runs (any depth) under `roots`, parents before children, found through the
 * sub-agent sessions of `sessionId`; `alsoInclude` adds runs whatever their parent.
 */
export async function subagentRuns(
  store: StoreView,
  sessionId: string,
  roots: readonly Run[],
  alsoInclude: (run: Run) => boolean = () => false,
): Promise<Run[]> {
  const found: Run[] = [];
  const ids = new Set(roots.map((r) => r.id));
  for (const sessions = [sessionId]; sessions.length; ) {
    const children = await store.listSessions({ parentSessionId: sessions.shift() as string, limit: 10_000 });
    for (const child of children) {
      sessions.push(child.id);
      for (const run of await store.listRuns(child.id)) {
        if (!alsoInclude(run) && !(run.parentRunId !== null && ids.has(run.parentRunId))) continue;
        found.push(run);
        ids.add(run.id);
      }
    }
  }
  return found;
}
