import type { HookAttachment, Message } from "../core/message.js";
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
  readonly systemPrompt: string;
  readonly prepend: readonly string[];
  readonly append: readonly string[];
  readonly systemPrepend: readonly string[];
  readonly systemAppend: readonly string[];
}

/** Where model-only context goes: before or after the user's words, or around the system prompt. */
export type ContextPlacement = "prepend" | "append" | "systemPrepend" | "systemAppend";

/** Who asked to end the run after the current step, and what the user is shown (user-safe). */
export interface StopRequest {
  readonly by: Attribution;
  readonly message: string | undefined;
}

/** A run's text channel: what it shows the user and what it delivered. The doors' alone (`doorChannel`). */
export interface DoorChannel {
  emitText(event: TextEvent): void;
  deliver(text: string | null): void;
}

/** Options the caller of a run sets once, at its start. */
export interface RunOptions {
  /** The caller's earlier turns (`RunInput.priorMessages`), stored only once the prompt passed its gate. */
  readonly priorMessages?: readonly PriorMessage[];
  /** A model spec chosen by the caller for this run (an agent profile). */
  readonly modelSpec?: string;
}

let channelOf: (state: RunState) => DoorChannel;

/**
 * Everything one run knows while it runs. Its fields change only through its named methods; it
 * cannot show or deliver text (that is the doors' text channel, `doorChannel`).
 */
