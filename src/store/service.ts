/**
 * The tables `gatehouse serve` and the console keep beside the sessions, in the store's own database,
 * through its one connection (SQLite) or pool (PostgreSQL), created by its numbered migrations: API keys
 * (hashes only), which principal owns which session, signals for runs between instances, and the
 * console's records (run steps, runs in progress, approval asks waiting, logins).
 *
 * Only two columns can hold text someone wrote: a session owner's title and a waiting approval ask's
 * title. Deleting them owes the store's scrub (SQLite: VACUUM and a cut WAL), as deleting content does.
 */

export interface StoredApiKey {
  readonly id: string;
  readonly principal: string;
  readonly name: string | null;
  /** An admin key's principal sees every session (reading) and may answer any run's approval asks. */
  readonly admin: boolean;
  readonly createdAt: string;
  readonly revokedAt: string | null;
  /** sha256 of the secret, hex. */
  readonly hash: string;
}

export interface SessionOwner {
  readonly sessionId: string;
  readonly principal: string;
  readonly title: string | null;
  readonly createdAt: string;
}

export const STEP_KINDS = [
  "run-start",
  "model-call",
  "tool-call",
  "hook",
  "approval",
  "retry",
  "compaction",
  "subagent",
  "run-end",
] as const;
export type StepKind = (typeof STEP_KINDS)[number];

export interface StepRow {
  readonly runId: string;
  readonly sessionId: string;
  /** Epoch milliseconds: when the step started. */
  readonly at: number;
  readonly kind: StepKind;
  /** A hook name, a tool name, `provider:model`, a trigger: an identifier, never content. */
  readonly name: string;
  readonly pluginId: string | null;
  readonly outcome: string | null;
  readonly category: string | null;
  readonly durationMs: number | null;
  readonly toolCallId: string | null;
  /** The model step (1, 2, …) the row belongs to, when known. */
  readonly step: number | null;
  /** A failed run's end: its error as JSON (the run result's `error`). */
  readonly detail?: string | null;
}

/** A step with its place: rows of one run are read back in `ord` order. */
export interface OrderedStep extends StepRow {
  readonly ord: number;
}

/** A run in progress on some instance. */
export interface LiveRun {
  readonly runId: string;
  readonly sessionId: string;
  readonly parentRunId: string | null;
  readonly depth: number;
  /** Which instance runs it (host:pid). */
  readonly instance: string;
  readonly startedAt: number;
}

/** A tool call's approval ask, waiting for a human. */
export interface PendingApproval {
  readonly runId: string;
  readonly toolCallId: string;
  readonly sessionId: string;
  readonly toolName: string;
  readonly title: string;
  readonly askedAt: number;
  readonly instance: string;
  /** What the person is shown with the title, as JSON (the console's `ApprovalDetail`). */
  readonly detail?: string | null;
}

/** A console login: the cookie's token is stored only as its sha256. */
export interface ConsoleLogin {
  readonly tokenHash: string;
  readonly principal: string;
  readonly admin: boolean;
  /** The API key it was made with (a revoked key ends it); null for the open loopback's local principal. */
  readonly keyId: string | null;
  readonly csrf: string;
  readonly expiresAt: number;
}

export interface ServiceTables {
  createApiKey(key: StoredApiKey): Promise<void>;
  findApiKey(id: string): Promise<StoredApiKey | undefined>;
  /** Oldest first. */
  listApiKeys(): Promise<StoredApiKey[]>;
  /** false when there is no such key or it was already revoked. */
  revokeApiKey(id: string, at: string): Promise<boolean>;
  apiKeyCounts(): Promise<{ readonly all: number; readonly active: number }>;

  ownSession(owner: SessionOwner): Promise<void>;
  sessionOwner(sessionId: string): Promise<SessionOwner | undefined>;
  /** Newest first. */
  ownedSessions(principal: string, page: { limit: number; offset: number }): Promise<SessionOwner[]>;
  sessionOwners(sessionIds: readonly string[]): Promise<Map<string, SessionOwner>>;
  /** Removes the session's owner and its run steps. */
  forgetSession(sessionId: string): Promise<void>;

  /** Delivered to every store watching the same database (this one included); `body` is opaque. */
  postSignal(body: string): Promise<void>;
  /** Starts delivering the bodies posted from now on; returns how to stop. */
  watchSignals(onBody: (body: string) => void): Promise<() => Promise<void>>;

  /** One transaction: runs that started, their steps, runs that ended. */
  recordSteps(batch: {
    readonly steps: readonly OrderedStep[];
    readonly started: readonly LiveRun[];
    readonly ended: readonly string[];
  }): Promise<void>;
  /** The steps of these runs, in `ord` order. */
  stepsOf(runIds: readonly string[]): Promise<StepRow[]>;
  liveRuns(): Promise<LiveRun[]>;
  addPendingApproval(approval: PendingApproval): Promise<void>;
  removePendingApproval(runId: string, toolCallId: string): Promise<void>;
  pendingApprovals(): Promise<PendingApproval[]>;
  /** Also drops expired logins. */
  createLogin(login: ConsoleLogin): Promise<void>;
  /** An unexpired login. */
  login(tokenHash: string, now: number): Promise<ConsoleLogin | undefined>;
  deleteLogin(tokenHash: string): Promise<void>;

  /** A cheap round trip to the database (readiness). */
  ping(): Promise<void>;
}

/** How often a SQLite store looks for signals other processes posted on the same file. */
export const SIGNAL_POLL_MS = 200;
/** Signals older than this are deleted (each is acted on within a poll). */
export const SIGNAL_TTL_MS = 60_000;
