import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { readResult, UnreadableResult } from "../../src/hooks/plain-data.js";
import { emitEvent, engineWithLog, toolEvent } from "./helpers.js";

// A handler's result is data: read once, when the handler answers, into plain objects; anything
// that cannot be read that way is an invalid result, never an error of the run (issue 11, path 9).

const THROWN = "SECRET-THROWN-BY-A-GETTER";
const runEvent = { prompt: "p", modelPrompt: "p", messages: [], systemPrompt: "" };

describe("results are read once, as data", () => {
  test("a getter runs exactly once, and what it returned is what is validated and merged", async () => {
    const { engine } = engineWithLog();
    let reads = 0;
    engine.on("redactor", "message_sending", () => ({
      get content() {
        reads++;
        return reads === 1 ? "checked text" : "something else";
      },
    }));
    const outcome = await engine.emit("message_sending", { to: "u", content: "x", source: "model" });
    assert.equal(outcome.result.content, "checked text");
    assert.equal(reads, 1);
  });

  test("a getter that throws makes the result invalid: a fail-closed hook blocks, attributed; the thrown text is not logged", async () => {
    const { engine, lines } = engineWithLog();
    engine.on("dlp", "before_response_emit", () => ({
      get content(): string {
        throw new Error(THROWN);
      },
    }));
    const outcome = await engine.emit("before_response_emit", emitEvent("final"));
    assert.equal(outcome.result.block, true);
    assert.deepEqual(outcome.decidedBy, { hook: "before_response_emit", pluginId: "dlp", cause: "invalid" });
    assert.match(lines.join("\n"), /handler dlp returned an invalid result \(reading it threw\); blocked/);
    assert.ok(!lines.join("\n").includes(THROWN));
  });

  test("in a promise's answer, a nested getter and a Proxy that throws are invalid too", async () => {
    const { engine } = engineWithLog();
    engine.on("nested", "after_tool_call", async () => ({
      result: {
        get output() {
          throw new Error(THROWN);
        },
      },
    }));
    const post = await engine.emit("after_tool_call", { ...toolEvent, result: "ok", durationMs: 1 });
    assert.equal(post.decidedBy?.cause, "invalid");
    assert.equal(post.result.block, true);

    const proxy = new Proxy(
      {},
      {
        ownKeys() {
          throw new Error(THROWN);
        },
      },
    );
    const { engine: gates } = engineWithLog();
    gates.on("proxy", "before_agent_run", () => proxy as never);
    const gate = await gates.emit("before_agent_run", runEvent);
    assert.equal(gate.outcome, "block");
    assert.deepEqual(gate.outcome === "block" && gate.by, {
      hook: "before_agent_run",
      pluginId: "proxy",
      cause: "invalid",
    });
  });

  test("a fail-open hook discards such a result and the run's other results stand", async () => {
    const { engine } = engineWithLog();
    engine.on("broken", "before_prompt_build", () => ({
      get appendContext(): string {
        throw new Error(THROWN);
      },
    }));
    engine.on("fine", "before_prompt_build", () => ({ prependContext: "kept" }));
    const outcome = await engine.emit("before_prompt_build", { prompt: "", messages: [] });
    assert.deepEqual(outcome.result, { prependContext: "kept" });
    const claim = engineWithLog().engine;
    claim.on("claims", "before_agent_reply", () => ({
      handled: true,
      get reply(): { text: string } {
        throw new Error(THROWN);
      },
    }));
    assert.deepEqual(await claim.emit("before_agent_reply", { cleanedBody: "x" }), { handled: false });
  });

  test("a sync hook's result with a throwing getter is skipped, synchronously", () => {
    const { engine } = engineWithLog();
    engine.on("persist", "before_message_write", () => ({
      get block(): boolean {
        throw new Error(THROWN);
      },
    }));
    const message = {
      id: "",
      sessionId: "s",
      runId: "r",
      seq: 0,
      role: "user" as const,
      parts: [],
      metadata: {},
      createdAt: "t",
    };
    assert.deepEqual(engine.emit("before_message_write", { message }).result, {});
  });
});

describe("readResult", () => {
  test("copies own enumerable data into plain objects and arrays, prototypes and symbols left behind", () => {
    class Shaped {
      own = 1;
      get inherited() {
        return 2;
      }
    }
    const read = readResult({ list: [new Shaped(), null, "x"], [Symbol("s")]: 1 });
    assert.deepEqual(read, { list: [{ own: 1 }, null, "x"] });
    assert.equal(Object.getPrototypeOf((read as { list: object[] }).list[0]), Object.prototype);
  });

  test("a function, a bigint, a cycle or a throw is unreadable, and says why without what was thrown", () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    const throwing = {
      get x() {
        throw new Error(THROWN);
      },
    };
    for (const [value, why] of [
      [{ f: () => 1 }, "it holds a function"],
      [{ n: 1n }, "it holds a bigint"],
      [cycle, "it refers to itself"],
      [throwing, "reading it threw"],
    ] as const) {
      const read = readResult(value);
      assert.ok(read instanceof UnreadableResult);
      assert.equal(read.why, why);
    }
  });

  test("a key named __proto__ stays a key", () => {
    const read = readResult(JSON.parse('{"__proto__": {"polluted": true}}')) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(read), Object.prototype);
    assert.deepEqual(Object.keys(read), ["__proto__"]);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });
});
