import type { Message } from "../core/message.js";
import { deepFreeze } from "../hooks/freeze.js";
import type { Attribution } from "../hooks/types.js";
import type { ModelUsage } from "../models/collect.js";
import type { QueuedInjection } from "../store/types.js";
import { charsToTokens, messageChars } from "./compaction.js";
import type { ResolvedModel } from "./deps.js";
import type { EventSink } from "./events.js";
import type { RevisionBudget } from "./finalize.js";
import type {
  BlockedBy,
  ChildRunSummary,
  PermissionDenial,
  PriorMessage,
  ProgressEvent,
  RunError,
  RunOutcome,
  TextEvent,
} from "./types.js";

/** Model-only text assembled from hooks and queued injections: never stored as the user's words. */
export interface PromptContext {
  systemPrompt: string;
  prepend: string[];
  append: string[];
  systemPrepend: string[];
  systemAppend: string[];
}

/** Who asked to end the run after the current step, and what the user is shown (user-safe). */
export interface StopRequest {
  readonly by: Attribution;
  readonly message: string | undefined;
}

/** Everything one run knows while it runs. */
export class RunState {
  /** What the model sees, as stored: a frozen array of frozen messages, replaced (not mutated) on change. */
  history: readonly Message[] = Object.freeze([]);
  /** What `estimateTokens` counts for `history` (see `historyTokens`). */
  private historyChars = 0;
  /** This run's stored messages, in order. */
  runMessages: readonly Message[] = Object.freeze([]);
  readonly context: PromptContext;
  toolsAllow: readonly string[] | undefined;
  model!: ResolvedModel;
  injections: readonly QueuedInjection[] = [];
  /**
   * Instructions from `before_agent_finalize` revisions: model-only, for the rest of this run,
   * each placed after the answer it asked to revise.
   */
  readonly revisions: { readonly afterMessageId: string | undefined; readonly text: string }[] = [];
  /** How often each retry (by idempotency key or instruction) was applied. */
  readonly retryCounts = new Map<string, number>();
  /** Revisions counted against each budget of `REVISION_LIMITS` (consecutive ones reset when unused). */
  readonly revisionCounts: Record<RevisionBudget, number> = { revise: 0, stop: 0 };
  /** This run's own model calls (its sub-agents' are in `children`). */
  steps = 0;
  /** This run's own usage (its sub-agents' are in `children`). */
  usage: ModelUsage | undefined;
  /** The sub-agent runs this run started, each with its own steps and usage (theirs included). */
  readonly children: ChildRunSummary[] = [];
  /** The caller's earlier turns (`RunInput.priorMessages`), stored only once the prompt passed its gate. */
  priorMessages: readonly PriorMessage[] = [];
  /** A model spec chosen by the caller for this run (an agent profile). */
  modelSpec: string | undefined;
  // How the run ends and what it delivered: changed only through the methods below.
  #outcome: RunOutcome = "completed";
  #reply: string | null = null;
  #blockedBy: BlockedBy | undefined;
  #error: RunError | undefined;
  #leftForRecovery = false;
  #stopRequest: StopRequest | undefined;
  readonly #permissionDenials: PermissionDenial[] = [];
  #interruptedBy: PermissionDenial | undefined;
  readonly #sink: EventSink;

  constructor(
    readonly sessionId: string,
    readonly runId: string,
    readonly prompt: string,
    readonly signal: AbortSignal,
    sink: EventSink,
    systemPrompt: string,
    /** When the run was asked for: a wait for the session's run lock counts in its duration. */
    readonly startedAt: number = performance.now(),
  ) {
    this.#sink = sink;
    this.context = { systemPrompt, prepend: [], append: [], systemPrepend: [], systemAppend: [] };
  }

  get outcome(): RunOutcome {
    return this.#outcome;
  }

  /** The delivered text, or null when nothing was delivered. */
  get reply(): string | null {
    return this.#reply;
  }

  get blockedBy(): BlockedBy | undefined {
    return this.#blockedBy;
  }

  get error(): RunError | undefined {
    return this.#error;
  }

  /** A tool hook asked to end the run once the current step is done (Claude Code's `continue: false`). */
  get stopRequest(): StopRequest | undefined {
    return this.#stopRequest;
  }

  /** The first request stands: its hook and its message are what the user is shown. */
  requestStop(request: StopRequest): void {
    this.#stopRequest ??= request;
  }

  /** Its unchecked output could not be removed: the run stays "running" for recovery to finish. */
  get leftForRecovery(): boolean {
    return this.#leftForRecovery;
  }

  /** Progress anyone may report. Text for the user goes through the doors (`emitText`). */
  emit(event: ProgressEvent): void {
    this.#sink(event);
  }

