import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { deferred, emitEvent, engineWithLog, inRun, toolEvent } from "./helpers.js";

describe("observe", () => {
  test("handlers run concurrently: the first can wait on the second's start", async () => {
    const { engine } = engineWithLog();
    const secondStarted = deferred();
    const order: string[] = [];
    engine.on("a", "message_sent", async () => {
      await secondStarted.promise;
      order.push("first done");
    });
    engine.on("b", "message_sent", () => {
      order.push("second started");
      secondStarted.resolve();
    });
    await engine.emit("message_sent", { to: "user", content: "hi", success: true });
    assert.deepEqual(order, ["second started", "first done"]);
  });

  test("an awaited observer's emit resolves only after its handlers finish", async () => {
    const { engine } = engineWithLog();
    let finished = false;
    engine.on("a", "agent_end", async () => {
      await Promise.resolve();
      finished = true;
    });
    await engine.emit("agent_end", {
      runId: "r1",
      outcome: "completed",
      success: true,
      durationMs: 1,
      messages: [],
    });
    assert.equal(finished, true);
  });

  test("a detached observer returns at once and finishes in the background", async () => {
    const { engine } = engineWithLog();
    const release = deferred();
    let seen = "";
    engine.on("a", "llm_output", async (event) => {
      await release.promise;
      seen = event.model;
    });
    const returned = engine.emit("llm_output", { provider: "p", model: "m", assistantTexts: [] });
    assert.equal(returned, undefined);
    assert.equal(seen, "");
    release.resolve();
    await engine.drain();
    assert.equal(seen, "m");
  });

  test("a detached queue that is full drops the event with a warning instead of growing", async () => {
    const { engine, lines } = engineWithLog({ detached: { concurrency: 1, capacity: 1 } });
    const release = deferred();
    let calls = 0;
    engine.on("a", "model_call_started", async () => {
      calls++;
      await release.promise;
    });
    for (let i = 0; i < 3; i++) engine.emit("model_call_started", { provider: "p", model: "m", step: i });
    release.resolve();
    await engine.drain();
    assert.equal(calls, 2);
    assert.ok(lines.some((l) => l.includes("queue full")));
  });

  test("an awaited observer that never settles: emit resolves after its timeout, its signal aborts, one fail-open line", {
    timeout: 10_000,
  }, async () => {
    const { engine, lines } = engineWithLog();
    let signal: AbortSignal | undefined;
    let otherDone = false;
    engine.on(
      "stuck",
      "message_sent",
      (_e, ctx) => {
        signal = ctx.signal;
        return new Promise<undefined>(() => {});
      },
      { timeoutMs: 10 },
    );
    engine.on("quick", "message_sent", async () => {
      otherDone = true;
    });
    await engine.emit("message_sent", { to: "user", content: "hi", success: true });
    assert.equal(signal?.aborted, true);
    assert.equal((signal?.reason as DOMException | undefined)?.name, "TimeoutError");
    assert.equal(otherDone, true);
    assert.deepEqual(lines, ["warn hook message_sent: handler stuck timed out after 10 ms; ignored (fail open)"]);
  });

  test("a detached observer that never settles frees its queue slot at its timeout", { timeout: 10_000 }, async () => {
    const { engine, lines } = engineWithLog({ detached: { concurrency: 1, capacity: 4 } });
    const secondCall = deferred<string[]>();
    let calls = 0;
    engine.on(
      "stuck-once",
      "model_call_started",
      () => {
        calls++;
        if (calls === 1) return new Promise<undefined>(() => {});
        secondCall.resolve([...lines]);
        return undefined;
      },
      { timeoutMs: 10 },
    );
    engine.emit("model_call_started", { provider: "p", model: "m", step: 0 });
    engine.emit("model_call_started", { provider: "p", model: "m", step: 1 });
    assert.equal(calls, 1, "the only slot is taken: the second event waits in the queue");
    // The second event runs only once the first handler's timeout released the slot.
    assert.deepEqual(await secondCall.promise, [
      "warn hook model_call_started: handler stuck-once timed out after 10 ms; ignored (fail open)",
    ]);
    await engine.drain();
    assert.equal(calls, 2);
  });

  test("an observer's result is ignored and its failure does not reach the caller", async () => {
    const { engine, lines } = engineWithLog();
    engine.on("a", "message_received", () => {
      throw new Error("boom");
    });
    await engine.emit("message_received", { content: "hello" });
    assert.equal(lines.length, 1);
    assert.match(lines[0] as string, /^warn hook message_received: handler a threw/);
  });
});

