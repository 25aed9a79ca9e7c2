import type { ApprovalDecision } from "../runtime/types.js";
import { openStore, type StoreOptions, type StoreView } from "../store/index.js";
import type { ServiceTables, SessionOwner, StoredApiKey } from "../store/service.js";
import { type ConsoleRecords, StoreConsoleRecords } from "./console/records.js";

export type { SessionOwner, StoredApiKey } from "../store/service.js";

/**
 * What the service keeps beside the sessions: API keys (hashes only), which principal owns which
 * session (and its title), the console's records, and — between instances — signals for runs (a
 * cancel, an approval answer) that reach whichever instance is running the run. They are tables of
 * the session store (`server_*`, src/store/service.ts): its migrations, its one connection or pool,
 * its scrub.
 */
export type ApiKeyRecord = Omit<StoredApiKey, "hash">;

/** A message for the instance running a run. */
export type RunSignal =
  | { readonly kind: "cancel"; readonly runId: string }
  | {
      readonly kind: "approval";
      readonly runId: string;
      readonly toolCallId: string;
      readonly decision: ApprovalDecision;
      /** Who answered: an API client or a person at the console (the audit trail says which). */
      readonly by?: "client" | "console";
    };

export interface ServiceRecords
  extends Pick<
    ServiceTables,
    | "createApiKey"
    | "findApiKey"
    | "revokeApiKey"
    | "apiKeyCounts"
    | "ownSession"
    | "sessionOwner"
    | "ownedSessions"
    | "sessionOwners"
    | "forgetSession"
    | "ping"
  > {
  listApiKeys(): Promise<ApiKeyRecord[]>;
  /** Delivered to every instance watching (this one included). */
  signal(signal: RunSignal): Promise<void>;
  /** Starts delivering signals; returns how to stop. */
  watch(onSignal: (signal: RunSignal) => void): Promise<() => Promise<void>>;
  /** What the console keeps: run steps, runs in progress, pending approval asks, logins. */
  readonly console: ConsoleRecords;
  /**
   * Whether a key was ever created (revoking the last one does not open the loopback again).
   * Cached for a second, so that creating the first key closes the open loopback within a second
   * without a query per request.
   */
  anyKeyEver(): Promise<boolean>;
  /** Closes the store only when these records opened it (given a store, its owner closes it). */
  close(): Promise<void>;
}

const publicKey = ({ hash: _hash, ...rest }: StoredApiKey): ApiKeyRecord => rest;

/**
 * The records in a store: an open one (shared with the Gatehouse that serves, so one connection
 * holds everything), or options to open one that the records then own.
 */
export async function openServiceRecords(store: StoreView | StoreOptions): Promise<ServiceRecords> {
  if ("service" in store) return new StoreRecords(store, false);
  return new StoreRecords(await openStore(store), true);
}

const KEYS_CACHE_MS = 1000;

class StoreRecords implements ServiceRecords {
  readonly console: ConsoleRecords;
  private readonly tables: ServiceTables;
  private keysKnown: { readonly at: number; readonly exist: boolean } | undefined;

  constructor(
    private readonly store: StoreView,
    private readonly owned: boolean,
  ) {
    this.tables = store.service;
    this.console = new StoreConsoleRecords(this.tables);
  }

  createApiKey(key: StoredApiKey) {
    return this.tables.createApiKey(key);
  }
  findApiKey(id: string) {
    return this.tables.findApiKey(id);
  }
  async listApiKeys() {
    return (await this.tables.listApiKeys()).map(publicKey);
  }
  revokeApiKey(id: string, at: string) {
    return this.tables.revokeApiKey(id, at);
  }
  apiKeyCounts() {
    return this.tables.apiKeyCounts();
  }
  ownSession(owner: SessionOwner) {
    return this.tables.ownSession(owner);
  }
  sessionOwner(sessionId: string) {
    return this.tables.sessionOwner(sessionId);
  }
  ownedSessions(principal: string, page: { limit: number; offset: number }) {
    return this.tables.ownedSessions(principal, page);
  }
  sessionOwners(sessionIds: readonly string[]) {
    return this.tables.sessionOwners(sessionIds);
  }
  forgetSession(sessionId: string) {
    return this.tables.forgetSession(sessionId);
  }
  signal(signal: RunSignal) {
    return this.tables.postSignal(JSON.stringify(signal));
  }
  watch(onSignal: (signal: RunSignal) => void) {
    return this.tables.watchSignals((body) => onSignal(JSON.parse(body) as RunSignal));
  }
  async anyKeyEver() {
    const now = performance.now();
    if (this.keysKnown && now - this.keysKnown.at < KEYS_CACHE_MS) return this.keysKnown.exist;
    const exist = (await this.tables.apiKeyCounts()).all > 0;
    this.keysKnown = { at: now, exist };
    return exist;
  }
  ping() {
    return this.tables.ping();
  }
  async close() {
    if (this.owned) await this.store.close();
  }
}
