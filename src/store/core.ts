import { randomUUID } from "node:crypto";
import { tmpdir } from "node:os";
import type { Message } from "../core/message.js";
import type { CompactionRow, InjectionRow, StoreBackend, StoreTx } from "./backend.js";
import { notFound, StoreError } from "./errors.js";
import { exportLines } from "./export.js";
import type { HeldLease, RunLeaseOptions } from "./lease.js";
import { SessionLockQueues } from "./local-lock.js";
import {
  assembleHistory,
  type BlockKind,
  blockKey,
  blockNotice,
  checkCompactionRange,
  planBlock,
  planRewrite,
  withDependentSummaries,
} from "./plan.js";
import type { PluginStateTables } from "./plugin-state.js";
import {
  AppendMessageSchema,
  AuditSchema,
  BlockSchema,
  CompactionSchema,
  CreateSessionSchema,
  IdListSchema,
  IdSchema,
  InjectionSchema,
  parseInput,
  RewriteTextsSchema,
  SessionTitleSchema,
  StartRunSchema,
} from "./schemas.js";
import type { ServiceTables } from "./service.js";
import { type MessagePages, TranscriptFiles } from "./transcript.js";
import type {
  AcquireRunLockOptions,
  AppendMessageInput,
  AuditFilter,
  AuditInput,
  AuditRecord,
  BlockInput,
  BlockResult,
  CompactionSummary,
  CreateSessionInput,
  FinalRunStatus,
  ListSessionsOptions,
  MessagePage,
  QueuedInjection,
  QueueInjectionInput,
  RecordCompactionInput,
  RewriteResult,
  Run,
  RunLock,
  RunSummary,
  Session,
  SessionDetail,
  SessionListing,
  SessionStore,
  StartRunInput,
  StoreKind,
} from "./types.js";

export interface CoreStoreOptions {
  /**
   * Where transcripts for command hooks go: SQLite and PostgreSQL write them in this folder; the
   * memory store in a folder of the process's own inside it (default: the system temp folder),
   * removed on close, at exit, or by the next store to find it after a crash.
   */
  readonly transcriptDir?: string;
  /** The clock for timestamps and injection expiry; tests pin it. */
  readonly now?: () => Date;
  /** The run lock's lease across processes (SQLite and PostgreSQL): how long it outlives its owner's last heartbeat. */
  readonly runLock?: RunLeaseOptions;
}

const PAGE = 1000;

/** The SessionStore operations, written once over a backend's primitives. */
export class CoreStore implements SessionStore {
  readonly kind: StoreKind;
  private readonly backend: StoreBackend;
  private readonly transcripts: TranscriptFiles;
  private readonly locks = new SessionLockQueues();
  private readonly heldLocks = new Set<RunLock>();
  private readonly clock: () => Date;
  private closed = false;

  constructor(backend: StoreBackend, options: CoreStoreOptions = {}) {
    this.kind = backend.kind;
    this.backend = backend;
    const dir = options.transcriptDir ?? backend.defaultTranscriptDir;
    // The memory store's transcripts die with it: nothing could scrub them after a crash.
    this.transcripts = new TranscriptFiles(
      dir !== undefined && backend.kind !== "memory" ? { dir } : { processFolderIn: dir ?? tmpdir() },
    );
    this.clock = options.now ?? (() => new Date());
  }

  get service(): ServiceTables {
    return this.backend.service;
  }

  get pluginState(): PluginStateTables {
    return this.backend.pluginState;
  }

  // Sessions

  async createSession(input: CreateSessionInput = {}): Promise<Session> {
    const parsed = parseInput(CreateSessionSchema, input, "session");
    const at = this.now();
    const session: Session = {
      id: parsed.id ?? randomUUID(),
      key: parsed.key ?? null,
      parentSessionId: parsed.parentSessionId ?? null,
      createdAt: at,
      updatedAt: at,
      ...(parsed.title ? { title: parsed.title } : {}),
    };
    return this.writeOne(async (tx) => {
      await tx.insertSession(session);
      return session;
    });
  }

  getSession(id: string): Promise<Session | undefined> {
    return this.read((tx) => tx.getSession(id));
  }