  /** Events that carry text a user sees: only the doors (src/runtime/doors/) call this. */
  emitText(event: TextEvent): void {
    this.#sink(event);
  }

  /** A claim answered the turn (its reply, if any, is delivered by the output door). */
  setClaimed(): void {
    this.#outcome = "claimed";
  }

  /** What the output door delivered; null when nothing was. */
  setDelivered(text: string | null): void {
    this.#reply = text;
  }

  /** A gate blocked the run; `notice` is what the output door delivered in its place (null: nothing). */
  setBlocked(by: BlockedBy, notice: string | null): void {
    this.#outcome = "blocked";
    this.#blockedBy = by;
    this.#reply = notice;
  }

  /** The step limit ended the run while the model was still calling tools. Nothing is delivered. */
  setMaxSteps(): void {
    this.#outcome = "max_steps";
    this.#reply = null;
  }

  /** The run stopped before its end: cancelled, or failed (its error as data, message sanitized). Nothing is delivered. */
  setStopped(outcome: "cancelled" | "failed", error?: RunError): void {
    this.#outcome = outcome;
    this.#reply = null;
    this.#error = outcome === "failed" ? error : undefined;
  }

  /** Tool calls the permission check denied, in order. */
  get permissionDenials(): readonly PermissionDenial[] {
    return this.#permissionDenials;
  }

  addPermissionDenial(denial: PermissionDenial): void {
    this.#permissionDenials.push(denial);
  }

  /** A denial that ends the run (`interrupt: true`), once the step's calls are stored. */
  get interruptedBy(): PermissionDenial | undefined {
    return this.#interruptedBy;
  }

  interrupt(denial: PermissionDenial): void {
    this.#interruptedBy ??= denial;
  }

  leaveForRecovery(): void {
    this.#leftForRecovery = true;
  }

  setHistory(messages: readonly Message[]): void {
    let chars = 0;
    for (const m of messages) {
      deepFreeze(m);
      chars += messageChars(m);
    }
    this.history = Object.freeze([...messages]);
    this.historyChars = chars;
  }

  /** Records a message the store just wrote, for the model's next call and the run's own view. */
  remember(message: Message): void {
    deepFreeze(message);
    this.history = Object.freeze([...this.history, message]);
    this.runMessages = Object.freeze([...this.runMessages, message]);
    this.historyChars += messageChars(message);
  }

  /**
   * `estimateTokens(history)`, kept as history changes: counted at every step, it serialized each
   * tool call and result of the session again.
   */
  historyTokens(): number {
    return charsToTokens(this.historyChars);
  }

  addUsage(usage: ModelUsage): void {
    this.usage = sumUsage(this.usage, usage);
  }

  /** A sub-agent run ended: its model calls count in this run's totals. */
  addChild(child: ChildRunSummary): void {
    this.children.push(child);
  }

  /** Model calls of this run and of every sub-agent under it. */
  totalSteps(): number {
    return this.children.reduce((n, c) => n + c.steps, this.steps);
  }

  /** Usage of this run and of every sub-agent under it. */
  totalUsage(): ModelUsage | undefined {
    return this.children.reduce<ModelUsage | undefined>(
      (sum, c) => (c.usage ? sumUsage(sum, c.usage) : sum),
      this.usage,
    );
  }

  /** Milliseconds since the run was asked for, whole (a lock wait included). */
  durationMs(): number {
    return Math.round(performance.now() - this.startedAt);
  }

  /** The run's model as hooks name it (`provider:model`, SessionStart's `model`). */
  modelName(): string {
    return `${this.model.provider}:${this.model.modelId}`;
  }

  systemPrompt(): string {
    const { systemPrepend, systemPrompt, systemAppend } = this.context;
    return [...systemPrepend, systemPrompt, ...systemAppend].filter((t) => t !== "").join("\n\n");
  }

  /** The user's prompt as the model receives it, injected context included. */
  modelPromptText(): string {
    return [...this.context.prepend, this.prompt, ...this.context.append].join("\n\n");
  }
}

function sumUsage(prior: ModelUsage | undefined, usage: ModelUsage): ModelUsage {
  if (prior === undefined) return usage;
  const add = (a: number | undefined, b: number | undefined) =>
    a === undefined && b === undefined ? undefined : (a ?? 0) + (b ?? 0);
  return {
    inputTokens: add(prior.inputTokens, usage.inputTokens),
    outputTokens: add(prior.outputTokens, usage.outputTokens),
    totalTokens: add(prior.totalTokens, usage.totalTokens),
    reasoningTokens: add(prior.reasoningTokens, usage.reasoningTokens),
    cacheReadTokens: add(prior.cacheReadTokens, usage.cacheReadTokens),
    cacheWriteTokens: add(prior.cacheWriteTokens, usage.cacheWriteTokens),
  };
}
