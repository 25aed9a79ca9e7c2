import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { HookEngine } from "../../src/hooks/index.js";
import { captureLogger, deferred, emitEvent, engineWithLog, inRun, toolEvent } from "./helpers.js";

const runEvent = { prompt: "p", modelPrompt: "p", messages: [], systemPrompt: "" };
const never = () => new Promise<undefined>(() => {});

describe("ordering", () => {
  test("higher priority runs first; equal priorities run by the plugin's first registration, then the plugin's own order", async () => {
    const { engine } = engineWithLog();
    const order: string[] = [];
    const record = (name: string) => () => {
      order.push(name);
      return undefined;
    };
    engine.on("p1", "before_prompt_build", record("p1-a"));
    engine.on("p2", "before_prompt_build", record("p2-high"), { priority: 10 });
    engine.on("p3", "before_prompt_build", record("p3-a"));
    engine.on("p1", "before_prompt_build", record("p1-b"));
    engine.on("p4", "before_prompt_build", record("p4-low"), { priority: -1 });
    await engine.emit("before_prompt_build", { prompt: "", messages: [] });
    assert.deepEqual(order, ["p2-high", "p1-a", "p1-b", "p3-a", "p4-low"]);
  });

  test("a tool matcher limits a handler to the tools it names", async () => {
    const { engine } = engineWithLog();
    const seen: string[] = [];
    engine.on("shell", "before_tool_call", (e) => void seen.push(`shell:${e.toolName}`), { matcher: "Bash" });
    engine.on("mcp", "before_tool_call", (e) => void seen.push(`mcp:${e.toolName}`), { matcher: "mcp__github__.*" });
    engine.on("files", "before_tool_call", (e) => void seen.push(`files:${e.toolName}`), {
      matcher: ["Write", "Edit"],
    });
    for (const toolName of ["Bash", "mcp__github__create_issue", "Edit", "Read"])
      await engine.emit("before_tool_call", { ...toolEvent, toolName });
    assert.deepEqual(seen, ["shell:Bash", "mcp:mcp__github__create_issue", "files:Edit"]);
  });
});

