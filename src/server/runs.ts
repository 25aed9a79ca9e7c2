import type { HookLogger } from "../hooks/kinds/shared.js";
import { describeError as describe } from "../hooks/sanitize.js";
import type { Gatehouse } from "../runtime/gatehouse.js";
import type { ApprovalAnswer, ApprovalDecision, Approver, RunEvent, RunInput, RunResult } from "../runtime/types.js";
import { approvalDetail } from "./console/approval-detail.js";
import type { RunSignal, ServiceRecords } from "./records.js";

export interface RunLimits {
  readonly runsPerPrincipal: number;
  readonly runsPerInstance: number;
  readonly requestTimeoutMs: number;
}

export interface ApprovalPolicy {
  /**
   * deny: nobody waits. client: a streaming client's runs wait for an answer. console: every
   * top-level run waits, for the console's Live view (or a streaming client) to answer.
   */
  readonly mode: "deny" | "client" | "console";
}

/** Why a run was not admitted: the HTTP status and how long to wait before retrying. */
export class Refusal extends Error {
  constructor(
    readonly status: 429 | 503,
    readonly code: "too_many_runs" | "instance_busy" | "shutting_down",
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
}

/** One run this instance is running. */
interface ActiveRun {
  readonly principal: string;
  readonly controller: AbortController;
  /** Only a streaming client sees an approval ask, so only its runs wait for an answer. */
  readonly streaming: boolean;
  readonly approvals: Map<string, (decision: ApprovalDecision, by: string) => void>;
}

/** What the server's approver answers in the audit trail. */
const SERVER = "server";
/** Who answered an ask, in the audit trail: a client of the API, or a person at the console. */
export type Answerer = "client" | "console";

/**
 * The runs of this instance: admission under the limits, cancellation (local, or by signal to
 * the instance that runs it), approval answers, and draining on shutdown.
 */
export class RunManager {
  private readonly active = new Map<string, ActiveRun>();
  private readonly perPrincipal = new Map<string, number>();
  private admitted = 0;
  private draining = false;
  private stopWatching: (() => Promise<void>) | undefined;
  /** Every run this instance started, settled or not: shutdown waits for them. */
  private readonly running = new Set<Promise<unknown>>();

  constructor(
    private readonly records: ServiceRecords,
    private readonly limits: RunLimits,
    private readonly approvals: ApprovalPolicy,
    private readonly logger: HookLogger,
    /** This instance, as the console shows where a run or an ask is (host:pid). */
    readonly instance: string,
  ) {}

  get count(): number {
    return this.admitted;
  }

  get isDraining(): boolean {
    return this.draining;
  }

  /** Listens for cancels and approval answers sent to whichever instance runs a run. */
  async watchSignals(): Promise<void> {
    this.stopWatching = await this.records.watch((signal) => this.onSignal(signal));
  }

  /**
   * The approver given to the runtime: a run's ask reaches its streaming client (as the
   * `approval-requested` event the runtime emits) and the console's Live view (a pending ask in
   * the records, on every instance), and waits for an answer. In "deny" mode, in "client" mode
   * for a client that is not streaming, or for a sub-agent's run (whose events the client does
   * not see), nobody can answer: denied at once, visibly.
   */
  readonly approver: Approver = (request, signal): Promise<ApprovalAnswer> => {
    const run = this.active.get(request.runId);
    const waits = this.approvals.mode === "console" || (this.approvals.mode === "client" && run?.streaming === true);
    // Nobody to ask is not a "no": the model reads that no one could be asked, as in `run`.
    if (!run || !waits) return Promise.resolve({ decision: "nobody", decidedBy: SERVER });
    if (signal.aborted) return Promise.resolve({ decision: "deny", decidedBy: SERVER });
    const pending = this.records.console.addPendingApproval({
      runId: request.runId,
      toolCallId: request.toolCallId,
      sessionId: request.sessionId,
      toolName: request.toolName,
      title: request.title,
      askedAt: Date.now(),
      instance: this.instance,
      detail: approvalDetail(request),
    });
    return new Promise((resolve) => {
      const settle = (decision: ApprovalDecision, by: string) => {
        run.approvals.delete(request.toolCallId);
        signal.removeEventListener("abort", onAbort);
        // Removed after it was added, whichever connection each goes through.
        void pending
          .then(() => this.records.console.removePendingApproval(request.runId, request.toolCallId))
          .catch((error: unknown) =>
            this.logger.warn(`approval ask of run ${request.runId} not cleared: ${describe(error)}`),
          );
        resolve({ decision, decidedBy: by });
      };
      const onAbort = () => settle("deny", SERVER);
      run.approvals.set(request.toolCallId, settle);
      signal.addEventListener("abort", onAbort, { once: true });
    });
  };

