import type { Message, Part } from "../core/message.js";
import type { HeldLease } from "./lease.js";
import type { PluginStateTables } from "./plugin-state.js";
import type { ServiceTables } from "./service.js";
import type {
  AuditFilter,
  AuditRecord,
  CompactionSummary,
  ListSessionsOptions,
  QueuedInjection,
  Run,
  RunStatus,
  RunSummary,
  Session,
  SessionListing,
  StoreKind,
} from "./types.js";

/**
 * What a backend provides: storage primitives (one query or so each) and a transaction. The operations
 * that combine them — block, rewrite, compaction, history — are written once, in core.ts, against this.
 */
export type Awaitable<T> = T | Promise<T>;

export interface CompactionRow {
  readonly id: string;
  readonly sessionId: string;
  readonly messageId: string;
  readonly fromSeq: number;
  readonly toSeq: number;
  readonly runIds: readonly string[];
  readonly createdAt: string;
}

export interface NewMessage extends Omit<Message, "seq" | "idempotencyKey"> {
  readonly idempotencyKey: string | null;
  /** Reuse a freed position (a block notice takes the place of what it replaces); otherwise the next one. */
  readonly seq?: number;
}

export interface InjectionRow extends QueuedInjection {
  readonly consumedByRunId: string | null;
  readonly consumedAt: string | null;
}

export type NewRun = Omit<Run, "seq">;

export interface StoreTx {
  /** Inside a write transaction the session row is locked, serializing writers of one session. */
  getSession(id: string): Awaitable<Session | undefined>;
  latestSessionByKey(key: string): Awaitable<Session | undefined>;
  /** Conflict when the id is taken, not found when the parent session does not exist. */
  insertSession(session: Session): Awaitable<void>;
  listSessions(
    options: Required<Pick<ListSessionsOptions, "limit" | "offset">> & ListSessionsOptions,
  ): Awaitable<SessionListing[]>;
  childSessionIds(id: string): Awaitable<string[]>;
  /** Removes the session's rows (runs, messages, compactions, injections), not its audit records. */
  deleteSession(id: string): Awaitable<boolean>;
  setSessionTitle(id: string, title: string | null): Awaitable<boolean>;

  /** Inside a write transaction the run row is locked. */
  getRun(id: string): Awaitable<Run | undefined>;
  /** At the session's next run position; not found when the session does not exist, conflict when the id is taken. */
  insertRun(run: NewRun): Awaitable<Run>;
  setRunStatus(id: string, status: RunStatus, endedAt: string | null): Awaitable<Run | undefined>;
  /** As `setRunStatus`, except that a blocked run stays blocked. */
  finishRun(id: string, status: RunStatus, endedAt: string, summary: RunSummary): Awaitable<Run | undefined>;
  listRuns(sessionId: string): Awaitable<Run[]>;

  /**
   * Inserts at the next position; with a taken idempotency key, returns the existing message instead.
   * Not found when the session does not exist or the run is not one of its runs.
   */
  appendMessage(message: NewMessage): Awaitable<Message>;
  messageByKey(sessionId: string, key: string): Awaitable<Message | undefined>;
  runMessages(runId: string): Awaitable<Message[]>;
  sessionMessages(sessionId: string, afterSeq: number, limit: number): Awaitable<Message[]>;
  countMessages(sessionId: string): Awaitable<number>;
  /**
   * Non-summary messages for the model's history; may leave out those an active summary covers.
   * Leaves out the messages of runs that failed with an error (an error kind): a failed turn is not resent.
   */
  historyMessages(sessionId: string): Awaitable<Message[]>;
  runIdsInRange(sessionId: string, fromSeq: number, toSeq: number): Awaitable<string[]>;
  updateMessageParts(id: string, parts: readonly Part[]): Awaitable<void>;
  deleteMessages(ids: readonly string[]): Awaitable<void>;

  insertCompaction(row: CompactionRow): Awaitable<void>;
  listCompactions(sessionId: string): Awaitable<CompactionSummary[]>;
  compactionsCoveringRun(runId: string): Awaitable<CompactionRow[]>;
  /** Removes the compactions and their summary messages. */
  deleteCompactions(rows: readonly CompactionRow[]): Awaitable<void>;

  /** With a taken idempotency key, returns the existing injection instead. */
  insertInjection(row: InjectionRow): Awaitable<InjectionRow>;
  pendingInjections(sessionId: string, now: string): Awaitable<InjectionRow[]>;
  consumeInjections(ids: readonly string[], runId: string, sessionId: string, at: string): Awaitable<number>;
  deleteExpiredInjections(now: string, sessionId: string | undefined): Awaitable<number>;

  insertAudit(record: AuditRecord): Awaitable<void>;
  listAudit(filter: AuditFilter): Awaitable<AuditRecord[]>;
}

export interface StoreBackend {
  readonly kind: StoreKind;
  /** Where transcripts go unless the caller says otherwise; a fresh private temp folder when undefined. */
  readonly defaultTranscriptDir: string | undefined;
  /** The server's tables (service.ts), on the same connection or pool. */
  readonly service: ServiceTables;
  /** OpenClaw plugins' runtime.state rows (plugin-state.ts). */
  readonly pluginState: PluginStateTables;
  read<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T>;
  /** All or nothing: fn's writes commit together or not at all. */
  write<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T>;
  /** For a single primitive that is atomic by itself (one statement), which some backends run without a transaction. */
  writeOne<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T>;
  /** After content was deleted or overwritten: make sure no old copy is left in the backend's files. */
  afterScrub(): Promise<void>;
  /** The cross-process half of the run lock, a lease (lease.ts); in-process order is kept by the caller. */
  /** `onWait`: called when another owner holds the lease and this call queues for it. */
  acquireLease(sessionId: string, signal: AbortSignal | undefined, onWait?: () => void): Promise<HeldLease>;
  /** Sessions whose lease is held by an owner that is gone. */
  abandonedLeases(): Promise<string[]>;
  close(): Promise<void>;
}