describe("failure policy", () => {
  test("fail-closed hook: a throw blocks, attributed to the plugin, and stops later handlers", async () => {
    const { engine, lines } = engineWithLog();
    let laterCalled = false;
    engine.on("buggy", "before_tool_call", () => {
      throw new Error("bug");
    });
    engine.on("later", "before_tool_call", () => {
      laterCalled = true;
    });
    const outcome = await engine.emit("before_tool_call", toolEvent);
    assert.equal(outcome.result.block, true);
    assert.deepEqual(outcome.decidedBy, { hook: "before_tool_call", pluginId: "buggy", cause: "threw" });
    assert.equal(laterCalled, false);
    assert.match(
      lines[0] as string,
      /^error hook before_tool_call: handler buggy threw \(Error at .*policy\.test\.ts:\d+:\d+\); blocked \(fail closed\)$/,
    );
  });

  test("fail-closed hook: a timeout blocks and aborts the handler's signal", async () => {
    const { engine } = engineWithLog();
    const aborted = deferred<unknown>();
    engine.on(
      "slow",
      "before_response_emit",
      (_e, ctx) => {
        ctx.signal.addEventListener("abort", () => aborted.resolve(ctx.signal.reason));
        return never();
      },
      { timeoutMs: 20 },
    );
    const outcome = await engine.emit("before_response_emit", emitEvent("x"));
    assert.equal(outcome.result.block, true);
    assert.equal(outcome.decidedBy?.cause, "timeout");
    const reason = await aborted.promise;
    assert.equal((reason as DOMException).name, "TimeoutError");
  });

  test("fail-closed hook: an invalid result (unknown key) blocks", async () => {
    const { engine } = engineWithLog();
    engine.on("typo", "message_sending", () => ({ contnet: "x" }) as never);
    const outcome = await engine.emit("message_sending", { to: "u", content: "x", source: "model" });
    assert.equal(outcome.result.cancel, true);
    assert.deepEqual(outcome.decidedBy, { hook: "message_sending", pluginId: "typo", cause: "invalid" });
  });

  test("fail-closed hook: null is invalid and blocks", async () => {
    const { engine } = engineWithLog();
    engine.on("null", "after_tool_call", () => null as never);
    const outcome = await engine.emit("after_tool_call", { ...toolEvent, result: "out", durationMs: 1 });
    assert.equal(outcome.result.block, true);
  });

  test("fail-open hook: throw, timeout and invalid results are ignored and the other handlers' results kept", async () => {
    const { engine, lines } = engineWithLog();
    engine.on("ok1", "before_prompt_build", () => ({ appendContext: "kept-1" }));
    engine.on("throws", "before_prompt_build", () => {
      throw new Error("x");
    });
    engine.on("slow", "before_prompt_build", never, { timeoutMs: 10 });
    engine.on("invalid", "before_prompt_build", () => ({ appendContext: 42 }) as never);
    engine.on("ok2", "before_prompt_build", () => ({ appendContext: "kept-2" }));
    const outcome = await engine.emit("before_prompt_build", { prompt: "", messages: [] });
    assert.deepEqual(outcome.result, { appendContext: "kept-1\n\nkept-2" });
    assert.equal(outcome.decidedBy, undefined);
    assert.equal(lines.length, 3);
    assert.ok(lines.every((l) => l.startsWith("warn ") && l.endsWith("ignored (fail open)")));
  });

  test("gate: a throw and a timeout block", async () => {
    for (const handler of [
      () => {
        throw new Error("x");
      },
      never,
    ]) {
      const { engine } = engineWithLog();
      engine.on("g", "before_agent_run", handler, { timeoutMs: 10 });
      const outcome = await engine.emit("before_agent_run", runEvent);
      assert.equal(outcome.outcome, "block");
    }
  });

  test("a late result after a timeout is dropped", async () => {
    const { engine } = engineWithLog();
    const release = deferred();
    const lateReturned = deferred();
    engine.on(
      "late",
      "before_prompt_build",
      async () => {
        await release.promise;
        lateReturned.resolve();
        return { appendContext: "late" };
      },
      { timeoutMs: 10 },
    );
    const outcome = await engine.emit("before_prompt_build", { prompt: "", messages: [] });
    release.resolve();
    await lateReturned.promise;
    assert.deepEqual(outcome.result, {});
  });

  test("each handler gets its whole timeout from its own start, even after a slow handler before it", async () => {
    const { engine } = engineWithLog();
    let startedAt = 0;
    const timedOut = deferred<number>();
    // The first handler answers late in its timeout, the second never: the second is timed out
    // no earlier than its own timeout after it started, and the first is not timed out at all.
    engine.on(
      "slow",
      "before_prompt_build",
      () => new Promise((resolve) => setTimeout(() => resolve({ appendContext: "slow" }), 30)),
      { timeoutMs: 50 },
    );
    engine.on(
      "hangs",
      "before_prompt_build",
      (_e, ctx) => {
        startedAt = performance.now();
        ctx.signal.addEventListener("abort", () => timedOut.resolve(performance.now() - startedAt));
        return never();
      },
      { timeoutMs: 50 },
    );
    const outcome = await engine.emit("before_prompt_build", { prompt: "", messages: [] });
    assert.deepEqual(outcome.result, { appendContext: "slow" });
    assert.ok((await timedOut.promise) >= 50);
  });

  test("an operator's failOpen turns a plugin's failures on a fail-closed hook into no opinion", async () => {
    const { engine } = engineWithLog();
    engine.replacePlugin(
      "flaky",
      [
        {
          hook: "before_tool_call",
          handler: () => {
            throw new Error("x");
          },
        },
      ],
      { failOpen: ["before_tool_call"] },
    );
    engine.on("strict", "after_tool_call", () => {
      throw new Error("y");
    });
    const pre = await engine.emit("before_tool_call", toolEvent);
    const post = await engine.emit("after_tool_call", { ...toolEvent, durationMs: 1 });
    assert.deepEqual(pre, { result: {} });
    assert.equal(post.result.block, true);
  });

  test("an explicit block decision still blocks under failOpen", async () => {
    const { engine } = engineWithLog();
    engine.replacePlugin("p", [{ hook: "before_agent_run", handler: () => ({ outcome: "block", reason: "r" }) }], {
      failOpen: true,
    });
    assert.equal((await engine.emit("before_agent_run", runEvent)).outcome, "block");
  });
});