  /**
   * Starts a run for a principal within the limits (a `Refusal` otherwise). Events go to
   * `onEvent` as the run pushes them; the result settles when it ends. The run is cancelled
   * when `signal` aborts (the client went away), at the request deadline, or by `cancel`.
   */
  start(
    gatehouse: Gatehouse,
    principal: string,
    input: Omit<RunInput, "signal">,
    options: { readonly streaming: boolean; readonly signal: AbortSignal; onEvent?: (event: RunEvent) => void },
  ): { readonly result: Promise<RunResult>; readonly timedOut: () => boolean } {
    this.admit(principal);
    const controller = new AbortController();
    const deadline = setTimeout(() => controller.abort(new Error("deadline")), this.limits.requestTimeoutMs);
    const onClientGone = () => controller.abort(new Error("client gone"));
    options.signal.addEventListener("abort", onClientGone, { once: true });
    let runId: string | undefined;
    const stream = gatehouse.stream({ ...input, signal: controller.signal });
    const consume = (async () => {
      for await (const event of stream) {
        if (event.type === "run-start" && runId === undefined) {
          runId = event.runId;
          this.active.set(runId, { principal, controller, streaming: options.streaming, approvals: new Map() });
        }
        options.onEvent?.(event);
      }
    })();
    const result = Promise.all([stream.result, consume])
      .then(([r]) => {
        // The client learns only that the run failed; the operator gets the runtime's one-line cause.
        if (r.outcome === "failed") this.logger.warn(`run ${r.runId} failed: ${r.error?.message ?? "unknown error"}`);
        return r;
      })
      .finally(() => {
        clearTimeout(deadline);
        options.signal.removeEventListener("abort", onClientGone);
        if (runId !== undefined) this.active.delete(runId);
        this.release(principal);
      });
    const settled = result.catch(() => undefined);
    this.running.add(settled);
    void settled.finally(() => this.running.delete(settled));
    return {
      result,
      timedOut: () => controller.signal.aborted && (controller.signal.reason as Error)?.message === "deadline",
    };
  }

  /** Cancels a run wherever it runs: here at once, elsewhere through the records' signal. */
  async cancel(runId: string): Promise<void> {
    const run = this.active.get(runId);
    if (run) run.controller.abort(new Error("cancelled"));
    else await this.records.signal({ kind: "cancel", runId });
  }

  /** Answers a pending approval of a run wherever it runs. */
  async answer(runId: string, toolCallId: string, decision: ApprovalDecision, by: Answerer = "client"): Promise<void> {
    const run = this.active.get(runId);
    if (run) run.approvals.get(toolCallId)?.(decision, by);
    else await this.records.signal({ kind: "approval", runId, toolCallId, decision, by });
  }

  /**
   * Shutdown: admit nothing more, let the runs finish until `graceMs`, then cancel the rest
   * (cleanly: their unchecked output is removed as for any cancel) and wait for them to end.
   */
  async drain(graceMs: number): Promise<void> {
    this.draining = true;
    const all = Promise.all([...this.running]);
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs);
    });
    await Promise.race([all, graceOver]);
    clearTimeout(timer);
    for (const run of this.active.values()) run.controller.abort(new Error("shutdown"));
    await Promise.all([...this.running]);
    await this.stopWatching?.();
  }

  private onSignal(signal: RunSignal): void {
    const run = this.active.get(signal.runId);
    if (!run) return;
    if (signal.kind === "cancel") run.controller.abort(new Error("cancelled"));
    else run.approvals.get(signal.toolCallId)?.(signal.decision, signal.by ?? "client");
  }

  private admit(principal: string): void {
    if (this.draining) throw new Refusal(503, "shutting_down", "The server is shutting down.", 5);
    const mine = this.perPrincipal.get(principal) ?? 0;
    if (mine >= this.limits.runsPerPrincipal)
      throw new Refusal(429, "too_many_runs", `At most ${this.limits.runsPerPrincipal} runs at once per key.`, 1);
    if (this.admitted >= this.limits.runsPerInstance)
      throw new Refusal(503, "instance_busy", "This instance is at its limit of concurrent runs.", 1);
    this.perPrincipal.set(principal, mine + 1);
    this.admitted++;
  }

  private release(principal: string): void {
    this.admitted--;
    const mine = (this.perPrincipal.get(principal) ?? 1) - 1;
    if (mine === 0) this.perPrincipal.delete(principal);
    else this.perPrincipal.set(principal, mine);
  }
}
