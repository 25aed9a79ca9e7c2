import type { GatehouseOptions } from "../../src/assembly/gatehouse.js";
import type { ServerConfig } from "../../src/config/server.js";
import type { ScriptInput } from "../../src/models/index.js";
import type { PluginDefinition } from "../../src/plugins/index.js";
import { createApiKey, openService, type RunningServer, type Service } from "../../src/server/index.js";
import type { StoreOptions } from "../../src/store/index.js";
import { openStore } from "../../src/store/index.js";
import { testGatehouse } from "../runtime/helpers.js";

export interface TestServer {
  readonly url: string;
  readonly base: string;
  readonly service: Service;
  readonly running: RunningServer;
  readonly gatehouse: ReturnType<typeof testGatehouse>["gatehouse"];
  readonly calls: ReturnType<typeof testGatehouse>["calls"];
  readonly logLines: string[];
  /** A key for a principal (created in the service's records). */
  key(principal: string, options?: { admin?: boolean }): Promise<string>;
  close(): Promise<void>;
}

/** `gatehouse serve` in process: the scripted model, the given plugins and tools, on a free loopback port. */
export async function startTestServer(
  script: ScriptInput,
  options: {
    readonly plugins?: readonly PluginDefinition[];
    readonly tools?: GatehouseOptions["tools"];
    readonly permissions?: GatehouseOptions["permissions"];
    readonly config?: ServerConfig;
    readonly store?: StoreOptions;
    readonly host?: string;
    /** Where the built console is (tests build it into a folder of their own). */
    readonly console?: Parameters<typeof openService>[0]["console"];
  } = {},
): Promise<TestServer> {
  const storeOptions: StoreOptions = options.store ?? { kind: "memory" };
  const store = await openStore(storeOptions);
  const service = await openService({
    store,
    ...(options.config ? { config: options.config } : {}),
    ...(options.console ? { console: options.console } : {}),
  });
  const built = testGatehouse(script, {
    store,
    approver: service.approver,
    ...(options.plugins ? { plugins: [...options.plugins] } : {}),
    ...(options.tools ? { tools: options.tools } : {}),
    ...(options.permissions ? { permissions: options.permissions } : {}),
  });
  const running = await service.listen(built.gatehouse, { host: options.host ?? "127.0.0.1", port: 0 });
  return {
    url: running.url,
    base: `${running.url}/v1`,
    service,
    running,
    gatehouse: built.gatehouse,
    calls: built.calls,
    logLines: built.logLines,
    key: async (principal, keyOptions = {}) => (await createApiKey(service.records, principal, null, keyOptions)).key,
    async close() {
      await running.close(0);
      await built.gatehouse.close();
    },
  };
}

/** JSON over HTTP with an optional key. */
export async function api(
  server: Pick<TestServer, "url">,
  method: string,
  path: string,
  options: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
  // biome-ignore lint/suspicious/noExplicitAny: a response body is whatever JSON the route answers; tests index into it
): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      ...(options.body === undefined ? {} : { "content-type": "application/json" }),
      ...(options.key ? { authorization: `Bearer ${options.key}` } : {}),
      ...options.headers,
    },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, body, headers: res.headers };
}

export interface SseEvent {
  readonly event?: string;
  readonly data: string;
}

/** Reads a whole SSE response into events. */
export async function sse(
  server: Pick<TestServer, "url">,
  path: string,
  body: unknown,
  options: { key?: string; onEvent?: (e: SseEvent) => void; headers?: Record<string, string> } = {},
): Promise<{ status: number; events: SseEvent[]; headers: Headers }> {
  const res = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "text/event-stream",
      ...(options.key ? { authorization: `Bearer ${options.key}` } : {}),
      ...options.headers,
    },
    body: JSON.stringify(body),
  });
  const events: SseEvent[] = [];
  if (!res.body) return { status: res.status, events, headers: res.headers };
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of res.body) {
    buffer += decoder.decode(chunk as Uint8Array, { stream: true });
    let at = buffer.indexOf("\n\n");
    while (at >= 0) {
      const frame = buffer.slice(0, at);
      buffer = buffer.slice(at + 2);
      const event = /^event: (.*)$/m.exec(frame)?.[1];
      const data = frame
        .split("\n")
        .filter((l) => l.startsWith("data: "))
        .map((l) => l.slice(6))
        .join("\n");
      const e = { ...(event === undefined ? {} : { event }), data };
      events.push(e);
      options.onEvent?.(e);
      at = buffer.indexOf("\n\n");
    }
  }
  return { status: res.status, events, headers: res.headers };
}