describe("cancellation", () => {
  test("cancelRun ends a run's pending dispatches at once: a gate blocks, a fail-open hook stops, nothing is logged", async () => {
    const { engine, lines } = engineWithLog();
    let laterCalled = false;
    engine.on("hangs", "before_agent_run", never, { timeoutMs: 600_000 });
    engine.on("hangs", "before_prompt_build", never, { timeoutMs: 600_000 });
    engine.on("later", "before_prompt_build", () => {
      laterCalled = true;
    });
    const other = inRun(() => engine.emit("before_agent_run", runEvent), { runId: "other-run" });
    const gate = inRun(() => engine.emit("before_agent_run", runEvent), { runId: "cancelled-run" });
    const build = inRun(() => engine.emit("before_prompt_build", { prompt: "", messages: [] }), {
      runId: "cancelled-run",
    });
    engine.cancelRun("cancelled-run");
    assert.deepEqual(await gate, {
      outcome: "block",
      by: { hook: "before_agent_run", pluginId: "hangs", cause: "cancelled" },
    });
    assert.equal((await build).decidedBy?.cause, "cancelled");
    assert.equal(laterCalled, false);
    assert.deepEqual(lines, []);
    engine.cancelRun("other-run");
    assert.equal((await other).outcome, "block");
  });

  test("cancelRun ends a dispatch whose handler has been pending past the turn it started in", {
    timeout: 10_000,
  }, async () => {
    const { engine } = engineWithLog();
    engine.on("hangs", "before_agent_run", never, { timeoutMs: 600_000 });
    const gate = inRun(() => engine.emit("before_agent_run", runEvent), { runId: "cancelled-run" });
    // Deadlines are timed once the turn a handler started in is over: cancel after that.
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    engine.cancelRun("cancelled-run");
    assert.equal((await gate).outcome, "block");
  });
});

describe("timeouts", () => {
  function timeoutOf(engine: HookEngine, hook: "before_tool_call" | "agent_end"): number | undefined {
    return engine.registrations(hook)[0]?.timeoutMs;
  }

  test("the catalog default applies when nobody overrides it", () => {
    const { engine } = engineWithLog();
    engine.on("p", "before_tool_call", () => undefined);
    engine.on("p", "agent_end", () => undefined);
    assert.equal(timeoutOf(engine, "before_tool_call"), 15_000);
    assert.equal(timeoutOf(engine, "agent_end"), 30_000);
  });

  test("precedence: operator hooks.timeouts[hook] > operator hooks.timeoutMs > registration timeoutMs > catalog", () => {
    const handler = { hook: "before_tool_call", handler: () => undefined, options: { timeoutMs: 3_000 } };
    const { engine } = engineWithLog();
    engine.replacePlugin("p", [handler]);
    assert.equal(timeoutOf(engine, "before_tool_call"), 3_000);
    engine.replacePlugin("p", [handler], { timeoutMs: 2_000 });
    assert.equal(timeoutOf(engine, "before_tool_call"), 2_000);
    engine.replacePlugin("p", [handler], { timeoutMs: 2_000, timeouts: { before_tool_call: 1_000 } });
    assert.equal(timeoutOf(engine, "before_tool_call"), 1_000);
  });

  test("engine-wide operator timeouts beat the registration's own but not the plugin's operator block", () => {
    const handler = { hook: "before_tool_call", handler: () => undefined, options: { timeoutMs: 3_000 } };
    const { lines: _ignored, logger } = captureLogger();
    const engine = new HookEngine({ logger, timeouts: { timeoutMs: 5_000, timeouts: { before_tool_call: 4_000 } } });
    engine.replacePlugin("p", [handler]);
    assert.equal(timeoutOf(engine, "before_tool_call"), 4_000);
    engine.replacePlugin("p", [handler], { timeoutMs: 1_500 });
    assert.equal(timeoutOf(engine, "before_tool_call"), 1_500);
  });

  test("an operator timeout really applies at dispatch: a 20 ms override times out a handler registered with 60 s", async () => {
    const { engine } = engineWithLog();
    engine.replacePlugin("p", [{ hook: "before_tool_call", handler: never, options: { timeoutMs: 60_000 } }], {
      timeouts: { before_tool_call: 20 },
    });
    const outcome = await engine.emit("before_tool_call", toolEvent);
    assert.equal(outcome.decidedBy?.cause, "timeout");
  });
});

