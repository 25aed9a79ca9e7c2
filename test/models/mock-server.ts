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

export type Reply =
  | { readonly status?: number; readonly json: unknown; readonly headers?: Record<string, string> }
  /** SSE frames; with `resetAfter`, the connection is reset after that many frames (mid-stream). */
  | { readonly sse: readonly SseFrame[]; readonly resetAfter?: number }
  /** The connection is reset before any response. */
  | { readonly reset: true }
  /** An SSE body written as it is (e.g. a malformed frame). */
  | { readonly rawSse: string };

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
      if ("reset" in reply) {
        req.socket.resetAndDestroy();
        return;
      }
      if ("json" in reply) {
        res.writeHead(reply.status ?? 200, { "content-type": "application/json", ...reply.headers });
        res.end(JSON.stringify(reply.json));
        return;
      }
      if ("rawSse" in reply) {
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
        res.end(reply.rawSse);
        return;
      }
      res.writeHead(200, {
        "content-type": "text/event-stream",
        "cache-control": "no-cache",
        connection: "keep-alive",
      });
      for (const [i, frame] of reply.sse.entries()) {
        if (reply.resetAfter === i) {
          // Flushed frames reach the client before the reset.
          res.socket?.write("", () => req.socket.resetAndDestroy());
          return;
        }
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

/** One OpenAI Chat Completions stream chunk. */
export const chatChunk = (delta: unknown, finish: string | null = null) => ({
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  created: 1700000000,
  model: "gpt-test",
  choices: [{ index: 0, delta, finish_reason: finish }],
});

/** A Chat Completions reply that calls these tools (ids `call_0`, `call_1`, …). */
export const chatToolCalls = (...calls: { name: string; input: object }[]): { sse: SseFrame[] } => ({
  sse: [
    {
      data: chatChunk({
        role: "assistant",
        content: null,
        tool_calls: calls.map((c, index) => ({
          index,
          id: `call_${index}`,
          type: "function",
          function: { name: c.name, arguments: JSON.stringify(c.input) },
        })),
      }),
    },
    { data: chatChunk({}, "tool_calls") },
    { data: "[DONE]" },
  ],
});

/** A Chat Completions reply with this text. */
export const chatAnswer = (text: string): { sse: SseFrame[] } => ({
  sse: [{ data: chatChunk({ role: "assistant", content: text }) }, { data: chatChunk({}, "stop") }, { data: "[DONE]" }],
});