  getSessionByKey(key: string): Promise<Session | undefined> {
    return this.read((tx) => tx.latestSessionByKey(key));
  }

  listSessions(options: ListSessionsOptions = {}): Promise<SessionListing[]> {
    const limit = Math.max(1, Math.min(options.limit ?? 50, 10_000));
    const offset = Math.max(0, options.offset ?? 0);
    return this.read((tx) => tx.listSessions({ ...options, limit, offset }));
  }

  showSession(id: string): Promise<SessionDetail | undefined> {
    return this.read(async (tx) => {
      const session = await tx.getSession(id);
      if (!session) return undefined;
      return {
        session,
        runs: await tx.listRuns(id),
        messageCount: await tx.countMessages(id),
        compactions: await tx.listCompactions(id),
      };
    });
  }

  async *exportSession(id: string): AsyncIterable<string> {
    const session = await this.getSession(id);
    if (!session) throw notFound("session", id);
    yield* exportLines({
      session,
      exportedAt: this.now(),
      runs: () => this.read((tx) => tx.listRuns(id)),
      messagePages: this.messagePages(id),
      compactions: () => this.read((tx) => tx.listCompactions(id)),
      injections: () => this.read((tx) => tx.pendingInjections(id, this.now())),
      audit: () => this.read((tx) => tx.listAudit({ sessionId: id })),
    });
  }

  async setSessionTitle(id: string, title: string | null): Promise<boolean> {
    const parsed = title === null ? null : parseInput(SessionTitleSchema, title, "session title");
    return this.writeOne(async (tx) => tx.setSessionTitle(id, parsed));
  }

  async deleteSession(id: string): Promise<boolean> {
    // Transcripts go first, so a crash mid-way cannot leave a deleted session's text in one.
    const family = await this.read((tx) => this.withDescendants(tx, id));
    for (const sessionId of family) await this.transcripts.remove(sessionId);
    const deleted = await this.write(async (tx) => {
      const ids = await this.withDescendants(tx, id);
      // Children first: their parent link would otherwise outlive the parent row.
      for (const sessionId of ids.reverse()) await tx.deleteSession(sessionId);
      return ids;
    });
    if (deleted.length === 0) return false;
    await this.backend.afterScrub();
    return true;
  }

  // Runs

  async startRun(input: StartRunInput): Promise<Run> {
    const parsed = parseInput(StartRunSchema, input, "run");
    return this.writeOne(async (tx) =>
      tx.insertRun({
        id: parsed.id ?? randomUUID(),
        sessionId: parsed.sessionId,
        status: "running",
        depth: parsed.depth,
        parentRunId: parsed.parentRunId ?? null,
        trigger: parsed.trigger,
        jobId: parsed.jobId ?? null,
        startedAt: this.now(),
        endedAt: null,
      }),
    );
  }

  finishRun(runId: string, status: FinalRunStatus, summary: RunSummary = {}): Promise<Run> {
    return this.writeOne(async (tx) => {
      const run = await tx.finishRun(runId, status, this.now(), summary);
      if (!run) throw notFound("run", runId);
      return run;
    });
  }

  getRun(runId: string): Promise<Run | undefined> {
    return this.read((tx) => tx.getRun(runId));
  }

  listRuns(sessionId: string): Promise<Run[]> {
    return this.read((tx) => tx.listRuns(sessionId));
  }

  async acquireRunLock(sessionId: string, options: AcquireRunLockOptions = {}): Promise<RunLock> {
    this.assertOpen();
    parseInput(IdSchema, sessionId, "session id");
    let waited = false;
    const onWait = () => {
      if (!waited) options.onWait?.();
      waited = true;
    };
    const releaseLocal = await this.locks.acquire(sessionId, options.signal, onWait);
    let lease: HeldLease;
    try {
      this.assertOpen();
      lease = await this.backend.acquireLease(sessionId, options.signal, onWait);
    } catch (error) {
      releaseLocal();
      throw error;
    }
    let released: Promise<void> | undefined;
    const lock: RunLock = {
      sessionId,
      owner: lease.owner,
      interruptedRuns: lease.interruptedRuns,
      get lost() {
        return lease.lost;
      },
      release: () => {
        released ??= lease.release().finally(() => {
          this.heldLocks.delete(lock);
          releaseLocal();
        });
        return released;
      },
    };
    this.heldLocks.add(lock);
    return lock;
  }

