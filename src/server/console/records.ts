/**
 * What the console needs beside the session store: each run's steps as the engine's interceptors
 * saw them, the runs in progress on every instance, the approval asks waiting for a human, and
 * console logins. They are tables of the store (src/store/service.ts), in its database and through
 * its connection.
 *
 * Nothing here can hold content: a step is identifiers (run, session, tool call), names (a hook,
 * a plugin, a registered tool, a provider and model), an outcome, a category slug, numbers and
 * times. An approval ask keeps its title (the text a plugin wrote for the human who answers)
 * only while it waits.
 */
import type { ConsoleLogin, LiveRun, PendingApproval, ServiceTables, StepRow } from "../../store/service.js";

export {
  type ConsoleLogin,
  type LiveRun,
  type PendingApproval,
  STEP_KINDS,
  type StepKind,
  type StepRow,
} from "../../store/service.js";

/** One write of the step recorder: rows in order, runs that started, runs that ended. */
export interface StepBatch {
  readonly steps: readonly StepRow[];
  readonly started: readonly LiveRun[];
  readonly ended: readonly string[];
}

export type ConsoleRecords = Pick<
  ServiceTables,
  | "stepsOf"
  | "liveRuns"
  | "addPendingApproval"
  | "removePendingApproval"
  | "pendingApprovals"
  | "createLogin"
  | "login"
  | "deleteLogin"
> & {
  recordSteps(batch: StepBatch): Promise<void>;
};

/** The console's records over the store's tables. */
export class StoreConsoleRecords implements ConsoleRecords {
  /**
   * Rows are ordered by `ord`: this recorder's clock in microseconds plus a counter, so steps of one
   * run recorded by one instance keep their order without a sequence shared between instances.
   */
  private lastOrd = 0;

  constructor(private readonly tables: ServiceTables) {}

  private nextOrd(): number {
    const now = Math.floor((performance.timeOrigin + performance.now()) * 1000);
    this.lastOrd = Math.max(now, this.lastOrd + 1);
    return this.lastOrd;
  }

  recordSteps(batch: StepBatch) {
    return this.tables.recordSteps({
      started: batch.started,
      steps: batch.steps.map((step) => ({ ...step, ord: this.nextOrd() })),
      ended: batch.ended,
    });
  }
  stepsOf(runIds: readonly string[]) {
    return this.tables.stepsOf(runIds);
  }
  liveRuns() {
    return this.tables.liveRuns();
  }
  addPendingApproval(approval: PendingApproval) {
    return this.tables.addPendingApproval(approval);
  }
  removePendingApproval(runId: string, toolCallId: string) {
    return this.tables.removePendingApproval(runId, toolCallId);
  }
  pendingApprovals() {
    return this.tables.pendingApprovals();
  }
  createLogin(login: ConsoleLogin) {
    return this.tables.createLogin(login);
  }
  login(tokenHash: string, now: number) {
    return this.tables.login(tokenHash, now);
  }
  deleteLogin(tokenHash: string) {
    return this.tables.deleteLogin(tokenHash);
  }
}
