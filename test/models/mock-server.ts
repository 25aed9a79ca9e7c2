import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary wire JSON
  readonly body: any;
}

/** One SSE frame: `data` objects are JSON-encoded, strings (e.g. `[DONE]`) sent as they are. */
export interface SseFrame {
  readonly event?: string;
  readonly data: unknown;
}

export type Reply = { readonly status?: number; readonly json: unknown } | { readonly sse: readonly SseFrame[] };

export interface MockServer {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  readonly requests: RecordedRequest[];
  /** Queues the replies for the next requests, in order. */
  reply(...replies: Reply[]): void;
  close(): Promise<void>;
}

/**
 * A local server speaking whatever wire protocol the queued replies spell out. Each SSE frame is
 * written in two halves, so the clients' SSE parsers must reassemble frames split across reads.
 */
export async function startMockServer(): Promise<MockServer> {
  const requests: RecordedRequest[] = [];
  const queue: Reply[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      requests.push({
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: text === "" ? undefined : JSON.parse(text),
      });
      const reply = queue.shift();
      if (!reply) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: "mock server: no reply queued", type: "server_error" } }));
        return;
      }
      if ("json" in reply) {
        res.writeHead(reply.status ?? 200, { "content-type": "application/json" });
        res.end(JSON.stringify(reply.json));
        return;
      }
      res.writeHead(200, {
        "content-type": "text/event-stream",
        "cache-control": "no-cache",
        connection: "keep-alive",
      });
      for (const frame of reply.sse) {
        const data = typeof frame.data === "string" ? frame.data : JSON.stringify(frame.data);
        const wire = `${frame.event ? `event: ${frame.event}\n` : ""}data: ${data}\n\n`;
        const half = Math.floor(wire.length / 2);
        res.write(wire.slice(0, half));
        res.write(wire.slice(half));
      }
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    reply: (...replies) => queue.push(...replies),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
