import type { ServerResponse } from "node:http";

/**
 * A Server-Sent Events response on a hijacked Fastify reply: the head goes out at once (so the
 * client sees the stream open before the model says anything), then one frame per write.
 * `gone` aborts when the client closes the connection before the stream ended.
 */
export class SseWriter {
  private ended_ = false;
  private readonly controller = new AbortController();

  constructor(
    private readonly res: ServerResponse,
    headers: Record<string, string>,
  ) {
    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      connection: "keep-alive",
      "x-accel-buffering": "no",
      ...headers,
    });
    res.flushHeaders();
    res.on("close", () => {
      if (!this.ended_) this.controller.abort(new Error("client gone"));
    });
  }

  get gone(): AbortSignal {
    return this.controller.signal;
  }

  get ended(): boolean {
    return this.ended_;
  }

  /** One event: `event:` (when named) and `data:` as JSON (or a raw string such as `[DONE]`). */
  send(data: unknown, event?: string): void {
    if (this.ended_ || this.res.destroyed) return;
    const body = typeof data === "string" ? data : JSON.stringify(data);
    this.res.write(`${event === undefined ? "" : `event: ${event}\n`}data: ${body}\n\n`);
  }

  /** A comment line: keeps a quiet stream's connection open through proxies. */
  comment(text: string): void {
    if (this.ended_ || this.res.destroyed) return;
    this.res.write(`: ${text}\n\n`);
  }

  end(): void {
    if (this.ended_) return;
    this.ended_ = true;
    this.res.end();
  }
}
