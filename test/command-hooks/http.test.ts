import assert from "node:assert/strict";
import { EventEmitter, once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { runCommandHandler } from "../../src/command-hooks/executor.js";
import { NO_DECISION_BLOCK_REASON } from "../../src/command-hooks/verdict.js";
import { hook, inputFor, tempDir } from "./helpers.js";

interface Seen {
  body: unknown;
  headers: IncomingMessage["headers"];
}

describe("http handlers", () => {
  const seen: Seen[] = [];
  const arrivals = new EventEmitter();
  const pending: ServerResponse[] = [];
  let base = "";
  const server = createServer((req, res) => {
    let data = "";
    req.on("data", (c) => (data += c));
    req.on("end", () => {
      seen.push({ body: JSON.parse(data), headers: req.headers });
      arrivals.emit("request");
      const route = req.url ?? "/";
      if (route === "/deny") {
        res.setHeader("content-type", "application/json");
        res.end(
          JSON.stringify({
            hookSpecificOutput: {
              hookEventName: "PreToolUse",
              permissionDecision: "deny",
              permissionDecisionReason: "the policy server says no",
            },
          }),
        );
      } else if (route === "/plain") res.end("some context");
      else if (route === "/error") {
        res.statusCode = 500;
        res.end('{"decision":"block","reason":"ignored"}');
      } else if (route === "/hang") pending.push(res);
      else if (route === "/big") res.end("y".repeat(3 * 1024 * 1024));
      else res.end("");
    });
  });
  before(async () => {
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    for (const res of pending) res.destroy();
    server.close();
  });
  const opts = (extra = {}) => ({ projectDir: tempDir(), sessionId: "s", env: { TOKEN: "t0k", OTHER: "o" }, ...extra });

  test("POSTs the input JSON and reads the response body like stdout", async () => {
    const input = inputFor("PreToolUse");
    const o = await runCommandHandler(hook({ type: "http", url: `${base}/deny` }), input, opts());
    assert.deepEqual(o.verdict, { decision: "deny", reason: "the policy server says no" });
    assert.equal(o.httpStatus, 200);
    assert.deepEqual(seen.at(-1)?.body, input);
    assert.equal(seen.at(-1)?.headers["content-type"], "application/json");
  });

  test("plain text on a context event becomes context", async () => {
    const o = await runCommandHandler(
      hook({ type: "http", url: `${base}/plain` }, { event: "UserPromptSubmit" }),
      inputFor("UserPromptSubmit"),
      opts(),
    );
    assert.deepEqual(o.verdict, { additionalContext: "some context" });
  });

  test("header values resolve only the environment variables listed in allowedEnvVars", async () => {
    await runCommandHandler(
      hook({
        type: "http",
        url: `${base}/`,
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the literal ${VAR} header syntax
        headers: { authorization: "Bearer $TOKEN", "x-other": "${OTHER}-x" },
        allowedEnvVars: ["TOKEN"],
      }),
      inputFor("PreToolUse"),
      opts(),
    );
    assert.equal(seen.at(-1)?.headers.authorization, "Bearer t0k");
    assert.equal(seen.at(-1)?.headers["x-other"], "-x");
  });

  test("a non-2xx status is a non-blocking error whose body is not read as a decision", async () => {
    const o = await runCommandHandler(hook({ type: "http", url: `${base}/error` }), inputFor("PreToolUse"), opts());
    assert.equal(o.verdict.decision, undefined);
    assert.equal(o.verdict.error, "exit");
    assert.equal(o.verdict.errorDetail, "HTTP status 500");
  });

  test("a timeout gives no decision, or a block under onFailure block", async () => {
    const h = (onFailure: "continue" | "block") =>
      hook({ type: "http", url: `${base}/hang`, timeout: 0.2 }, { event: "PostToolUse", onFailure });
    const o = await runCommandHandler(h("continue"), inputFor("PostToolUse"), opts());
    assert.equal(o.timedOut, true);
    assert.deepEqual(o.verdict, { error: "timeout", errorDetail: "timed out" });
    const b = await runCommandHandler(h("block"), inputFor("PostToolUse"), opts());
    assert.deepEqual(b.verdict.decision, "block");
    assert.equal(b.verdict.reason, NO_DECISION_BLOCK_REASON);
  });

  test("a refused connection is a spawn-class error", async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const o = await runCommandHandler(
      hook({ type: "http", url: `http://127.0.0.1:${port}/` }),
      inputFor("PreToolUse"),
      opts(),
    );
    assert.equal(o.verdict.error, "spawn");
    assert.equal(o.spawnError, "ECONNREFUSED");
  });

  test("the response body is capped like process output", async () => {
    const o = await runCommandHandler(hook({ type: "http", url: `${base}/big` }), inputFor("PreToolUse"), opts());
    assert.equal(o.stdout.length, 1024 * 1024);
    assert.equal(o.truncated, true);
  });

  test("aborting the run's signal cancels the request without a decision", async () => {
    const controller = new AbortController();
    const p = runCommandHandler(
      hook({ type: "http", url: `${base}/hang` }, { onFailure: "block" }),
      inputFor("PreToolUse"),
      opts({ signal: controller.signal }),
    );
    // Abort once the server has the request, so the cancellation hits an in-flight call.
    await once(arrivals, "request");
    controller.abort();
    const o = await p;
    assert.equal(o.aborted, true);
    assert.equal(o.verdict.decision, undefined);
  });
});