describe("modify: field rules", () => {
  test("chain: two redactors compose, each seeing the other's rewrite, with the original readable", async () => {
    const { engine } = engineWithLog();
    const originals: string[] = [];
    engine.on("redact-email", "message_sending", (event) => ({ content: event.content.replace("a@b.c", "[email]") }));
    engine.on("redact-phone", "message_sending", (event) => {
      originals.push(event.original.content);
      return { content: event.content.replace("555-1234", "[phone]") };
    });
    const outcome = await engine.emit("message_sending", {
      to: "u",
      content: "mail a@b.c or call 555-1234",
      source: "model",
    });
    assert.equal(outcome.result.content, "mail [email] or call [phone]");
    assert.deepEqual(originals, ["mail a@b.c or call 555-1234"]);
  });

  test("chain on tool params: the second handler sees the first one's params", async () => {
    const { engine } = engineWithLog();
    engine.on("a", "before_tool_call", (e) => ({ params: { ...(e.params as object), safe: true } }));
    engine.on("b", "before_tool_call", (e) => ({
      params: { ...(e.params as object), seen: (e.params as { safe?: boolean }).safe },
    }));
    const outcome = await engine.emit("before_tool_call", toolEvent);
    assert.deepEqual(outcome.result.params, { command: "ls", safe: true, seen: true });
  });

  test("first: the highest-priority defined value wins", async () => {
    const { engine } = engineWithLog();
    engine.on("low", "before_model_resolve", () => ({ modelOverride: "low" }), { priority: 1 });
    engine.on("none", "before_model_resolve", () => ({}), { priority: 9 });
    engine.on("high", "before_model_resolve", () => ({ modelOverride: "high" }), { priority: 5 });
    const outcome = await engine.emit("before_model_resolve", { prompt: "p" });
    assert.equal(outcome.result.modelOverride, "high");
  });

  test("concat: context from several handlers is joined with a blank line, in order", async () => {
    const { engine } = engineWithLog();
    engine.on("a", "before_prompt_build", () => ({ appendContext: "one" }));
    engine.on("b", "before_prompt_build", () => ({ appendContext: "two", prependContext: "zero" }));
    const outcome = await engine.emit("before_prompt_build", { prompt: "p", messages: [] });
    assert.equal(outcome.result.appendContext, "one\n\ntwo");
    assert.equal(outcome.result.prependContext, "zero");
  });

  test("intersect: tool allow-lists narrow each other", async () => {
    const { engine } = engineWithLog();
    engine.on("a", "before_prompt_build", () => ({ toolsAllow: ["Read", "Bash", "Grep"] }));
    engine.on("b", "before_prompt_build", () => ({ toolsAllow: ["Grep", "Read", "Write"] }));
    const outcome = await engine.emit("before_prompt_build", { prompt: "p", messages: [] });
    assert.deepEqual(outcome.result.toolsAllow, ["Read", "Grep"]);
  });

  test("latch: a block stops the remaining handlers and is attributed to its plugin", async () => {
    const { engine } = engineWithLog();
    let laterCalled = false;
    engine.on("blocker", "before_tool_call", () => ({ block: true, blockReason: "no shell" }), { priority: 2 });
    engine.on("later", "before_tool_call", () => {
      laterCalled = true;
      return { params: {} };
    });
    const outcome = await engine.emit("before_tool_call", toolEvent);
    assert.equal(outcome.result.block, true);
    assert.equal(outcome.result.blockReason, "no shell");
    assert.deepEqual(outcome.decidedBy, { hook: "before_tool_call", pluginId: "blocker", cause: "decision" });
    assert.equal(laterCalled, false);
  });

  test("latch: block: false is no decision and the next handler still runs", async () => {
    const { engine } = engineWithLog();
    engine.on("a", "message_sending", () => ({ cancel: false }));
    engine.on("b", "message_sending", () => ({ content: "rewritten" }));
    const outcome = await engine.emit("message_sending", { to: "u", content: "x", source: "model" });
    assert.deepEqual(outcome.result, { content: "rewritten" });
    assert.equal(outcome.decidedBy, undefined);
  });

  test("collect: every retry request is kept, in order", async () => {
    const { engine } = engineWithLog();
    engine.on("a", "before_agent_finalize", () => ({ action: "revise", retry: { instruction: "cite sources" } }));
    engine.on("b", "before_agent_finalize", () => ({
      action: "revise",
      retry: { instruction: "be brief", maxAttempts: 2 },
    }));
    const outcome = await engine.emit("before_agent_finalize", {
      lastAssistantMessage: "x",
      messages: [],
      stopHookActive: false,
      attempt: 0,
    });
    assert.deepEqual(outcome.result.retry, [
      { instruction: "cite sources" },
      { instruction: "be brief", maxAttempts: 2 },
    ]);
  });

  test("rank: finalize wins over revise, revise over continue, whatever the order", async () => {
    const { engine } = engineWithLog();
    engine.on("a", "before_agent_finalize", () => ({ action: "continue" }));
    engine.on("b", "before_agent_finalize", () => ({ action: "finalize", reason: "done" }));
    engine.on("c", "before_agent_finalize", () => ({ action: "revise", reason: "more" }));
    const outcome = await engine.emit("before_agent_finalize", {
      lastAssistantMessage: "x",
      messages: [],
      stopHookActive: false,
      attempt: 0,
    });
    assert.equal(outcome.result.action, "finalize");
    assert.equal(outcome.result.reason, "done\n\nmore");
  });

  test("before_response_emit keeps content and allContent consistent when only one is rewritten", async () => {
    const { engine } = engineWithLog();
    engine.on("a", "before_response_emit", (e) => ({ allContent: e.allContent.map((t) => t.replace("x", "y")) }));
    engine.on("b", "before_response_emit", (e) => ({ content: `${e.content}!` }));
    const outcome = await engine.emit("before_response_emit", emitEvent("final x", ["step x"]));
    assert.deepEqual(outcome.result, { content: "final y!", allContent: ["step y", "final y!"] });
  });

  test("before_response_emit: content '' is a block", async () => {
    const { engine } = engineWithLog();
    engine.on("a", "before_response_emit", () => ({ content: "" }));
    const outcome = await engine.emit("before_response_emit", emitEvent("final"));
    assert.equal(outcome.result.block, true);
    assert.equal(outcome.decidedBy?.pluginId, "a");
  });

  test("before_response_emit: allContent longer than the run's texts is invalid and blocks (plugins cannot inject messages)", async () => {
    const { engine } = engineWithLog();
    engine.on("a", "before_response_emit", (e) => ({ allContent: [...e.allContent, "injected"] }));
    const outcome = await engine.emit("before_response_emit", emitEvent("final"));
    assert.equal(outcome.result.block, true);
    assert.deepEqual(outcome.decidedBy, { hook: "before_response_emit", pluginId: "a", cause: "invalid" });
    assert.equal(outcome.result.content, undefined);
  });

  test("events are frozen: a handler cannot change what later handlers or the caller see", async () => {
    const { engine } = engineWithLog();
    const params = { command: "ls" };
    engine.on("mutator", "before_tool_call", (e) => {
      assert.throws(() => {
        (e.params as { command: string }).command = "rm -rf /";
      }, TypeError);
      assert.throws(() => {
        (e as { toolName: string }).toolName = "Other";
      }, TypeError);
    });
    let seen: unknown;
    engine.on("reader", "before_tool_call", (e) => {
      seen = e.params;
    });
    await engine.emit("before_tool_call", { ...toolEvent, params });
    assert.deepEqual(seen, { command: "ls" });
  });
});