  abandonedRunLocks(): Promise<string[]> {
    this.assertOpen();
    return this.backend.abandonedLeases();
  }

  // Messages

  async appendMessage(input: AppendMessageInput): Promise<Message> {
    const parsed = parseInput(AppendMessageSchema, input, "message");
    const message = {
      id: randomUUID(),
      sessionId: parsed.sessionId,
      runId: parsed.runId,
      role: parsed.role,
      parts: parsed.parts,
      metadata: parsed.metadata,
      idempotencyKey: parsed.idempotencyKey ?? null,
      createdAt: this.now(),
    };
    return this.writeOne(async (tx) => tx.appendMessage(message));
  }

  runMessages(runId: string): Promise<Message[]> {
    return this.read((tx) => tx.runMessages(runId));
  }

  sessionMessages(sessionId: string, page: MessagePage = {}): Promise<Message[]> {
    const limit = Math.max(1, Math.min(page.limit ?? PAGE, 100_000));
    return this.read((tx) => tx.sessionMessages(sessionId, page.afterSeq ?? 0, limit));
  }

  history(sessionId: string): Promise<Message[]> {
    return this.read(async (tx) => {
      const summaries = await tx.listCompactions(sessionId);
      return assembleHistory(await tx.historyMessages(sessionId), summaries);
    });
  }

  // Scrubs: each commits, then removes old copies from the backend's files and the transcript.

  async rewriteRun(runId: string, texts: readonly string[]): Promise<RewriteResult> {
    const parsedTexts = parseInput(RewriteTextsSchema, texts, "rewrite texts");
    return this.scrub(
      runId,
      async (tx, run) => {
        const plan = planRewrite(await tx.runMessages(runId), parsedTexts);
        for (const update of plan.updates) await tx.updateMessageParts(update.id, update.parts);
        await tx.deleteMessages(plan.removals);
        const stale = await staleSummaries(tx, run.sessionId, (c) =>
          plan.changedSeqs.some((seq) => c.fromSeq <= seq && seq <= c.toSeq),
        );
        await tx.deleteCompactions(stale);
        return {
          updatedMessages: plan.updates.length,
          removedMessages: plan.removals.length,
          droppedSummaries: stale.length,
        };
      },
      (result) => result.updatedMessages + result.removedMessages > 0,
    );
  }

  blockRun(runId: string, input: BlockInput): Promise<BlockResult> {
    return this.block("output", runId, input);
  }

  blockPrompt(runId: string, input: BlockInput): Promise<BlockResult> {
    return this.block("prompt", runId, input);
  }

  private async block(kind: BlockKind, runId: string, input: BlockInput): Promise<BlockResult> {
    const parsed = parseInput(BlockSchema, input, "block");
    return this.scrub(
      runId,
      async (tx, run): Promise<BlockResult> => {
        const key = blockKey(kind, runId);
        const existing = await tx.messageByKey(run.sessionId, key);
        if (existing) return { replacement: existing, removedMessages: 0, droppedSummaries: 0, changed: false };
        const plan = planBlock(kind, await tx.runMessages(runId));
        await tx.deleteMessages(plan.removals);
        const covering = await summariesCoveringRun(tx, run.sessionId, runId);
        await tx.deleteCompactions(covering);
        const at = this.now();
        const replacement = await tx.appendMessage({
          id: randomUUID(),
          sessionId: run.sessionId,
          runId,
          ...blockNotice(kind, parsed, at),
          idempotencyKey: key,
          createdAt: at,
          ...(plan.seq === undefined ? {} : { seq: plan.seq }),
        });
        if (parsed.detail === undefined) await tx.setRunStatus(runId, parsed.status ?? "blocked", run.endedAt);
        // With its detail, in the same transaction: a reader never sees the status without it.
        else await tx.finishRun(runId, parsed.status ?? "blocked", run.endedAt ?? at, { detail: parsed.detail });
        return { replacement, removedMessages: plan.removals.length, droppedSummaries: covering.length, changed: true };
      },
      (result) => result.changed,
    );
  }

