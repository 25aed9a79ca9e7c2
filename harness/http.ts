import type { Gatehouse, RunStream } from "../src/runtime/gatehouse.js";
import type { RunEvent, RunInput, RunResult } from "../src/runtime/types.js";
import { openService, type RunningServer } from "../src/server/index.js";

/**
 * `gatehouse serve` as a further surface for the harness: the scenario's Gatehouse behind the
 * HTTP API on a loopback port, each run sent as a request (JSON, or SSE when the scenario streams
 * it). The run's events are recorded where the server pushes them (`onStream`, as for an
 * in-process stream), and what the client received must be exactly those events, in order.
 * Every response body is kept, byte for byte, for the scan.
 */
export class HttpSurface {
  /** JSON response bodies (run results, sessions) as received. */
  readonly answers: string[] = [];
  /** SSE bodies as received. */
  readonly streams: string[] = [];
  /** Where what the client received differs from what the run pushed. */
  readonly mismatches: string[] = [];
  /** The sessions it created: each has an owner row in the server's own table (server_session_owners). */
  readonly sessions: string[] = [];
  /** The runs it served (top-level): each has steps in the console's table (server_run_steps). */
  readonly runs: string[] = [];
  private readonly pushed = new Map<string, RunEvent[]>();

  private constructor(
    private readonly running: RunningServer,
    private readonly gatehouse: Gatehouse,
  ) {}

  /** Serves `gatehouse` (ready: its store open) with the server's records in that same store, as `gatehouse serve` does. */
  static async start(gatehouse: Gatehouse, onStream: (stream: RunStream) => void): Promise<HttpSurface> {
    const service = await openService({
      store: gatehouse.store,
      config: { limits: { requestTimeoutMs: 600_000 } },
    });
    let surface: HttpSurface | undefined;
    // The server streams every run through gatehouse.stream(): its events are seen where it pushes them.
    const stream = gatehouse.stream.bind(gatehouse);
    gatehouse.stream = (input) => {
      const s = stream(input);
      onStream(s);
      const events: RunEvent[] = [];
      const push = (s as unknown as { push: (e: RunEvent) => void }).push.bind(s);
      (s as unknown as { push: (e: RunEvent) => void }).push = (event) => {
        if (event.type === "run-start") surface?.pushed.set(event.runId, events);
        events.push(event);
        push(event);
      };
      return s;
    };
    const running = await service.listen(gatehouse, { host: "127.0.0.1", port: 0 });
    surface = new HttpSurface(running, gatehouse);
    return surface;
  }

  /** One run: a new session is created over HTTP first. */
  async run(input: Pick<RunInput, "prompt" | "sessionId">, stream: boolean): Promise<RunResult> {
    const sessionId = input.sessionId ?? (await this.createSession());
    const res = await fetch(`${this.running.url}/v1/sessions/${sessionId}/runs`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(stream ? { accept: "text/event-stream" } : {}) },
      body: JSON.stringify({ prompt: input.prompt }),
    });
    const text = await res.text();
    if (!stream) {
      this.answers.push(text);
      if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
      const result = JSON.parse(text) as RunResult;
      this.runs.push(result.runId);
      return result;
    }
    this.streams.push(text);
    const received: RunEvent[] = [];
    for (const frame of text.split("\n\n")) {
      const data = /^data: (.*)$/m.exec(frame)?.[1];
      if (data === undefined) continue;
      const event = JSON.parse(data) as RunEvent | { error: unknown };
      if ("error" in event) throw new Error(`SSE error ${JSON.stringify(event.error)}`);
      received.push(event);
    }
    const end = received.at(-1);
    if (end?.type !== "run-end") throw new Error("the stream ended without run-end");
    const pushed = this.pushed.get(end.result.runId) ?? [];
    // run-end goes out without the internal error text; everything else exactly as pushed (key
    // order aside: the server's response schema orders a result's keys its own way).
    const wire = (e: RunEvent) =>
      sortedJson(e.type === "run-end" ? { ...e, result: { ...e.result, error: undefined } } : e);
    if (received.map(wire).join("\n") !== pushed.map(wire).join("\n"))
      this.mismatches.push(`run ${end.result.runId}: the SSE events differ from the events the run pushed`);
    this.answers.push(JSON.stringify(end.result));
    this.runs.push(end.result.runId);
    return end.result;
  }

  /**
   * Every page the web console serves for what the scenario left, as the console reads it: its
   * HTML, the session listing, each session (sub-agents' included) with its messages and its
   * timeline, the audit trail with its summary and both exports, the live view and the
   * configuration — as the open loopback's local principal, who may see everything.
   */
  async consolePages(): Promise<string[]> {
    const get = async (path: string) => (await fetch(`${this.running.url}${path}`)).text();
    const pages = [
      await get("/console/"),
      await get("/console/me"),
      await get("/v1/sessions?scope=all&limit=1000"),
      await get("/v1/audit?limit=10000"),
      await get("/v1/audit/summary?outcome=block&bucket=hour"),
      await get("/v1/audit/export?format=csv&limit=10000"),
      await get("/v1/audit/export?format=jsonl&limit=10000"),
      await get("/v1/live"),
      await get("/v1/config"),
    ];
    for (const session of await this.gatehouse.store.listSessions({ limit: 10_000 })) {
      const at = `/v1/sessions/${encodeURIComponent(session.id)}`;
      pages.push(await get(at), await get(`${at}/timeline`), await get(`/v1/audit?sessionId=${session.id}`));
    }
    return pages;
  }

  close(): Promise<void> {
    return this.running.close(0);
  }

  private async createSession(): Promise<string> {
    const res = await fetch(`${this.running.url}/v1/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    const text = await res.text();
    this.answers.push(text);
    const { id } = JSON.parse(text) as { id: string };
    this.sessions.push(id);
    return id;
  }
}

/** JSON with every object's keys sorted, so two serializations of the same value compare equal. */
function sortedJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );
}
