import { setMaxListeners } from "node:events";
import type { Message, Part } from "../core/message.js";
import type { CompactionRow, InjectionRow, NewMessage, NewRun, StoreBackend, StoreTx } from "./backend.js";
import { CoreStore, type CoreStoreOptions } from "./core.js";
import { notFound, runExists, sessionExists } from "./errors.js";
import type { HeldLease } from "./lease.js";
import { MemoryPluginState } from "./plugin-state.js";
import { SerialQueue } from "./serial.js";
import { MemoryServiceTables } from "./service-memory.js";
import type {
  AuditFilter,
  AuditRecord,
  CompactionSummary,
  ListSessionsOptions,
  Run,
  RunStatus,
  RunSummary,
  Session,
  SessionListing,
  SessionStore,
} from "./types.js";

interface SessionState {
  session: Session;
  nextSeq: number;
  nextRunSeq: number;
  /** The session's run ids, in the order they were started. */
  readonly runIds: string[];
  /** Messages ordered by seq. */
  readonly messages: Message[];
  readonly injections: InjectionRow[];
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** The memory store's lock owner: only this process can see the store. */
const OWNER = `memory:${process.pid}`;
/**
 * Nobody can take a memory store's lock over. One signal serves every lock; each run in flight
 * listens on it until it ends, so any number of concurrent runs may (no listener limit warning).
 */
const NEVER_LOST = new AbortController().signal;
setMaxListeners(0, NEVER_LOST);

const keyOf = (sessionId: string, key: string) => `${sessionId}\u0000${key}`;

/** Index of the first message with seq >= the given one. */
function lowerBound(messages: readonly Message[], seq: number): number {
  let lo = 0;
  let hi = messages.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((messages[mid] as Message).seq < seq) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Everything in maps, for tests and embedding. Writes record their inverse, so a transaction that throws
 * is rolled back exactly as in the SQL backends.
 */
class MemoryBackend implements StoreBackend, StoreTx {
  readonly kind = "memory" as const;
  readonly defaultTranscriptDir = undefined;
  readonly service = new MemoryServiceTables();
  readonly pluginState = new MemoryPluginState();
  private readonly sessions = new Map<string, SessionState>();
  private readonly runs = new Map<string, Run>();
  private readonly messagesById = new Map<string, Message>();
  private readonly messageIdsByRun = new Map<string, Set<string>>();
  private readonly messageIdsByKey = new Map<string, string>();
  private readonly compactions = new Map<string, CompactionRow>();
  private readonly audit: AuditRecord[] = [];
  private readonly queue = new SerialQueue();
  private undo: (() => void)[] | undefined;

  read<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    return this.queue.run(() => fn(this));
  }

  write<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    return this.queue.run(async () => {
      const undo: (() => void)[] = [];
      this.undo = undo;
      try {
        return await fn(this);
      } catch (error) {
        this.undo = undefined;
        for (const step of undo.reverse()) step();
        throw error;
      } finally {
        this.undo = undefined;
      }
    });
  }

