import type { Message, Part, Role } from "../core/message.js";
import type { PluginStateTables } from "./plugin-state.js";
import type { ServiceTables } from "./service.js";

export type { Message, Part, Role };

export const RUN_STATUSES = ["running", "completed", "blocked", "claimed", "failed", "cancelled"] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export type FinalRunStatus = Exclude<RunStatus, "running">;

export const RUN_TRIGGERS = ["user", "api", "cron", "subagent"] as const;
export type RunTrigger = (typeof RUN_TRIGGERS)[number];

export const INJECTION_PLACEMENTS = ["prepend", "append", "system"] as const;
export type InjectionPlacement = (typeof INJECTION_PLACEMENTS)[number];

export const AUDIT_OUTCOMES = [
  "pass",
  "block",
  "modify",
  "claim",
  "cancel",
  "revise",
  "approve",
  "deny",
  "error",
  "timeout",
  "invalid",
] as const;
export type AuditOutcome = (typeof AUDIT_OUTCOMES)[number];

export interface Session {
  readonly id: string;
  /** Stable routing key (e.g. "agent:main:cli"); several sessions share one over time (a reset mints a new id). */
  readonly key: string | null;
  readonly parentSessionId: string | null;
  readonly createdAt: string;
  readonly updatedAt: string;
  /**
   * The title someone gave the session (`gatehouse sessions rename`, the server's API); absent
   * when none was. Listings then show the first prompt the store kept, read from the messages.
   */
  readonly title?: string;
}

export interface SessionListing extends Session {
  readonly runCount: number;
  readonly messageCount: number;
}

export interface Run {
  readonly id: string;
  readonly sessionId: string;
  /** 1, 2, 3… within the session, in admission order. */
  readonly seq: number;
  readonly status: RunStatus;
  readonly depth: number;
  readonly parentRunId: string | null;
  readonly trigger: RunTrigger;
  readonly jobId: string | null;
  readonly startedAt: string;
  readonly endedAt: string | null;
  /** The model the run used last (`provider:model`), once it finished. */
  readonly model?: string;
  /** Tokens the run used, its sub-agents' included. */
  readonly usage?: RunUsage;
  /**
   * Why it ended, beyond its status: `max_steps` (a failed run that hit its step limit),
   * `interrupted` (a run recovered after its process died).
   */
  readonly detail?: string;
  /** A failed run's error kind (`auth`, `rate_limit`, `connection`…). */
  readonly errorKind?: string;
}

export interface RunUsage {
  readonly inputTokens?: number;
  readonly outputTokens?: number;
  readonly totalTokens?: number;
}

/** What `finishRun` records besides the status. */
export interface RunSummary {
  readonly model?: string;
  readonly usage?: RunUsage;
  readonly detail?: string;
  readonly errorKind?: string;
}

/** A compaction: one summary message standing, in the model's history, for the messages `fromSeq..toSeq`. */
export interface CompactionSummary {
  readonly id: string;
  readonly sessionId: string;
  readonly message: Message;
  readonly fromSeq: number;
  readonly toSeq: number;
  /** Every run with a message in the covered range; blocking any of them drops this summary. */
  readonly runIds: readonly string[];
  readonly createdAt: string;
}

export interface QueuedInjection {
  readonly id: string;
  readonly sessionId: string;
  readonly text: string;
  readonly placement: InjectionPlacement;
  readonly idempotencyKey: string | null;
  readonly expiresAt: string | null;
  readonly createdAt: string;
}

/**
 * A sanitized record of one hook decision. It has no field that can carry a reason, a message or content:
 * `category` is a short slug (no spaces), and every other field is an identifier, an enum or a time.
 */
export interface AuditRecord {
  readonly id: string;
  readonly hook: string;
  readonly pluginId: string;
  readonly outcome: AuditOutcome;
  readonly category: string | null;
  readonly sessionId: string | null;
  readonly runId: string | null;
  readonly at: string;
}

export interface SessionDetail {
  readonly session: Session;
  readonly runs: readonly Run[];
  readonly messageCount: number;
  readonly compactions: readonly CompactionSummary[];
}

export interface CreateSessionInput {
  readonly id?: string;
  readonly key?: string | null;
  readonly parentSessionId?: string | null;
  readonly title?: string | null;
}

export interface StartRunInput {
  readonly sessionId: string;
  readonly id?: string;
  readonly depth?: number;
  readonly parentRunId?: string | null;
  readonly trigger?: RunTrigger;
  readonly jobId?: string | null;
}