  // Compaction

  async recordCompaction(input: RecordCompactionInput): Promise<CompactionSummary> {
    const parsed = parseInput(CompactionSchema, input, "compaction");
    return this.write(async (tx) => {
      if (!(await tx.getSession(parsed.sessionId))) throw notFound("session", parsed.sessionId);
      checkCompactionRange(await tx.listCompactions(parsed.sessionId), parsed.fromSeq, parsed.toSeq);
      const id = randomUUID();
      const at = this.now();
      const runIds = await tx.runIdsInRange(parsed.sessionId, parsed.fromSeq, parsed.toSeq);
      const message = await tx.appendMessage({
        id: randomUUID(),
        sessionId: parsed.sessionId,
        runId: null,
        role: "summary",
        parts: [{ type: "text", text: parsed.summary }],
        metadata: { ...parsed.metadata, compactionId: id, fromSeq: parsed.fromSeq, toSeq: parsed.toSeq },
        idempotencyKey: null,
        createdAt: at,
      });
      const row: CompactionRow = {
        id,
        sessionId: parsed.sessionId,
        messageId: message.id,
        fromSeq: parsed.fromSeq,
        toSeq: parsed.toSeq,
        runIds,
        createdAt: at,
      };
      await tx.insertCompaction(row);
      return { ...row, message };
    });
  }

  listCompactions(sessionId: string): Promise<CompactionSummary[]> {
    return this.read((tx) => tx.listCompactions(sessionId));
  }

  dropSummariesCovering(runId: string): Promise<number> {
    return this.scrub(
      runId,
      async (tx, run) => {
        const covering = await summariesCoveringRun(tx, run.sessionId, runId);
        await tx.deleteCompactions(covering);
        return covering.length;
      },
      (dropped) => dropped > 0,
    );
  }

  // Injections

  async queueInjection(input: QueueInjectionInput): Promise<QueuedInjection> {
    const parsed = parseInput(InjectionSchema, input, "injection");
    const row: InjectionRow = {
      id: randomUUID(),
      sessionId: parsed.sessionId,
      text: parsed.text,
      placement: parsed.placement,
      idempotencyKey: parsed.idempotencyKey ?? null,
      expiresAt: parsed.expiresAt ?? null,
      createdAt: this.now(),
      consumedByRunId: null,
      consumedAt: null,
    };
    return this.write(async (tx) => {
      if (!(await tx.getSession(parsed.sessionId))) throw notFound("session", parsed.sessionId);
      return publicInjection(await tx.insertInjection(row));
    });
  }

  peekInjections(sessionId: string, options: { now?: Date } = {}): Promise<QueuedInjection[]> {
    const now = (options.now ?? this.clock()).toISOString();
    return this.read(async (tx) => (await tx.pendingInjections(sessionId, now)).map(publicInjection));
  }

  commitInjections(runId: string, injectionIds: readonly string[]): Promise<number> {
    const ids = parseInput(IdListSchema, injectionIds, "injection ids");
    return this.write(async (tx) => {
      const run = await tx.getRun(runId);
      if (!run) throw notFound("run", runId);
      return tx.consumeInjections(ids, runId, run.sessionId, this.now());
    });
  }

  expireInjections(options: { now?: Date; sessionId?: string } = {}): Promise<number> {
    const now = (options.now ?? this.clock()).toISOString();
    return this.writeOne(async (tx) => tx.deleteExpiredInjections(now, options.sessionId));
  }

  // Audit

  async writeAudit(input: AuditInput): Promise<AuditRecord> {
    const parsed = parseInput(AuditSchema, input, "audit record");
    const record: AuditRecord = {
      id: randomUUID(),
      hook: parsed.hook,
      pluginId: parsed.pluginId,
      outcome: parsed.outcome,
      category: parsed.category ?? null,
      sessionId: parsed.sessionId ?? null,
      runId: parsed.runId ?? null,
      at: parsed.at ?? this.now(),
    };
    await this.writeOne(async (tx) => tx.insertAudit(record));
    return record;
  }