describe("claim", () => {
  const cleanedBody = { cleanedBody: "fill the form" };

  test("the first handled: true wins and later handlers are not called", async () => {
    const { engine } = engineWithLog();
    const called: string[] = [];
    engine.on("decline", "before_agent_reply", () => {
      called.push("decline");
      return { handled: false };
    });
    engine.on("wizard", "before_agent_reply", () => {
      called.push("wizard");
      return { handled: true, reply: { text: "Step 1 of 3" } };
    });
    engine.on("never", "before_agent_reply", () => {
      called.push("never");
      return { handled: true };
    });
    const outcome = await inRun(() => engine.emit("before_agent_reply", cleanedBody));
    assert.deepEqual(called, ["decline", "wizard"]);
    assert.equal(outcome.handled, true);
    if (outcome.handled) {
      assert.equal(outcome.by.pluginId, "wizard");
      assert.deepEqual(outcome.result.reply, { text: "Step 1 of 3" });
    }
  });

  test("a throwing handler is logged and the next one is tried", async () => {
    const { engine, lines } = engineWithLog();
    engine.on("broken", "before_agent_reply", () => {
      throw new Error("nope");
    });
    engine.on("next", "before_agent_reply", async () => ({ handled: true }));
    const outcome = await engine.emit("before_agent_reply", cleanedBody);
    assert.equal(outcome.handled && outcome.by.pluginId, "next");
    assert.equal(lines.length, 1);
  });

  test("nobody claiming returns handled: false", async () => {
    const { engine } = engineWithLog();
    engine.on("a", "before_agent_reply", () => undefined);
    assert.deepEqual(await engine.emit("before_agent_reply", cleanedBody), { handled: false });
  });
});