export interface AppendMessageInput {
  readonly sessionId: string;
  /** null only for messages written outside any run. */
  readonly runId: string | null;
  readonly role: Exclude<Role, "summary">;
  readonly parts: readonly Part[];
  readonly metadata?: Readonly<Record<string, unknown>>;
  /** A second append with the same key in the same session returns the first message and writes nothing. */
  readonly idempotencyKey?: string;
}

/** What a block leaves behind: the user-facing notice and sanitized attribution. Never the hook's reason. */
export interface BlockInput {
  readonly notice: string;
  readonly blockedBy: string;
  readonly hook: string;
  readonly category?: string;
  /**
   * The run's status after the block (default `blocked`): a run that was cancelled or failed (or a
   * sub-agent run under it) keeps its own outcome when its unchecked output gives way to the notice.
   */
  readonly status?: FinalRunStatus;
  /** Why the run ended, recorded with the status (`interrupted` for a recovered run). */
  readonly detail?: string;
}

export interface BlockResult {
  readonly replacement: Message;
  readonly removedMessages: number;
  readonly droppedSummaries: number;
  /** false when the run was already blocked: a repeated block is a no-op. */
  readonly changed: boolean;
}

export interface RewriteResult {
  readonly updatedMessages: number;
  readonly removedMessages: number;
  readonly droppedSummaries: number;
}

export interface RecordCompactionInput {
  readonly sessionId: string;
  readonly fromSeq: number;
  readonly toSeq: number;
  readonly summary: string;
  readonly metadata?: Readonly<Record<string, unknown>>;
}

export interface QueueInjectionInput {
  readonly sessionId: string;
  readonly text: string;
  readonly placement: InjectionPlacement;
  readonly idempotencyKey?: string;
  readonly expiresAt?: string | Date;
}

/** Deliberately closed: an object with a `reason`, `message` or any other extra key is rejected at run time too. */
export interface AuditInput {
  readonly hook: string;
  readonly pluginId: string;
  readonly outcome: AuditOutcome;
  readonly category?: string;
  readonly sessionId?: string;
  readonly runId?: string;
  readonly at?: string | Date;
  readonly reason?: never;
  readonly message?: never;
  readonly content?: never;
}

export interface AuditFilter {
  readonly sessionId?: string;
  readonly runId?: string;
  readonly limit?: number;
}

export interface ListSessionsOptions {
  readonly key?: string;
  /** null lists only top-level sessions; a string lists that session's sub-agent sessions. */
  readonly parentSessionId?: string | null;
  readonly limit?: number;
  readonly offset?: number;
}

export interface MessagePage {
  /** Messages with a seq greater than this (0 = from the start). */
  readonly afterSeq?: number;
  readonly limit?: number;
}

export interface RunLock {
  readonly sessionId: string;
  /** Who holds it: this store's owner token in the run lease (`host:pid:starttime:random`). */
  readonly owner: string;
  /**
   * Runs of the session still "running" when the lock was granted. Nobody else can be running them:
   * their process died mid-run (or could not finish them), and they are the new holder's to recover.
   */
  readonly interruptedRuns: number;
  /**
   * Aborts if the lease turns out to have been taken over while held: this store's heartbeats stopped
   * for longer than the lease's expiry, and another owner, which cannot see this process, took it.
   */
  readonly lost: AbortSignal;
  /** Idempotent. */
  release(): Promise<void>;
}

export interface AcquireRunLockOptions {
  readonly signal?: AbortSignal;
  /** Called once if the lock is held (by this process or another) and this call has to wait for it. */
  readonly onWait?: () => void;
}

export type StoreKind = "sqlite" | "postgres" | "memory";

/**
 * The session store. Every method is atomic: it either fully happens or leaves no trace. Run-scoped
 * operations find a run's messages by run id, never by position, so compaction cannot shift them.
 */
/**
 * The store methods that write, rewrite or remove message text: the doors' alone
 * (src/runtime/doors/outbox.ts hands them out; everything else holds a `StoreView`).
 */
export type MessageWriterMethod = "appendMessage" | "rewriteRun" | "blockRun" | "blockPrompt" | "recordCompaction";

/** What the doors write with. */
export type MessageWriter = Pick<SessionStore, MessageWriterMethod>;

/**
 * The store as code outside the doors holds it: it reads, and keeps the run's bookkeeping (runs,
 * locks, injections, audit records), but has no method that stores text a user or the model reads.
 * A new path that stores such text goes through a door, or it does not compile.
 */
export interface StoreView extends Omit<SessionStore, MessageWriterMethod> {}

