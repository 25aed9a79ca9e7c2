import { EventEmitter } from "node:events";
import type {
  ConsoleLogin,
  LiveRun,
  OrderedStep,
  PendingApproval,
  ServiceTables,
  SessionOwner,
  StepRow,
  StoredApiKey,
} from "./service.js";

/** The server's tables in memory: gone with the process, as the memory store's sessions are. */
export class MemoryServiceTables implements ServiceTables {
  private readonly keys = new Map<string, StoredApiKey>();
  private readonly owners = new Map<string, SessionOwner>();
  private readonly bus = new EventEmitter();
  private readonly steps: OrderedStep[] = [];
  private readonly live = new Map<string, LiveRun>();
  private readonly approvals = new Map<string, PendingApproval>();
  private readonly logins = new Map<string, ConsoleLogin>();

  async createApiKey(key: StoredApiKey) {
    this.keys.set(key.id, key);
  }
  async findApiKey(id: string) {
    return this.keys.get(id);
  }
  async listApiKeys() {
    return [...this.keys.values()];
  }
  async revokeApiKey(id: string, at: string) {
    const key = this.keys.get(id);
    if (!key || key.revokedAt) return false;
    this.keys.set(id, { ...key, revokedAt: at });
    return true;
  }
  async apiKeyCounts() {
    const all = [...this.keys.values()];
    return { all: all.length, active: all.filter((k) => k.revokedAt === null).length };
  }

  async ownSession(owner: SessionOwner) {
    this.owners.set(owner.sessionId, owner);
  }
  async sessionOwner(sessionId: string) {
    return this.owners.get(sessionId);
  }
  async ownedSessions(principal: string, page: { limit: number; offset: number }) {
    return [...this.owners.values()]
      .filter((o) => o.principal === principal)
      .reverse()
      .slice(page.offset, page.offset + page.limit);
  }
  async sessionOwners(sessionIds: readonly string[]) {
    const found = new Map<string, SessionOwner>();
    for (const id of sessionIds) {
      const owner = this.owners.get(id);
      if (owner) found.set(id, owner);
    }
    return found;
  }
  async forgetSession(sessionId: string) {
    this.owners.delete(sessionId);
    for (let i = this.steps.length - 1; i >= 0; i--)
      if (this.steps[i]?.sessionId === sessionId) this.steps.splice(i, 1);
  }

  async postSignal(body: string) {
    this.bus.emit("signal", body);
  }
  async watchSignals(onBody: (body: string) => void) {
    this.bus.on("signal", onBody);
    return async () => void this.bus.off("signal", onBody);
  }

  async recordSteps(batch: {
    readonly steps: readonly OrderedStep[];
    readonly started: readonly LiveRun[];
    readonly ended: readonly string[];
  }) {
    for (const run of batch.started) this.live.set(run.runId, run);
    this.steps.push(...batch.steps);
    for (const runId of batch.ended) this.live.delete(runId);
  }
  async stepsOf(runIds: readonly string[]): Promise<StepRow[]> {
    const wanted = new Set(runIds);
    return this.steps
      .filter((s) => wanted.has(s.runId))
      .sort((a, b) => a.ord - b.ord)
      .map(({ ord: _ord, ...step }) => step);
  }
  async liveRuns() {
    return [...this.live.values()];
  }
  async addPendingApproval(a: PendingApproval) {
    this.approvals.set(`${a.runId}\0${a.toolCallId}`, a);
  }
  async removePendingApproval(runId: string, toolCallId: string) {
    this.approvals.delete(`${runId}\0${toolCallId}`);
  }
  async pendingApprovals() {
    return [...this.approvals.values()];
  }
  async createLogin(login: ConsoleLogin) {
    const now = Date.now();
    for (const [hash, l] of this.logins) if (l.expiresAt <= now) this.logins.delete(hash);
    this.logins.set(login.tokenHash, login);
  }
  async login(tokenHash: string, now: number) {
    const found = this.logins.get(tokenHash);
    return found && found.expiresAt > now ? found : undefined;
  }
  async deleteLogin(tokenHash: string) {
    this.logins.delete(tokenHash);
  }
  async ping() {}
}
