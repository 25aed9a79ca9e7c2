import type { FastifyRequest } from "fastify";
import type { z } from "zod";
import type { ServerContext } from "../context.js";
import { readApprovalDetail } from "./approval-detail.js";
import type { LiveRun } from "./records.js";
import type { LiveSchema } from "./schemas.js";
import { consoleTitles } from "./sessions.js";
import { buildTimeline } from "./timeline.js";

type Live = z.input<typeof LiveSchema>;
type Caller = Pick<FastifyRequest, "principal" | "admin">;

/** The newest steps of each run shown. */
const STEPS_SHOWN = 40;

/**
 * Runs in progress on every instance (from the records, so a console on one instance sees the
 * runs of all), each with its latest steps, and the approval asks waiting for a human. A
 * principal sees its own sessions' runs (and their sub-agents'); an admin sees all. Rows the
 * store says are over — a run whose instance died before it could clear them — are cleared.
 */
export async function liveSnapshot(ctx: ServerContext, caller: Caller): Promise<Live> {
  const { store } = ctx.gatehouse;
  const rows = await ctx.records.console.liveRuns();
  const runs = await Promise.all(rows.map((r) => store.getRun(r.runId)));
  const live = rows.filter((_, i) => runs[i]?.status === "running");
  const over = rows.filter((_, i) => runs[i]?.status !== "running").map((r) => r.runId);
  if (over.length > 0) await ctx.records.console.recordSteps({ steps: [], started: [], ended: over });

  const byRun = new Map(live.map((r) => [r.runId, r]));
  /** A sub-agent's run belongs to the session of the top-level run above it. */
  const rootOf = (run: LiveRun): LiveRun => {
    let at = run;
    for (let hops = 0; at.parentRunId !== null && hops < 16; hops++) {
      const parent = byRun.get(at.parentRunId);
      if (!parent) break;
      at = parent;
    }
    return at;
  };
  const roots = [...new Set(live.map((r) => rootOf(r).sessionId))];
  const owners = await ctx.records.sessionOwners(roots);
  const ownerOf = (run: LiveRun) => owners.get(rootOf(run).sessionId);
  const sessions = (await Promise.all(roots.map((id) => store.getSession(id)))).flatMap((session) =>
    session ? [{ session, owner: owners.get(session.id) }] : [],
  );
  const titles = await consoleTitles(store, sessions);
  const titleOf = (run: LiveRun) => titles.get(rootOf(run).sessionId) ?? null;
  const visible = live.filter((r) => caller.admin || ownerOf(r)?.principal === caller.principal);

  const steps = await ctx.records.console.stepsOf(visible.map((r) => r.runId));
  const pending = await ctx.records.console.pendingApprovals();
  // An ask left by an instance that died while it waited goes once its run is over.
  for (const a of pending.filter((p) => !byRun.has(p.runId)))
    if ((await store.getRun(a.runId))?.status !== "running")
      await ctx.records.console.removePendingApproval(a.runId, a.toolCallId);
  const approvals = pending.filter((a) => {
    const run = byRun.get(a.runId);
    return run !== undefined && (caller.admin || ownerOf(run)?.principal === caller.principal);
  });

  return {
    runs: visible.map((r) => {
      const run = runs[rows.indexOf(r)];
      const [timeline] = run ? buildTimeline([run], steps, [], []) : [];
      const owner = ownerOf(r);
      return {
        runId: r.runId,
        sessionId: r.sessionId,
        parentRunId: r.parentRunId,
        depth: r.depth,
        instance: r.instance,
        startedAt: new Date(r.startedAt).toISOString(),
        principal: owner?.principal ?? null,
        title: titleOf(r),
        steps: (timeline?.steps ?? []).slice(-STEPS_SHOWN),
      };
    }),
    approvals: approvals.map((a) => ({
      runId: a.runId,
      toolCallId: a.toolCallId,
      sessionId: a.sessionId,
      toolName: a.toolName,
      title: a.title,
      askedAt: new Date(a.askedAt).toISOString(),
      instance: a.instance,
      ...readApprovalDetail(a.detail),
    })),
  };
}