export interface SessionStore {
  readonly kind: StoreKind;
  /** What `gatehouse serve` keeps beside the sessions, in the same database (keys, owners, run steps, …). */
  readonly service: ServiceTables;
  /** OpenClaw plugins' `api.runtime.state`, in the same database: the plugin's own data, by plugin id, namespace and key. */
  readonly pluginState: PluginStateTables;

  createSession(input?: CreateSessionInput): Promise<Session>;
  getSession(id: string): Promise<Session | undefined>;
  /** The most recently created session with this key. */
  getSessionByKey(key: string): Promise<Session | undefined>;
  listSessions(options?: ListSessionsOptions): Promise<SessionListing[]>;
  showSession(id: string): Promise<SessionDetail | undefined>;
  /** JSONL, one record a line (each ending in "\n"): the session, then its runs, messages, compactions, pending injections and audit records. */
  exportSession(id: string): AsyncIterable<string>;
  /** Deletes the session, its sub-agent sessions, their runs, messages, summaries, injections and transcripts. Audit records stay. */
  deleteSession(id: string): Promise<boolean>;
  /** Sets the session's title (null clears it); not activity: `updatedAt` stays. False when there is no such session. */
  setSessionTitle(id: string, title: string | null): Promise<boolean>;

  startRun(input: StartRunInput): Promise<Run>;
  /** A blocked run stays blocked whatever status it is finished with. */
  finishRun(runId: string, status: FinalRunStatus, summary?: RunSummary): Promise<Run>;
  getRun(runId: string): Promise<Run | undefined>;
  listRuns(sessionId: string): Promise<Run[]>;
  /** One run per session at a time, across processes; waiters are served first come, first served. */
  acquireRunLock(sessionId: string, options?: AcquireRunLockOptions): Promise<RunLock>;
  /**
   * Sessions whose run lock is held by an owner that is gone (a process that died, or another host's
   * owner whose lease expired without a heartbeat). Acquiring one's lock takes it over, with the
   * count of runs to recover.
   */
  abandonedRunLocks(): Promise<string[]>;

  appendMessage(input: AppendMessageInput): Promise<Message>;
  /** The run's messages in order, found by run id: compaction summaries do not hide them. */
  runMessages(runId: string): Promise<Message[]>;
  sessionMessages(sessionId: string, page?: MessagePage): Promise<Message[]>;
  /**
   * What the model sees: stored messages in order, each active summary standing in place of the range it
   * covers, without the messages of runs that failed with an error (`errorKind`): a failed turn is not resent.
   */
  history(sessionId: string): Promise<Message[]>;

  /**
   * Rewrites the run's text-bearing assistant messages; `texts` lines up with `assistantTexts(runMessages)`.
   * A changed message keeps its non-text parts, gets the new text in its first text part and loses its
   * other text and reasoning parts; once any text changes, every other assistant message of the run loses
   * its reasoning too. A message left with no part is removed. Summaries covering a changed message are
   * dropped, since they were written from the old text.
   */
  rewriteRun(runId: string, texts: readonly string[]): Promise<RewriteResult>;
  /** Removes the run's assistant and tool messages and summaries covering the run; stores one assistant notice. */
  blockRun(runId: string, input: BlockInput): Promise<BlockResult>;
  /** Removes every message of the run (its prompt included) and summaries covering it; stores one user notice. */
  blockPrompt(runId: string, input: BlockInput): Promise<BlockResult>;

  recordCompaction(input: RecordCompactionInput): Promise<CompactionSummary>;
  listCompactions(sessionId: string): Promise<CompactionSummary[]>;
  dropSummariesCovering(runId: string): Promise<number>;

  queueInjection(input: QueueInjectionInput): Promise<QueuedInjection>;
  /** Pending, unexpired injections, oldest first. Peeking consumes nothing. */
  peekInjections(sessionId: string, options?: { now?: Date }): Promise<QueuedInjection[]>;
  /** Consumes the injections a run peeked, once it passed its gate. Returns how many were still pending. */
  commitInjections(runId: string, injectionIds: readonly string[]): Promise<number>;
  expireInjections(options?: { now?: Date; sessionId?: string }): Promise<number>;

  writeAudit(record: AuditInput): Promise<AuditRecord>;
  listAudit(filter?: AuditFilter): Promise<AuditRecord[]>;

  /** Writes the session as a Claude-Code-style JSONL transcript in a private folder; returns its path. */
  materializeTranscript(sessionId: string): Promise<string>;

  close(): Promise<void>;
}