describe("gate", () => {
  const runEvent = { prompt: "p", modelPrompt: "p", messages: [], systemPrompt: "" };

  test("pass from every handler passes; the first block stops the rest and drops the internal reason", async () => {
    const { engine } = engineWithLog();
    let laterCalled = false;
    engine.on("ok", "before_agent_run", () => ({ outcome: "pass" }));
    engine.on("firewall", "before_agent_run", () => ({
      outcome: "block",
      reason: "INTERNAL matched rule 7",
      message: "That request isn't allowed.",
      category: "injection",
    }));
    engine.on("later", "before_agent_run", () => {
      laterCalled = true;
      return { outcome: "pass" };
    });
    const outcome = await engine.emit("before_agent_run", runEvent);
    assert.deepEqual(outcome, {
      outcome: "block",
      by: { hook: "before_agent_run", pluginId: "firewall", cause: "decision" },
      message: "That request isn't allowed.",
      category: "injection",
    });
    assert.equal(laterCalled, false);
    assert.doesNotMatch(JSON.stringify(outcome), /INTERNAL/);
  });

  test("undefined is no opinion", async () => {
    const { engine } = engineWithLog();
    engine.on("silent", "before_agent_run", () => undefined);
    assert.deepEqual(await engine.emit("before_agent_run", runEvent), { outcome: "pass" });
  });

  test("the alias { block: true } blocks as the handler's decision; { block: false } passes", async () => {
    const { engine, lines } = engineWithLog();
    engine.on("aliased", "before_agent_run", () => ({ block: false }));
    assert.deepEqual(await engine.emit("before_agent_run", runEvent), { outcome: "pass" });
    engine.on("blocking", "before_agent_run", () => ({ block: true, message: "Not here." }));
    assert.deepEqual(await engine.emit("before_agent_run", runEvent), {
      outcome: "block",
      by: { hook: "before_agent_run", pluginId: "blocking", cause: "decision" },
      message: "Not here.",
    });
    assert.deepEqual(lines, []);
  });

  const malformed: [string, unknown][] = [
    ["pass with an extra key", { outcome: "pass", note: "x" }],
    ["null", null],
    ['{block: "yes"}', { block: "yes" }],
    ["block without a reason", { outcome: "block" }],
    ["block with an empty reason", { outcome: "block", reason: "" }],
    ["ask", { outcome: "ask", reason: "r" }],
    ["a string", "pass"],
    ["true", true],
  ];
  for (const [name, value] of malformed) {
    test(`a gate result that is ${name} blocks, attributed as invalid`, async () => {
      const { engine, lines } = engineWithLog();
      engine.on("sloppy", "before_agent_run", () => value as never);
      const outcome = await engine.emit("before_agent_run", runEvent);
      assert.deepEqual(outcome, {
        outcome: "block",
        by: { hook: "before_agent_run", pluginId: "sloppy", cause: "invalid" },
      });
      assert.equal(lines.length, 1);
      assert.match(lines[0] as string, /^error hook before_agent_run: handler sloppy returned an invalid result/);
    });
  }
});