export class RunState {
  /** What the model sees, as stored: a frozen array of frozen messages, replaced (not mutated) on change. */
  #history: readonly Message[] = Object.freeze([]);
  /** What `estimateTokens` counts for `history` (see `historyTokens`). */
  #historyChars = 0;
  #runMessages: readonly Message[] = Object.freeze([]);
  readonly #context: {
    systemPrompt: string;
    prepend: string[];
    append: string[];
    systemPrepend: string[];
    systemAppend: string[];
  };
  #toolsAllow: readonly string[] | undefined;
  #model: ResolvedModel | undefined;
  #injections: readonly QueuedInjection[] = [];
  #unrecorded: { readonly attachment: HookAttachment; readonly text: string }[] = [];
  #steps = 0;
  #usage: ModelUsage | undefined;
  /**
   * Instructions from `before_agent_finalize` revisions: model-only, for the rest of this run,
   * each placed after the answer it asked to revise.
   */
  readonly revisions: { readonly afterMessageId: string | undefined; readonly text: string }[] = [];
  /** How often each retry (by idempotency key or instruction) was applied. */
  readonly retryCounts = new Map<string, number>();
  /** Revisions counted against each budget of `REVISION_LIMITS` (consecutive ones reset when unused). */
  readonly revisionCounts: Record<RevisionBudget, number> = { revise: 0, stop: 0 };
  /** The sub-agent runs this run started, each with its own steps and usage (theirs included). */
  readonly children: ChildRunSummary[] = [];
  /** The caller's earlier turns (`RunInput.priorMessages`), stored only once the prompt passed its gate. */
  readonly priorMessages: readonly PriorMessage[];
  /** A model spec chosen by the caller for this run (an agent profile). */
  readonly modelSpec: string | undefined;
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

  static {
    channelOf = (state) => ({
      emitText: (event) => state.#sink(event),
      deliver: (text) => {
        state.#reply = text;
      },
    });
  }

  constructor(
    readonly sessionId: string,
    readonly runId: string,
    readonly prompt: string,
    readonly signal: AbortSignal,
    sink: EventSink,
    systemPrompt: string,
    /** When the run was asked for: a wait for the session's run lock counts in its duration. */
    readonly startedAt: number = performance.now(),
    options: RunOptions = {},
  ) {
    this.#sink = sink;
    this.#context = { systemPrompt, prepend: [], append: [], systemPrepend: [], systemAppend: [] };
    this.priorMessages = options.priorMessages ?? [];
    this.modelSpec = options.modelSpec;
  }

  /** What the model sees, as stored. */
  get history(): readonly Message[] {
    return this.#history;
  }

  /** This run's stored messages, in order. */
  get runMessages(): readonly Message[] {
    return this.#runMessages;
  }

  /** The model-only context of this run (a frozen copy). */
  get context(): PromptContext {
    const c = this.#context;
    return Object.freeze({
      systemPrompt: c.systemPrompt,
      prepend: Object.freeze([...c.prepend]),
      append: Object.freeze([...c.append]),
      systemPrepend: Object.freeze([...c.systemPrepend]),
      systemAppend: Object.freeze([...c.systemAppend]),
    });
  }

  /**
   * Model-only context a hook or an injection added: never stored as the user's words. Context the
   * model reads beside the user's words is also kept for the transcript, as the attachment given,
   * until a door stores it (`takeAttachments`).
   */
  addContext(placement: ContextPlacement, text: string, attachment?: HookAttachment): void {
    this.#context[placement].push(text);
    if (attachment) this.#unrecorded.push({ attachment, text });
  }

  /** A hook's feedback the model reads, for the transcript (a Stop hook's revision instruction). */
  noteAttachment(attachment: HookAttachment, text: string): void {
    this.#unrecorded.push({ attachment, text });
  }

  /** The attachments not stored yet, handed over once (to the door that stores them). */
  takeAttachments(): readonly { readonly attachment: HookAttachment; readonly text: string }[] {
    const taken = this.#unrecorded;
    this.#unrecorded = [];
    return taken;
  }

  /** `before_prompt_build` replaced the system prompt. */
  replaceSystemPrompt(text: string): void {
    this.#context.systemPrompt = text;
  }

  /** The tools a hook allowed (`toolsAllow`), or undefined when none narrowed them. */
  get toolsAllow(): readonly string[] | undefined {
    return this.#toolsAllow;
  }

  /** A hook's `toolsAllow`: the allow-list only ever narrows. */
  narrowTools(allow: readonly string[]): void {
    const prior = this.#toolsAllow;
    this.#toolsAllow = Object.freeze(prior ? prior.filter((t) => allow.includes(t)) : [...allow]);
  }

  /** The run's model (resolved at the start of the run). */
  get model(): ResolvedModel {
    if (this.#model === undefined) throw new Error("the run's model is not resolved yet");
    return this.#model;
  }

  /** Whether the run's model was resolved (a run may fail before). */
  get modelResolved(): boolean {
    return this.#model !== undefined;
  }

  useModel(model: ResolvedModel): void {
    this.#model = model;
  }

  /** The injections queued for this run (consumed when its prompt passes `before_agent_run`). */
  get injections(): readonly QueuedInjection[] {
    return this.#injections;
  }

  takeInjections(injections: readonly QueuedInjection[]): void {
    this.#injections = Object.freeze([...injections]);
  }

  /** This run's own model calls (its sub-agents' are in `children`). */
  get steps(): number {
    return this.#steps;
  }

  /** A model call starts: returns its step number. */
  countStep(): number {
    return ++this.#steps;
  }

  /** This run's own usage (its sub-agents' are in `children`). */
  get usage(): ModelUsage | undefined {
    return this.#usage;
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

  /** Progress anyone may report. Text for the user goes through the doors (their text channel). */
  emit(event: ProgressEvent): void {
    this.#sink(event);
  }

  /** A claim answered the turn (its reply, if any, is delivered by the output door). */
  setClaimed(): void {
    this.#outcome = "claimed";
  }

  /** A gate blocked the run (what the output door delivered in its place is its `reply`). */
  setBlocked(by: BlockedBy): void {
    this.#outcome = "blocked";
    this.#blockedBy = by;
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
    this.#history = Object.freeze([...messages]);
    this.#historyChars = chars;
  }

  /** Records a message the store just wrote, for the model's next call and the run's own view. */
  remember(message: Message): void {
    deepFreeze(message);
    this.#history = Object.freeze([...this.#history, message]);
    this.#runMessages = Object.freeze([...this.#runMessages, message]);
    this.#historyChars += messageChars(message);
  }

  /**
   * `estimateTokens(history)`, kept as history changes: counted at every step, it serialized each
   * tool call and result of the session again.
   */
  historyTokens(): number {
    return charsToTokens(this.#historyChars);
  }

  addUsage(usage: ModelUsage): void {
    this.#usage = sumUsage(this.#usage, usage);
  }

  /** A sub-agent run ended: its model calls count in this run's totals. */
  addChild(child: ChildRunSummary): void {
    this.children.push(child);
  }

  /** Model calls of this run and of every sub-agent under it. */
  totalSteps(): number {
    return this.children.reduce((n, c) => n + c.steps, this.#steps);
  }

  /** Usage of this run and of every sub-agent under it. */
  totalUsage(): ModelUsage | undefined {
    return this.children.reduce<ModelUsage | undefined>(
      (sum, c) => (c.usage ? sumUsage(sum, c.usage) : sum),
      this.#usage,
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
    const { systemPrepend, systemPrompt, systemAppend } = this.#context;
    return [...systemPrepend, systemPrompt, ...systemAppend].filter((t) => t !== "").join("\n\n");
  }

  /** The user's prompt as the model receives it, injected context included. */
  modelPromptText(): string {
    return [...this.#context.prepend, this.prompt, ...this.#context.append].join("\n\n");
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

/**
 * A run's text channel: what it shows the user (`emitText`) and what it delivered (`deliver`).
 * Only src/runtime/doors/outbox.ts calls this; the architecture test holds every other file to it.
 */
export function doorChannel(state: RunState): DoorChannel {
  return channelOf(state);
}