describe("registration", () => {
  test("the same (plugin, id) registered twice replaces, never duplicates", async () => {
    const { engine } = engineWithLog();
    engine.on("p", "before_prompt_build", () => ({ appendContext: "v1" }), { id: "ctx" });
    engine.on("p", "before_prompt_build", () => ({ appendContext: "v2" }), { id: "ctx" });
    engine.on("q", "before_prompt_build", () => ({ appendContext: "other plugin" }), { id: "ctx" });
    const outcome = await engine.emit("before_prompt_build", { prompt: "", messages: [] });
    assert.equal(outcome.result.appendContext, "v2\n\nother plugin");
    assert.equal(engine.registrations("before_prompt_build").length, 2);
  });

  test("reloading a plugin swaps all its registrations at once: an in-flight dispatch sees the old set only, the next the new set only", async () => {
    const { engine } = engineWithLog();
    const inFirst = deferred();
    const release = deferred();
    engine.replacePlugin("p", [
      {
        hook: "before_prompt_build",
        handler: async () => {
          inFirst.resolve();
          await release.promise;
          return { appendContext: "old-1" };
        },
      },
      { hook: "before_prompt_build", handler: () => ({ appendContext: "old-2" }) },
    ]);
    const inFlight = engine.emit("before_prompt_build", { prompt: "", messages: [] });
    await inFirst.promise;
    engine.replacePlugin("p", [{ hook: "before_prompt_build", handler: () => ({ appendContext: "new" }) }]);
    release.resolve();
    assert.equal((await inFlight).result.appendContext, "old-1\n\nold-2");
    assert.equal((await engine.emit("before_prompt_build", { prompt: "", messages: [] })).result.appendContext, "new");
  });

  test("a plugin keeps its place among equal priorities across reloads", async () => {
    const { engine } = engineWithLog();
    engine.replacePlugin("first", [{ hook: "before_prompt_build", handler: () => ({ appendContext: "first" }) }]);
    engine.replacePlugin("second", [{ hook: "before_prompt_build", handler: () => ({ appendContext: "second" }) }]);
    engine.replacePlugin("first", [{ hook: "before_prompt_build", handler: () => ({ appendContext: "first v2" }) }]);
    const outcome = await engine.emit("before_prompt_build", { prompt: "", messages: [] });
    assert.equal(outcome.result.appendContext, "first v2\n\nsecond");
  });

  test("invalid registrations are diagnostics; the plugin's other registrations still work", async () => {
    const { engine } = engineWithLog();
    const diagnostics = engine.replacePlugin("p", [
      { hook: "before_tool_cal", handler: () => undefined },
      { hook: "before_prompt_build", handler: () => undefined, options: { matcher: "Bash" } },
      { hook: "before_tool_call", handler: () => undefined, options: { matcher: "(" } },
      { hook: "before_tool_call", handler: () => undefined, options: { priority: Number.NaN } },
      { hook: "before_tool_call", handler: () => undefined, options: { timeoutMs: -5 } },
      { hook: "before_tool_call", handler: "not a function" as never },
      { hook: "before_tool_call", handler: () => undefined, options: { timeoutMS: 5, prioirty: 3 } as never },
      { hook: "before_tool_call", handler: () => undefined, options: 5_000 as never },
      { hook: "before_tool_call", handler: () => undefined, options: null as never },
      { hook: "before_tool_call", handler: () => undefined, options: { matcher: 7 } as never },
      { hook: "before_agent_run", handler: () => ({ outcome: "block", reason: "r" }) },
    ]);
    assert.deepEqual(
      diagnostics.map((d) => [d.hook, d.code]),
      [
        ["before_tool_cal", "unknown-hook"],
        ["before_prompt_build", "matcher-not-supported"],
        ["before_tool_call", "bad-matcher"],
        ["before_tool_call", "bad-option"],
        ["before_tool_call", "bad-option"],
        ["before_tool_call", "bad-handler"],
        ["before_tool_call", "bad-option"],
        ["before_tool_call", "bad-option"],
        ["before_tool_call", "bad-option"],
        ["before_tool_call", "bad-option"],
      ],
    );
    assert.ok(diagnostics.every((d) => d.pluginId === "p" && d.level === "error" && d.message.length > 0));
    assert.deepEqual(
      diagnostics.slice(3).map((d) => d.message),
      [
        "priority must be a finite number",
        "timeoutMs must be a whole number of milliseconds from 1 to 600000",
        'the handler for "before_tool_call" is not a function',
        'unknown options "timeoutMS", "prioirty" (the options are priority, timeoutMs, matcher, id)',
        "the options must be an object (with priority, timeoutMs, matcher, id)",
        "the options must be an object (with priority, timeoutMs, matcher, id)",
        "matcher must be a string or a list of strings",
      ],
    );
    assert.equal((await engine.emit("before_agent_run", runEvent)).outcome, "block");
    assert.equal(engine.hasHooks("before_tool_call"), false);
  });

  test("removing a plugin removes all its handlers", async () => {
    const { engine } = engineWithLog();
    engine.on("p", "before_tool_call", () => ({ block: true }));
    engine.removePlugin("p");
    assert.equal(engine.hasHooks("before_tool_call"), false);
    assert.deepEqual(await inRun(() => engine.emit("before_tool_call", toolEvent)), { result: {} });
  });
});