  writeOne<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    return this.write(fn);
  }

  async afterScrub(): Promise<void> {}

  /** One process's own store: nobody else to keep out; the count is what `RunLock.interruptedRuns` needs. */
  acquireLease(sessionId: string): Promise<HeldLease> {
    return this.queue.run(async () => ({
      owner: OWNER,
      interruptedRuns: this.listRuns(sessionId).filter((r) => r.status === "running").length,
      lost: NEVER_LOST,
      release: async () => {},
    }));
  }

  async abandonedLeases(): Promise<string[]> {
    return [];
  }

  async close(): Promise<void> {}

  // Sessions

  getSession(id: string): Session | undefined {
    return this.sessions.get(id)?.session;
  }

  latestSessionByKey(key: string): Session | undefined {
    let latest: Session | undefined;
    for (const { session } of this.sessions.values()) {
      if (session.key === key && (!latest || session.createdAt >= latest.createdAt)) latest = session;
    }
    return latest;
  }

  insertSession(session: Session): void {
    if (this.sessions.has(session.id)) throw sessionExists(session.id);
    if (session.parentSessionId !== null && !this.sessions.has(session.parentSessionId)) {
      throw notFound("parent session", session.parentSessionId);
    }
    this.sessions.set(session.id, { session, nextSeq: 1, nextRunSeq: 1, runIds: [], messages: [], injections: [] });
    this.onUndo(() => this.sessions.delete(session.id));
  }

  listSessions(
    options: Required<Pick<ListSessionsOptions, "limit" | "offset">> & ListSessionsOptions,
  ): SessionListing[] {
    return [...this.sessions.values()]
      .filter(({ session }) => options.key === undefined || session.key === options.key)
      .filter(
        ({ session }) => options.parentSessionId === undefined || session.parentSessionId === options.parentSessionId,
      )
      .sort((a, b) =>
        a.session.updatedAt < b.session.updatedAt ? 1 : a.session.updatedAt > b.session.updatedAt ? -1 : 0,
      )
      .slice(options.offset, options.offset + options.limit)
      .map((state) => ({
        ...state.session,
        runCount: state.runIds.length,
        messageCount: state.messages.length,
      }));
  }

  setSessionTitle(id: string, title: string | null): boolean {
    const state = this.sessions.get(id);
    if (!state) return false;
    const { title: _old, ...rest } = state.session;
    this.replaceSession(state, title === null ? rest : { ...rest, title });
    return true;
  }

  childSessionIds(id: string): string[] {
    return [...this.sessions.values()].filter((s) => s.session.parentSessionId === id).map((s) => s.session.id);
  }

  deleteSession(id: string): boolean {
    const state = this.sessions.get(id);
    if (!state) return false;
    const messages = state.messages.splice(0);
    for (const message of messages) this.unindex(message);
    this.onUndo(() => {
      state.messages.push(...messages);
      for (const message of messages) this.index(message);
    });
    for (const c of [...this.compactions.values()].filter((c) => c.sessionId === id)) this.removeCompaction(c);
    for (const run of this.listRuns(id)) {
      this.runs.delete(run.id);
      this.onUndo(() => this.runs.set(run.id, run));
    }
    this.sessions.delete(id);
    this.onUndo(() => this.sessions.set(id, state));
    for (const child of this.sessions.values()) {
      if (child.session.parentSessionId === id) this.replaceSession(child, { ...child.session, parentSessionId: null });
    }
    return true;
  }

  // Runs

  getRun(id: string): Run | undefined {
    return this.runs.get(id);
  }

  insertRun(input: NewRun): Run {
    const state = this.state(input.sessionId);
    if (this.runs.has(input.id)) throw runExists(input.id);
    const run: Run = Object.freeze({ ...input, seq: state.nextRunSeq });
    this.setCounter(state, "nextRunSeq", state.nextRunSeq + 1);
    this.touch(state, input.startedAt);
    this.runs.set(run.id, run);
    state.runIds.push(run.id);
    this.onUndo(() => {
      this.runs.delete(run.id);
      state.runIds.pop();
    });
    return run;
  }

  setRunStatus(id: string, status: RunStatus, endedAt: string | null): Run | undefined {
    const before = this.runs.get(id);
    if (!before) return undefined;
    const run = Object.freeze({ ...before, status, endedAt });
    this.runs.set(id, run);
    this.onUndo(() => this.runs.set(id, before));
    return run;
  }

  finishRun(id: string, status: RunStatus, endedAt: string, summary: RunSummary): Run | undefined {
    const before = this.runs.get(id);
    if (!before) return undefined;
    const run: Run = Object.freeze({
      ...before,
      status: before.status === "blocked" ? "blocked" : status,
      endedAt,
      ...summary,
    });
    this.runs.set(id, run);
    this.onUndo(() => this.runs.set(id, before));
    return run;
  }

  listRuns(sessionId: string): Run[] {
    return (this.sessions.get(sessionId)?.runIds ?? []).map((id) => this.runs.get(id) as Run);
  }

  // Messages

  appendMessage(input: NewMessage): Message {
    if (input.idempotencyKey !== null) {
      const existing = this.messageByKey(input.sessionId, input.idempotencyKey);
      if (existing) return existing;
    }
    const state = this.sessions.get(input.sessionId);
    if (!state) throw notFound("session", input.sessionId);
    if (input.runId !== null && this.runs.get(input.runId)?.sessionId !== input.sessionId) {
      throw notFound(`run in session ${input.sessionId}:`, input.runId);
    }
    let seq = input.seq;
    if (seq === undefined) {
      seq = state.nextSeq;
      this.setCounter(state, "nextSeq", seq + 1);
    }
    const { idempotencyKey, ...rest } = input;
    const message: Message = deepFreeze({ ...rest, seq, ...(idempotencyKey === null ? {} : { idempotencyKey }) });
    this.touch(state, input.createdAt);
    this.insertIndexed(message);
    return message;
  }

  messageByKey(sessionId: string, key: string): Message | undefined {
    const id = this.messageIdsByKey.get(keyOf(sessionId, key));
    return id === undefined ? undefined : this.messagesById.get(id);
  }

  runMessages(runId: string): Message[] {
    const ids = this.messageIdsByRun.get(runId) ?? new Set();
    return [...ids].map((id) => this.messagesById.get(id) as Message).sort((a, b) => a.seq - b.seq);
  }

  sessionMessages(sessionId: string, afterSeq: number, limit: number): Message[] {
    const messages = this.sessions.get(sessionId)?.messages ?? [];
    const start = lowerBound(messages, afterSeq + 1);
    return messages.slice(start, start + limit);
  }

  countMessages(sessionId: string): number {
    return this.sessions.get(sessionId)?.messages.length ?? 0;
  }

  historyMessages(sessionId: string): Message[] {
    const messages = this.sessions.get(sessionId)?.messages ?? [];
    return messages.filter((m) => m.runId === null || this.runs.get(m.runId)?.errorKind === undefined);
  }

  runIdsInRange(sessionId: string, fromSeq: number, toSeq: number): string[] {
    const ids = new Set<string>();
    for (const m of this.sessions.get(sessionId)?.messages ?? []) {
      if (m.seq >= fromSeq && m.seq <= toSeq && m.role !== "summary" && m.runId !== null) ids.add(m.runId);
    }
    return [...ids];
  }

  updateMessageParts(id: string, parts: readonly Part[]): void {
    const before = this.messagesById.get(id);
    if (!before) return;
    this.removeIndexed(before);
    this.insertIndexed(deepFreeze({ ...before, parts: [...parts] }));
  }

  deleteMessages(ids: readonly string[]): void {
    for (const id of ids) {
      const message = this.messagesById.get(id);
      if (message) this.removeIndexed(message);
    }
  }

  // Compactions

  insertCompaction(row: CompactionRow): void {
    this.compactions.set(row.id, row);
    this.onUndo(() => this.compactions.delete(row.id));
  }

  listCompactions(sessionId: string): CompactionSummary[] {
    const result: CompactionSummary[] = [];
    for (const { messageId, ...row } of this.compactions.values()) {
      const message = this.messagesById.get(messageId);
      if (row.sessionId === sessionId && message) result.push({ ...row, message });
    }
    return result.sort((a, b) => a.message.seq - b.message.seq);
  }

  compactionsCoveringRun(runId: string): CompactionRow[] {
    return [...this.compactions.values()].filter((c) => c.runIds.includes(runId));
  }

  deleteCompactions(rows: readonly CompactionRow[]): void {
    for (const row of rows) this.removeCompaction(row);
  }

  // Injections

  insertInjection(row: InjectionRow): InjectionRow {
    const state = this.state(row.sessionId);
    const existing =
      row.idempotencyKey === null ? undefined : state.injections.find((i) => i.idempotencyKey === row.idempotencyKey);
    if (existing) return existing;
    state.injections.push(Object.freeze(row));
    this.onUndo(() => state.injections.splice(state.injections.indexOf(row), 1));
    return row;
  }

  pendingInjections(sessionId: string, now: string): InjectionRow[] {
    return (this.sessions.get(sessionId)?.injections ?? []).filter(
      (i) => i.consumedAt === null && (i.expiresAt === null || i.expiresAt > now),
    );
  }

  consumeInjections(ids: readonly string[], runId: string, sessionId: string, at: string): number {
    const injections = this.sessions.get(sessionId)?.injections ?? [];
    let consumed = 0;
    injections.forEach((row, i) => {
      if (!ids.includes(row.id) || row.consumedAt !== null) return;
      injections[i] = Object.freeze({ ...row, text: "", consumedByRunId: runId, consumedAt: at });
      this.onUndo(() => {
        injections[i] = row;
      });
      consumed++;
    });
    return consumed;
  }

  deleteExpiredInjections(now: string, sessionId: string | undefined): number {
    let deleted = 0;
    for (const state of this.sessions.values()) {
      if (sessionId !== undefined && state.session.id !== sessionId) continue;
      const before = [...state.injections];
      const kept = before.filter((i) => i.consumedAt !== null || i.expiresAt === null || i.expiresAt > now);
      deleted += before.length - kept.length;
      state.injections.splice(0, state.injections.length, ...kept);
      this.onUndo(() => state.injections.splice(0, state.injections.length, ...before));
    }
    return deleted;
  }

  // Audit

  insertAudit(record: AuditRecord): void {
    this.audit.push(Object.freeze(record));
    this.onUndo(() => this.audit.splice(this.audit.indexOf(record), 1));
  }

  listAudit(filter: AuditFilter): AuditRecord[] {
    const matching = this.audit.filter(
      (r) =>
        (filter.sessionId === undefined || r.sessionId === filter.sessionId) &&
        (filter.runId === undefined || r.runId === filter.runId),
    );
    return filter.limit === undefined ? matching : matching.slice(-filter.limit);
  }

  // Bookkeeping

  private onUndo(step: () => void): void {
    this.undo?.push(step);
  }

  private state(sessionId: string): SessionState {
    const state = this.sessions.get(sessionId);
    if (!state) throw notFound("session", sessionId);
    return state;
  }

  private setCounter(state: SessionState, counter: "nextSeq" | "nextRunSeq", value: number): void {
    const before = state[counter];
    state[counter] = value;
    this.onUndo(() => {
      state[counter] = before;
    });
  }

  private touch(state: SessionState, at: string): void {
    this.replaceSession(state, { ...state.session, updatedAt: at });
  }

  private replaceSession(state: SessionState, session: Session): void {
    const before = state.session;
    state.session = Object.freeze(session);
    this.onUndo(() => {
      state.session = before;
    });
  }

  private insertIndexed(message: Message): void {
    const messages = this.state(message.sessionId).messages;
    messages.splice(lowerBound(messages, message.seq), 0, message);
    this.index(message);
    this.onUndo(() => this.removeIndexed(message, false));
  }

  private index(message: Message): void {
    this.messagesById.set(message.id, message);
    if (message.idempotencyKey !== undefined) {
      this.messageIdsByKey.set(keyOf(message.sessionId, message.idempotencyKey), message.id);
    }
    if (message.runId !== null) {
      const ids = this.messageIdsByRun.get(message.runId) ?? new Set();
      this.messageIdsByRun.set(message.runId, ids.add(message.id));
    }
  }

  private removeIndexed(message: Message, undoable = true): void {
    const messages = this.sessions.get(message.sessionId)?.messages;
    if (messages) {
      const at = lowerBound(messages, message.seq);
      if (messages[at]?.id === message.id) messages.splice(at, 1);
    }
    this.unindex(message);
    if (undoable) this.onUndo(() => this.insertIndexed(message));
  }

  private unindex(message: Message): void {
    this.messagesById.delete(message.id);
    if (message.runId !== null) {
      const ids = this.messageIdsByRun.get(message.runId);
      ids?.delete(message.id);
      // An emptied run's entry goes too: a long-running process deleting sessions must not keep one per run.
      if (ids?.size === 0) this.messageIdsByRun.delete(message.runId);
    }
    if (message.idempotencyKey !== undefined)
      this.messageIdsByKey.delete(keyOf(message.sessionId, message.idempotencyKey));
  }

  private removeCompaction(row: CompactionRow): void {
    this.compactions.delete(row.id);
    this.onUndo(() => this.compactions.set(row.id, row));
    const message = this.messagesById.get(row.messageId);
    if (message) this.removeIndexed(message);
  }
}

export function openMemoryStore(options: CoreStoreOptions = {}): SessionStore {
  return new CoreStore(new MemoryBackend(), options);
}