describe("sync", () => {
  const message = {
    id: "m1",
    sessionId: "s",
    runId: "r",
    seq: 1,
    role: "tool",
    parts: [],
    metadata: {},
    createdAt: "",
  } as const;

  test("handlers run synchronously in order, each seeing the previous rewrite", () => {
    const { engine } = engineWithLog();
    engine.on("a", "tool_result_persist", (e) => ({ message: { ...e.message, metadata: { a: true } } }));
    engine.on("b", "tool_result_persist", (e) => ({
      message: { ...e.message, metadata: { ...e.message.metadata, b: true } },
    }));
    const outcome = engine.emit("tool_result_persist", { message });
    assert.deepEqual(outcome.result.message?.metadata, { a: true, b: true });
  });

  test("a handler that returns a Promise is an error-level diagnostic saying so, and its result is ignored", () => {
    const { engine, lines } = engineWithLog();
    engine.on("async", "before_message_write", (async () => ({ block: true })) as never);
    const outcome = engine.emit("before_message_write", { message });
    assert.deepEqual(outcome.result, {});
    assert.deepEqual(lines, [
      "error hook before_message_write: handler async returned a Promise; a sync hook's handler must answer synchronously, so its result is ignored",
    ]);
  });

  test("before_message_write block latches", () => {
    const { engine } = engineWithLog();
    engine.on("a", "before_message_write", () => ({ block: true }));
    engine.on("b", "before_message_write", () => {
      throw new Error("must not run");
    });
    const outcome = engine.emit("before_message_write", { message });
    assert.equal(outcome.result.block, true);
    assert.equal(outcome.decidedBy?.pluginId, "a");
  });
});

describe("hooks with no handler", () => {
  test("hasHooks is false and emit returns the neutral outcome for every kind", async () => {
    const { engine } = engineWithLog();
    assert.equal(engine.hasHooks("before_tool_call"), false);
    assert.deepEqual(await engine.emit("before_tool_call", toolEvent), { result: {} });
    assert.deepEqual(
      await engine.emit("before_agent_run", { prompt: "", modelPrompt: "", messages: [], systemPrompt: "" }),
      {
        outcome: "pass",
      },
    );
    assert.deepEqual(await engine.emit("before_agent_reply", { cleanedBody: "" }), { handled: false });
    assert.equal(engine.emit("llm_output", { provider: "p", model: "m", assistantTexts: [] }), undefined);
    engine.on("a", "before_tool_call", () => undefined);
    assert.equal(engine.hasHooks("before_tool_call"), true);
  });
});