  listAudit(filter: AuditFilter = {}): Promise<AuditRecord[]> {
    return this.read((tx) => tx.listAudit(filter));
  }

  // Transcripts

  async materializeTranscript(sessionId: string): Promise<string> {
    if (!(await this.getSession(sessionId))) throw notFound("session", sessionId);
    return this.transcripts.write(sessionId, this.messagePages(sessionId));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.locks.rejectWaiting(new StoreError("closed", "the store was closed while waiting for a run lock"));
    for (const lock of [...this.heldLocks]) await lock.release().catch(() => undefined);
    await this.backend.close();
    await this.transcripts.dispose();
  }

  // Helpers

  private now(): string {
    return this.clock().toISOString();
  }

  private assertOpen(): void {
    if (this.closed) throw new StoreError("closed", "the store is closed");
  }

  private read<T>(fn: (tx: StoreTx) => T | Promise<T>): Promise<T> {
    this.assertOpen();
    return this.backend.read(async (tx) => fn(tx));
  }

  private write<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    this.assertOpen();
    return this.backend.write(fn);
  }

  /** For a write that is one primitive, atomic by itself. */
  private writeOne<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    this.assertOpen();
    return this.backend.writeOne(fn);
  }

  /**
   * A change that removes text from a run's session. The session's transcript is withdrawn before it
   * commits, so a crash just after the commit cannot leave the old text in a file; once it is in, the
   * backend clears old copies from its own files and the transcript is written again from the store.
   */
  private async scrub<T>(
    runId: string,
    change: (tx: StoreTx, run: Run) => Promise<T>,
    changed: (result: T) => boolean,
  ): Promise<T> {
    const sessionId = (await this.getRun(runId))?.sessionId;
    if (sessionId === undefined) throw notFound("run", runId);
    const hadTranscript = await this.transcripts.withdraw(sessionId);
    const rematerialize = () => this.transcripts.write(sessionId, this.messagePages(sessionId));
    let result: T;
    try {
      result = await this.write(async (tx) => {
        const run = await tx.getRun(runId);
        if (!run) throw notFound("run", runId);
        return change(tx, run);
      });
    } catch (error) {
      if (hadTranscript) await rematerialize().catch(() => undefined);
      throw error;
    }
    if (changed(result)) await this.backend.afterScrub();
    if (hadTranscript) await rematerialize();
    return result;
  }

  private messagePages(sessionId: string): MessagePages {
    const store = this;
    return async function* pages() {
      let afterSeq = 0;
      for (;;) {
        const page = await store.read((tx) => tx.sessionMessages(sessionId, afterSeq, PAGE));
        if (page.length === 0) return;
        yield page;
        afterSeq = (page.at(-1) as Message).seq;
      }
    };
  }

  private async withDescendants(tx: StoreTx, id: string): Promise<string[]> {
    if (!(await tx.getSession(id))) return [];
    const ids = [id];
    for (let i = 0; i < ids.length; i++) ids.push(...(await tx.childSessionIds(ids[i] as string)));
    return ids;
  }
}

/** The session's summaries `stale` picks, with every later summary written from one of them. */
async function staleSummaries(
  tx: StoreTx,
  sessionId: string,
  stale: (c: CompactionSummary) => boolean,
): Promise<CompactionRow[]> {
  const all = await tx.listCompactions(sessionId);
  return withDependentSummaries(all, stale).map(({ message, ...c }) => ({ ...c, messageId: message.id }));
}

/** Summaries covering the run, and those written from them. */
async function summariesCoveringRun(tx: StoreTx, sessionId: string, runId: string): Promise<CompactionRow[]> {
  const covering = new Set((await tx.compactionsCoveringRun(runId)).map((c) => c.id));
  if (covering.size === 0) return [];
  return staleSummaries(tx, sessionId, (c) => covering.has(c.id));
}

function publicInjection(row: InjectionRow): QueuedInjection {
  return {
    id: row.id,
    sessionId: row.sessionId,
    text: row.text,
    placement: row.placement,
    idempotencyKey: row.idempotencyKey,
    expiresAt: row.expiresAt,
    createdAt: row.createdAt,
  };
}
